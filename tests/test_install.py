"""The package carries its CUDA sources: `dbfs.kernels` finds every kernels/*.cu of the checkout.

Run from an installed wheel (.ci/run), this shows that the wheel ships the .cu files; .ci/run also sets
DBFS_TEST_EXPECT_INSTALLED=1 so that the suite proves it imported dbfs from site-packages, not from
the checkout it was started in.
"""

import os
from pathlib import Path

import pytest

import dbfs
from dbfs import kernels

pytestmark = pytest.mark.one_rank

CHECKOUT_KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def test_every_kernel_source_of_the_checkout_is_found_in_the_package():
    assert kernels.names() == sorted(p.stem for p in CHECKOUT_KERNELS.glob("*.cu"))
    assert (kernels.DIRECTORY / "common.cuh").is_file()
    for name in kernels.names():
        assert 'extern "C"' in kernels.source(name), name


@pytest.mark.skipif(not os.environ.get("DBFS_TEST_EXPECT_INSTALLED"),
                    reason="a development checkout imports dbfs from its source tree")
def test_dbfs_is_imported_from_the_installed_wheel():
    for path in (Path(dbfs.__file__).resolve(), kernels.DIRECTORY):
        assert "site-packages" in path.parts, path
