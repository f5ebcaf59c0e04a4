"""The records a rank keeps of the vertices of the other ranks of its grid line, and how their owners read
them after a search (the delayed-predecessor resolution, paper 004, section 3.5): the discoverers' local
columns (pred_row, along the grid row) and the column finds' local rows (column_parent, along the grid
column, where the bottom-up levels searched the CSC's columns).

Block k of a record holds the entries for the vertices owned by the line's k-th rank. The record is held
densely (every local index), or by position (dbfs.ops.sparse.Positions: only the indices of the block's
non-empty rows or columns take room, where most of them are empty). Either way the owner reads each
rank's block as a block held by position (dbfs.ops.predecessors): in place where NVSHMEM maps the peers'
memory (the record and its Positions on the symmetric heap, their addresses taken once), else gathered
in two rounds through an Exchange of the line: the block's words (its Positions' words, or, for a dense
record, the presence bitmap of its set entries, dbfs.ops.sparse.pack_present), then the values they
hold. The received blocks land at the same places every search, so their addresses, too, are taken once
on the GPU, where the resolution is captured into a CUDA graph.
"""

from __future__ import annotations

import numpy as np

from dbfs.ops.sparse import Positions, pack_present, word_starts


class LineRecords:
    """Record `name` of a SearchState (held by the Positions `kind`_positions where that is not None) along
    a grid line of `ranks` (world ranks, in line order), this rank being the line's `line`-th. `gather`:
    the line's Exchange (None: the record is read in place; `map_to_heap(state, name, ranks, offset)`, a
    collective that moves a state array to the NVSHMEM heap and returns the line's addresses of it, is then
    used once here)."""

    def __init__(self, backend, state, name: str, kind: str, line: int, ranks: list, gather=None,
                 map_to_heap=None):
        self.backend, self.state, self.name, self.kind, self.line = backend, state, name, kind, line
        self.n, self.gather = len(ranks), gather
        self.block = state.grid.block
        self.mapped = self._map(ranks, map_to_heap) if gather is None and self.n > 1 else None
        held = self.positions
        # where each rank's block of a record held by position begins and ends (the Positions are fixed)
        self.bounds = held.block_bounds(backend, self.block).tolist() if held is not None else None
        self.addresses = self._addresses(self._received()) if backend.is_gpu and self.mapped is None else None

    @property
    def positions(self):
        return getattr(self.state, f"{self.kind}_positions")

    @property
    def record(self):
        return getattr(self.state, self.name)

    def entries(self):
        """Collective over the line where gathered: every rank's block for this rank, in line order, as
        dbfs.ops.predecessors reads them (on the GPU three uint64 [n] address arrays, on the CPU a list of
        (values, words, starts))."""
        if self.mapped is not None:
            return self.mapped
        received = self._send()
        return self.addresses if self.backend.is_gpu else self._received(received)

    def _own(self, k: int):
        """This rank's block k (values, words, starts)."""
        b, held = self.block, self.positions
        if held is None:
            return self.record[k * b:(k + 1) * b], None, None
        part = held.block(k, b)
        return self.record, part.words, part.starts

    def _send(self) -> dict:
        """Two rounds through the gather: each peer's block of this rank's record (its words, then its
        values) goes to that peer; returns {peer: the values received}, their words and starts placed."""
        x, s, b = self.gather, self.state, self.block
        peers, w, held = (x.peers if x is not None else []), b // 32, self.positions
        if not peers:
            return {}
        if held is None:
            words = {m: s.sent_presence[k * w:(k + 1) * w] for k, m in enumerate(peers)}
            packed = {m: x.send_scratch[m].view(np.int32) for m in peers}
            values = {m: packed[m][:pack_present(self.backend, self._own(m)[0], words[m], s.presence_starts[:w + 1],
                                                 packed[m])] for m in peers}
        else:
            words = {m: self._own(m)[1] for m in peers}
            values = {m: self.record[self.bounds[m]:self.bounds[m + 1]] for m in peers}
        landed_words, landed_starts = self._landed_words(), self._landed_starts()
        for m, words_in in x.transfer(words, peers).items():
            landed_words[m][:] = words_in
        received = x.transfer({m: values[m].view(np.uint32) for m in peers}, peers)
        for m in peers:
            word_starts(self.backend, landed_words[m], landed_starts[m])
        return received

    def _landed_words(self) -> dict:
        w, peers = self.block // 32, self.gather.peers
        return {m: self.state.recv_presence[k * w:(k + 1) * w] for k, m in enumerate(peers)}

    def _landed_starts(self) -> dict:
        w, peers = self.block // 32, self.gather.peers
        return {m: self.state.presence_starts[k * (w + 1):(k + 1) * (w + 1)] for k, m in enumerate(peers)}

    def _received(self, received=None) -> list:
        """Every rank's block for this rank: its own, and the peers' where they land (`received`: the
        values of this search; None: the whole landing, whose place alone counts)."""
        blocks = {self.line: self._own(self.line)}
        if self.gather is not None:
            words, starts = self._landed_words(), self._landed_starts()
            for m in self.gather.peers:
                values = self.gather.recv_dev[m] if received is None else received[m]
                blocks[m] = (values.view(np.int32), words[m], starts[m])
        return [blocks[k] for k in range(self.n)]

    def _addresses(self, blocks: list) -> tuple:
        return tuple(self.backend.asarray(np.array([0 if a is None else a.data.ptr for a in column], np.uint64))
                     for column in zip(*blocks))

    def _map(self, ranks: list, map_to_heap) -> tuple:
        """Collective: the record, and the Positions that hold it, moved to the NVSHMEM heap; the addresses,
        here, of each rank's block for this rank."""
        s, b, line = self.state, self.block, self.line
        nothing = self.backend.xp.zeros(self.n, np.uint64)
        held = self.positions
        if held is None:
            return map_to_heap(s, self.name, ranks, 4 * b * line), nothing, nothing
        values = map_to_heap(s, self.name, ranks, 0)
        words = map_to_heap(s, f"{self.kind}_words", ranks, b // 8 * line)
        starts = map_to_heap(s, f"{self.kind}_starts", ranks, b // 8 * line)
        getattr(s, f"{self.kind}_words")[:] = held.words           # moving zeroed them
        getattr(s, f"{self.kind}_starts")[:] = held.starts
        setattr(s, f"{self.kind}_positions",
                Positions(getattr(s, f"{self.kind}_words"), getattr(s, f"{self.kind}_starts"), held.count))
        return values, words, starts
