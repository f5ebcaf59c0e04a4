"""Values of command-line options that several commands take, parsed in one place: the generator
seeds (--seed of the main mode, `generate` and `ws`)."""

from __future__ import annotations

from dbfs.errors import DbfsError


def _seed_value(text: str) -> int:
    """One seed: a Python integer literal (2, 0x2f, 0o7, 1_000) or a decimal with leading zeros (007)."""
    text = text.strip()
    try:
        return int(text, 0)
    except ValueError:
        return int(text, 10)


def parse_seed(text: str) -> tuple[int, int]:
    """'A,B' -> (A, B), two integers in [0, 2^64) (the reference's seeds are 2,3)."""
    parts = str(text).split(",")
    try:
        seed = tuple(_seed_value(p) for p in parts)
    except ValueError:
        seed = ()
    if len(seed) != 2 or not all(0 <= s < 2**64 for s in seed):
        raise DbfsError(f"--seed must be two unsigned 64-bit integers A,B (e.g. 2,3 or 0x2,0x3), got "
                        f"{text!r}", collective=True)
    return seed
