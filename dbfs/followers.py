"""Bottom-up levels that run behind a grid's whole bottom-up level in the same host turn, where the device
decides so (issue 29: the search driven by the device).

A whole level (every exchange on the device: NVSHMEM; dbfs.grid_loop) costs the host one turn: the wait
for its end, the decision in Python and the next graph's launch, while the GPU idles (0.05-0.25 ms under
CUDA MPS, most of a small level). A Kronecker search runs two to four bottom-up levels in a row, and
after each the rule that keeps it bottom-up needs only the level's global sums, which the level's own
kernels have already made (level_totals). So after a whole bottom-up level the host launches FOLLOWERS
more graphs before it waits, each a gate kernel (kernels/level_gate.cu) and a CUDA graph IF node
(dbfs.conditional) whose body is the next bottom-up level. The gate applies the host's rule to the sums
the level before it left, and opens its node (advancing the control block's level) or shuts it and the
later ones. Each follower writes its own sums, status record, phase marks and opened flag, so after its
one wait the host takes the levels that ran as if it had launched them one by one, and checks that its
own decision agrees with the device's.

A follower's body is the bottom-up level whose frontier is already in place (the previous level's commit
stored it into the grid-column peers' bitmaps: front_peers), so it stages and sends nothing the host
must count or read before it runs.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from dbfs import conditional
from dbfs.backend import abandon_capture
from dbfs.kernels import STAT_WORDS
from dbfs.ops.level_control import follow_bottom_up
from dbfs.timing import GraphMarks

# Graphs launched behind a whole bottom-up level: a Kronecker search's bottom-up levels come in runs of
# two to four, and a follower left shut costs the GPU its gate and node (~5 us, bench/NOTES.md,
# 2026-11-27, conditional graph nodes from CuPy).
FOLLOWERS = 2


class Follower:
    """One follower: its captured graph and the pinned records its level writes."""

    def __init__(self, backend, marks_capacity: int):
        self.graph = None
        self.marks = GraphMarks(backend, marks_capacity)
        self.sums = backend.pinned_empty(2, np.int64)        # the new frontier's global size, degree sum
        self.status = backend.pinned_empty(STAT_WORDS, np.int64)
        self.opened = backend.pinned_empty(1, np.int64)


class Followers:
    """FOLLOWERS captured follower graphs of one grid loop (GPU; dbfs.conditional.available())."""

    def __init__(self, backend, marks_capacity: int):
        self.backend = backend
        self.slots = [Follower(backend, marks_capacity) for _ in range(FOLLOWERS)]
        self.ran = deque()                  # the followers of the last launch that ran, in order
        self.shut = False                   # whether a gate of the last launch shut (after the last in ran)

    def capture(self, stream, control, leader_sums, beta: float, n: int, enqueue) -> None:
        """Capture the followers, running nothing (every kernel loaded). enqueue(mark, sums, status)
        enqueues the bottom-up level on the current stream, its control block already on the device,
        writing its global sums and status record to the arrays given; the first gate reads
        `leader_sums`, each later one its predecessor's. Raises RuntimeError where CUDA refuses."""
        backend, launches = self.backend, self.backend.launches
        body_stream = backend.xp.cuda.Stream(non_blocking=True)
        sums = leader_sums
        try:
            for follower in self.slots:
                with stream:
                    stream.begin_capture()
                    handle, value = conditional.conditional_handle(stream)
                    follow_bottom_up(backend, value, control, sums, beta, n, follower.opened)
                    with conditional.if_body(stream, handle, body_stream):
                        follower.marks.restart()
                        enqueue(follower.marks.switch, follower.sums, follower.status)
                        follower.marks.switch(None)
                        follower.marks.copy_out(body_stream)
                    follower.graph = stream.end_capture()
                follower.graph.upload(stream)
                sums = follower.sums
        except (RuntimeError, OSError):
            abandon_capture(stream)
            raise
        finally:
            backend.launches = launches

    def start_search(self) -> None:
        self.ran.clear()
        self.shut = False

    def launch(self, stream) -> None:
        """Every follower behind the level just launched on `stream` (no wait)."""
        for follower in self.slots:
            follower.graph.launch(stream)
        self.backend.launches += len(self.slots)

    def collect(self) -> float:
        """After the wait on a launch: the followers that ran become `ran`; returns the seconds they took
        on the device (from their first phase mark to their last)."""
        self.ran.clear()
        for follower in self.slots:
            if not follower.opened[0]:
                break
            self.ran.append(follower)
        self.shut = len(self.ran) < len(self.slots)
        return sum(sum(f.marks.seconds().values()) for f in self.ran)
