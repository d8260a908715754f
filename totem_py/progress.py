"""Progress lines on a terminal (loading, partitioning, supersteps, Numba compiling its
kernels on a first run); silent otherwise."""

import sys
import time

_WATCHING = None      # the enabled Progress that compile events report to, if any


class Progress:
    def __init__(self, enabled=None, stream=None):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self._last = 0.0
        self.compiled, self.compile_s = 0, 0.0      # kernels compiled while this one watched
        if enabled:
            _watch_compiles(self)

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

    def compiling(self, name):
        if self.enabled:
            self.stream.write(f"\r\033[K  compiling {name} (a first run compiles each kernel it "
                              f"uses once; later runs load them from the cache)")
            self.stream.flush()

    def compile_summary(self):
        """A line saying how long compiling took, if this run compiled anything."""
        if self.compiled:
            import os
            from kernels_cpu import cache_dir
            where = os.environ.get("NUMBA_CACHE_DIR") or cache_dir()
            kernels = "kernel" if self.compiled == 1 else "kernels"
            self.phase(f"compiled {self.compiled} {kernels} in {self.compile_s:.1f} s; they are "
                       f"cached in {where} for later runs")

    def done(self):
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _watch_compiles(progress):
    """Report Numba's compilations (not its cache loads) to `progress` (the latest enabled one);
    one listener per process."""
    global _WATCHING
    first = _WATCHING is None
    _WATCHING = progress
    if not first:
        return
    from numba.core import event

    class Compiles(event.Listener):
        depth, t0 = 0, 0.0

        def on_start(self, ev):
            if self.depth == 0:
                self.t0 = time.perf_counter()
                fn = getattr(ev.data.get("dispatcher"), "py_func", None)
                _WATCHING.compiling(getattr(fn, "__name__", "a kernel"))
            self.depth += 1

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0 and not ev.is_failed:     # (a look in the cache only fails)
                _WATCHING.compiled += 1
                _WATCHING.compile_s += time.perf_counter() - self.t0

    event.register("numba:compile", Compiles())
