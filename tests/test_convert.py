"""`dbfs convert`: every format round-trips (tests/data holds small files written for the purpose:
comments, blank lines, 1-based ids, duplicate edges, self-loops, isolated vertices, ids above 2^32,
symmetric .mtx, directed input), the streaming paths agree with a NumPy reference when forced through
many blocks, runs and chunks, and bad input gives one clear error naming file:line and leaves nothing.
Conversion is a one-process tool: these tests run in the single-rank pass."""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from dbfs import convert, edgelist, formats
from dbfs.errors import DbfsError
from launcher import launcher_free_env

pytestmark = pytest.mark.one_rank

DATA = Path(__file__).resolve().parent / "data"
BIG = 8589934592


def parse(*argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    convert.add_arguments(parser)
    return parser.parse_args([str(a) for a in argv])


def run_convert(src: Path, out: Path, *options) -> dict:
    return convert.convert(parse(src, "--out", out, *options))


def original_edges(path: Path) -> list[tuple[int, int]]:
    """The file's edges in original ids, in file order."""
    info = edgelist.graph_info(path)
    src, dst = edgelist.read_edge_slice(path, 0, info.n_edges)
    ids = info.original_ids(0, info.n_vertices)
    return list(zip(ids[src].tolist(), ids[dst].tolist()))


def leftovers(directory: Path, keep=()) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


# ------------------------------------------------------------------------------------- round trips
SNAP_EDGES = [(7, 9), (9, BIG), (BIG, 7), (7, 9), (12, 12), (9, 3000000000), (100, 7)]


def test_snap_renumbers_sparse_ids_and_keeps_every_tuple(tmp_path):
    figures = run_convert(DATA / "directed.txt", tmp_path / "g.h5")
    assert figures["n_edges"] == 7 and figures["renumbered"] and figures["directed"]
    info = edgelist.graph_info(tmp_path / "g.h5")
    assert info.n_vertices == 6 and info.directed and info.has_ids
    assert info.original_ids(0, 6).tolist() == [7, 9, 12, 100, 3000000000, BIG]
    assert original_edges(tmp_path / "g.h5") == SNAP_EDGES
    assert info.attrs["source_format"] == "snap" and info.attrs["source_file"] == "directed.txt"
    assert info.dense_id(BIG) == 5 and info.dense_id(8) is None and info.dense_id(10**15) is None
    with h5py.File(tmp_path / "g.h5") as f:
        for name in ("src", "dst", "ids"):
            assert f[name].dtype == np.int64 and f[name].chunks and f[name].compression == "gzip"
    assert leftovers(tmp_path) == ["g.h5"]


def test_snap_keep_ids_and_undirected(tmp_path):
    text = tmp_path / "small.txt"
    text.write_text("0 3\n3 1\n1 1\n")
    run_convert(text, tmp_path / "g.h5", "--ids", "keep", "--undirected")
    info = edgelist.graph_info(tmp_path / "g.h5")
    assert (info.n_vertices, info.directed, info.has_ids, info.id_base) == (4, False, False, 0)
    assert original_edges(tmp_path / "g.h5") == [(0, 3), (3, 1), (1, 1)]


def test_gzip_input_gives_the_same_graph(tmp_path):
    packed = tmp_path / "directed.txt.gz"
    packed.write_bytes(gzip.compress((DATA / "directed.txt").read_bytes()))
    run_convert(packed, tmp_path / "gz.h5")
    run_convert(DATA / "directed.txt", tmp_path / "plain.h5")
    hashes = [edgelist.graph_info(tmp_path / p).attrs["content_hash"] for p in ("gz.h5", "plain.h5")]
    assert hashes[0] == hashes[1]
    assert original_edges(tmp_path / "gz.h5") == SNAP_EDGES


def test_general_mtx_is_directed_and_1_based(tmp_path):
    run_convert(DATA / "general.mtx", tmp_path / "g.h5")
    info = edgelist.graph_info(tmp_path / "g.h5")
    assert (info.n_vertices, info.directed, info.id_base, info.has_ids) == (6, True, 1, False)
    assert original_edges(tmp_path / "g.h5") == [(1, 2), (2, 3), (3, 1), (1, 2), (4, 4), (2, 4), (3, 5)]
    src, _ = edgelist.read_edge_slice(tmp_path / "g.h5", 0, 1)
    assert src.tolist() == [0]                       # stored 0-based
    assert info.dense_id(6) == 5 and info.dense_id(0) is None and info.dense_id(7) is None


def test_symmetric_mtx_is_undirected(tmp_path):
    run_convert(DATA / "symmetric.mtx", tmp_path / "g.h5")
    info = edgelist.graph_info(tmp_path / "g.h5")
    assert (info.n_vertices, info.directed) == (5, False)
    assert original_edges(tmp_path / "g.h5") == [(2, 1), (3, 2), (3, 3), (5, 4), (4, 2)]


REAL_VALUES = ["+.5", "1.", "1.e5", "-1.5e-3", "3.D+02", "1E+05", "-0", "1" * 40 + ".5", "7" * 10000]


def test_mtx_reads_every_form_of_a_real_value(tmp_path):
    lines = "".join(f"1 2 {value}\n" for value in REAL_VALUES)
    (tmp_path / "m.mtx").write_text(f"%%MatrixMarket matrix coordinate real general\n2 2 {len(REAL_VALUES)}\n{lines}")
    assert run_convert(tmp_path / "m.mtx", tmp_path / "m.h5")["n_edges"] == len(REAL_VALUES)


@pytest.mark.parametrize("name, edges", [
    ("small.graph", [(1, 2), (1, 3), (2, 3), (2, 5)]),
    ("weighted.graph", [(1, 2), (1, 3), (3, 4)]),
])
def test_metis_keeps_each_edge_once(tmp_path, name, edges):
    run_convert(DATA / name, tmp_path / "g.h5")
    info = edgelist.graph_info(tmp_path / "g.h5")
    assert not info.directed and info.n_vertices == {"small.graph": 5, "weighted.graph": 4}[name]
    assert original_edges(tmp_path / "g.h5") == edges


G500_EDGES = [(0, 1), (1, 2), (2, 0), (5, 5), (1, 2), (3, 6), (6, 4294967301)]


@pytest.mark.parametrize("name, options", [("edges.g500", ()),
                                           ("edges_packed.dat", ("--format", "g500-packed"))])
def test_graph500_binary_both_record_forms(tmp_path, name, options):
    run_convert(DATA / name, tmp_path / "keep.h5", *options)
    info = edgelist.graph_info(tmp_path / "keep.h5")
    assert (info.n_vertices, info.directed, info.has_ids) == (4294967302, False, False)
    assert original_edges_keep(tmp_path / "keep.h5") == G500_EDGES
    run_convert(DATA / name, tmp_path / "dense.h5", "--ids", "renumber", *options)
    info = edgelist.graph_info(tmp_path / "dense.h5")
    assert info.n_vertices == 7 and info.original_ids(0, 7).tolist() == [0, 1, 2, 3, 5, 6, 4294967301]
    assert original_edges(tmp_path / "dense.h5") == G500_EDGES


def test_n_vertices_for_headerless_kept_ids(tmp_path):
    run_convert(DATA / "edges.g500", tmp_path / "g.h5", "--n-vertices", 2**33)
    assert edgelist.graph_info(tmp_path / "g.h5").n_vertices == 2**33
    for options, message in [(("--n-vertices", 100), "has vertex id 4294967301"),
                              (("--n-vertices", 8, "--ids", "renumber"), "needs kept ids")]:
        with pytest.raises(DbfsError, match=message):
            run_convert(DATA / "edges.g500", tmp_path / "x.h5", *options)
    with pytest.raises(DbfsError, match="the header of .*general.mtx says 6"):
        run_convert(DATA / "general.mtx", tmp_path / "x.h5", "--n-vertices", 9)
    assert leftovers(tmp_path) == ["g.h5"]


def original_edges_keep(path: Path):
    info = edgelist.graph_info(path)
    src, dst = edgelist.read_edge_slice(path, 0, info.n_edges)
    return list(zip(src.tolist(), dst.tolist()))


# ----------------------------------------------------------------------------- streaming at scale
def write_snap(path: Path, src: np.ndarray, dst: np.ndarray) -> None:
    lines = np.char.add(np.char.add(src.astype(str), "\t"), dst.astype(str))
    path.write_text("# random graph\n" + "\n".join(lines.tolist()) + "\n")


def test_many_blocks_runs_ranges_and_chunks_match_numpy(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    pool = rng.integers(0, 2**62, 3000)
    src, dst = rng.choice(pool, 40000), rng.choice(pool, 40000)
    write_snap(tmp_path / "r.txt", src, dst)
    monkeypatch.setattr(formats.InputFormat, "block_bytes", 4096)
    monkeypatch.setattr(convert, "RUN_IDS", 5000)
    monkeypatch.setattr(convert, "RANGE_IDS", 700)
    monkeypatch.setattr(convert, "MAP_EDGES", 3000)
    monkeypatch.setattr(edgelist, "CHUNK_ELEMS", 4096)
    run_convert(tmp_path / "r.txt", tmp_path / "r.h5", "--threads", "3")
    ids = np.unique(np.concatenate((src, dst)))
    info = edgelist.graph_info(tmp_path / "r.h5")
    assert np.array_equal(info.original_ids(0, info.n_vertices), ids)
    got_src, got_dst = edgelist.read_edge_slice(tmp_path / "r.h5", 0, info.n_edges)
    assert np.array_equal(got_src, np.searchsorted(ids, src))
    assert np.array_equal(got_dst, np.searchsorted(ids, dst))
    with h5py.File(tmp_path / "r.h5") as f:
        assert f["src"].chunks == (4096,)
    assert leftovers(tmp_path) == ["r.h5", "r.txt"]


def test_error_line_is_counted_across_blocks(tmp_path, monkeypatch):
    lines = [f"{k} {k + 1}" for k in range(5000)]
    lines[4321] = "4321 43x22"
    (tmp_path / "e.txt").write_text("# header\n" + "\n".join(lines) + "\n")
    monkeypatch.setattr(formats.InputFormat, "block_bytes", 1000)
    with pytest.raises(DbfsError, match=r"e\.txt:4323: '43x22' is not a vertex id.*'4321 43x22'"):
        run_convert(tmp_path / "e.txt", tmp_path / "e.h5", "--threads", "2")
    assert leftovers(tmp_path) == ["e.txt"]


def test_long_lines_span_blocks_and_endless_ones_stop(tmp_path, monkeypatch):
    monkeypatch.setattr(formats.InputFormat, "block_bytes", 16)
    neighbours = " ".join(str(k) for k in range(2, 301))
    (tmp_path / "hub.graph").write_text(f"300 299\n{neighbours}\n" + "1\n" * 299)
    run_convert(tmp_path / "hub.graph", tmp_path / "hub.h5")
    assert original_edges(tmp_path / "hub.h5") == [(1, k) for k in range(2, 301)]
    monkeypatch.setattr(formats, "MAX_LINE_BYTES", 1000)
    (tmp_path / "endless.txt").write_text("1 2\n" + "7" * 5000)
    with pytest.raises(DbfsError, match=r"endless\.txt: a line longer than"):
        run_convert(tmp_path / "endless.txt", tmp_path / "endless.h5")
    assert leftovers(tmp_path) == ["endless.txt", "hub.graph", "hub.h5"]


def test_content_hash_depends_on_the_edges_only(tmp_path):
    (tmp_path / "a.txt").write_text("1 2\n2 3\n")
    (tmp_path / "b.txt").write_text("# the same edges\n1\t2\n\n2 3\n")
    (tmp_path / "c.txt").write_text("1 2\n3 2\n")
    for name in "abc":
        run_convert(tmp_path / f"{name}.txt", tmp_path / f"{name}.h5")
    digest = {name: edgelist.graph_info(tmp_path / f"{name}.h5").attrs["content_hash"] for name in "abc"}
    assert digest["a"] == digest["b"] != digest["c"]


# ------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name, options, message", [
    ("malformed.txt", (), r"malformed\.txt:4: 'x4' is not a vertex id .*: '3 x4'"),
    ("negative.txt", (), r"negative\.txt:2: negative id -3: '2 -3'"),
    ("short.g500", (), r"short\.g500: truncated or not a g500 file: 53 bytes is not a whole number of "
                       r"16-byte edges \(3 edges and 5 bytes\)"),
    ("edges.dat", (), r"cannot tell the format of .*edges\.dat from its extension; give --format"),
    ("nnz.mtx", (), r"nnz\.mtx: the size line announces 3 entries, the file has 2"),
])
def test_bad_input_is_one_error_and_leaves_nothing(tmp_path, name, options, message):
    shutil.copy(DATA / "bad" / name, tmp_path / name)
    with pytest.raises(DbfsError, match=message):
        run_convert(tmp_path / name, tmp_path / "out.h5", *options)
    assert leftovers(tmp_path) == [name]


