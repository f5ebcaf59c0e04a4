"""CUDA C sources of dbfs, one concern per file, loaded at run time by CuPy (RawModule, code=), and
the constants they share with Python.

Installed as the package `dbfs.kernels` so that the sources travel inside the wheel. Every constant
that both a kernel and its Python wrapper need is defined once, in DEFINES below, and reaches the
compiler as `-DNAME=value` (compile_options); the .cu files never define them themselves.
"""

from pathlib import Path
from types import SimpleNamespace

DIRECTORY = Path(__file__).resolve().parent

# Threads per block of the level kernels (expansion, scan, update, bitmaps, bottom-up, sparse,
# validation): one size, so a launch wrapper cannot pair a kernel with another kernel's block size.
BLOCK_THREADS = 256
# Frontier edges one expansion thread takes (kernels/expand.cu, a kernel variant each; --edges-per-thread).
EDGES_PER_THREAD = (1, 2, 4, 8)
DEFAULT_EDGES_PER_THREAD = 4
# Frontier entries one scan thread sums (kernels/expand.cu); a scan block covers SCAN_TILE entries.
SCAN_ITEMS = 8
SCAN_TILE = BLOCK_THREADS * SCAN_ITEMS
# Entries a bottom-up lane tests alone before its row is searched by the whole warp (scale 26: 4 beat
# 2, 8 and 16 by 1-5%, 5% and 28%; bench/NOTES.md, 2026-11-24, rounds replayed as CUDA graphs).
THREAD_EDGES = 4
# A bottom-up level's frontier summary (kernels/bottom_up.cu frontier_summary): a bit per 32-column word
# of the frontier bitmap, set where the word is not zero, then its tally (the nonzero words, the blocks
# finished, and whether the search filters through the summary). The search does so where at most one
# frontier word in SUMMARY_SPARSE is nonzero: then most words are zero and a neighbour's summary bit
# answers from a table 32 times smaller; where more are set, the extra load would only cost.
SUMMARY_TALLY = ("NONZERO", "DONE", "FILTER")
SUMMARY_SPARSE = 8
# The persistent small-level kernel (kernels/small_levels.cu): threads per block (one block per
# multiprocessor), lanes that share one frontier vertex's neighbours, and the largest degree a
# frontier vertex may have for its level to run there (heavier vertices go to the bulk kernels, whose
# work is balanced by edges).
SMALL_THREADS = 512
# Threads of a block of the grid's device-driven small levels (kernels/peer_levels.cu): its levels are
# latency-bound (a chain of dependent loads and atomics per frontier entry), so a block takes the most
# warps it may have.
PEER_THREADS = 1024
SMALL_GROUP = 8
SMALL_MAX_DEGREE = 256
# Segments a block of the row copy's appends takes at a time (kernels/csc_build.cu append_segments): a
# grid of one column's rows arrive as segments of ~16 entries, half of them empty, and each step costs
# three block barriers whatever its values.
APPEND_SEGMENTS = 4 * BLOCK_THREADS
# Entries a thread of the construction's grouping by owner holds (kernels/owner_groups.cu owner_scatter:
# a block's tile of BLOCK_THREADS * OWNER_TILE_ITEMS entries claims each owner's slots with one atomic).
OWNER_TILE_ITEMS = 8
# The persistent kernel's scratch (int64): its level counters (new vertices, their degree sum, their
# largest degree) rotate over COUNTER_SLOTS slots, zero between launches; then a control-block image
# (CTL_WORDS) through which block 0 hands on the state of the tiny levels it ran alone.
COUNTERS = ("COUNT", "DEGREES", "MAX_DEGREE")
COUNTER_SLOTS = 3
# Ids per entry of a column table (the column of every COLUMN_CHUNK-th id, kernels/columns.cuh): one
# warp's share of the expansion and of the validator's entry pass, at four ids per lane.
COLUMN_CHUNK = 128

# pred_col of a vertex found by the bottom-up search (its finder is the one rank whose gathered
# predecessor entry is set).
BOTTOM_UP = -2

