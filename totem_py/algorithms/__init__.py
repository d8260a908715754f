"""The shipped algorithms, each a small callback object (bsp.Algorithm) over kernels_cpu/ and
kernels_gpu/. A user algorithm is written the same way (see examples/)."""

from .bc import BC
from .bfs import BFS
from .cc import CC
from .pagerank import PageRank
from .sssp import SSSP

ALGORITHMS = {"bfs": BFS, "pagerank": PageRank, "sssp": SSSP, "cc": CC, "bc": BC}

__all__ = ["ALGORITHMS", "BFS", "PageRank", "SSSP", "CC", "BC"]
