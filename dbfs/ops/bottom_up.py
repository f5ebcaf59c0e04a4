"""Bottom-up search of one BFS level on rank (i, j) (direction-optimizing BFS: Beamer et al.; in 2D
with a rotation of row segments along the grid row, as in Ueno et al., or the segments searched in their
owners' memory where NVSHMEM maps it: dbfs.grid_loop).

summarize: before a level's search, the frontier's summary (a bit per 32-column word, set where the word
is not zero) and whether the search filters through it (at most one word in SUMMARY_SPARSE nonzero: a
sparse frontier, whose rows test every entry and would miss the L2 at random in a bitmap larger than
it holds: summary_for).
search_segment: the unvisited rows of one segment of b local rows look for a parent in the frontier
(a bitmap over the local columns) through the block's row-major copy, stopping at the first parent;
search_segments: the same over several segments in turn, where each is searched in its owner's memory.
commit: the owner turns its segment's final state into the level's new vertices (and their count,
degree sum and largest degree for the direction rule).

GPU method: kernels/bottom_up.cu (a warp per 32-row word: per-lane scan of the first entries, then
warp-cooperative search with ballot early exit; where the bitmap outgrows the L2 a kernel of its own,
whose dense levels test a row's first entry, its longest column's (dbfs.ops.row_order), alone first).
NumPy method: the entries of the unvisited rows are tested a group of whole rows (about TWIN_CHUNK entries)
at a time into a running count of those in the frontier, where the first frontier entry of each row (in CSR
order) is found as its parent: a few bytes an entry however many are in the frontier (dbfs.memory counts
them). It reads no summary (which changes nothing found: a clear bit's word is 0).
The search and commit kernels take the search's control block when the device drives the loop
(dbfs.ops.arrays gate_args).
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, BOTTOM_UP, CTL, STAT, STEP, SUMMARY, SUMMARY_SPARSE, SUMMARY_TALLY_WORDS
from dbfs.ops import arrays
from dbfs.ops.arrays import NULL, TWIN_ITEMS, blocks_for, gate_args, gate_open, require_array, require_offsets
from dbfs.ops.bitmap import offsets_of
from dbfs.ops.sparse import held_args
from dbfs.ops.frontier import add_discoveries

GATE = 1 << STEP.BOTTOMUP
# Segments of at most this many words are searched one kernel for all the sub-steps (search_segments),
# where a kernel's launch and tail are a large part of a sub-step. Measured on one H200 under MPS: 22 on
# 4x4 (8,192 words a segment) 7% faster; 24 on 2x2 (131,072) 2-3% slower, its search no longer but the
# line's ranks ending it further apart; between the two it is not measured (bench/NOTES.md, 2026-11-29, a
# bottom-up level's sub-steps in one kernel).
FUSED_SEGMENT_WORDS = 1 << 15
# The NumPy twin looks up its entries' frontier words this many at a time, into the array that holds them
# (NumPy gathers into a new array).
HIT_WORDS_STEP = 1 << 16


def summary_for(backend, frontier, summary, control=None):
    """Before a level's search: `summary` made from `frontier` (summarize) where the search should filter
    through it, and returned; else None, nothing made. It should where the bitmap takes more than half
    this rank's share of the L2 (always on the CPU backend, which has none). Where the L2 holds the
    bitmap the summary's extra dependent load costs more than the misses it saves (one H200 at scale
    27, a 16 MiB bitmap: 3% slower; two and four GPUs, 32 and 64 MiB: faster; bench/NOTES.md,
    2026-11-27, a sparse frontier's bottom-up probes through a word summary)."""
    if 2 * frontier.nbytes <= backend.l2_share:
        return None
    summarize(backend, frontier, summary, control=control)
    return summary


