"""The environment a test gives the processes it starts itself: this one without the MPI launcher's
variables, since a child that inherits them from the test's own mpiexec cannot start MPI."""

import os

LAUNCHER_ENV_PREFIXES = ("PMI_", "PMIX_", "HYDI_", "HYDRA_", "MPIR_", "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "OMPI_")


def launcher_free_env(**extra: str) -> dict:
    """os.environ without the launcher's variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_ENV_PREFIXES)}
    env.update(extra)
    return env
