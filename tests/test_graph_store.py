"""The HDF5 graph store's slice reader against h5py for every storage it meets (contiguous, chunked
with shuffle and/or deflate, chunks stored with a filter skipped, unwritten chunks, other filters via
h5py, big-endian and 32-bit data), the chunk writer, and the layout checks of graph_info."""

from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import pytest

from dbfs import edgelist
from dbfs.errors import DbfsError

pytestmark = pytest.mark.one_rank

VALUES = np.random.default_rng(2).integers(-2**40, 2**40, 10_000)
RANGES = [(0, 10_000), (0, 1), (999, 1001), (1000, 3000), (4321, 9876), (9_999, 10_000), (77, 77)]
STORAGES = {
    "contiguous": {},
    "chunked": {"chunks": (1000,)},
    "deflate": {"chunks": (1000,), "compression": "gzip"},
    "shuffle": {"chunks": (1000,), "shuffle": True},
    "shuffle+deflate": {"chunks": (1000,), "shuffle": True, "compression": "gzip", "compression_opts": 1},
    "lzf (h5py path)": {"chunks": (1000,), "compression": "lzf"},
    "fletcher32 (h5py path)": {"chunks": (1000,), "fletcher32": True},
}


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("dtype", ["<i8", ">i8", "<i4"])
def test_slices_equal_h5py(tmp_path, storage, dtype):
    data = VALUES.astype(dtype) if dtype != "<i4" else (VALUES % 2**31).astype(dtype)
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.create_dataset("x", data=data, **STORAGES[storage])
    with h5py.File(tmp_path / "d.h5", "r") as f:
        for lo, hi in RANGES:
            for threads in (1, 3):
                got = edgelist.read_slice(f, "x", lo, hi, threads)
                assert got.dtype == np.dtype(dtype) and np.array_equal(got, f["x"][lo:hi]), (lo, hi)


def test_unwritten_chunks_and_skipped_filters(tmp_path):
    with h5py.File(tmp_path / "d.h5", "w") as f:
        x = f.create_dataset("x", shape=(5000,), chunks=(1000,), dtype="<i8", fillvalue=-7,
                             shuffle=True, compression="gzip")
        x[0:1000] = np.arange(1000)
        plain = np.arange(1000, 2000, dtype="<i8")
        # chunk 1 stored shuffled but not deflated (filter 1 skipped), as HDF5 does when deflate fails
        x.id.write_direct_chunk((1000,), plain.view(np.uint8).reshape(-1, 8).T.tobytes(), 0b10)
        x[4000:4500] = 5
    with h5py.File(tmp_path / "d.h5", "r") as f:
        expected = f["x"][:]
        assert expected[1500] == 1500 and expected[2500] == -7
        for lo, hi in [(0, 5000), (500, 2500), (3999, 4600)]:
            assert np.array_equal(edgelist.read_slice(f, "x", lo, hi, 2), expected[lo:hi])


def test_chunk_stream_round_trip_and_digests(tmp_path):
    with h5py.File(tmp_path / "s.h5", "w") as f, ThreadPoolExecutor(2) as pool:
        stream = edgelist.ChunkStream(f, "x", pool, chunk=1000, in_flight=2)
        for part in np.array_split(VALUES, 7):
            stream.append(part)
        digests = stream.close()
    assert len(digests) == 10
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert f["x"].shape == (10_000,) and f["x"].chunks == (1000,)
        assert np.array_equal(f["x"][:], VALUES)
        assert np.array_equal(edgelist.read_slice(f, "x", 123, 9_000), VALUES[123:9_000])


def write_graph(path, n=4, ids=None, **attrs):
    with h5py.File(path, "w") as f:
        f["src"] = np.array([0, 1, 2])
        f["dst"] = np.array([1, 2, 3])
        if ids is not None:
            f["ids"] = np.asarray(ids)
        f.attrs.update({"n_vertices": n, **attrs})