# The search's control block: int64 words in device memory that the device-driven loop reads and
# writes (dbfs.device_loop, kernels/level_control.cuh); the last two, a grid's device-driven levels' bytes
# of expand and fold messages (kernels/peer_levels.cu).
CONTROL = ("STEP", "LEVEL", "FRONTIER", "FRONTIER_EDGES", "UNVISITED_EDGES", "VISITED", "FORM", "LOGGED",
           "START_NS", "EXPAND_BYTES", "FOLD_BYTES")
# Where the root of a grid's search lies on its owner (int64 words the visit reads from device memory, so
# that its launch replays from a CUDA graph): its global id, its local row, its owned offset, and the
# group counted for the own frontier list of one.
ROOT_VISIT = ("ID", "ROW", "OFFSET", "GROUP")
# What runs next: a run of small top-down levels in the persistent kernel, one bulk top-down level,
# one bulk bottom-up level, nothing (the frontier is empty).
STEPS = ("SMALL", "TOPDOWN", "BOTTOMUP", "DONE")
# The frontier's form between levels: a list (queue 0 and its count) or the own-frontier bitmap.
FORMS = ("LIST", "BITS")
# Per-level counters of the bulk kernels (int64): new vertices, their degree sum, entries examined,
# their largest degree.
STATS = ("COUNT", "DEGREES", "CHECKED", "MAX_DEGREE")
# An exchange message (kernels/message.cuh, dbfs.exchange): a head of uint32 words, then the payload: a
# list of offsets, a bitmap of the receiver's block, or plain words; a kernel writes the head, so the
# size is known on the device and no exchange needs a header round.
MESSAGE_HEAD = ("FORM", "COUNT", "SIZE")     # SIZE: payload words
MESSAGE_FORMS = ("LIST", "BITMAP", "WORDS")
# One record of the per-level log (int64 each).
LOG_FIELDS = ("LEVEL", "DIRECTION", "FRONTIER", "EDGES", "END_NS")
# The device-driven small levels' counters (int64, kernels/peer_levels.cu): a slot per level, rotating
# over PEER_COUNTER_SLOTS slots: the new own frontier's size and degree sum, the entries examined, then
# the fold entries per grid column.
PEER_COUNTERS = ("NEXT_COUNT", "NEXT_DEGREES", "CHECKED")
PEER_COUNTER_SLOTS = 3
# The grid's device-driven small levels (kernels/peer_levels.cu, dbfs.peer_levels): the record every rank
# puts on every rank after a level (int64: its new frontier's size and degree sum, then the round that
# marks it complete), and one per-level log record (int64 each; the bytes this rank put, and the GPU
# timer where each phase ended: the expand messages landed, the expansion, the fold landed, the update,
# the decision).
PEER_RECORD = ("COUNT", "DEGREES", "ROUND")
PEER_LOG = ("LEVEL", "FRONTIER", "EDGES", "CHECKED", "EXPAND_BYTES", "FOLD_BYTES", "WAITED_NS", "EXPANDED_NS",
            "FOLDED_NS", "UPDATED_NS", "END_NS")
# A search whose graphs the device launches (kernels/schedule.cu, dbfs.level_chain): the standing that
# the kernel ending each graph keeps (int64 words), the kind of graph each code is, and each code's plan
# (int64 words: its exec handle, its kind, the message half after it, its timer marks, up to CHAIN_SENDS
# sends read from their staged heads and CHAIN_FIXED sends of known bytes). Codes: the levels' graphs
# (dbfs.ops.schedule.code_of), then the search's start, then the parents' resolution after top-down
# levels only and after any bottom-up level.
CHAIN_STATE = ("CODE", "LEVEL", "BOTTOMUP", "FORM", "PARITY", "HALF", "ANY_BOTTOMUP", "FRONTIER",
               "FRONTIER_EDGES", "UNVISITED_EDGES", "VISITED", "GRAPHS", "ERROR")
