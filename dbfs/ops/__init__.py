"""Compute operators of the BFS level loop: thin launch wrappers over kernels/*.cu with NumPy twins."""
