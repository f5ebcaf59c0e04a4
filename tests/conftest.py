"""Test harness (to be completed): GPU tests skip cleanly without a GPU."""
import pytest

from dbfs.backend import gpu_count


def pytest_collection_modifyitems(config, items):
    if gpu_count() == 0:
        skip = pytest.mark.skip(reason="no CUDA GPU visible (CuPy missing or no device)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
