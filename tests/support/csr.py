"""Random CSR rows over local and ghost targets, for the operators' tests (a partition's view
without a partition)."""

import numpy as np


def random_csr(n_local, n_ghosts, seed, hub=0, both=False, ghosts_first=False):
    """A random CSR of n_local rows over n_local + n_ghosts targets, many empty rows, row
    min(3, n_local - 1) with `hub` more edges; with `both` every local edge also reversed (CC's
    "both" view); rows sorted, so ghost targets come last, or with `ghosts_first` first in odd
    rows (plan_fill puts either group first): the CC kernels expect one or the other."""
    rng = np.random.default_rng(seed)
    degrees = np.where(rng.random(n_local) < 0.3, 0, rng.integers(1, 9, n_local))
    if hub and n_local:
        degrees[min(3, n_local - 1)] += hub
    src = np.repeat(np.arange(n_local), degrees)
    dst = rng.integers(0, max(1, n_local + n_ghosts), src.size)
    if both:
        local = dst < n_local
        src, dst = np.concatenate([src, dst[local]]), np.concatenate([dst, src[local]])
    order = np.lexsort((dst, src))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n_local))])
    indices = dst[order].astype(np.int32)
    for u in range(1, n_local, 2) if ghosts_first else ():
        row = indices[indptr[u]:indptr[u + 1]]
        row[:] = np.concatenate([row[row >= n_local], row[row < n_local]])
    return indptr.astype(np.int64), indices
