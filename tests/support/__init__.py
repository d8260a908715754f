"""What the test modules share (no test module imports another): import as `tests.support.X`.

    toys     toy graphs with known answers, seeded weights
    matrix   the configuration matrix: every built-in algorithm x plans x devices, checked by the
             algorithms' verifiers (`check_matrix`), the toy and the real graphs
    twins    kernel platforms and the operators' backends (their fixtures are in conftest.py)
    csr      random CSR rows over local and ghost targets, for the operators
    stream   options under which GPU partitions stream their edges, with and without the cache
    cli      the run command in a subprocess or in this process, and its one-line usage errors
    mpi      mpirun launches from the repository root, and their one-line errors

ROOT is the checkout, TEST_DATA its tests/data, SHARED_DATA the real graphs (../shared/data beside
the checkout, or $TOTEM_DATA).
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_DATA = ROOT / "tests" / "data"
SHARED_DATA = Path(os.environ.get("TOTEM_DATA", ROOT.parent / "shared" / "data"))
