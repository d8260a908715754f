"""CPU kernels on shapes the engine tests rarely produce: rows much longer than a block."""

import numpy as np

from kernels_cpu.pagerank import pr_pull


def test_pr_pull_splits_long_rows():
    """Rows of 100K and 30K edges cut across blocks, empty rows between them: the same ranks as a
    plain per-row sum."""
    rng = np.random.default_rng(1)
    degrees = np.array([100_000, 0, 30_000, 5, 0, 1] + list(rng.integers(0, 50, 3000)))
    indptr = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    contrib = rng.random(4000).astype(np.float32)
    indices = rng.integers(0, contrib.size, indptr[-1]).astype(np.int32)
    rank = np.full(degrees.size, -1.0)
    pr_pull(indptr, indices, contrib, rank, 0.01, 0.85)
    sums = np.add.reduceat(contrib[indices].astype(np.float64), indptr[:-1].clip(max=indptr[-1] - 1))
    want = 0.01 + 0.85 * np.where(degrees > 0, sums, 0.0)
    assert np.allclose(rank, want, rtol=1e-9)