TEXT_ERRORS = [
    ("x.txt", "1 2 3\n", r":1: expected two vertex ids \(source target\), found 3 fields \(--extra-columns ignore "
                         r"reads the first two of every line\): '1 2 3'"),
    ("x.txt", "1\n", r":1: expected two vertex ids .*found 1 field: '1'"),
    ("x.txt", "1 99999999999999999999\n", r":1: id 99999999999999999999 is larger than 2\^63 - 1"),
    ("x.txt", "1 9223372036854775808\n", r":1: id 9223372036854775808 is larger than 2\^63 - 1"),
    ("x.txt", "1 2\n\x00 3\n", r":2: '\\x00' is not a vertex id"),
    ("x.txt", "# only comments\n\n", r"no edges found"),
    ("m.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", r":1: .*'array' \(dense\)"),
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 2\n", r":2: the matrix is 2 x 3"),
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n0 2\n",
     r":3: index 0 is outside 1\.\.2"),
    ("m.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1.5\n",
     r":3: the value is not an integer"),
    ("m.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 3\n2 1 +-1\n",
     r":4: the value is not an integer: '2 1 \+-1'"),
    ("m.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 -\n", r":3: the value is not an integer"),
    *[("m.mtx", f"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 {value}\n",
       r":3: the value is not a real number") for value in ("1-2", "1e", "1e+", ".", ".e5", "1.2.3", "1e5e5", "1e.5",
                                                            "--1", "nan", "1,5")],
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 1.0\n",
     r":3: expected 'row column', found 3 fields"),
    ("m.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1.0\n2 1\n",
     r":4: expected 'row column value', found 2 fields"),
    ("m.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1.0 2.0\n",
     r":3: expected 'row column value', found 4 fields"),
    ("m.mtx", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 1\n", r":1: .*field 'complex'"),
    ("m.mtx", "hello\n", r":1: not a Matrix Market file"),
    ("g.graph", "3 1\n2\n1\n\n\n2\n", r":6: more vertex lines than the 3 vertices"),
    ("g.graph", "3 1\n2\n1 2\n\n", r":3: vertex 2 lists itself"),
    ("g.graph", "", r"g\.graph \(empty\): expected the METIS header"),
    ("g.graph", "3 2\n2\n1\n\n", r"announces 2 edges \(4 adjacency entries\), the file has 2"),
    ("g.graph", "3 1\n2 3\n\n\n", r"not symmetric"),
    ("g.graph", "3 1\n2\n\n1\n", r"not symmetric \(as many entries u -> v with u < v as with u > v"),
    ("g.graph", "100000000000000000000 1\n2\n1\n", r":1: the header announces 100000000000000000000 vertices, past"),
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n9223372036854775808 9223372036854775808 1\n1 2\n",
     r":2: the header announces 9223372036854775808 vertices, past the 9223372036854775807"),
    ("g.graph", "3 1\n2\n1\n", r"announces 3 vertices, the file has 2 vertex lines"),
    ("g.graph", "2 1 1\n2\n1 5\n",
     r":2: expected 0 vertex field\(s\) then \(neighbour, weight\) pairs, found 1"),
    ("g.graph", "2 1\n4\n1\n", r":2: neighbour 4 is outside 1\.\.2"),
    ("g.graph", "3 1 10\n1 2\n\n1 1\n", r":3: expected 1 vertex field\(s\) then neighbours, found 0"),
]


