"""Micro-probe: messages_to_list on lists from message_from_bits, against the size of col_ptr and the
list's order. One GPU."""
import numpy as np, cupy as cp
from dbfs.backend import Backend
from dbfs.ops import message
from dbfs.kernels import STAT, STAT_WORDS, HEAD_WORDS

be = Backend("gpu", 0)
rng = np.random.default_rng(1)

def timed(f, reps=5):
    f(); cp.cuda.runtime.deviceSynchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    best = 1e9
    for _ in range(reps):
        s.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) * 1e3)
    return best

for scale, frontier in ((26, 176_000), (27, 353_000), (28, 353_000)):
    b = 1 << (scale - 1)                 # a pair's owned block
    ncols = 2 * b
    deg = rng.poisson(8, ncols).astype(np.int64) * (rng.random(ncols) < 0.55)
    col_ptr = cp.asarray(np.concatenate(([0], np.cumsum(deg))))
    msgs, stats = [], cp.zeros(STAT_WORDS, cp.int64)
    for y in range(2):
        bits = np.zeros(b // 32, np.uint32)
        v = np.unique(rng.integers(0, b, frontier))
        np.bitwise_or.at(bits, v >> 5, (1 << (v & 31)).astype(np.uint32))
        words = cp.asarray(bits)
        stats[STAT.COUNT] = len(v)
        out = cp.zeros(HEAD_WORDS + b // 32 + 8, cp.uint32)
        message.encode_bits(be, words, stats, b, "adaptive", out, cp.zeros(1, cp.int32))
        msgs.append(out)
    h = msgs[0][:HEAD_WORDS].get()
    bases = cp.asarray(np.array([0, b], np.int32))
    front, count = cp.zeros(ncols, cp.int32), cp.zeros(1, cp.int32)
    src = message.SourceTable(be, msgs)
    t_enc = timed(lambda: message.to_list(be, src, bases, b, col_ptr, front, count))
    k = int(count.get()[0])
    # the same lists sorted
    sorted_msgs = []
    for m in msgs:
        n = int(m[1].get())
        s = m.copy(); s[HEAD_WORDS:HEAD_WORDS + n] = cp.sort(m[HEAD_WORDS:HEAD_WORDS + n]); sorted_msgs.append(s)
    src2 = message.SourceTable(be, sorted_msgs)
    t_sorted = timed(lambda: message.to_list(be, src2, bases, b, col_ptr, front, count))
    print(f"scale {scale}: head {h.tolist()}, kept {k}, to_list {t_enc:.1f} us (encoder's order), {t_sorted:.1f} us (sorted); col_ptr {col_ptr.nbytes/2**20:.0f} MiB", flush=True)
