"""Sparse int32 blocks as (presence bitmap, present values in offset order), and the Positions of an index
range's members that can hold something.

An entry < 0 means "none". Paper 004, section 3.5: after a search each rank sends the discoverers it
recorded for another grid column's block to that block's owner; fewer than half of the entries are
set on any one rank, so the bitmap (1 bit per entry) plus the present values (4 bytes each) is
usually well under the dense block's 4 bytes per entry.

A block's array of local columns is held the same way where most columns hold no entry (a hypersparse
block of a tall grid: at Graph500 density about a third of a 4 x 4 grid's local columns have one): the
bitmap of the non-empty columns and the exclusive prefix of its words' popcounts (Positions) place
column k's value at its position, so the array takes 4 bytes a non-empty column and the Positions a
quarter byte a column, where the dense array takes 4 bytes a column. A CSC's column offsets are held so
too (column_starts): the columns below c hold the entries that the held ones below c hold, so column c
starts at the held offsets' entry number Positions.below(c), for an empty column as for any other.

GPU method: kernels/sparse.cu (a ballot per warp builds the bitmap, popcounts plus one scan place
each word's entries, a thread per entry gathers or scatters); kernels/positions.cuh reads a position.
NumPy twins with the same contract.
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from dbfs.kernels import BLOCK_THREADS
from dbfs.ops.arrays import NULL, blocks_for, require_array
from dbfs.ops.bitmap import visited

# The share of a range's members below which an array over them is held by position (by_position).
POSITIONS_SHARE = 15 / 16
# Members whose presence one step of Positions.of_columns tests: its mask and bits take 1.1 MiB.
POSITIONS_STEP = 1 << 20
# Positions (members) whose members (positions) one step of members_at (_positions) finds: their
# temporaries take about 40 B each.
MEMBERS_STEP = 1 << 12
_POPCOUNT8 = np.array([bin(x).count("1") for x in range(256)], np.int32)


@dataclass(frozen=True)
class Positions:
    """The members of an index range [0, n) that hold something, n a multiple of 32.

      words   uint32 [n/32]      bit k of words[k / 32] set iff member k is held
      starts  int32 [n/32 + 1]   set bits in the words before w; starts[-1] = count
    An array held by position keeps member k at position(k) = starts[k / 32] + the set bits below k in
    its word (kernels/positions.cuh); count is the number held."""

    words: object
    starts: object
    count: int

    @classmethod
    def of_columns(cls, backend, col_ptr, words, starts) -> "Positions":
        """The non-empty columns of a CSC block (col_ptr [n + 1]), written into `words` and `starts`
        (device arrays of the sizes above); one host synchronisation (the count)."""
        xp, n = backend.xp, int(col_ptr.shape[0]) - 1
        for lo in range(0, n, POSITIONS_STEP):
            hi = min(n, lo + POSITIONS_STEP)
            bits = xp.packbits(col_ptr[lo + 1:hi + 1] != col_ptr[lo:hi], bitorder="little")
            words[lo // 32:hi // 32] = bits.view(xp.uint32)
        return cls(words, starts, word_starts(backend, words, starts))

    @classmethod
    def of_rows(cls, backend, row_idx, words, starts) -> "Positions":
        """The rows with an entry of a CSC block (row_idx int32 [nnz], its entries' local rows), written
        likewise (`words` zeroed by the caller)."""
        n = int(row_idx.shape[0])
        if backend.is_gpu:
            require_array("row_idx", row_idx, np.int32)
            _launch(backend, "mark_members", n, (row_idx, np.int64(n), words))
        else:
            for lo in range(0, n, POSITIONS_STEP):
                hi = min(n, lo + POSITIONS_STEP)
                np.bitwise_or.at(words, row_idx[lo:hi] >> 5, np.uint32(1) << (row_idx[lo:hi] & 31).astype(np.uint32))
        return cls(words, starts, word_starts(backend, words, starts))

    def at(self, members):
        """NumPy: the positions of held `members` (kernels/positions.cuh Positions::of)."""
        return _positions(self.words, self.starts, members)

    def below(self, members):
        """NumPy: the held members below each of `members`, any of 0 .. n (Positions::below)."""
        return _positions(self.words, self.starts, np.asarray(members, np.int64))

    def member(self, positions):
        """NumPy: the held member at each of `positions` (each < count; Positions::member, of's inverse)."""
        return members_at(self.words, self.starts, positions)

    def block(self, k: int, members: int) -> "Positions":
        """The members k*members .. (k+1)*members - 1 (members a multiple of 32): their words and starts,
        views; positions stay those of the whole range."""
        lo, hi = k * members // 32, (k + 1) * members // 32
        return Positions(self.words[lo:hi], self.starts[lo:hi + 1], self.count)

    def block_bounds(self, backend, members: int):
        """Host int64: the position where each block of `members` members (a multiple of 32) begins,
        the count last (block k holds bounds[k + 1] - bounds[k])."""
        return backend.asnumpy(self.starts[::members // 32]).astype(np.int64)


def by_position(n: int, members: int | None) -> bool:
    """Whether an array of 4-byte entries over a range of n indices of which at most `members` can hold
    something (None: not counted) is held by their positions: where that takes fewer bytes, 4 a member
    plus the Positions' quarter byte an index against 4 an index, below POSITIONS_SHARE of the n."""
    return members is not None and members < POSITIONS_SHARE * n


def positions_bytes(n: int) -> int:
    """The bytes of the Positions of a range of n members (n a multiple of 32): words and starts."""
    return 4 * (n // 32) + 4 * (n // 32 + 1)


def record_bytes(n: int, members: int | None) -> int:
    """The bytes of a 4-byte record over a range of n indices (n a multiple of 32) at most `members` of
    which hold something: its values and Positions where by_position holds it so, else its n entries."""
    return 4 * max(1, members) + positions_bytes(n) if by_position(n, members) else 4 * n


def held_args(positions) -> tuple:
    """A kernel's (words, starts) arguments for `positions` (None: null pointers, every member held)."""
    return (NULL, NULL) if positions is None else (positions.words, positions.starts)


def column_starts(col_ptr, columns, c):
    """NumPy: the starts of columns `c` (any of 0 .. n) of a CSC whose offsets col_ptr are held by the
    Positions `columns` (None: col_ptr[c] itself); kernels/positions.cuh ColumnStarts."""
    return col_ptr[c] if columns is None else col_ptr[columns.below(c)]


def held_offsets(backend, ptr) -> tuple:
    """(the offsets of the non-empty segments of `ptr` [n + 1] and its last, in host memory; their
    Positions, on the device): a CSC's column offsets held by position (column_starts reads them), put
    together on the host so that the device never holds both forms at once. In steps: a whole range's mask
    takes a byte an index; a host synchronisation a step."""
    xp, n = backend.xp, int(ptr.shape[0]) - 1
    held = Positions.of_columns(backend, ptr, xp.zeros(n // 32, xp.uint32), xp.zeros(n // 32 + 1, xp.int32))
    offsets, at = np.empty(held.count + 1, ptr.dtype), 0
    for lo in range(0, n, POSITIONS_STEP):
        hi = min(n, lo + POSITIONS_STEP)
        kept = backend.asnumpy(ptr[lo:hi][ptr[lo + 1:hi + 1] != ptr[lo:hi]])
        offsets[at:at + kept.shape[0]] = kept
        at += kept.shape[0]
    offsets[at] = int(ptr[n])
    return offsets, held


def held_entries(values, words, starts, offsets):
    """NumPy: the entries at `offsets` of a block held by position (values at the Positions words and
    starts; words None: values[offsets] itself), -1 for a member not held."""
    if words is None:
        return values[offsets]
    held = visited(words, offsets)
    entries = np.full(offsets.shape[0], -1, values.dtype)
    entries[held] = values[_positions(words, starts, offsets[held])]
    return entries


def _positions(words, starts, members):
    """NumPy: the set bits of `words` below each of `members` (0 .. n; at n the mask takes no bit of the
    last word, which is read in place of the one past it), int64; in steps of MEMBERS_STEP members."""
    members = np.asarray(members)
    flat, found = members.reshape(-1), np.empty(members.size, np.int64)
    for lo in range(0, flat.shape[0], MEMBERS_STEP):
        step = flat[lo:lo + MEMBERS_STEP]
        word = np.minimum(step >> 5, words.shape[0] - 1)
        below = words[word] & ((np.uint32(1) << (step & 31).astype(np.uint32)) - np.uint32(1))
        found[lo:lo + step.shape[0]] = starts[step >> 5] + _popcounts(below.astype(np.uint32))
    return found.reshape(members.shape)


def members_at(words, starts, positions):
    """NumPy: the member at each of `positions` of the Positions words and starts (words None: the position
    itself): the word whose start is the last at most the position, then its (position - start)-th set bit,
    the lower set bits cleared one a pass. In steps of MEMBERS_STEP positions, so that the temporaries stay
    small beside the result."""
    positions = np.asarray(positions, np.int64)
    if words is None:
        return positions
    flat, members = positions.reshape(-1), np.empty(positions.size, np.int64)
    for lo in range(0, flat.shape[0], MEMBERS_STEP):
        step = flat[lo:lo + MEMBERS_STEP]
        word = np.searchsorted(starts[:-1], step, side="right") - 1
        rank = step - starts[word]
        bits = words[word].astype(np.uint32)
        for cleared in range(int(rank.max(initial=0))):
            more = rank > cleared
            bits[more] &= bits[more] - np.uint32(1)
        lowest = bits & (~bits + np.uint32(1))
        members[lo:lo + step.shape[0]] = 32 * word + _popcounts(lowest - np.uint32(1))
    return members.reshape(positions.shape)


def _popcounts(words):
    """NumPy: the set bits of each uint32 word."""
    return _POPCOUNT8[words.view(np.uint8).reshape(-1, 4)].sum(axis=1)


def pack_present(backend, values, words, starts, packed) -> int:
    """Encode `values`; return k, the number of present entries (a host synchronisation on the GPU).

      values  int32 [n]         read   n a multiple of 32
      words   uint32 [n/32]     write  bit o set iff values[o] >= 0
      starts  int32 [n/32 + 1]  write  scratch: exclusive prefix of the words' popcounts, then k
      packed  int32 [>= k]      write  the present values in offset order
    """
    n = _check(values, words, starts, "values")
    if backend.is_gpu:
        require_array("packed", packed, np.int32)
        _launch(backend, "presence_words", n, (values, np.int64(n), words))
        total = word_starts(backend, words, starts)
        if total:
            _launch(backend, "move_present", n, (values, packed, words, starts, np.int64(n)))
        return total
    present = values >= 0
    words[:] = np.packbits(present, bitorder="little").view(np.uint32)
    total = int(np.count_nonzero(present))
    starts[-1] = total
    packed[:total] = values[present]
    return total


def _check(block, words, starts, name) -> int:
    for label, array, dtype in ((name, block, np.int32), ("words", words, np.uint32),
                                ("starts", starts, np.int32)):
        require_array(label, array, dtype)
    n = int(block.shape[0])
    if n % 32 or words.shape[0] != n // 32 or starts.shape[0] != n // 32 + 1:
        raise ValueError(f"{name} must hold a multiple of 32 entries with words [n/32] and starts "
                         f"[n/32 + 1], got {n}, {words.shape[0]}, {starts.shape[0]}")
    return n


def _launch(backend, name, n, args) -> None:
    backend.kernel("sparse", name)((blocks_for(n),), (BLOCK_THREADS,), args)


def word_starts(backend, words, starts) -> int:
    """starts[w] := set bits in words[:w], starts[-1] := their total (returned; on the GPU a host
    synchronisation)."""
    xp, nwords = backend.xp, int(words.shape[0])
    if backend.is_gpu:
        _launch(backend, "word_popcounts", nwords, (words, np.int64(nwords), starts[1:]))
    else:
        starts[1:] = _popcounts(words)
    starts[1:] = xp.cumsum(starts[1:])
    starts[0] = 0
    return int(starts[-1])
