"""Vectorized parsing of line-oriented integer text (edge lists, Matrix Market, METIS) with NumPy.

A block is a byte array of whole lines (ending with a newline). Tokenizing: a byte is whitespace when
it is space, tab, CR, LF, VT or FF; token starts and ends are the positions where that flag changes
(one comparison of the flag array with itself shifted). Line ends are the positions of LF; a token's
line is the number of LFs before its start (a binary search, or no search at all in the common case
where every line has the same number of fields, which is checked by comparing the k-th token starts
with the line ends). Integers are read by token length: for each length L present, the L digit columns
of all tokens of that length are gathered and accumulated (value = 10 * value + digit) in uint64, with
a flag for any byte that is not a digit. Every step is an array operation over the block; there is no
Python loop over lines or tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbfs.arrays import run_starts

INT64_MAX = np.uint64(2**63 - 1)
_MAX_DIGITS = 19
_TEXT_PREVIEW = 80


@dataclass
class Tokens:
    data: np.ndarray        # uint8 block, ends with b"\n"
    start: np.ndarray       # int64 token starts
    end: np.ndarray         # int64 token ends (exclusive)
    line_end: np.ndarray    # int64 positions of the LFs: line k is data[line_end[k-1]+1 : line_end[k]]

    @property
    def n_lines(self) -> int:
        return len(self.line_end)

    def token_lines(self) -> np.ndarray:
        """Line index of every token."""
        return np.searchsorted(self.line_end, self.start)

    def line_text(self, line: int) -> str:
        """Line `line` of the block (without its line break), shortened for error messages."""
        a = int(self.line_end[line - 1]) + 1 if line > 0 else 0
        text = bytes(self.data[a:int(self.line_end[line])]).decode("utf-8", "replace").rstrip("\r")
        return text if len(text) <= _TEXT_PREVIEW else text[:_TEXT_PREVIEW] + "..."


def tokenize(data: np.ndarray) -> Tokens:
    """Tokens and line ends of a block of whole lines (uint8, last byte b'\\n')."""
    white = (data == 32) | ((data - np.uint8(9)) < 5)
    change = np.flatnonzero(white[1:] != white[:-1])
    change += 1
    if len(data) and not white[0]:
        change = np.concatenate((np.zeros(1, np.int64), change))
    return Tokens(data, change[0::2], change[1::2], np.flatnonzero(data == 10))


class LineError(Exception):
    """A malformed line of a block: its index in the block and what is wrong with it."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message


def comment_lines(tok: Tokens, token_line: np.ndarray, markers: bytes) -> np.ndarray:
    """bool [n_lines]: lines whose first token starts with one of the comment marker bytes."""
    comment = np.zeros(tok.n_lines, bool)
    comment[token_line[run_starts(token_line) & _starts_with(tok, tok.start, markers)]] = True
    return comment


def _starts_with(tok: Tokens, starts: np.ndarray, markers: bytes) -> np.ndarray:
    return np.isin(tok.data[starts], np.frombuffer(markers, np.uint8))


def fixed_rows(tok: Tokens, fields: int, markers: bytes, what: str, longer: bool = False,
               longer_hint: str = ""):
    """Token index of the first field of every data row, and the line index of every row, for a block
    whose lines are blank, comments (first token starting with one of `markers`) or exactly `fields`
    tokens (with `longer`, at least `fields`: the further ones are not read). Raises LineError for any
    other line, naming `longer_hint` where a line is too long."""
    n_tokens = len(tok.start)
    if n_tokens == fields * tok.n_lines and n_tokens:
        # the common case: every line has exactly `fields` tokens and none is a comment
        line_start = np.empty_like(tok.line_end)
        line_start[0] = -1
        line_start[1:] = tok.line_end[:-1]
        firsts = tok.start[0::fields]
        if ((firsts > line_start).all() and (tok.end[fields - 1::fields] <= tok.line_end).all()
                and not _starts_with(tok, firsts, markers).any()):
            rows = np.arange(0, n_tokens, fields)
            return rows, np.arange(tok.n_lines)
    token_line = tok.token_lines()
    keep = ~comment_lines(tok, token_line, markers)[token_line]
    kept_lines = token_line[keep]
    counts = np.bincount(kept_lines, minlength=tok.n_lines)
    bad = np.flatnonzero((counts != 0) & ((counts < fields) if longer else (counts != fields)))
    if len(bad):
        found = int(counts[bad[0]])
        hint = f" ({longer_hint})" if found > fields and longer_hint else ""
        raise LineError(int(bad[0]), f"expected {what}, found {found} field{'s' if found != 1 else ''}{hint}")
    kept = np.flatnonzero(keep)
    if not longer:
        return kept[0::fields], kept_lines[0::fields]
    first = run_starts(kept_lines)                # a line's first kept token
    return kept[first], kept_lines[first]


def parse_uint(data: np.ndarray, start: np.ndarray, end: np.ndarray):
    """Values (uint64) of the tokens [start, end) read as unsigned decimal integers, and a bool mask of
    the tokens that are not (a non-digit byte, or more than 19 digits)."""
    length = end - start
    values = np.zeros(len(start), np.uint64)
    bad = length > _MAX_DIGITS
    for size in np.flatnonzero(np.bincount(np.minimum(length, _MAX_DIGITS + 1))):
        if size > _MAX_DIGITS:
            continue
        pick = np.flatnonzero(length == size)
        pos = start[pick]
        acc = np.zeros(len(pick), np.uint64)
        nondigit = np.zeros(len(pick), bool)
        for _ in range(size):
            digit = data[pos] - np.uint8(48)
            nondigit |= digit > 9
            acc *= np.uint64(10)
            acc += digit
            pos += 1
        values[pick] = acc
        bad[pick] |= nondigit
    return values, bad


def is_decimal(text: str) -> bool:
    """Whether `text` is a non-empty run of the ASCII digits 0-9 (str.isdigit also takes other scripts'
    digits and superscript or fullwidth ones, which int() then reads or refuses)."""
    return text.isascii() and text.isdigit()


def ascii_digits_note(text: str) -> str:
    """For an error about `text`, where numbers were expected: ' (...)' naming its first non-ASCII
    character (other scripts' digits and fullwidth ones look like 0-9), or ''."""
    odd = next((c for c in text if not c.isascii()), None)
    return f" (numbers are written with the ASCII digits 0-9, not {odd!r}, U+{ord(odd):04X})" if odd else ""


def describe_bad_id(data: np.ndarray, start: int, end: int) -> str:
    """Why the token data[start:end] is not a valid vertex id."""
    text = bytes(data[start:end]).decode("utf-8", "replace")
    shown = text if len(text) <= 30 else text[:30] + "..."
    if text.startswith("-") and is_decimal(text[1:]):
        return f"negative id {shown}"
    if is_decimal(text):
        return f"id {shown} is larger than 2^63 - 1"
    return f"{shown!r} is not a vertex id{ascii_digits_note(text) or ' (a non-negative integer)'}"


def parse_ids(tok: Tokens, tokens: np.ndarray, row_line: np.ndarray, fields: int) -> np.ndarray:
    """int64 ids of the given tokens (in file order; token k belongs to row k // fields, on line
    row_line[row]); LineError at the first token that is not a non-negative 64-bit integer."""
    values, bad = parse_uint(tok.data, tok.start[tokens], tok.end[tokens])
    bad |= values > INT64_MAX
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        t = int(tokens[k])
        raise LineError(int(row_line[k // fields]),
                        describe_bad_id(tok.data, int(tok.start[t]), int(tok.end[t])))
    return values.view(np.int64)
