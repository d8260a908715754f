"""Progress lines on a terminal (loading, partitioning, supersteps); silent otherwise."""

import sys
import time


class Progress:
    def __init__(self, enabled=None, stream=None):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self._last = 0.0

    def phase(self, message):
        if self.enabled:
            self.stream.write(f"\r\033[K[{time.perf_counter() - self.t0:7.2f}s] {message}\n")
            self.stream.flush()

    def step(self, step, mode, active):
        now = time.perf_counter()
        if self.enabled and now - self._last > 0.1:
            self._last = now
            self.stream.write(f"\r\033[K  superstep {step} ({mode}): {active} active")
            self.stream.flush()

    def done(self):
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
