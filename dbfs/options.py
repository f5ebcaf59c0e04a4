"""Values of command-line options that several commands take, parsed in one place: the generator
seeds (--seed of the main mode, `generate` and `ws`), the row-major copy's settings (--row-copy of
the main mode and `plan`), and the refusal of options given where they do not apply (the parser in
dbfs.cli records which options the command line names, and their defaults)."""

from __future__ import annotations

from dbfs.errors import DbfsError

ROW_COPY = ("auto", "on", "off")        # dbfs.memory.resolve_row_copy
ROW_COPY_HELP = ("direction auto on several ranks: the row-major copy of each block for the bottom-up "
                 "levels. on: kept (their fastest form); off: an undirected graph's bottom-up levels search "
                 "the CSC's columns instead (about half the graph's memory; a directed graph needs the "
                 "copy); auto: on where the run fits with it, else off")
ROW_COPY_APPLIES = "to --direction auto (the copy serves the bottom-up levels)"    # refuse_inapplicable's


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


def refuse_inapplicable(args, rules) -> None:
    """DbfsError for the first (option, applies, where it applies) rule whose option the command line
    names with another value than its default (args.defaults, which dbfs.cli records beside `given`)
    although it does not apply: a default spelled out changes nothing, and scripts write every one."""
    given, defaults = getattr(args, "given", ()), getattr(args, "defaults", {})
    for option, applies, where in rules:
        name = option.lstrip("-").replace("-", "_")
        if not applies and name in given and getattr(args, name) != defaults.get(name):
            raise DbfsError(f"{option} applies {where}", collective=True)
