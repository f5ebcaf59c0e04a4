"""What every launch wrapper in dbfs.ops shares: argument checks for raw kernels, the fixed grid of a
grid-stride launch (blocks_for, wave_blocks), and the arguments that let a kernel read a length or its
gate from the device.

Raw kernels read memory blindly, so every wrapper checks dtype and layout first (require_array). A
length is passed either as a host int or as an int32 device array of one element that the kernel
reads itself (length_args); a launch with the search's control block runs only when the control block
says so (gate_args, kernels/common.cuh gate_open).
"""

from __future__ import annotations

import numpy as np

from dbfs.kernels import BLOCK_THREADS, CTL, OFFSET_BITS

NULL = np.uint64(0)            # a null device pointer as a kernel argument
MAX_BLOCKS = 4096              # grid of the grid-stride launches: ~30 blocks per multiprocessor
# The NumPy twins work in steps, so that their temporaries are bounded (dbfs.memory counts them): at most
# TWIN_ITEMS vertices (rows, frontier columns) a step, their entries in groups of about TWIN_CHUNK.
TWIN_CHUNK = 1 << 20
TWIN_ITEMS = 1 << 15


# A launch contract's dtype for a graph's offsets (col_ptr, row_ptr): int32 or int64, as
# dbfs.graph.offset_dtype chose for the block; the kernels compiled for that width run
# (kernels/common.cuh offset_t).
OFFSETS = "offsets"
OFFSET_DTYPES = tuple(np.dtype(f"int{bits}") for bits in OFFSET_BITS)


def require_array(name, array, dtype):
    """Insist on the dtype and a 1-D C-contiguous layout."""
    if array.dtype != dtype or array.ndim != 1 or not array.flags.c_contiguous:
        raise TypeError(f"{name} must be a 1-D C-contiguous {np.dtype(dtype).name} array, got "
                        f"{array.dtype} with shape {array.shape}")


def require_offsets(name, array, width=None) -> np.dtype:
    """Insist on a graph's offsets: a 1-D C-contiguous int32 or int64 array, of the dtype `width` where
    given (the other offsets of the same launch); returns its dtype, which picks the kernels' width."""
    if (array.dtype not in OFFSET_DTYPES or (width is not None and array.dtype != width) or array.ndim != 1
            or not array.flags.c_contiguous):
        wanted = np.dtype(width).name if width is not None else "int32 or int64"
        raise TypeError(f"{name} must be a 1-D C-contiguous {wanted} array of offsets, got "
                        f"{array.dtype} with shape {array.shape}")
    return array.dtype


def twin_groups(lengths) -> list:
    """Consecutive groups of items whose `lengths` (entries each) add up to about TWIN_CHUNK, as index
    arrays in order (a group holds at most TWIN_CHUNK entries plus its last item's)."""
    before = np.cumsum(lengths) - lengths
    return np.split(np.arange(lengths.shape[0]), np.flatnonzero(np.diff(before // TWIN_CHUNK)) + 1)


def blocks_for(items: int, per_block: int = BLOCK_THREADS, cap: int = MAX_BLOCKS) -> int:
    """Blocks of a grid-stride launch over `items` (at least one, at most `cap`)."""
    return max(1, min(cap, -(-int(items) // per_block)))


# The builder's kernels run over billions of entries: a wider cap than MAX_BLOCKS.
BUILD_MAX_BLOCKS = 65535 * 4


def launch_checked(backend, module: str, function: str, n: int, arrays: dict, args: tuple,
                   cap: int = MAX_BLOCKS, per_block: int = BLOCK_THREADS) -> None:
    """Check the layout of `arrays` (name -> (array, dtype)), then launch `function` of kernels/MODULE.cu
    as a grid-stride loop over n items, `per_block` of them a block of BLOCK_THREADS threads, at most
    `cap` blocks (nothing for n = 0). Arrays of dtype OFFSETS share one width, which picks the kernel's."""
    offsets = None
    for name, (array, dtype) in arrays.items():
        if dtype is OFFSETS:
            offsets = require_offsets(name, array, offsets)
        else:
            require_array(name, array, dtype)
    if n:
        backend.kernel(module, function, offsets)((blocks_for(n, per_block, cap),), (BLOCK_THREADS,), args)


def wave_blocks(backend, kernel, items: int) -> int:
    """Blocks of a grid-stride launch of `kernel` over `items`, at most one wave (the blocks the GPU
    holds at once): the grid of a launch gated by the control block, where every block of a closed
    gate still reads the gate (bench/NOTES.md, 2026-11-24, graphs not seen before)."""
    return min(blocks_for(items), backend.resident_blocks(kernel, BLOCK_THREADS))


def length_args(length) -> tuple:
    """(device pointer or NULL, host int32) for a kernel that takes a length either way: an int32
    device array of one element is read by the kernel, an int is passed by value."""
    if isinstance(length, (int, np.integer)):
        return NULL, np.int32(length)
    require_array("length", length, np.int32)
    return length, np.int32(0)


def host_length(length) -> int:
    """A length given either way, read on the host (NumPy twins only: a device read would sync)."""
    return int(length) if isinstance(length, (int, np.integer)) else int(length[0])


def gate_args(control, steps: int = 0, form: int = -1) -> tuple:
    """(control block or NULL, step mask, form) for a gated kernel; control None: always runs."""
    if control is None:
        return NULL, np.int32(0), np.int32(-1)
    require_array("control", control, np.int64)
    return control, np.int32(steps), np.int32(form)


def gate_open(control, steps: int, form: int = -1) -> bool:
    """NumPy twin of kernels/common.cuh gate_open."""
    if control is None:
        return True
    step = int(control[CTL.STEP])
    return bool((steps >> step) & 1) and (form < 0 or int(control[CTL.FORM]) == form)