@pytest.mark.parametrize("name, text, message", TEXT_ERRORS)
def test_text_format_errors(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(DbfsError, match=message):
        run_convert(tmp_path / name, tmp_path / "out.h5")
    assert leftovers(tmp_path) == [name]


NON_ASCII = r"\(numbers are written with the ASCII digits 0-9, not '{}', U\+{}\)"


@pytest.mark.parametrize("name, text, message", [
    ("x.txt", "\u0661 2\n", r":1: '\u0661' is not a vertex id " + NON_ASCII.format("\u0661", "0661")),
    ("x.txt", "1 \uff18\n", r":1: '\uff18' is not a vertex id " + NON_ASCII.format("\uff18", "FF18")),
    ("x.txt", "1 2\n\u00b2 3\n", r":2: '\u00b2' is not a vertex id " + NON_ASCII.format("\u00b2", "00B2")),
    ("x.txt", "1 -\u0661\n", r":1: '-\u0661' is not a vertex id " + NON_ASCII.format("\u0661", "0661")),
    ("x.txt", "1 1\u0661\n", r":1: '1\u0661' is not a vertex id " + NON_ASCII.format("\u0661", "0661")),
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n\u0663 3 1\n1 2\n",
     r":2: expected the size line 'rows columns entries' " + NON_ASCII.format("\u0663", "0663")),
    ("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 \u00b2\n1 2\n2 3\n",
     r":2: expected the size line 'rows columns entries' " + NON_ASCII.format("\u00b2", "00B2")),
    ("g.graph", "\uff13 1\n2\n1\n\n", r":1: expected the METIS header .*" + NON_ASCII.format("\uff13", "FF13")),
])
def test_digits_other_than_ascii_are_refused_by_name(tmp_path, name, text, message):
    """Python's isdigit takes other scripts' digits, superscripts and fullwidth forms; ids and header
    numbers are the ASCII digits only, and the error names the character that is not one."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(DbfsError, match=message):
        run_convert(tmp_path / name, tmp_path / "out.h5")
    assert leftovers(tmp_path) == [name]


CR_MESSAGE = r"lines end with a CR \(carriage return\) alone, .*change the line ends to LF first"


@pytest.mark.parametrize("name, data, options, message", [
    ("cr.txt", b"1 2\r3 4\r", (), r"cr\.txt:1: " + CR_MESSAGE),
    ("cr.txt", b"1 2\r3 4 5\r", ("--extra-columns", "ignore"), r"cr\.txt:1: " + CR_MESSAGE),
    ("cr.txt.gz", gzip.compress(b"\xef\xbb\xbf1 2\r3 4\r", mtime=0), (), r"cr\.txt\.gz:1: " + CR_MESSAGE),
    ("cr.mtx", b"%%MatrixMarket matrix coordinate pattern general\r2 2 1\r1 2\r", (), r"cr\.mtx:1: " + CR_MESSAGE),
    ("cr.graph", b"2 1\r2\r1\r", (), r"cr\.graph:1: " + CR_MESSAGE),
    ("mixed.txt", b"1 2\r\n3 4\r5 6\r\n", (), r"mixed\.txt:2: " + CR_MESSAGE + r".*: '3 4\\r5 6'"),
])
def test_old_mac_line_ends_are_refused_by_name(tmp_path, name, data, options, message):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(DbfsError, match=message):
        run_convert(tmp_path / name, tmp_path / "out.h5", *options)
    assert leftovers(tmp_path) == [name]


def test_crlf_line_ends_are_read(tmp_path):
    (tmp_path / "crlf.txt").write_bytes(b"# windows\r\n7 9\r\n9 3\r\n\r\n3 7\r\n")
    (tmp_path / "crlf.mtx").write_bytes(b"%%MatrixMarket matrix coordinate pattern general\r\n3 3 1\r\n1 2\r\n")
    run_convert(tmp_path / "crlf.txt", tmp_path / "t.h5")
    run_convert(tmp_path / "crlf.mtx", tmp_path / "m.h5")
    assert original_edges(tmp_path / "t.h5") == [(7, 9), (9, 3), (3, 7)]
    assert original_edges_keep(tmp_path / "m.h5") == [(0, 1)]


def test_negative_id_in_binary_names_the_edge(tmp_path):
    np.array([[0, 1], [2, -5]], "<i8").tofile(tmp_path / "n.g500")
    with pytest.raises(DbfsError, match=r"n\.g500: edge 1 \(byte 16\): negative id -5"):
        run_convert(tmp_path / "n.g500", tmp_path / "n.h5")
    assert leftovers(tmp_path) == ["n.g500"]


def test_kept_ids_past_int64_vertex_counts_are_refused(tmp_path):
    np.array([[0, 1], [2**63 - 1, 5]], "<i8").tofile(tmp_path / "m.g500")
    with pytest.raises(DbfsError, match=r"m\.g500: the id 9223372036854775807 gives 9223372036854775808 vertices"):
        run_convert(tmp_path / "m.g500", tmp_path / "m.h5")
    assert leftovers(tmp_path) == ["m.g500"]


def test_existing_output_needs_force(tmp_path):
    run_convert(DATA / "small.graph", tmp_path / "g.h5")
    with pytest.raises(DbfsError, match="already exists"):
        run_convert(DATA / "general.mtx", tmp_path / "g.h5")
    run_convert(DATA / "general.mtx", tmp_path / "g.h5", "--force")
    assert edgelist.graph_info(tmp_path / "g.h5").attrs["source_format"] == "mtx"


# ------------------------------------------------------------------------------------ command line
def run_cli(*argv, cwd: Path) -> subprocess.CompletedProcess:
    env = launcher_free_env()
    return subprocess.run([sys.executable, "-m", "dbfs", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_converts_and_reports(tmp_path):
    result = run_cli("convert", DATA / "directed.txt", "--out", "g.h5", "--json", "c.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "g.h5: 6 vertices, 7 edges (directed, ids renumbered)" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "g.h5"]


def test_konect_edge_lists_with_percent_comments(tmp_path):
    (tmp_path / "out.k").write_text("% sym unweighted\n% 3 2 2\n1 2\n2 3\n")
    run_convert(tmp_path / "out.k", tmp_path / "k.h5", "--format", "snap", "--undirected")
    info = edgelist.graph_info(tmp_path / "k.h5")
    assert (info.n_vertices, info.n_edges, info.directed) == (3, 2, False)


def test_extra_columns_are_read_past_on_request(tmp_path):
    (tmp_path / "w.txt").write_text("# weighted, timestamped\n10 20 0.5\n20 30 1.5 1700000000\n\n30 10 2\n")
    run_convert(tmp_path / "w.txt", tmp_path / "w.h5", "--extra-columns", "ignore")
    info = edgelist.graph_info(tmp_path / "w.h5")
    src, dst = edgelist.read_edge_slice(info.path, 0, info.n_edges)[:2]
    ids = info.original_ids(0, info.n_vertices)
    assert list(zip(ids[src].tolist(), ids[dst].tolist())) == [(10, 20), (20, 30), (30, 10)]
    with pytest.raises(DbfsError, match=r":2: expected two vertex ids .*found 1 field: '7'"):
        (tmp_path / "short.txt").write_text("1 2 3\n7\n")
        run_convert(tmp_path / "short.txt", tmp_path / "s.h5", "--extra-columns", "ignore")
    result = run_cli("convert", DATA / "small.graph", "--out", "m.h5", "--extra-columns", "ignore", cwd=tmp_path)
    assert result.returncode == 2 and "--extra-columns applies to snap edge lists" in result.stderr


def test_an_empty_output_name_is_refused(tmp_path):
    result = run_cli("convert", DATA / "directed.txt", "--out", "", cwd=tmp_path)
    assert result.returncode == 2 and "--out needs a file name, got ''" in result.stderr, result.stderr


def test_cli_help_shows_defaults():
    result = run_cli("convert", "--help", cwd=DATA)
    assert result.returncode == 0 and "(default: auto)" in result.stdout and "g500-packed" in result.stdout


@pytest.mark.parametrize("argv, message", [
    (("bad/malformed.txt",), "malformed.txt:4: 'x4' is not a vertex id"),
    (("bad/negative.txt",), "negative.txt:2: negative id -3"),
    (("bad/short.g500",), "truncated"),
    (("bad/edges.dat",), "cannot tell the format"),
    (("missing.txt",), "no such file"),
])
def test_cli_errors_are_one_line_with_status_2(tmp_path, argv, message):
    for name in os.listdir(DATA / "bad"):
        (tmp_path / "bad").mkdir(exist_ok=True)
        shutil.copy(DATA / "bad" / name, tmp_path / "bad" / name)
    result = run_cli("convert", *argv, "--out", "out.h5", cwd=tmp_path)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out.h5").exists() and leftovers(tmp_path) == ["bad"]


def test_cli_runs_on_the_converted_graph_and_rejects_bad_roots_and_files(tmp_path):
    converted = run_cli("convert", DATA / "directed.txt", "--out", "g.h5", cwd=tmp_path)
    assert converted.returncode == 0
    rate, speed = re.search(r"s: (\S+) M edges/s, (\S+) MB/s", converted.stdout).groups()
    assert float(rate) > 0 and float(speed) > 0, converted.stdout      # a tiny file's rate is not 0.0
    ok = run_cli("--graph", "g.h5", "--root", BIG, "--save-result", "t.h5", "--backend", "cpu", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    with h5py.File(tmp_path / "t.h5") as f:
        assert f["level"][:].tolist() == [1, 2, -1, -1, 3, 0]
    with h5py.File(tmp_path / "layout.h5", "w") as f:
        f["edges"] = np.zeros((3, 2), np.int64)
    for argv, message in [(("--graph", "g.h5", "--root", 8), "--root 8 is not a vertex of g.h5"),
                          (("--graph", "layout.h5", "--root", 1), "layout.h5 is not a dbfs edge list"),
                          (("--graph", "g.h5"), "--save-result needs a single --root")]:
        result = run_cli(*argv, "--save-result", "u.h5", "--backend", "cpu", cwd=tmp_path)
        errors = [line for line in result.stderr.splitlines() if "error" in line]
        assert result.returncode == 2 and len(errors) == 1 and message in errors[0], result.stderr
    assert leftovers(tmp_path) == ["g.h5", "layout.h5", "t.h5"]
