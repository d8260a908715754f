"""The shipped algorithms, each a small callback object (bsp.Algorithm) over kernels_cpu/ and
kernels_gpu/. A user algorithm is written the same way (see examples/)."""

from .bc import BC
from .bfs import BFS
from .cc import CC
from .pagerank import PageRank
from .pagerank_delta import PageRankDelta
from .sssp import SSSP

ALGORITHMS = {"bfs": BFS, "pagerank": PageRank, "sssp": SSSP, "cc": CC, "bc": BC,
              "pagerank_delta": PageRankDelta}

__all__ = ["ALGORITHMS", "BFS", "PageRank", "PageRankDelta", "SSSP", "CC", "BC"]
