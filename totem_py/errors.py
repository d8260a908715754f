"""Errors the command line turns into exit codes (DESIGN.md: 2 bad input, 3 verification failed)."""

import os


class InputError(Exception):
    """Bad input or usage: reported as one line, exit code 2.

    `where` names the file (and line) the problem is in, when there is one.
    """

    def __init__(self, message, path=None, line=None):
        self.path, self.line = path, line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class VerificationError(Exception):
    """A result failed its property verifier: exit code 3."""


def available_memory():
    """Bytes of host memory available to a new allocation (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(nbytes, what, path=None):
    """Raise InputError before allocating `nbytes` if the host cannot hold them."""
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise InputError(
            f"{what} needs about {nbytes / 2**30:.1f} GiB but only {avail / 2**30:.1f} GiB "
            "of host memory is available", path)
