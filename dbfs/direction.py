"""Beamer's direction rule of the direction-optimizing BFS, on the host.

After a level that produced a frontier of nf_new vertices (nf_old before it) whose edges number
mf_new, with mu_new edges left unvisited: a top-down search turns bottom-up when mf_new > mu_new /
alpha *while the frontier grows* (the rule is meant for the rising part of the search: a shrinking
frontier of a few vertices never goes bottom-up, so a lattice's tail does not flip back and forth); a
bottom-up search turns top-down once the frontier shrinks below n / beta vertices. alpha 0 keeps the
search top-down. The multi-rank loop applies this to global sums; kernels/level_control.cuh
next_step is its device twin (the one-GPU loop), and both are tested against each other.
"""

from __future__ import annotations

DEFAULT_ALPHA, DEFAULT_BETA = 14.0, 24.0


def next_bottom_up(bottom_up: bool, nf_new: int, nf_old: int, mf_new: int, mu_new: int, alpha: float,
                   beta: float, n: int) -> bool:
    """Whether the next level runs bottom-up (see the module docstring)."""
    if bottom_up:
        return not (nf_new < nf_old and float(nf_new) * beta < float(n))
    return float(mf_new) * alpha > float(mu_new) and nf_new > nf_old
