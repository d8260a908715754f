"""What the seeded fuzz tests share (tests/test_fuzz.py, tests/test_fuzz_options.py): case k of a
kind draws from its own generator, seeded by (TOTEM_FUZZ_SEED, k); `-m extended` runs further
cases until the tests' shares of TOTEM_FUZZ_SECONDS are spent; each case runs under a time
limit."""

import contextlib
import os
import signal
import time
import zlib

import numpy as np

SEED = int(os.environ.get("TOTEM_FUZZ_SEED", 32))
SECONDS = float(os.environ.get("TOTEM_FUZZ_SECONDS", 120))     # of a `-m extended` run, in all


def case_rng(k, kind):
    """The random generator of case k of a kind of case (a word)."""
    return np.random.default_rng([SEED, zlib.crc32(kind.encode()), k])


def on_demand_seconds(share):
    """A test's share of TOTEM_FUZZ_SECONDS."""
    return SECONDS * share


def case_numbers(first, seconds):
    """Case numbers from `first` on, until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    k = first
    while time.monotonic() < deadline:
        yield k
        k += 1


class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds):
    """Hang raised in the block once it has run `seconds` (checked between Python bytecodes)."""
    def alarm(*_):
        raise Hang(f"a case ran past {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
