"""The suite runs its commands without the compiling process of a first run
(totem_py/ahead.py): test_ahead.py tests that on its own."""

import os

os.environ.setdefault("TOTEM_COMPILE_AHEAD", "0")