@pytest.mark.parametrize("attrs, ids, message", [
    ({"n_vertices": 0}, None, "attribute 'n_vertices' is missing or not a positive integer"),
    ({"n_edges": 5}, None, "attribute n_edges = 5 but 'src' holds 3 edges"),
    ({}, [1, 5, 9], "'ids' has 3 entries for 4 vertices"),
    ({"id_mapping": True}, None, "attribute id_mapping disagrees"),
    ({}, [[1, 2], [3, 4]], "'ids' is not a 1-D integer dataset"),
    ({"id_base": "x"}, None, "attribute 'id_base' = 'x' is not an integer of at least 0"),
    ({"id_base": 2.5}, None, "attribute 'id_base' = 2.5 is not an integer of at least 0"),
    ({"id_base": -1}, None, "attribute 'id_base' = -1 is not an integer of at least 0"),
    ({"id_base": 2**63 - 2}, None, "attribute 'id_base' = 9223372036854775806 puts original ids past 2.63 - 1"),
    ({"scale": "abc"}, None, "attribute 'scale' = 'abc' is not an integer of at least 1"),
    ({"edgefactor": 0}, None, "attribute 'edgefactor' = 0 is not an integer of at least 1"),
    ({"directed": "false"}, None, "attribute 'directed' = 'false' is not a boolean"),
    ({"generator": "x", "seed": 5}, None, "attribute 'seed' = 5 is not two integers"),
    ({"id_mapping": True}, [-1, 4, 9, 12], "'ids' holds the negative id -1"),
    ({"id_mapping": True}, np.array([1, 4, 9, 2**63 + 4], np.uint64), "'ids' holds the id 9223372036854775812, past"),
])
def test_graph_info_rejects_wrong_layouts(tmp_path, attrs, ids, message):
    write_graph(tmp_path / "g.h5", ids=ids, **attrs)
    with pytest.raises(DbfsError, match=f"g.h5 is not a dbfs graph: {message}"):
        edgelist.graph_info(tmp_path / "g.h5")


def test_an_unsigned_endpoint_past_int64_is_named_as_the_file_holds_it(tmp_path):
    from dbfs.source import check_endpoints
    with h5py.File(tmp_path / "u.h5", "w") as f:
        f["src"] = np.array([0, 2**63 + 5], np.uint64)
        f["dst"] = np.array([1, 2], np.uint64)
        f.attrs["n_vertices"] = 3
    info = edgelist.graph_info(tmp_path / "u.h5")
    src, dst = edgelist.read_edge_slice(info.path, 0, 2)[:2]
    with pytest.raises(DbfsError, match=r"u.h5: edge endpoint 9223372036854775813 is outside \[0, 3\)"):
        check_endpoints(src, dst, 3, "u.h5", info.unsigned)


def test_graph_info_defaults_and_id_lookups(tmp_path):
    write_graph(tmp_path / "plain.h5")
    info = edgelist.graph_info(tmp_path / "plain.h5")
    assert (info.directed, info.id_base, info.has_ids, info.n_edges) == (False, 0, False, 3)
    assert info.dense_id(3) == 3 and info.dense_id(4) is None and info.dense_id(-1) is None
    ids = [2, 3, 2**40, 2**62]
    write_graph(tmp_path / "mapped.h5", ids=ids, directed=True, id_mapping=True)
    info = edgelist.graph_info(tmp_path / "mapped.h5")
    assert info.directed and info.original_ids(1, 4).tolist() == ids[1:]
    assert [info.dense_id(v) for v in (2, 3, 2**40, 2**62, 1, 4, 2**63 - 1)] == [0, 1, 2, 3, None, None, None]


def test_a_file_that_is_not_hdf5_points_to_convert_and_a_damaged_one_does_not(tmp_path):
    (tmp_path / "edges.txt").write_text("0 1\n1 2\n")
    with pytest.raises(DbfsError, match=r"cannot read edge list .*edges\.txt: not a readable HDF5 file \(.*\); a text "
                                        r"edge list or another format is converted first: python -m dbfs convert "
                                        r".*edges\.txt --out G\.h5$"):
        edgelist.graph_info(tmp_path / "edges.txt")
    write_graph(tmp_path / "g.h5")
    data = (tmp_path / "g.h5").read_bytes()
    (tmp_path / "g.h5").write_bytes(data[:len(data) // 2])
    with pytest.raises(DbfsError, match=r"cannot read edge list .*g\.h5: not a readable HDF5 file") as damaged:
        edgelist.graph_info(tmp_path / "g.h5")
    assert "convert" not in str(damaged.value)
    (tmp_path / "empty.h5").write_bytes(b"")
    with pytest.raises(DbfsError, match=r"cannot read edge list .*empty\.h5: the file is empty$"):
        edgelist.graph_info(tmp_path / "empty.h5")


def test_a_corrupt_chunk_names_the_file_and_dataset(tmp_path):
    path = tmp_path / "g.h5"
    with h5py.File(path, "w") as f:
        for name in ("src", "dst"):
            f.create_dataset(name, data=np.arange(4096, dtype=np.int64) % 64, chunks=(1024,), compression="gzip")
        f.attrs["n_vertices"] = 64
        offset = f["dst"].id.get_chunk_info(1).byte_offset
    with open(path, "r+b") as raw:
        raw.seek(offset + 8)
        raw.write(b"\xff" * 16)
    with pytest.raises(DbfsError, match=rf"{path}, dataset '/dst': (corrupt )?chunk at byte {offset}"):
        edgelist.read_edge_slice(path, 0, 4096)
