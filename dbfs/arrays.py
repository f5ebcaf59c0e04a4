"""Array helpers shared by the converter and the distributed result writer."""

from __future__ import annotations

import numpy as np


def sorted_unique(parts) -> np.ndarray:
    """The distinct values of the concatenated arrays, ascending (sort and drop repeats: much faster
    than np.unique, which hashes in NumPy 2.3+)."""
    values = np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)
    first = np.ones(len(values), bool)
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]