def summary_words(frontier_words: int) -> int:
    """The length of a summary of a frontier bitmap of `frontier_words` words: a bit a word, then the tally."""
    return -(-frontier_words // 32) + SUMMARY_TALLY_WORDS


def summarize(backend, frontier, summary, control=None) -> None:
    """The summary of `frontier` and its tally.

      frontier  uint32 [w]                 read   the frontier bitmap the level's search reads
      summary   uint32 [summary_words(w)]  write  bit k of word s: frontier word 32 s + k is not zero;
                                                  then the tally: FILTER = at most w / SUMMARY_SPARSE
                                                  words are nonzero; NONZERO and DONE zero before and
                                                  after (the GPU kernel's counters)
      control   the search's control block (None: always runs; else only before a bottom-up level)
    GPU: one kernel on the current stream (the last block to finish decides FILTER), no host
    synchronisation.
    """
    nwords = int(frontier.shape[0])
    if backend.is_gpu:
        require_array("frontier", frontier, np.uint32)
        require_array("summary", summary, np.uint32)
        kernel = backend.kernel("bottom_up", "frontier_summary")
        kernel((blocks_for(-(-nwords // 32), BLOCK_THREADS // 32),), (BLOCK_THREADS,),
               (frontier, np.int32(nwords), summary, gate_args(control)[0]))
        return
    if not gate_open(control, GATE):
        return
    nonzero = np.zeros(-(-nwords // 32) * 32, bool)
    nonzero[:nwords] = frontier != 0
    swords = nonzero.shape[0] // 32
    summary[:swords] = np.packbits(nonzero, bitorder="little").view(np.uint32)
    tally = summary[swords:]
    tally[:] = 0
    tally[SUMMARY.FILTER] = int(nonzero.sum()) * SUMMARY_SPARSE <= nwords


def search_segment(backend, row_ptr, col_idx, row_base: int, frontier, state_in, state_out, pred_row, stats,
                   control=None, summary=None, found_at=None, rows_held=None, shared: bool = False,
                   visited=None) -> None:
    """Find a frontier parent for each row of the segment row_base .. row_base + 32*len(state) - 1
    whose bit is clear in `state_in` (and in `visited`, where given).

      row_ptr    int32/int64 [nrows+1]  read   CSR offsets of the local rows; or [rows_held.count+1]: those
                                          of the rows of the Positions rows_held (the CSC's column offsets
                                          held by the non-empty columns, searched as rows: column_starts)
      col_idx    int32 [nnz]       read   local columns of each row's entries
      frontier   uint32 [ncols/32] read   frontier bit of every local column
      summary    None, or uint32 [summary_words(ncols/32)]  read  the frontier's summary (summarize),
                                          given where the bitmap outgrows the L2 (summary_for): where
                                          its FILTER is set, a neighbour whose summary bit is clear is
                                          not tested further (the same result: its word is 0); where
                                          not, a row's first entry is tested before the others
      state_in   uint32 [w]        read   visited bit of the segment's rows
      state_out  uint32 [w]        write  state_in plus the rows found (may be state_in itself)
      shared     the state is its owner's, searched by the other ranks of its grid line at the same time
                 (state_in is state_out, mapped here: dbfs.nvshmem): the rows found are OR-ed into it
                 (GPU: an atomic OR a word), never stored over another rank's
      visited    None, or uint32 [w]  read  the owner's visited bits of the segment's rows, read beside a
                                          shared state (mapped here too), which then need hold only the
                                          rows found bottom-up
      pred_row   int32 [nrows]     write  pred_row[row] = the frontier column found, found rows only;
                 or [found_at.count]      where found_at (dbfs.ops.sparse.Positions of the rows) is given,
                                          at the row's position (every row with an entry is held); where
                                          rows_held is given too, found_at is rows_held
      stats      int64 [STAT_WORDS] read/write  CHECKED += entries examined
      control    the search's control block (None: always runs; else only before a bottom-up level)
    GPU: one kernel on the current stream (a warp per word of the state, a grid of at most what the
    whole GPU holds, even where ranks share it: Backend.whole_gpu_blocks; its _held form where rows_held
    or found_at is given, which loads their Positions ahead), no host synchronisation.
    Which frontier neighbour is taken is unspecified on the GPU (the first in CSR order on each path;
    NumPy: the first in CSR order).
    """
    nwords = int(state_in.shape[0])
    _check_held(rows_held, found_at)
    if backend.is_gpu:
        offsets = _require_search_arrays(row_ptr, col_idx, frontier, pred_row, stats,
                                         (("state_in", state_in), ("state_out", state_out), ("summary", summary)))
        if nwords:
            large = "" if summary is None else "_large"
            step, blocks = _search_kernel(backend, f"bottom_up_step{large}", offsets, rows_held, found_at, nwords)
            bitmaps = (frontier,) if summary is None else (frontier, summary, np.int32(frontier.shape[0]))
            step((blocks,), (BLOCK_THREADS,),
                 (row_ptr, *held_args(rows_held), col_idx, np.int32(row_base), np.int32(nwords), *bitmaps, state_in,
                  state_out, NULL if visited is None else visited, np.int32(shared), pred_row, *held_args(found_at),
                  stats, gate_args(control)[0]))
        return
    if not gate_open(control, GATE):
        return
    words = TWIN_ITEMS // 32
    for w in range(0, nwords, words):
        seen = state_in[w:w + words] if visited is None else state_in[w:w + words] | visited[w:w + words]
        _search_words(row_ptr, col_idx, row_base + 32 * w, frontier, seen, state_out[w:w + words], pred_row, stats,
                      found_at, rows_held, shared)


class SegmentSteps:
    """The segments that one search_segments call searches in turn: their states and their owners'
    visited bits (each in its owner's memory, mapped here: dbfs.nvshmem), all of one length, and their
    first rows; on the GPU also as the kernel's tables (the states' and visited bits' addresses, the rows),
    made once."""

    def __init__(self, backend, states, visited, row_bases):
        self.states, self.visited = list(states), list(visited)
        self.row_bases = [int(base) for base in row_bases]
        if len({int(array.shape[0]) for array in self.states + self.visited}) > 1:
            raise ValueError("the segments' states and visited bits differ in length")
        if len(self.visited) != len(self.states):
            raise ValueError("a segment's state without its owner's visited bits")
        self.addresses = self.visited_addresses = self.bases = None
        if backend.is_gpu and self.states:
            self.addresses, self.visited_addresses = (
                backend.asarray(np.array([array.data.ptr for array in arrays], np.uint64))
                for arrays in (self.states, self.visited))
            self.bases = backend.asarray(np.array(self.row_bases, np.int32))


def search_segments(backend, row_ptr, col_idx, steps: SegmentSteps, frontier, pred_row, stats, control=None,
                    summary=None, found_at=None, rows_held=None) -> None:
    """search_segment over each segment of `steps` in turn, shared (every state is also searched by the
    other ranks of its grid line, the rows found OR-ed into it), its owner's visited bits read beside it:
    the sub-steps of a bottom-up level whose segments are searched where their owners keep them
    (dbfs.grid_loop). The arguments are search_segment's, the segments' states, visited bits and first rows
    in `steps`.
    GPU: one kernel on the current stream (the warps take the segments' words in order, so none waits
    for a sub-step's last word before starting the next; a grid of at most what the whole GPU holds), no
    host synchronisation. search_segment's kernel a segment instead: with a summary (the one-kernel search
    would spill under its occupancy bound), for a lone segment (no tail to save), and for segments of more
    than FUSED_SEGMENT_WORDS words (measured slower there).
    NumPy: search_segment on each in turn.
    """
    _check_held(rows_held, found_at)
    nwords = int(steps.states[0].shape[0]) if steps.states else 0
    if not backend.is_gpu or summary is not None or len(steps.states) == 1 or nwords > FUSED_SEGMENT_WORDS:
        for base, state, visited in zip(steps.row_bases, steps.states, steps.visited):
            search_segment(backend, row_ptr, col_idx, base, frontier, state, state, pred_row, stats, control=control,
                           summary=summary, found_at=found_at, rows_held=rows_held, shared=True, visited=visited)
        return
    offsets = _require_search_arrays(row_ptr, col_idx, frontier, pred_row, stats,
                                     [("state", array) for array in steps.states + steps.visited])
    if nwords:
        kernel, blocks = _search_kernel(backend, "bottom_up_steps", offsets, rows_held, found_at,
                                        nwords * len(steps.states))
        kernel((blocks,), (BLOCK_THREADS,),
               (row_ptr, *held_args(rows_held), col_idx, steps.bases, steps.addresses, steps.visited_addresses,
                np.int32(len(steps.states)), np.int32(nwords), frontier, pred_row, *held_args(found_at), stats,
                gate_args(control)[0]))


def _check_held(rows_held, found_at) -> None:
    """The _held kernels take one Positions for both the row pointers and the finds where both are held."""
    if rows_held is not None and found_at is not None and found_at is not rows_held:
        raise ValueError("the finds and the row pointers are held by different Positions")


def _require_search_arrays(row_ptr, col_idx, frontier, pred_row, stats, bitmaps) -> int:
    """GPU: a search's arrays checked (`bitmaps`: (name, uint32 array or None) pairs); returns the width
    of the row pointers' offsets."""
    offsets = require_offsets("row_ptr", row_ptr)
    for name, array, dtype in (("col_idx", col_idx, np.int32), ("frontier", frontier, np.uint32),
                               ("pred_row", pred_row, np.int32), ("stats", stats, np.int64),
                               *((name, array, np.uint32) for name, array in bitmaps)):
        if array is not None:
            require_array(name, array, dtype)
    return offsets


def _search_kernel(backend, name: str, offsets: int, rows_held, found_at, words: int):
    """The search kernel `name` (its _held form where the pointers or the finds are held by position) at
    the offsets' width, and its grid for `words` words of state: at most what the whole GPU holds."""
    held = "_held" if rows_held is not None or found_at is not None else ""
    kernel = backend.kernel("bottom_up", f"{name}{held}", offsets)
    return kernel, backend.whole_gpu_blocks(kernel, BLOCK_THREADS, blocks_for(words, BLOCK_THREADS // 32))


def _search_words(row_ptr, col_idx, row_base: int, frontier, seen, state_out, pred_row, stats, found_at,
                  rows_held, shared) -> None:
    """search_segment's NumPy twin on one step of TWIN_ITEMS rows, those whose bits in `seen` (the state with
    the owner's visited bits OR-ed in where given) are clear: their entries tested a group of whole rows at a
    time (_groups); shared: only the rows found OR-ed into state_out, as the GPU's atomics. The step holds a few
    words a row and a group a few bytes an entry, however many of them are in the frontier (dbfs.memory)."""
    rows = 32 * seen.shape[0]
    searched = np.unpackbits(seen.view(np.uint8), bitorder="little")
    searched ^= 1
    offsets = _step_offsets(row_ptr, rows_held, row_base, rows)
    lengths = np.diff(offsets)
    lengths *= searched
    del searched
    before = np.empty(rows + 1, np.int64)       # the searched entries before each row, then their total
    before[0] = 0
    np.cumsum(lengths, out=before[1:])
    del lengths
    found = np.zeros(rows, bool)
    for lo, hi in _groups(before):
        _search_group(col_idx, frontier, offsets, before, lo, hi, row_base, found, pred_row, found_at, stats)
    bits = np.packbits(found, bitorder="little").view(np.uint32)
    if shared:
        state_out |= bits
    else:
        state_out[:] = seen | bits


def _step_offsets(row_ptr, rows_held, row_base: int, rows: int):
    """The offsets of the step's rows row_base .. row_base + rows and the one after (a view; where the offsets
    are held by position, those of the held rows at or above each, which give a row not held no entries)."""
    if rows_held is None:
        return row_ptr[row_base:row_base + rows + 1]
    word = row_base >> 5                        # a segment's rows start on a word of the Positions
    held = np.unpackbits(rows_held.words[word:word + rows // 32].view(np.uint8), bitorder="little")
    positions = np.empty(rows + 1, np.int64)
    positions[0] = rows_held.starts[word]
    np.cumsum(held, out=positions[1:])
    positions[1:] += positions[0]
    return row_ptr[positions]


def _groups(before) -> list:
    """The step's rows in consecutive groups (lo, hi) whose searched entries (`before`: those before each row,
    then their total) add up to about TWIN_CHUNK: a group holds at most TWIN_CHUNK plus its last row's; none
    without an entry."""
    cuts = np.searchsorted(before, np.arange(arrays.TWIN_CHUNK, int(before[-1]), arrays.TWIN_CHUNK)).tolist()
    bounds = [0, *cuts, before.shape[0] - 1]
    return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if before[hi] > before[lo]]


def _frontier_hits(col_idx, frontier, offsets, before, lo: int, hi: int):
    """uint32 [entries + 1] over the searched entries of rows lo .. hi - 1 in CSR order: 0, then the running
    count of those whose column is in the frontier. Four bytes an entry and a transient four, never more."""
    first = int(offsets[lo])
    span = int(offsets[hi]) - first
    index = np.int32 if span < 2**31 else np.int64
    shift = before[lo:hi] - before[lo]              # each row's entries from its first, relative to the group's
    np.subtract(offsets[lo:hi], shift, out=shift)
    shift -= first
    entries = np.repeat(shift.astype(index), np.diff(before[lo:hi + 1]))
    del shift
    entries += np.arange(entries.shape[0], dtype=index)
    cols = col_idx[first:first + span][entries].view(np.uint32)
    del entries
    hits = np.empty(cols.shape[0] + 1, np.uint32)
    hits[0] = 0
    words = hits[1:]
    np.right_shift(cols, 5, out=words)
    for at in range(0, words.shape[0], HIT_WORDS_STEP):
        words[at:at + HIT_WORDS_STEP] = frontier[words[at:at + HIT_WORDS_STEP]]
    cols &= 31
    words >>= cols
    del cols
    hits &= 1
    return np.cumsum(hits, out=hits)


def _search_group(col_idx, frontier, offsets, before, lo: int, hi: int, row_base: int, found, pred_row, found_at,
                  stats) -> None:
    """The rows lo .. hi - 1 of the step (row_base on) with a frontier entry marked in `found`, pred_row :=
    each one's first such entry's column (CSR order); CHECKED += the entries up to it (a row without one: all
    of them)."""
    hits = _frontier_hits(col_idx, frontier, offsets, before, lo, hi)
    counts = hits[before[lo:hi + 1] - before[lo]]
    rows = np.flatnonzero(counts[1:] != counts[:-1])
    first_hit = np.searchsorted(hits, counts[rows] + 1)     # 1 + the first hit's entry in the group
    del counts
    rows += lo
    unchecked = int(before[1:][rows].sum()) - rows.shape[0] * int(before[lo]) - int(first_hit.sum())
    stats[STAT.CHECKED] += hits.shape[0] - 1 - unchecked
    del hits
    first_hit -= before[rows]
    first_hit += offsets[rows]
    first_hit += int(before[lo]) - 1
    found[rows] = True
    rows += row_base
    pred_row[rows if found_at is None else found_at.at(rows)] = col_idx[first_hit]


def commit(backend, state, visited, next_frontier, level, pred_col, degree, lvl: int, stats,
           control=None, peer_fronts=None) -> None:
    """The owned vertices set in `state` but not in `visited` were found this level.

      state          uint32 [w]   read   the owned segment after every rank of the grid row searched it
      visited        uint32 [w]   read/write  the owned rows' visited bits (w words of the row bitmap)
      next_frontier  uint32 [w]   write  exactly the new vertices
      peer_fronts    None, or copies of next_frontier written too: on the GPU a uint64 device array of
                     addresses (0: none; other ranks' memory mapped here, dbfs.nvshmem); NumPy: a list
                     of uint32 [w] arrays or None
      level          int32 [b]    write  lvl (or the control block's CTL_LEVEL) for the new vertices
      pred_col       int16 [b] or None  write  BOTTOM_UP for the new vertices (None: C = 1; there, where
                                        the bottom-up levels search the CSC's columns, the int32 parent
                                        array itself instead: dbfs.grid_loop BottomUpSide)
      degree         int32 [b]    read   owned vertices' degrees
      stats          int64 [STAT_WORDS] read/write  COUNT += the new vertices, DEGREES += and
                                  MAX_DEGREE max= their degrees
    GPU: one kernel on the current stream, no host synchronisation.
    """
    nwords = int(state.shape[0])
    if backend.is_gpu:
        if nwords:
            marks = np.dtype(np.int32 if pred_col is not None and pred_col.dtype == np.int32 else np.int16)
            if pred_col is not None:
                require_array("pred_col", pred_col, marks)
            commit_words = backend.kernel("bottom_up", f"bottom_up_commit_i{8 * marks.itemsize}")
            peers, n_peers = (NULL, 0) if peer_fronts is None else (peer_fronts, peer_fronts.shape[0])
            commit_words(
                (backend.resident_blocks(commit_words, BLOCK_THREADS),), (BLOCK_THREADS,),
                (state, visited, next_frontier, peers, np.int32(n_peers), np.int32(nwords), level,
                 pred_col if pred_col is not None else NULL, degree, np.int32(lvl), stats, gate_args(control)[0]))
        return
    if not gate_open(control, GATE):
        return
    if control is not None:
        lvl = int(control[CTL.LEVEL])
    fresh = state & ~visited
    next_frontier[:] = fresh
    for copy in peer_fronts or ():
        if copy is not None:
            copy[:] = fresh
    visited |= fresh
    new = offsets_of(fresh)
    level[new] = lvl
    if pred_col is not None:
        pred_col[new] = BOTTOM_UP
    add_discoveries(stats, degree[new])
