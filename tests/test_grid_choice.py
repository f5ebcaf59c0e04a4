"""The main command's default grid (dbfs.bfs_benchmark): one column where the ranks are on one node with
a GPU each (their own, or shared under CUDA MPS) and such a grid holds the graph (its 32-bit local ids and
its memory estimate within the rank's share of the GPU), else the squarest; --grid overrides. The GPU
condition is stood in for here; on the CPU backend it never holds."""

import json
from types import SimpleNamespace

import pytest
from mpi4py import MPI

from dbfs import bfs_benchmark, cli
from dbfs.backend import Backend
from dbfs.grid import default_grid
from dbfs.options import parse_seed
from dbfs.source import GraphSource
from dbfs.transport import gpus_on_one_node

WORLD = MPI.COMM_WORLD


def grid_of_run(tmp_path_factory, monkeypatch, extra, gpus: bool):
    monkeypatch.setattr(bfs_benchmark, "gpus_on_one_node", lambda backend, comm: gpus)
    report = str(tmp_path_factory.mktemp("grid") / "run.json") if WORLD.Get_rank() == 0 else None
    report = WORLD.bcast(report, root=0)
    bfs_benchmark.main(cli.main_parser().parse_args(["--scale", "8", "--roots", "2", "--backend", "cpu",
                                                     "--json", report] + extra))
    WORLD.Barrier()
    return json.load(open(report))["grid"]


@pytest.mark.mpi(min_size=2)
def test_one_column_where_the_ranks_have_gpus_on_one_node(tmp_path_factory, monkeypatch):
    size, square = WORLD.Get_size(), list(default_grid(WORLD.Get_size()))
    assert grid_of_run(tmp_path_factory, monkeypatch, [], True) == [size, 1]
    assert grid_of_run(tmp_path_factory, monkeypatch, [], False) == square
    assert grid_of_run(tmp_path_factory, monkeypatch, ["--grid", f"{square[0]}x{square[1]}"], True) == square


def test_one_column_only_where_it_holds_the_graph():
    """Enough memory and 32-bit ids: yes; too little memory, or a vertex range past the ids: no."""
    def fits(scale, memory):
        args = cli.main_parser().parse_args(["--scale", str(scale)])
        args.seed_pair = parse_seed(args.seed)
        gpu = SimpleNamespace(name="gpu", memory_limit=lambda: memory)
        return bfs_benchmark._one_column_fits(GraphSource.from_args(args), gpu, args, "nccl")
    assert fits(20, 80 << 30)
    assert not fits(20, 1 << 20)
    assert not fits(32, 1 << 50)                # all 2^32 columns on every rank: past 32-bit local ids


def test_the_cpu_backend_never_counts_as_gpus_on_one_node():
    assert not gpus_on_one_node(Backend("cpu"), WORLD)


@pytest.mark.gpu
def test_gpu_ranks_sharing_a_gpu_count_their_share_of_its_memory():
    alone, shared = Backend("gpu", 0), Backend("gpu", 0, sharing=4)
    assert abs(shared.memory_limit() - alone.memory_limit() // 4) < (64 << 20)
