"""The algorithms, each one file: messages, modes, callbacks and functors (bsp.operators), and
what the command line and the harness need (totem_py.Algorithm: options, reference, verifier,
TEPS count, memory cost, metrics, the values of vertices in no edge). Each file registers its
class (`register`); this package imports every module in it, so the registry, ALGORITHMS, maps
each name to its class, and the classes are attributes of the package. An algorithm written
elsewhere joins the registry with `register` too (examples/; `--algorithm FILE.py:CLASS`)."""

import importlib
import pkgutil

from .base import ALGORITHMS, Algorithm, Option, register

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
globals().update({cls.__name__: cls for cls in ALGORITHMS.values()})

__all__ = ["ALGORITHMS", "Algorithm", "Option", "register",
           *(cls.__name__ for cls in ALGORITHMS.values())]
