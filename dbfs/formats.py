"""Readers of the graph file formats that `convert` imports, block by block, as int64 edge arrays.

  snap         SNAP edge list: one `source target` pair of non-negative integer ids per line, separated
               by spaces or tabs; lines starting with '#' are comments; blank lines are skipped.
  mtx          Matrix Market `coordinate` matrix (pattern, integer or real; general, symmetric or
               skew-symmetric), 1-based: entry (i, j) is the edge i -> j; values are checked (integers,
               or reals in C or Fortran notation), not kept.
               A symmetric matrix stores each undirected edge once, so it becomes an undirected graph.
  metis        METIS/Chaco `.graph`: header `n m [fmt [ncon]]`, then line k (1-based, '%' comments
               excepted) lists the neighbours of vertex k, each undirected edge in both lists; edge
               {u, v} is kept once (u < v). Vertex sizes, vertex weights and edge weights are skipped.
  g500         Graph500 binary edge file: little-endian int64 pairs (v0, v1), 16 bytes per edge.
  g500-packed  the reference's packed form: uint32 v0_low, uint32 v1_low, uint32 high, 12 bytes per edge
               (v0 = v0_low | int16(high & 0xFFFF) << 32, v1 = v1_low | int16(high >> 16) << 32).

Method: the header (if any) is read line by line; the body is cut into blocks of whole lines (or whole
records) by the reading thread, and each block is parsed by `parse` in a worker thread with array
operations only (dbfs.textparse). `accept` runs in the reading thread, in file order: it adds what a
block cannot know by itself (line numbers, METIS vertex numbers) and raises DbfsError naming
file:line and the offending text. `finish` checks the counts the header promised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from dbfs import runtime
from dbfs.arrays import fmix64
from dbfs.edgelist import MAX_ID as MAX_VERTICES
from dbfs.errors import DbfsError
from dbfs.textparse import (LineError, Tokens, ascii_digits_note, comment_lines, fixed_rows, is_decimal,
                            parse_ids, tokenize)

TEXT_BLOCK_BYTES = 4 << 20
MAX_LINE_BYTES = 1 << 28
BINARY_BLOCK_EDGES = 1 << 20
FORMATS = ("snap", "mtx", "metis", "g500", "g500-packed")
EXTENSIONS = {".txt": "snap", ".tsv": "snap", ".edges": "snap", ".el": "snap", ".snap": "snap",
              ".edgelist": "snap", ".mtx": "mtx", ".graph": "metis", ".metis": "metis",
              ".g500": "g500", ".bin": "g500"}


# Compressed files that convert does not read, by their magic bytes (gzip, 1f 8b, is read).
UNREAD_COMPRESSION = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
CR_LINE_ENDS = ("lines end with a CR (carriage return) alone, the old Mac line end, which convert does not read: "
                "change the line ends to LF first (e.g. tr '\\r' '\\n' < IN > OUT; CRLF line ends are read)")


def unread_compression(path: str) -> str | None:
    """The name of the compression of `path` when it is one that convert does not read, else None."""
    with open(path, "rb") as f:
        head = f.read(8)
    return next((name for magic, name in UNREAD_COMPRESSION.items() if head.startswith(magic)), None)


def detect_format(path: str) -> str | None:
    """The format named by the file's extension (after a trailing .gz), or None."""
    name = os.path.basename(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return EXTENSIONS.get(os.path.splitext(name)[1])


@dataclass
class Parsed:
    """One parsed block: int64 edges in file order, or the error of its first bad line."""

    src: np.ndarray
    dst: np.ndarray
    lines: int                      # lines (text) or records (binary) in the block
    error: tuple | None = None      # (line or record index in the block, message, offending text)
    extra: dict = field(default_factory=dict)


def _empty() -> np.ndarray:
    return np.empty(0, np.int64)


class InputFormat:
    """Common driver: header, blocks, in-order acceptance with line numbers. Subclasses parse."""

    name = ""
    binary = False
    directed = True                 # how the tuples are to be read unless --undirected
    id_base = 0                     # the smallest valid id (ids are stored as id - id_base)
    block_bytes = TEXT_BLOCK_BYTES

    def __init__(self, path: str, stream):
        self.path, self.stream = path, stream
        self.line = 0                # lines consumed so far (text)
        self.n_vertices: int | None = None
        self.edges = 0

    def read_header(self) -> None:
        """Consume the header from the stream (none by default)."""

    def check_line_ends(self, head: bytes) -> None:
        """Refuse a text whose first line break is a CR alone (the old Mac line end), before its lines
        are read as one; `head` is the start of the input (a CR at its very end decides nothing)."""
        cr, lf = head.find(b"\r"), head.find(b"\n")
        if cr >= 0 and (lf < 0 or cr < lf) and head[cr + 1:cr + 2] not in (b"", b"\n"):
            self.fail(1, CR_LINE_ENDS)

    def fail(self, line: int, message: str, text: str | None = None):
        """DbfsError at `line` of the input (0: before its first line, an empty input)."""
        shown = f": {text!r}" if text is not None else ""
        where = f"{self.path}:{line}" if line else f"{self.path} (empty)"
        raise DbfsError(f"{where}: {message}{shown}", collective=True)

    def _check_vertex_count(self, n: int) -> None:
        if n > MAX_VERTICES:
            self.fail(self.line, f"the header announces {n} vertices, past the {MAX_VERTICES} (2^63 - 1) a graph "
                                 "file holds")

    def _header_line(self, comment: bytes):
        """The next line that is neither blank nor a comment, as text (None at the end of the input)."""
        while True:
            raw = self.stream.readline()
            if not raw:
                return None
            self.line += 1
            text = raw.decode("utf-8", "replace").strip()
            if text and not text.startswith(comment.decode()):
                return text

    def blocks(self):
        """Blocks of whole lines (uint8 arrays ending with a newline)."""
        pieces, pending = [], 0           # the start of a line that has not ended yet
        while True:
            data = self.stream.read(self.block_bytes)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                pieces.append(data)
                pending += len(data)
                if pending > MAX_LINE_BYTES:
                    raise DbfsError(f"{self.path}: a line longer than {MAX_LINE_BYTES >> 20} MiB: not a "
                                    f"{self.name} file?", collective=True)
                continue
            if pieces:
                block = np.frombuffer(b"".join(pieces + [data[:cut]]), np.uint8)
            else:
                block = np.frombuffer(data, np.uint8, count=cut)
            pieces, pending = [data[cut:]], len(data) - cut
            yield block
        tail = b"".join(pieces)
        if tail:
            yield np.frombuffer(tail + b"\n", np.uint8)

    def parse(self, block: np.ndarray) -> Parsed:
        raise NotImplementedError

    def parse_safely(self, block: np.ndarray) -> Parsed:
        """parse() with a malformed line turned into Parsed.error (runs in a worker thread)."""
        try:
            return self.parse(block)
        except LineError as e:
            tok = Tokens(block, _empty(), _empty(), np.flatnonzero(block == 10))
            text = tok.line_text(e.line)
            # a CR left inside a line (line_text drops a CRLF's) is a line break of another kind
            message = CR_LINE_ENDS if "\r" in text else e.message
            return Parsed(_empty(), _empty(), tok.n_lines, (e.line, message, text))

    def accept(self, parsed: Parsed) -> tuple[np.ndarray, np.ndarray]:
        """In file order: raise the block's error with its file line, else return its edges."""
        if parsed.error is not None:
            k, message, text = parsed.error
            self.fail(self.line + k + 1, message, text)
        self.line += parsed.lines
        self.edges += len(parsed.src)
        return parsed.src, parsed.dst

    def finish(self) -> None:
        """End-of-input checks."""


class Snap(InputFormat):
    """`src dst` lines, `#` or `%` (KONECT) comments; with extra_columns (convert --extra-columns ignore)
    longer lines too, their further columns (weights, timestamps) not read."""
    name = "snap"

    def __init__(self, path: str, stream, extra_columns: bool = False):
        super().__init__(path, stream)
        self.extra_columns = extra_columns

    def parse(self, block):
        tok = tokenize(block)
        rows, row_line = fixed_rows(tok, 2, b"#%", "two vertex ids (source target)", self.extra_columns,
                                    "--extra-columns ignore reads the first two of every line")
        ids = parse_ids(tok, (rows[:, None] + np.arange(2)).ravel(), row_line, 2)
        return Parsed(ids[0::2], ids[1::2], tok.n_lines)


_OTHER, _DIGIT, _SIGN, _DOT, _EXPONENT = range(5)
_INTEGER_CLASSES = np.full(256, _OTHER, np.uint8)
_INTEGER_CLASSES[np.frombuffer(b"0123456789", np.uint8)] = _DIGIT
_INTEGER_CLASSES[np.frombuffer(b"+-", np.uint8)] = _SIGN
_REAL_CLASSES = _INTEGER_CLASSES.copy()
_REAL_CLASSES[ord(".")] = _DOT
_REAL_CLASSES[np.frombuffer(b"eEdD", np.uint8)] = _EXPONENT        # C's 1.5e3 and Fortran's 1.5D3
# A Matrix Market value as an automaton over those classes: [+-](digits[.[digits]] | .digits)[(e|d)[+-]digits],
# what C's strtod and Fortran read, less nan and inf; an integer file's classes have no dot and no exponent
# letter, which leaves [+-]digits.
_NUMBER_STEP = np.array([
    # other digit sign dot exponent
    [8, 2, 1, 3, 8],    # 0 start
    [8, 2, 8, 3, 8],    # 1 sign
    [8, 2, 8, 4, 5],    # 2 digits: a number
    [8, 4, 8, 8, 8],    # 3 a leading dot
    [8, 4, 8, 8, 5],    # 4 fraction digits: a number
    [8, 7, 6, 8, 8],    # 5 exponent letter
    [8, 7, 8, 8, 8],    # 6 exponent sign
    [8, 7, 8, 8, 8],    # 7 exponent digits: a number
    [8, 8, 8, 8, 8],    # 8 rejected
], np.uint8)
_NUMBER_END = np.isin(np.arange(len(_NUMBER_STEP)), (2, 4, 7))
_MAX_NON_DIGITS = 4                     # two signs, a dot and an exponent letter


def _first_non_number(data: np.ndarray, start: np.ndarray, end: np.ndarray, classes: np.ndarray):
    """Index of the first token [start, end) that is not a number (_NUMBER_STEP), or None. The tokens of
    one length go through the automaton together, a byte column at a time. A digit after a digit leaves
    the state as it is, so the columns where every token has one are skipped: a long number costs a few
    steps (a token with more than _MAX_NON_DIGITS other bytes is no number, and does not take part)."""
    length = end - start
    bad = np.ones(len(start), bool)
    for size in np.flatnonzero(np.bincount(length)) if len(length) else ():
        pick = np.flatnonzero(length == size)
        kind = classes[data[np.arange(size)[:, None] + start[pick]]]          # [column, token]
        digit = kind == _DIGIT
        few_others = size - digit.sum(axis=0) <= _MAX_NON_DIGITS
        pick, kind, digit = pick[few_others], kind[:, few_others], digit[:, few_others]
        steps = np.ones(size, bool)
        steps[1:] = ~(digit[1:] & digit[:-1]).all(axis=1)
        state = np.zeros(len(pick), np.uint8)
        for column in np.flatnonzero(steps):
            state = _NUMBER_STEP[state, kind[column]]
        bad[pick] = ~_NUMBER_END[state]
    hits = np.flatnonzero(bad)
    return int(hits[0]) if len(hits) else None


class MatrixMarket(InputFormat):
    name = "mtx"
    id_base = 1

    def read_header(self):
        banner = self.stream.readline()
        self.line = 1
        words = banner.decode("utf-8", "replace").lower().split()
        if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
            self.fail(1, "not a Matrix Market file (expected '%%MatrixMarket matrix coordinate "
                      "<field> <symmetry>')", banner.decode("utf-8", "replace").rstrip())
        layout, self.field, symmetry = words[2:]
        if layout != "coordinate":
            self.fail(1, f"Matrix Market '{layout}' (dense) files are not graphs; need 'coordinate'")
        if self.field not in ("pattern", "integer", "real"):
            self.fail(1, f"Matrix Market field '{self.field}' is not supported (pattern, integer, real)")
        if symmetry not in ("general", "symmetric", "skew-symmetric"):
            self.fail(1, f"Matrix Market symmetry '{symmetry}' is not supported "
                      "(general, symmetric, skew-symmetric)")
        self.directed = symmetry == "general"
        size = self._header_line(b"%")
        numbers = size.split() if size else []
        if len(numbers) != 3 or not all(is_decimal(x) for x in numbers):
            self.fail(self.line, "expected the size line 'rows columns entries'" + ascii_digits_note(size or ""), size)
        rows, cols, self.nnz = (int(x) for x in numbers)
        if rows != cols:
            self.fail(self.line, f"the matrix is {rows} x {cols}; a graph needs a square matrix")
        if rows < 1:
            self.fail(self.line, "the matrix has no rows")
        self._check_vertex_count(rows)
        self.n_vertices = rows
        self.fields = 2 if self.field == "pattern" else 3

    def parse(self, block):
        tok = tokenize(block)
        rows, row_line = fixed_rows(tok, self.fields, b"%",
                                    "'row column'" if self.fields == 2 else "'row column value'")
        ids = parse_ids(tok, (rows[:, None] + np.arange(2)).ravel(), row_line, 2)
        out = np.flatnonzero((ids < 1) | (ids > self.n_vertices))
        if len(out):
            k = int(out[0])
            raise LineError(int(row_line[k // 2]), f"index {int(ids[k])} is outside 1..{self.n_vertices}")
        if self.fields == 3:
            classes = _INTEGER_CLASSES if self.field == "integer" else _REAL_CLASSES
            values = rows + 2
            bad = _first_non_number(tok.data, tok.start[values], tok.end[values], classes)
            if bad is not None:
                kind = "an integer" if self.field == "integer" else "a real number"
                raise LineError(int(row_line[bad]), f"the value is not {kind}")
        ids -= 1
        return Parsed(ids[0::2], ids[1::2], tok.n_lines)

    def finish(self):
        if self.edges != self.nnz:
            raise DbfsError(f"{self.path}: the size line announces {self.nnz} entries, the file has "
                            f"{self.edges}", collective=True)


class Metis(InputFormat):
    name = "metis"
    id_base = 1
    directed = False

    def read_header(self):
        header = self._header_line(b"%")
        words = header.split() if header else []
        if not 2 <= len(words) <= 4 or not all(is_decimal(w) for w in words):
            self.fail(self.line, "expected the METIS header 'vertices edges [fmt [ncon]]'"
                      + ascii_digits_note(header or ""), header)
        n, self.m = int(words[0]), int(words[1])
        fmt = words[2].zfill(3) if len(words) > 2 else "000"
        if len(fmt) != 3 or any(c not in "01" for c in fmt):
            self.fail(self.line, f"METIS fmt '{words[2]}' must be up to three 0/1 digits", header)
        ncon = int(words[3]) if len(words) > 3 else 1
        if n < 1:
            self.fail(self.line, "the graph has no vertices", header)
        self._check_vertex_count(n)
        self.n_vertices = n
        self.lead = (fmt[0] == "1") + (ncon if fmt[1] == "1" else 0)    # vertex size, vertex weights
        self.stride = 2 if fmt[2] == "1" else 1                           # neighbour [, edge weight]
        self.vertices = 0            # vertex lines accepted so far
        self.entries = 0             # adjacency entries
        self.forward = 0             # entries u -> v with u < v
        self.backward = 0
        # order-free sums of a hash of each pair {u, v}, from the entries u -> v with u < v and with u > v:
        # equal for symmetric lists (a mismatch with equal counts would go unseen by the counts alone)
        self.forward_sum = self.backward_sum = 0

    def parse(self, block):
        tok = tokenize(block)
        token_line = tok.token_lines()
        comment = comment_lines(tok, token_line, b"%")
        keep = ~comment[token_line]
        kept, kept_line = np.flatnonzero(keep), token_line[keep]
        counts = np.bincount(kept_line, minlength=tok.n_lines)
        # a blank line is a vertex without neighbours, or past the last vertex (checked in accept)
        wrong = np.flatnonzero(~comment & (counts > 0) & ((counts < self.lead)
                                                         | ((counts - self.lead) % self.stride != 0)))
        if len(wrong):
            raise LineError(int(wrong[0]), self.layout_problem(int(counts[wrong[0]])))
        values = parse_ids(tok, kept, kept_line, 1)
        position = np.arange(len(kept)) - np.searchsorted(kept_line, kept_line)
        is_neighbour = (position >= self.lead) & ((position - self.lead) % self.stride == 0)
        neighbour, line = values[is_neighbour], kept_line[is_neighbour]
        out = np.flatnonzero((neighbour < 1) | (neighbour > self.n_vertices))
        if len(out):
            k = int(out[0])
            raise LineError(int(line[k]), f"neighbour {int(neighbour[k])} is outside 1..{self.n_vertices}")
        vertex_of_line = np.cumsum(~comment) - 1                  # vertex lines include blank lines
        return Parsed(vertex_of_line[line], neighbour - 1, tok.n_lines,
                      extra={"line": line, "vertex_lines": int((~comment).sum()), "blank": counts == 0,
                             "comment": comment})

    def layout_problem(self, fields: int) -> str:
        pairs = "(neighbour, weight) pairs" if self.stride == 2 else "neighbours"
        return f"expected {self.lead} vertex field(s) then {pairs}, found {fields} fields"

    def accept(self, parsed):
        if parsed.error is not None:
            super().accept(parsed)
        x = parsed.extra
        src = parsed.src + self.vertices
        vertex_line = np.flatnonzero(~x["comment"])
        past_end = self.vertices + np.arange(len(vertex_line)) >= self.n_vertices
        extra_lines = vertex_line[past_end][~x["blank"][vertex_line[past_end]]]
        if len(extra_lines):
            self.fail(self.line + int(extra_lines[0]) + 1,
                      f"more vertex lines than the {self.n_vertices} vertices of the header")
        empty = vertex_line[~past_end][x["blank"][vertex_line[~past_end]]]
        if self.lead and len(empty):
            self.fail(self.line + int(empty[0]) + 1, self.layout_problem(0))
        loops = np.flatnonzero(src == parsed.dst)
        if len(loops):
            self.fail(self.line + int(x["line"][loops[0]]) + 1,
                      f"vertex {int(src[loops[0]]) + 1} lists itself (METIS graphs have no self-loops)")
        self.vertices = min(self.n_vertices, self.vertices + x["vertex_lines"])
        self.entries += len(src)
        forward = src < parsed.dst
        self.forward += int(forward.sum())
        self.backward += len(src) - int(forward.sum())
        self.forward_sum = (self.forward_sum + _pair_sum(src[forward], parsed.dst[forward])) % 2**64
        self.backward_sum = (self.backward_sum + _pair_sum(parsed.dst[~forward], src[~forward])) % 2**64
        self.line += parsed.lines
        self.edges += int(forward.sum())
        return src[forward], parsed.dst[forward]

    def finish(self):
        if self.vertices != self.n_vertices:
            raise DbfsError(f"{self.path}: the header announces {self.n_vertices} vertices, the file has "
                            f"{self.vertices} vertex lines", collective=True)
        if self.entries != 2 * self.m:
            raise DbfsError(f"{self.path}: the header announces {self.m} edges ({2 * self.m} adjacency "
                            f"entries), the file has {self.entries} entries", collective=True)
        if self.forward != self.backward:
            raise DbfsError(f"{self.path}: the adjacency lists are not symmetric ({self.forward} entries "
                            f"u -> v with u < v, {self.backward} with u > v)", collective=True)
        if self.forward_sum != self.backward_sum:
            raise DbfsError(f"{self.path}: the adjacency lists are not symmetric (as many entries u -> v with "
                            "u < v as with u > v, but some vertex lists a neighbour that does not list it)",
                            collective=True)


def _pair_sum(low: np.ndarray, high: np.ndarray) -> int:
    """The sum mod 2^64 of a hash of each pair (low[k], high[k])."""
    pairs = fmix64(fmix64(low.astype(np.uint64)) ^ high.astype(np.uint64))
    return int(pairs.sum(dtype=np.uint64))


class Graph500(InputFormat):
    name = "g500"
    binary = True
    directed = False
    record = 16
    block_edges = BINARY_BLOCK_EDGES

    def check_size(self, size: int) -> None:
        """Reject a file that is not a whole number of records before reading it."""
        if size % self.record:
            self.truncated(size)

    def truncated(self, size: int):
        raise DbfsError(f"{self.path}: truncated or not a {self.name} file: {size} bytes is not a whole "
                        f"number of {self.record}-byte edges ({runtime.count(size // self.record, 'edge')} and "
                        f"{runtime.count(size % self.record, 'byte')})", collective=True)

    def blocks(self):
        size = self.block_edges * self.record
        total = 0
        while True:
            data = self.stream.read(size)
            total += len(data)
            if len(data) % self.record:
                self.truncated(total)
            if not data:
                return
            yield np.frombuffer(data, np.uint8)

    def decode(self, block):
        pairs = block.view("<i8").reshape(-1, 2)
        return pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)

    def parse(self, block):
        src, dst = self.decode(block)
        negative = np.flatnonzero((src < 0) | (dst < 0))
        if len(negative):
            k = int(negative[0])
            v = int(src[k]) if src[k] < 0 else int(dst[k])
            return Parsed(_empty(), _empty(), len(src), (k, f"negative id {v}", None))
        return Parsed(src, dst, len(src))

    def accept(self, parsed):
        if parsed.error is not None:
            k, message, _ = parsed.error
            edge = self.edges + k
            raise DbfsError(f"{self.path}: edge {edge} (byte {edge * self.record}): {message}",
                            collective=True)
        self.edges += len(parsed.src)
        return parsed.src, parsed.dst


class Graph500Packed(Graph500):
    name = "g500-packed"
    record = 12

    def decode(self, block):
        words = block.view("<u4").reshape(-1, 3)
        high = words[:, 2]
        v0_high = (high & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int64)
        v1_high = (high >> 16).astype(np.uint16).view(np.int16).astype(np.int64)
        return (words[:, 0].astype(np.int64) | (v0_high << 32),
                words[:, 1].astype(np.int64) | (v1_high << 32))


READERS = {"snap": Snap, "mtx": MatrixMarket, "metis": Metis, "g500": Graph500,
           "g500-packed": Graph500Packed}
