"""The algorithms, each one file: messages, modes, callbacks and functors (bsp.operators), and
what the harness needs (options, weights, TEPS count, reference, verifier). The registry maps a
name to its class; an algorithm written elsewhere joins it with `register` (examples/)."""

from .bc import BC
from .bfs import BFS
from .cc import CC
from .pagerank import PageRank
from .pagerank_delta import PageRankDelta
from .sssp import SSSP

ALGORITHMS = {}


def register(cls):
    """Add an Algorithm class to the registry under its `name` (usable as a decorator): the
    command line, the harness and the verifier find it there."""
    ALGORITHMS[cls.name] = cls
    return cls


for _cls in (BFS, PageRank, SSSP, CC, BC, PageRankDelta):
    register(_cls)

__all__ = ["ALGORITHMS", "register", "BFS", "PageRank", "PageRankDelta", "SSSP", "CC", "BC"]
