// Phase marks of a round of the device-driven loop replayed as a CUDA graph (dbfs.timing.GraphMarks):
// one thread writes the GPU's global nanosecond timer into slot k of a device array, which the round
// copies to pinned host memory at its end. A one-thread kernel node writing device memory costs ~1 us;
// the event-record node it replaces cost ~3 us, and so did a kernel writing the mark straight into
// mapped host memory (bench/NOTES.md, 2026-11-24, the capture fallback).
#include "common.cuh"

extern "C" __global__ void stamp(i64* __restrict__ marks, i32 k)
{
    marks[k] = global_ns();
}
