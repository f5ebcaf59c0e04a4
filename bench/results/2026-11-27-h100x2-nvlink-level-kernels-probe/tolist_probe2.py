"""Micro-probe: messages_to_list on cold TLB (after touching one word of every 2 MiB page of 32 GiB)
against warm; and a page-touch kernel over col_ptr first. One GPU."""
import numpy as np, cupy as cp
from dbfs.backend import Backend
from dbfs.ops import message
from dbfs.kernels import STAT, STAT_WORDS, HEAD_WORDS

be = Backend("gpu", 0)
rng = np.random.default_rng(1)
big = cp.ones((32 << 30) // 8, cp.int64)
PAGE = (2 << 20) // 8
touch = cp.RawKernel(r'''
extern "C" __global__ void touch(const long long* a, long long n, long long step, long long* sink) {
    long long s = 0;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * step; i < n; i += (long long)gridDim.x * blockDim.x * step) s += a[i];
    if (s == 42) *sink = s;
}''', "touch")
sink = cp.zeros(1, cp.int64)
def flush():
    touch((264,), (256,), (big, np.int64(big.size), np.int64(PAGE), sink))
def touch_pages(a):
    touch((264,), (256,), (a, np.int64(a.size), np.int64(PAGE), sink))

def timed(f, before=None, reps=5):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    best = []
    for _ in range(reps + 1):
        if before: before()
        s.record(); f(); e.record(); e.synchronize()
        best.append(cp.cuda.get_elapsed_time(s, e) * 1e3)
    return float(np.median(best[1:]))

for scale, frontier in ((26, 176_000), (28, 353_000)):
    b = 1 << (scale - 1)
    ncols = 2 * b
    deg = rng.poisson(8, ncols).astype(np.int64) * (rng.random(ncols) < 0.55)
    col_ptr = cp.asarray(np.concatenate(([0], np.cumsum(deg))))
    msgs, stats = [], cp.zeros(STAT_WORDS, cp.int64)
    for y in range(2):
        bits = np.zeros(b // 32, np.uint32)
        v = np.unique(rng.integers(0, b, frontier))
        np.bitwise_or.at(bits, v >> 5, (1 << (v & 31)).astype(np.uint32))
        stats[STAT.COUNT] = len(v)
        out = cp.zeros(HEAD_WORDS + b // 32 + 8, cp.uint32)
        message.encode_bits(be, cp.asarray(bits), stats, b, "adaptive", out, cp.zeros(1, cp.int32))
        msgs.append(out)
    bases = cp.asarray(np.array([0, b], np.int32))
    front, count = cp.zeros(ncols, cp.int32), cp.zeros(1, cp.int32)
    src = message.SourceTable(be, msgs)
    run = lambda: message.to_list(be, src, bases, b, col_ptr, front, count)
    warm = timed(run)
    cold = timed(run, flush)
    t_touch = timed(lambda: touch_pages(col_ptr), flush)
    both = timed(lambda: (touch_pages(col_ptr), run()), flush)
    print(f"scale {scale}: to_list warm {warm:.1f} us, cold {cold:.1f} us; page touch of col_ptr cold {t_touch:.1f} us; touch then to_list cold {both:.1f} us", flush=True)
