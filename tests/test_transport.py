"""The choice of transport (dbfs.transport): explicit choices that cannot run are refused on every rank
alike, `auto` takes the first that works in NCCL, CUDA-aware MPI, host-staged MPI order (NVSHMEM only
when asked for) and says why on stderr. NVSHMEM and NCCL are absent here: a stand-in GPU backend and stand-ins for the
probes show each decision."""

from types import SimpleNamespace

import pytest
from mpi4py import MPI

from dbfs import nvshmem, runtime, transport
from dbfs.backend import Backend
from dbfs.errors import DbfsError

WORLD = MPI.COMM_WORLD


def gpu_stand_in(device=0):
    """A backend that says it runs on GPU `device` (every rank of the node on the same one)."""
    return SimpleNamespace(is_gpu=True, device=device, name="gpu")


def test_device_transports_refuse_the_cpu_backend():
    for choice in transport.DEVICE_TRANSPORTS:
        with pytest.raises(DbfsError, match=f"--comm {choice} moves device buffers, but this run uses the CPU"):
            transport.resolve_transport(choice, Backend("cpu"))


def test_nvshmem_refused_where_it_is_missing(monkeypatch):
    monkeypatch.setattr(nvshmem, "available", lambda: False)
    with pytest.raises(DbfsError, match=r"NVSHMEM is not available on every rank \(pip install 'dbfs\[nvshmem\]'"):
        transport.resolve_transport("nvshmem", gpu_stand_in())


def test_nvshmem_refused_when_it_does_not_start(monkeypatch):
    monkeypatch.setattr(nvshmem, "available", lambda: True)
    monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50")
    monkeypatch.setattr(nvshmem, "start", lambda backend: "NVSHMEM did not start (NvshmemError: no heap)")
    with pytest.raises(DbfsError, match="--comm nvshmem: NVSHMEM did not start"):
        transport.resolve_transport("nvshmem", gpu_stand_in())


@pytest.mark.mpi(min_size=2)
def test_nvshmem_on_a_shared_gpu_needs_the_mps_share(monkeypatch):
    monkeypatch.setattr(nvshmem, "available", lambda: True)
    monkeypatch.setattr(nvshmem, "start", lambda backend: pytest.fail("started without the MPS share"))
    monkeypatch.delenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", raising=False)
    with pytest.raises(DbfsError, match="ranks share a GPU, and NVSHMEM runs several PEs on a GPU only under"):
        transport.resolve_transport("nvshmem", gpu_stand_in())


def test_auto_on_the_cpu_backend_or_one_rank_is_mpi():
    assert transport.resolve_transport("auto", Backend("cpu")) == "mpi"
    assert transport.resolve_transport("auto", gpu_stand_in(), MPI.COMM_SELF) == "mpi"


@pytest.mark.mpi(min_size=2)
def test_auto_where_ranks_share_a_gpu_without_nvshmem_stages_through_host_memory(monkeypatch, capsys):
    monkeypatch.setattr(transport, "nccl_available", lambda: True)
    monkeypatch.setattr(nvshmem, "available", lambda: False)
    monkeypatch.setattr(runtime, "mpi_cuda_aware", lambda: False)
    assert transport.resolve_transport("auto", gpu_stand_in()) == "mpi"
    err = capsys.readouterr().err
    if WORLD.Get_rank() == 0:
        assert "--comm auto: mpi (ranks share a GPU, where NCCL refuses" in err
        assert "not nvshmem: NVSHMEM is not installed on every rank" in err


@pytest.mark.mpi(min_size=2)
def test_auto_takes_nccl_where_every_rank_has_its_gpu_and_nvshmem_is_missing(monkeypatch):
    monkeypatch.setattr(transport, "nccl_available", lambda: True)
    monkeypatch.setattr(nvshmem, "available", lambda: False)
    assert transport.resolve_transport("auto", gpu_stand_in(device=WORLD.Get_rank())) == "nccl"


def started_nvshmem(monkeypatch):
    """NVSHMEM installed and starting (stand-ins): the list of backends it was started on."""
    started = []
    monkeypatch.setattr(nvshmem, "available", lambda: True)
    monkeypatch.setattr(nvshmem, "start", lambda backend: started.append(backend))
    return started


