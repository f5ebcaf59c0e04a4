"""dbfs: a distributed multi-GPU breadth-first search with Graph500-compatible reporting.

Main mode: the 2D-partitioned BFS of Bisson, Bernaschi and Mastrostefano (paper 004) over MPI, one GPU
per rank (CuPy) or the NumPy backend without a GPU. See README.md and docs in the repository.
"""

__version__ = "0.1.0"
