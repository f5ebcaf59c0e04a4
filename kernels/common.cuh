// Shared fixed-width types for the dbfs kernels (NVRTC has no <cstdint> by default).
#pragma once
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;
