"""The files a command writes (`--output`, `--json`, `python -m totem_py.convert`'s .npz): every
path is checked before any work starts, and at the end all of them are written or none.

Checked first (InputError, exit 2): the folder exists and is writable; the path is not a
folder, not the input graph (the same file by any name) and not named twice; an existing regular
file is writable. Symbolic links are followed: the file they point at is written, the link stays.

Written last: each regular file goes to a temporary file beside its target, and only when every
output has been written are they renamed over their targets, so an interrupted or failed write
leaves every target as it was. A target that exists and is not a regular file (a device such as
/dev/null or /dev/stdout, a named pipe) is never replaced: it is written in place, after the
temporary files, as a stream (`_Stream`: nothing asks it for a position or seeks in it, which
a pipe cannot do); a named pipe with no reader is refused rather than waited on, and a socket or
other special file is refused when checked.
"""

import contextlib
import errno
import os
import stat
import tempfile

from .errors import InputError


def _reason(exc):
    return exc.strerror or str(exc) or type(exc).__name__


class Outputs:
    """`named`: [(what, path)] (a None path is skipped); `inputs`: paths the command reads,
    which no output may overwrite. Checks every path now (`Outputs(...)` raises InputError)."""

    def __init__(self, named, inputs=()):
        self.targets = []                  # (path as given, real path, stat of what is there)
        seen = {}
        for what, path in named:
            if path is None:
                continue
            path = os.fspath(path)
            real, st = _check(path, inputs)
            key = (st.st_dev, st.st_ino) if st is not None else real
            if key in seen:
                raise InputError(f"{what} names the same file as {seen[key]}", path)
            seen[key] = what
            self.targets.append((path, real, st))

    def write(self, writers):
        """Write every output: `writers[i](binary file)` writes the i-th named output that is
        not None, in order. All or nothing: InputError if any fails, and then no regular
        target has changed (a device or pipe written in place may have had a part written)."""
        writers = list(writers)
        if len(writers) != len(self.targets):
            raise ValueError(f"{len(self.targets)} outputs but {len(writers)} writers")
        jobs = list(zip(self.targets, writers))
        temporaries = []
        current = None
        try:
            for (path, real, st), write in jobs:
                if not _in_place(path, st):
                    current = path
                    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), suffix=".tmp",
                                               prefix=_temporary_prefix(real))
                    temporaries.append((tmp, real, st))
                    with os.fdopen(fd, "wb") as f:
                        write(_File(f))
            for (path, real, st), write in jobs:
                if _in_place(path, st):
                    current = path
                    with _open_in_place(path, st) as f:
                        write(_File(f))
            umask = os.umask(0)
            os.umask(umask)
            for tmp, real, st in temporaries:
                # the replaced file's permissions, else a new file's
                os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~umask)
                os.replace(tmp, real)
            temporaries = []
        except OSError as exc:
            raise InputError(f"cannot write: {_reason(exc)}", current) from None
        finally:
            for tmp, _, _ in temporaries:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _check(path, inputs):
    """(real path, os.stat of the existing target or None) if `path` can be written, else
    InputError."""
    if not path:
        raise InputError("empty output file name")
    if str(path).endswith(("/", os.sep)):
        raise InputError("ends in a slash: name a file, not a folder", path)
    real = os.path.realpath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"cannot write: {_reason(exc)}", path) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError("is a directory, not a file", path)
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISCHR(st.st_mode)
                               or stat.S_ISFIFO(st.st_mode)):
        raise InputError("is not a regular file, a device or a named pipe: cannot write it",
                         path)
    for source in inputs:
        if st is not None and source is not None and os.path.exists(source) \
                and os.path.samefile(source, path):
            raise InputError("is the input graph: writing it would destroy the input", path)
    if not _in_place(path, st):
        folder = os.path.dirname(real)
        if not os.path.isdir(folder):
            raise InputError(f"cannot write: no such folder {folder}", path)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"cannot write: the folder {folder} is not writable", path)
    if st is not None and not os.access(path, os.W_OK):
        raise InputError("cannot write: permission denied", path)
    return real, st


def _temporary_prefix(real):
    """`.NAME.` (the temporary file is `.NAME.XXXXXXXX.tmp`), or `.totem.` where NAME is too
    long for that to be a valid file name."""
    name = os.path.basename(real)
    return f".{name}." if len(os.fsencode(name)) <= 200 else ".totem."


def _in_place(path, st):
    """Devices and pipes (and /dev/stdout, /proc/self/fd/N, whatever they lead to) are written
    into, never replaced."""
    return st is not None and (not stat.S_ISREG(st.st_mode)
                               or os.path.abspath(path).startswith(("/dev/", "/proc/")))


class _Stream:
    """A device or pipe as a writer sees it: a file object that can only `write`. np.save then
    writes an array in chunks through it, instead of handing the descriptor to `tofile`, which
    asks for the file position (a pipe has none: it failed after the 128-byte header)."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        return self._f.write(data)


class _File(_Stream):
    """A regular file as a writer sees it: the whole file object (np.savez seeks in it), yet
    not one that np.save hands to `tofile`, which reports a short write (a full disk) as "N
    requested and M written", without its reason."""

    def __getattr__(self, name):
        return getattr(self._f, name)


def _open_in_place(path, st):
    """A device, pipe or descriptor opened for appending, never truncated or replaced; a named
    pipe that nobody reads is an error, not a wait."""
    fifo = stat.S_ISFIFO(st.st_mode)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | (os.O_NONBLOCK if fifo else 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError("is a named pipe that no process is reading", path) from None
        raise
    if fifo:
        os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")
