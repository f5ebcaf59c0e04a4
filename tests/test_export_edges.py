"""scripts/export_edges.py: a graph file as a text edge list, every tuple as stored, for any chunking;
user errors as one line with nothing left behind."""

import sys
from pathlib import Path

import numpy as np
import pytest
from mpi4py import MPI

from dbfs import edgelist, families
from test_collect import import_script
from test_harness import launch

pytestmark = pytest.mark.one_rank

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "export_edges.py"


def export(*args, cwd):
    """The script in a process of its own, without the enclosing MPI job's launcher variables (under
    mpiexec a child that inherits them fails to initialise MPI)."""
    return launch([sys.executable, str(SCRIPT), *map(str, args)], cwd)


def read_text(path) -> np.ndarray:
    return np.loadtxt(path, dtype=np.int64, ndmin=2)


@pytest.mark.parametrize("chunk_edges, threads", [(1 << 20, 2), (97, 3), (1000, 1)])
def test_export_writes_every_tuple_in_order(tmp_path, chunk_edges, threads):
    graph = tmp_path / "l.h5"
    families.write_lattice(graph, families.Lattice((23, 19, 3), 0.2, seed=(3, 4)), MPI.COMM_SELF)
    done = export(graph, "l.el", "--chunk-edges", chunk_edges, "--threads", threads, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    src, dst = edgelist.read_edge_slice(graph, 0, edgelist.graph_info(graph).n_edges)
    text = (tmp_path / "l.el").read_text()
    assert text.endswith("\n") and text.count("\n") == len(src)
    assert np.array_equal(read_text(tmp_path / "l.el"), np.stack((src, dst), axis=1))
    assert f"l.el: {len(src)} edges" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.el", "l.h5"]


def test_export_keeps_large_ids_and_zeros(tmp_path):
    ids = np.array([0, 9, 10, 99, 100, 2**31 - 1, 2**40 + 7, 2**62], np.int64)
    graph = tmp_path / "g.h5"
    edgelist.write_edge_list(graph, len(ids), {"n_vertices": 2**62 + 1},
                             lambda lo, hi: (ids[lo:hi], ids[::-1][lo:hi]), MPI.COMM_SELF)
    done = export(graph, "g.el", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "beyond gapbs's 32-bit NodeID" in done.stderr
    lines = (tmp_path / "g.el").read_text().splitlines()
    assert lines == [f"{a}\t{b}" for a, b in zip(ids.tolist(), ids[::-1].tolist())]


def test_export_errors_are_one_line(tmp_path, capsys, monkeypatch):
    exporter = import_script("export_edges")
    monkeypatch.chdir(tmp_path)
    families.write_lattice(tmp_path / "l.h5", families.Lattice((4, 4)), MPI.COMM_SELF)
    (tmp_path / "old.el").write_text("keep me\n")
    cases = [(("missing.h5", "x.el"), "no such file"),
             (("l.h5", "old.el"), "already exists"),
             (("l.h5", "nodir/x.el"), "does not exist")]
    for args, message in cases:
        assert exporter.main(list(args)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and err.startswith("export_edges: error: "), err
    assert (tmp_path / "old.el").read_text() == "keep me\n"
    assert exporter.main(["l.h5", "old.el", "--force"]) == 0
    assert len((tmp_path / "old.el").read_text().splitlines()) == 24
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.h5", "old.el"]