CHAIN_KINDS = ("STRETCH", "TOPDOWN", "BOTTOMUP", "START", "RESOLVE")
CHAIN_SEND = ("HEADS", "STRIDE", "SLOTS", "SKIP", "COPIES", "PHASE", "MESSAGES")
CHAIN_FIXED_SEND = ("PHASE", "MESSAGES", "BYTES")
CHAIN_SENDS, CHAIN_FIXED = 2, 2
CHAIN_PLAN = ("EXEC", "KIND", "HALF_AFTER", "MARKS", "MARK_COUNT", "MARK_PHASES",
              *(f"SEND{k}_{word}" for k in range(CHAIN_SENDS) for word in CHAIN_SEND),
              *(f"FIXED{k}_{word}" for k in range(CHAIN_FIXED) for word in CHAIN_FIXED_SEND))
# The traffic phases a chain counts, as (messages, bytes) pairs after the standing.
CHAIN_TRAFFIC = ("expand", "fold")
# The validator's uint64 result slots (kernels/validate.cu, dbfs.ops.validate): the rule slots first, in
# the order their rules are reported (each holds its lowest offending vertex), then the counts.
VALIDATE_SLOTS = ("PARENT_RANGE", "ROOT", "SELF_PARENT", "LEVEL", "PARENT_NOT_NEIGHBOUR", "PARENT_UNREACHED",
                  "CYCLE", "SPAN", "EDGE_LEVEL", "VISITED", "DEEPEST", "VISITED_ENTRIES", "SPAN_ENTRIES",
                  "WITNESS")


def _enumerate(names) -> SimpleNamespace:
    return SimpleNamespace(**{name: k for k, name in enumerate(names)})


CTL, STEP, FORM, STAT, LOG, HEAD, MSG, PEER_REC, PEER_LOG_AT, ROOT = (_enumerate(names) for names in (
    CONTROL, STEPS, FORMS, STATS, LOG_FIELDS, MESSAGE_HEAD, MESSAGE_FORMS, PEER_RECORD, PEER_LOG, ROOT_VISIT))
CHAIN, CHAIN_KIND, CHAIN_AT = (_enumerate(names) for names in (CHAIN_STATE, CHAIN_KINDS, CHAIN_PLAN))
CHAIN_WORDS, CHAIN_PLAN_WORDS = len(CHAIN_STATE), len(CHAIN_PLAN)
CHAIN_START_CODE = 3 * 2 * 2 * 2            # after every (stretch, top-down, bottom-up; form; parity; half)
CTL_WORDS, STAT_WORDS, LOG_WORDS, HEAD_WORDS = len(CONTROL), len(STATS), len(LOG_FIELDS), len(MESSAGE_HEAD)
PEER_RECORD_WORDS, PEER_LOG_WORDS, ROOT_WORDS = len(PEER_RECORD), len(PEER_LOG), len(ROOT_VISIT)
COUNTER_WORDS = len(COUNTERS)
SUMMARY, SUMMARY_TALLY_WORDS = _enumerate(SUMMARY_TALLY), len(SUMMARY_TALLY)
SMALL_SCRATCH_WORDS = COUNTER_SLOTS * COUNTER_WORDS + CTL_WORDS

