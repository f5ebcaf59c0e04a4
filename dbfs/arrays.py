"""Array helpers shared by the converter and its text parser, the certificate's NumPy twin and the
distributed result writer."""

from __future__ import annotations

import numpy as np


def sorted_unique(parts) -> np.ndarray:
    """The distinct values of the concatenated arrays, ascending (sort and drop repeats: much faster
    than np.unique, which hashes in NumPy 2.3+)."""
    values = np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)
    return values[run_starts(values)]


def run_starts(values: np.ndarray) -> np.ndarray:
    """bool [len(values)]: True where a run of equal consecutive values begins."""
    first = np.ones(len(values), bool)
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return first


_FMIX_SHIFT = np.uint64(33)
_FMIX_MUL = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer of every element of a uint64 array (wrapping arithmetic)."""
    x = x ^ (x >> _FMIX_SHIFT)
    x *= _FMIX_MUL[0]
    x ^= x >> _FMIX_SHIFT
    x *= _FMIX_MUL[1]
    x ^= x >> _FMIX_SHIFT
    return x
