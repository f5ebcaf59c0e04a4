"""Launch wrapper of kernels/peer_sums.cu: the sum of a span of each peer's memory, every load of a peer
in flight at once (dbfs.link_wake reads it to wake the NVLinks before a search), with its NumPy twin."""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS
from dbfs.ops.arrays import require_array


def peer_sums(backend, table, words: int, sums) -> None:
    """sums[p] := the sum, modulo 2^64, of the `words` uint64 at table[p].

      table  uint64 [peers]  read   GPU: device addresses of the spans (a peer's memory mapped here);
                                    NumPy: the spans themselves, a list of uint64 arrays
      sums   uint64 [peers]  write
    GPU: one block of BLOCK_THREADS per span on the current stream, no host synchronisation."""
    require_array("sums", sums, np.uint64)
    if backend.is_gpu:
        require_array("table", table, np.uint64)
        if table.shape[0]:
            backend.kernel("peer_sums", "peer_sums")((table.shape[0],), (BLOCK_THREADS,),
                                                     (table, np.int64(words), sums))
        return
    for p, span in enumerate(table):
        sums[p] = span[:words].sum(dtype=np.uint64)
