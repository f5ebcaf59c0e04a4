"""The single-node mode of dbfs (`python -m dbfs ws`): vertex programs on the GPUs of one process, from
Khorasani, Gupta and Bhuyan, *Scalable SIMD-Efficient Graph Processing on GPUs* (paper 000).

  program.py   the vertex-program interface (Figure 5) and the registry
  programs.py  bfs, sssp, sswp, cc, pr
  graph.py     CSR build, edge-balanced partitions, offline boundary marking (section IV-B)
  launch.py    launch wrappers of kernels/ws_engine.cuh (Warp Segmentation, VWC) and their NumPy twins
  shards.py    CuSha's G-Shards and Concatenated Windows (kernels/ws_shards.cuh), build, launches, twins
  frontier.py  SIMD-X's online / ballot / JIT active lists (kernels/ws_frontier.cuh), launches, twin
  approx.py    the approximate layouts of the approximate-computing poster (paper 003) and inaccuracy
  engine.py    the iteration loop and the VR / ALL / MS / peer exchanges between partitions (section IV)
  main.py      the command line
"""