DEFINES = {
    "BLOCK_THREADS": BLOCK_THREADS, "SCAN_ITEMS": SCAN_ITEMS, "SCAN_TILE": SCAN_TILE,
    "THREAD_EDGES": THREAD_EDGES, "SMALL_THREADS": SMALL_THREADS, "PEER_THREADS": PEER_THREADS, "SMALL_GROUP": SMALL_GROUP,
    "OWNER_TILE_ITEMS": OWNER_TILE_ITEMS, "APPEND_SEGMENTS": APPEND_SEGMENTS, "SUMMARY_SPARSE": SUMMARY_SPARSE,
    **{f"SUMMARY_{name}": k for k, name in enumerate(SUMMARY_TALLY)}, "SUMMARY_TALLY_WORDS": SUMMARY_TALLY_WORDS,
    "SMALL_MAX_DEGREE": SMALL_MAX_DEGREE, "COLUMN_CHUNK": COLUMN_CHUNK, "BOTTOM_UP": BOTTOM_UP,
    **{f"{prefix}_{name}": value for prefix, space in (("CTL", CTL), ("STEP", STEP), ("FORM", FORM),
                                                       ("STAT", STAT), ("LOG", LOG), ("HEAD", HEAD),
                                                       ("MSG", MSG), ("PEER_RECORD", PEER_REC),
                                                       ("PEER_LOG", PEER_LOG_AT), ("ROOT", ROOT),
                                                       ("CHAIN", CHAIN), ("CHAIN_KIND", CHAIN_KIND),
                                                       ("PLAN", CHAIN_AT))
       for name, value in vars(space).items()},
    "CTL_WORDS": CTL_WORDS, "STAT_WORDS": STAT_WORDS, "LOG_WORDS": LOG_WORDS, "HEAD_WORDS": HEAD_WORDS,
    "PEER_RECORD_WORDS": PEER_RECORD_WORDS, "PEER_LOG_WORDS": PEER_LOG_WORDS,
    "CHAIN_WORDS": CHAIN_WORDS, "CHAIN_PLAN_WORDS": CHAIN_PLAN_WORDS, "CHAIN_SENDS": CHAIN_SENDS,
    "CHAIN_FIXED": CHAIN_FIXED, "CHAIN_SEND_WORDS": len(CHAIN_SEND), "CHAIN_FIXED_WORDS": len(CHAIN_FIXED_SEND),
    "CHAIN_TRAFFIC_PHASES": len(CHAIN_TRAFFIC), "CHAIN_START_CODE": CHAIN_START_CODE,
    **{f"PEER_COUNTER_{name}": k for k, name in enumerate(PEER_COUNTERS)}, "PEER_FOLD_COUNTS": len(PEER_COUNTERS),
    "PEER_COUNTER_SLOTS": PEER_COUNTER_SLOTS,
    **{f"COUNTER_{name}": k for k, name in enumerate(COUNTERS)}, "COUNTER_WORDS": COUNTER_WORDS,
    "COUNTER_SLOTS": COUNTER_SLOTS,
    **{f"SLOT_{name}": k for k, name in enumerate(VALIDATE_SLOTS)}, "STATS_SLOTS": len(VALIDATE_SLOTS),
}


# Modules whose kernels need a cooperative launch (all blocks resident, grid-wide barriers).
COOPERATIVE = frozenset({"small_levels", "peer_levels"})
# Modules whose kernels call the CUDA device runtime (a graph launched from the device): compiled for
# separate compilation (-rdc=true), which CuPy links with the device runtime library.
DEVICE_RUNTIME = frozenset({"schedule"})


# The widths of a graph's offsets (common.cuh offset_t): a module whose source names offset_t is compiled
# for each, and a launch takes the one of the graph it reads (dbfs.graph.offset_dtype).
OFFSET_BITS = (32, 64)


def compile_options(offset_bits: int = 64) -> tuple[str, ...]:
    """Options for NVRTC (CuPy) and nvcc alike: C++17, this directory on the include path, DEFINES, and
    the width of a graph's offsets."""
    if offset_bits not in OFFSET_BITS:
        raise ValueError(f"offset_bits must be one of {OFFSET_BITS}, got {offset_bits}")
    return ("-std=c++17", f"-I{DIRECTORY}", *(f"-D{name}=({value})" for name, value in DEFINES.items()),
            f"-DOFFSET_BITS={offset_bits}")


def module_options(name: str) -> tuple[str, ...]:
    """What kernels/<name>.cu needs beyond compile_options: -rdc=true where it calls the device runtime."""
    return ("-rdc=true",) if name in DEVICE_RUNTIME else ()


def reads_offsets(name: str) -> bool:
    """Whether kernels/<name>.cu has kernels that take a graph's offsets (offset_t)."""
    return "offset_t" in source(name)


def source(name: str) -> str:
    """Text of kernels/<name>.cu."""
    return (DIRECTORY / f"{name}.cu").read_text()


def names() -> list[str]:
    return sorted(p.stem for p in DIRECTORY.glob("*.cu"))