@pytest.mark.mpi(min_size=2)
@pytest.mark.parametrize("shared", [False, True])
def test_auto_takes_nvshmem_on_one_node_where_it_starts_and_its_heap_holds_the_run(monkeypatch, capsys, shared):
    """One node (the test's ranks), a GPU per rank or ranks sharing one under MPS: NVSHMEM first, started
    once; a heap too small for the run, or ranks sharing a GPU without MPS, fall back to the next choice
    and say why."""
    monkeypatch.setattr(transport, "nccl_available", lambda: True)
    monkeypatch.setattr(runtime, "mpi_cuda_aware", lambda: False)
    monkeypatch.setattr(transport, "mps_running", lambda: True)
    monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50")
    monkeypatch.delenv("NVSHMEM_SYMMETRIC_SIZE", raising=False)
    backend = gpu_stand_in() if shared else gpu_stand_in(device=WORLD.Get_rank())
    started = started_nvshmem(monkeypatch)
    assert transport.resolve_transport("auto", backend, heap_need=1 << 20) == "nvshmem"
    assert started == [backend]
    if WORLD.Get_rank() == 0:
        assert "--comm auto: nvshmem (one node" in capsys.readouterr().err
    fallback = "mpi" if shared else "nccl"
    assert transport.resolve_transport("auto", backend, heap_need=nvshmem.DEFAULT_HEAP) == fallback
    if WORLD.Get_rank() == 0:
        assert "not nvshmem: the NVSHMEM symmetric heap is too small" in capsys.readouterr().err
    monkeypatch.setattr(transport, "mps_running", lambda: False)
    expected = "mpi" if shared else "nvshmem"
    assert transport.resolve_transport("auto", backend, heap_need=1 << 20) == expected
    assert len(started) == (1 if shared else 2)


@pytest.mark.mpi(min_size=2)
def test_bulk_rounds_take_nccl_between_gpus_of_their_own_else_nvshmem_where_the_search_does(monkeypatch):
    monkeypatch.setattr(transport, "nccl_available", lambda: True)
    own = gpu_stand_in(device=WORLD.Get_rank())
    for search in ("mpi", "mpi-cuda", "nvshmem", "nccl"):
        assert transport.bulk_transport(search, own)[0] == "nccl"
    assert transport.bulk_transport("mpi", gpu_stand_in()) == (
        "mpi", "ranks share a GPU or NCCL is missing: staged through host memory")
    assert transport.bulk_transport("mpi", Backend("cpu")) == (
        "mpi", "the CPU backend: staged through host memory")
    monkeypatch.setattr(transport, "nccl_available", lambda: False)
    assert transport.bulk_transport("nvshmem", own)[0] == "nvshmem"
    assert transport.bulk_transport("nvshmem", gpu_stand_in())[0] == "nvshmem"
    assert transport.bulk_transport("mpi", own)[0] == "mpi"


def test_bulk_rounds_on_one_rank_exchanges_nothing():
    assert transport.bulk_transport("nccl", gpu_stand_in(), MPI.COMM_SELF) == (
        "mpi", "one rank exchanges nothing")


@pytest.mark.parametrize("text,size", [("", 1 << 30), ("4G", 4 << 30), ("512m", 512 << 20), ("1.5G", 3 << 29),
                                       ("1048576", 1 << 20), (" 2 T ", 2 << 40)])
def test_nvshmem_heap_size_reads_as_nvshmem_does(monkeypatch, text, size):
    monkeypatch.setenv("NVSHMEM_SYMMETRIC_SIZE", text)
    assert nvshmem.heap_bytes() == size


def test_nvshmem_heap_too_small_is_refused_with_the_size_to_set(monkeypatch):
    monkeypatch.setenv("NVSHMEM_SYMMETRIC_SIZE", "256M")
    assert nvshmem.heap_problem(100 << 20) is None
    problem = nvshmem.heap_problem(300 << 20)
    assert "300.0 MiB" in problem and "256.0 MiB" in problem and problem.endswith("NVSHMEM_SYMMETRIC_SIZE=1G")
    monkeypatch.setenv("NVSHMEM_SYMMETRIC_SIZE", "lots")
    with pytest.raises(DbfsError, match="NVSHMEM_SYMMETRIC_SIZE='lots' is not a size"):
        nvshmem.heap_bytes()
