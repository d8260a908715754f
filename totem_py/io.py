"""Graph files: readers for edge lists, Matrix Market, DIMACS and our binary CSR, and its writer.

Formats and vertex-id rules are those of DESIGN.md ("Command line contract"). Text is read in chunks
of whole lines and parsed by a Numba byte scanner (`kernels_cpu/parse.py`), so a file is never held in
memory whole and no Python code runs per line; the CSR is built from the parsed chunks by a stable
counting sort. Bad input raises `InputError` naming the file and line; nothing is guessed.

Lines end with LF, CRLF or a lone CR (classic Mac OS). A weight must be a finite number, read as
Python's float() reads it. Columns are separated by blanks and at most one comma (`1,2,,5` has an
empty field, an error). An edge line has two or three columns; a `.csv` line may carry one more
after the weight (SNAP's signed networks are `SOURCE,TARGET,RATING,TIME`), which is skipped. An
`.npz` marked undirected must store both directions of every edge, with equal weights. A Matrix
Market `integer` matrix holds integers; a `symmetric` one is square.

Memory is checked before anything large is allocated, from the sizes a file declares or shows
while it is read: the largest vertex id and the edge count of a text file as it streams, the size
lines of Matrix Market and DIMACS files, the array headers inside an `.npz` (never the compressed
size). `then` names the stages that follow loading (errors.STAGE_COSTS), so that a run is
refused before its graph is built when partitioning and running it would not fit.
"""

import gzip
import io as _io
import os
import stat
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from kernels_cpu import csr as _csr
from kernels_cpu import parse as _parse

from .errors import InputError, available_memory, check_memory, check_stages, printable
from .graph import Graph, index_dtype

FORMATS = {".txt": "edgelist", ".el": "edgelist", ".csv": "csv", ".tsv": "edgelist",
           ".wel": "wel", ".mtx": "mtx", ".gr": "gr", ".npz": "npz"}
NPZ_FORMAT = "totem_py-csr"
NPZ_VERSION = 1
CHUNK_BYTES = 1 << 24
PIECE_BYTES = 1 << 18          # a chunk's pieces scanned at once are about this large or larger
MAX_LINE_BYTES = 1 << 24           # no line of a text graph file is longer
_NO_LIMIT = 1 << 62
_GZIP_MAGIC = b"\x1f\x8b"


def file_format(path):
    """The format named by the file's extension (a trailing .gz is looked through)."""
    name = os.path.basename(os.fspath(path)).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    ext = os.path.splitext(name)[1]
    if ext not in FORMATS:
        raise InputError(f"unknown file type '{ext or name}' (expected one of "
                         f"{', '.join(sorted(FORMATS))}, optionally .gz)", path)
    return FORMATS[ext]


def needs_nonnegative(nonnegative):
    """Why a negative weight is refused: `nonnegative` is True or the algorithm's name."""
    who = nonnegative if isinstance(nonnegative, str) else "the algorithm"
    return f"{who} needs non-negative weights"


def load(path, undirected=False, nonnegative=False, then=()):
    """Read a graph file. `undirected=True` adds the reverse of every edge (`--undirected`);
    a graph that already stores both directions (symmetric Matrix Market) is returned as is.
    `nonnegative` (True, or the name of the algorithm that needs it) refuses a negative weight,
    naming its line.
    `then`: the stages after loading (errors.STAGE_COSTS) whose host memory is checked with the
    loading's, before the graph is built."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except OSError as e:
        raise InputError(f"cannot read the file: {e.strerror or e}", path) from None
    if stat.S_ISDIR(mode):
        raise InputError("is a directory, not a graph file", path)
    if not stat.S_ISREG(mode):
        kind = "a named pipe" if stat.S_ISFIFO(mode) else "a device or special file"
        raise InputError(f"is {kind}, not a regular file: save the graph to a file first", path)
    fmt = file_format(path)
    memory = _Memory(path, undirected, then)
    try:
        if fmt == "npz":
            graph = _load_npz(path, memory, nonnegative)
        else:
            with _open(path) as stream:
                graph = _READERS[fmt](stream, path, memory, nonnegative)
    except (OSError, EOFError, zlib.error) as e:
        # gzip's errors for corrupt or truncated files, and unreadable files
        raise InputError(f"cannot read the file: {getattr(e, 'strerror', None) or e}",
                         path) from None
    if undirected and graph.directed:
        graph = graph.to_undirected()
    return graph


class _Memory:
    """The host memory of loading a graph and of the stages after it, checked against what was
    available when loading began, each time the reader learns more about the graph's size."""

    def __init__(self, path, undirected, then):
        self.path = path
        self.stages = ("load",) + (("undirected",) if undirected else ()) + tuple(then)
        self.available = available_memory()

    def check(self, n_vertices, n_edges, weighted, load="load"):
        """`load`: the loading stage's name in errors.STAGE_COSTS."""
        check_stages(n_vertices, n_edges, weighted, (load,) + self.stages[1:], self.path,
                     self.available)


def _open(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return _Lines(gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb"))


class _Lines:
    """A binary stream whose lone CRs (classic Mac OS line ends) read as LF, so that such a file
    parses line by line and its lines are counted as an editor counts them; CRLF is left as it
    is (the scanner skips the CR). `read` and `readline` share one buffer."""

    def __init__(self, raw):
        self.raw, self.buf, self.held = raw, b"", b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.raw.close()

    def _read(self, size):
        while True:
            block = self.raw.read(size)
            data, self.held = self.held + block, b""
            if block and data.endswith(b"\r"):         # maybe a CRLF cut in two
                data, self.held = data[:-1], b"\r"
            if data or not block:
                break
        if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return data

    def read(self, size):
        if self.buf:
            data, self.buf = self.buf, b""
            return data
        return self._read(size)

    def readline(self, limit=1 << 20):
        """One line (with its LF), at most `limit` bytes of it."""
        while b"\n" not in self.buf and len(self.buf) < limit:
            block = self._read(1 << 16)
            if not block:
                break
            self.buf += block
        end = self.buf.find(b"\n", 0, limit) + 1 or min(len(self.buf), limit)
        line, self.buf = self.buf[:end], self.buf[end:]
        return line


# ---------------------------------------------------------------- text scanning

class _LongLine(Exception):
    """A line longer than MAX_LINE_BYTES."""


def _chunks(stream):
    """Yield (bytes, end) where data[:end] is whole lines; the last chunk may lack a newline.
    A second thread reads the next block while the caller parses this one (the scanner
    releases the GIL)."""
    tail = b""
    with ThreadPoolExecutor(1) as reader:
        pending = reader.submit(stream.read, CHUNK_BYTES)
        while True:
            block = pending.result()
            if not block:
                if tail:
                    yield tail, len(tail)
                return
            pending = reader.submit(stream.read, CHUNK_BYTES)
            data = tail + block
            end = data.rfind(b"\n") + 1
            if end == 0:
                if len(data) > MAX_LINE_BYTES:
                    raise _LongLine
                tail = data
                continue
            yield data, end
            tail = data[end:]


def _show(raw):
    """Bytes from a file as text for a message (control characters escaped)."""
    return printable(bytes(raw).decode("utf-8", "replace"))


def _token(buf, pos):
    """The text of the token at buf[pos] for an error message."""
    stop = pos
    while stop < buf.size and stop - pos < 40 and buf[stop] not in b" \t,\r\n":
        stop += 1
    return _show(buf[pos:stop])


def _pack(out, at, src, dst, w, inexact):
    """Move the pieces' edges (piece j's out[j, 0] edges from at[j], its out[j, 6] inexact
    weights' offsets from at[j]) to the front, in order; returns (edges, inexact weights)."""
    k = n_inexact = 0
    for j in range(out.shape[0]):
        a, n, m = int(at[j]), int(out[j, 0]), int(out[j, 6])
        if a != k:
            for x in (src, dst, w) if w.size else (src, dst):
                x[k:k + n] = x[a:a + n]
        if a != n_inexact and m:
            inexact[n_inexact:n_inexact + m] = inexact[a:a + m]
        k, n_inexact = k + n, n_inexact + m
    return k, n_inexact


class _Scan:
    """How a format's edge lines look; `run` parses a stream's remaining lines into chunk arrays,
    checking as it goes that the edges seen so far (stored twice with `mirror`) and the vertices
    (`vertices` declared, or the largest id seen) fit `memory`."""

    def __init__(self, path, memory, comments=b"#%", prefix=b"", weight_mode=-1, after_weight=0,
                 one_based=False, limits=(_NO_LIMIT, _NO_LIMIT), max_edges=_NO_LIMIT,
                 nonnegative=False, mirror=False, vertices=0, integer=False):
        self.path, self.memory, self.vertices = path, memory, vertices
        self.comment1, self.comment2 = comments[0], comments[-1]
        self.prefix = prefix[0] if prefix else 0
        self.weight_mode = weight_mode
        self.after_weight, self.one_based = after_weight, one_based
        self.limits = limits
        self.max_edges = max_edges
        self.nonnegative, self.mirror, self.integer = nonnegative, mirror, integer
        self.messages = {}
        self.bytes = 0                     # bytes read, to tell an empty file from a blank one

    def run(self, stream, first_line):
        """Returns (chunks [(src, dst, weights)], n_edges, max_id, last line number)."""
        chunks, n_edges, max_id = [], 0, -1
        line = first_line                  # number of the next line to read, 1-based
        dtype = np.int32
        mode = self.weight_mode
        factor = 2 if self.mirror else 1
        try:
            for data, end in _chunks(stream):
                self.bytes += len(data)
                buf = np.frombuffer(data, dtype=np.uint8)
                start = 3 if line == 1 and data.startswith(b"\xef\xbb\xbf") else 0  # UTF-8 BOM
                cuts = self._cuts(data, start, end)
                while True:
                    lines = np.empty(cuts.size - 1, np.int64)
                    _parse.count_pieces(buf, cuts, lines)
                    # piece j's edges from at[j]: room for its lines, the last maybe unended
                    at = np.concatenate([[0], np.cumsum(lines + 1)])
                    # the edges so far and this chunk's lines, the vertices seen so far
                    self.memory.check(max(max_id + 1, self.vertices),
                                      factor * (n_edges + int(at[-1])), mode != 0)
                    src = np.empty(at[-1], dtype)
                    dst = np.empty(at[-1], dtype)
                    w = np.empty(at[-1] if mode != 0 else 0, np.float64)
                    inexact = np.empty(w.size, np.int64)
                    out = np.empty((cuts.size - 1, 7), np.int64)
                    _parse.scan_pieces(
                        buf, cuts, at, self.comment1, self.comment2, self.prefix, mode,
                        self.after_weight, self.one_based, self.limits[0], self.limits[1],
                        self.max_edges - n_edges, np.iinfo(dtype).max, src, dst, w, inexact,
                        bool(self.nonnegative), self.integer, out)
                    failed = np.flatnonzero(out[:, 3] != _parse.OK)
                    used = int(failed[0]) + 1 if failed.size else cuts.size - 1
                    modes = {int(m) for m in out[:used, 1]} - {-1}
                    if len(modes) > 1:          # pieces disagree on the weight column: the
                        cuts = cuts[[0, -1]]    # chunk in one piece finds the first line that
                        continue                # disagrees with the first edge line
                    err = int(out[used - 1, 3])
                    if err == _parse.WIDE_ID and dtype == np.int32:
                        dtype = np.int64
                        continue
                    break
                mode = modes.pop() if modes else mode
                k, n_inexact = _pack(out[:used], at, src, dst, w, inexact)
                if n_inexact:
                    self._inexact(buf, start, line, w[:k], inexact[:n_inexact])
                del inexact
                if err != _parse.OK:
                    eline = int(lines[:used - 1].sum() + out[used - 1, 4])
                    raise self._error(err, line + eline, _token(buf, out[used - 1, 5]))
                if k:
                    if k < 0.9 * at[-1]:          # mostly comments: don't keep the slack
                        src, dst, w = src[:k].copy(), dst[:k].copy(), w[:k].copy()
                    chunks.append((src[:k], dst[:k], w[:k] if mode == 1 else None))
                    n_edges += k
                    max_id = max(max_id, int(out[:used, 2].max()))
                line += int(lines.sum())
                del data, buf
        except _LongLine:
            raise InputError(f"more than {MAX_LINE_BYTES >> 20} MiB without a line end: not a "
                             "text graph file", self.path, line) from None
        if chunks and mode != 1:
            chunks = [(s, d, None) for s, d, _ in chunks]
        self.weight_mode = mode
        return chunks, n_edges, max_id, line

    def _cuts(self, data, start, end):
        """Where the pieces of data[start:end] that are scanned at once begin and end: after a
        line end, about PIECE_BYTES apart, as many as the threads take (one piece where a
        header declares the edge count, which a piece cannot check alone)."""
        pieces = max(1, min(4 * numba.get_num_threads(), (end - start) // PIECE_BYTES))
        if self.max_edges != _NO_LIMIT:
            pieces = 1
        cuts = [start]
        for j in range(1, pieces):
            cut = data.find(b"\n", max(cuts[-1], start + (end - start) * j // pieces), end) + 1
            if cut == 0 or cut >= end:
                break
            cuts.append(cut)
        return np.array(cuts + [end], np.int64)

    def _inexact(self, buf, start, line, w, pos):
        """Fill in the weights the scanner left as NaN (their text at buf[pos]) and check
        them; `line`: the number of the chunk's first line."""
        values = _parse.parse_floats(buf, pos)
        w[np.isnan(w)] = values
        bad = ~np.isfinite(values)
        if self.nonnegative:
            bad |= values < 0
        if bad.any():
            j = int(np.argmax(bad))
            code = _parse.NONFINITE_WEIGHT if not np.isfinite(values[j]) else \
                _parse.NEGATIVE_WEIGHT
            raise self._error(code, line + _parse.count_lines(buf, start, pos[j]),
                              _token(buf, pos[j]))

    def _error(self, code, line, token):
        p = _parse
        default = {
            p.BAD_ID: "vertex id '{token}' is not a non-negative integer",
            p.NEGATIVE_ID: "negative vertex id '{token}'",
            p.ONE_COLUMN: "only one column: an edge line needs a source and a target id",
            p.BAD_WEIGHT: "weight '{token}' is not a number",
            p.NONFINITE_WEIGHT: "weight '{token}' is not a finite number",
            p.NEGATIVE_WEIGHT: "negative weight '{token}' (" + needs_nonnegative(self.nonnegative)
                               + ")",
            p.NO_WEIGHT: "missing weight (third column)",
            p.EXTRA_COLUMN: "unexpected extra column '{token}'",
            p.AFTER_WEIGHT: "unexpected column '{token}' after the weight: an edge line is "
                            "'source target [weight]'",
            p.ID_TOO_LARGE: "vertex id '{token}' is too large",
            p.ID_BELOW_ONE: "vertex id '{token}' is below 1 (ids in this format start at 1)",
            p.ID_BEYOND_SIZE: "vertex id '{token}' is beyond the declared size",
            p.TOO_MANY: "more entries than the header declares",
            p.BAD_LINE: "unexpected line starting with '{token}'",
            p.EMPTY_FIELD: "empty field: a comma must stand between two values",
        }
        template = self.messages.get(code, default.get(code, f"parse error {code}"))
        return InputError(template.format(token=token), self.path, line)


def _build(chunks, n_vertices, n_edges, weighted, mirror, path, directed):
    """The CSR of the parsed chunks (with mirror: each (u, v), u != v, also as (v, u)), rows in
    the file's order (kernels_cpu/csr.py)."""
    indptr = np.zeros(n_vertices + 1, dtype=np.int64)
    by_id = _csr.row_blocks(n_edges, n_vertices)
    for src, dst, _ in chunks:
        _csr.count_rows(src, dst, mirror, by_id, indptr)
    np.cumsum(indptr, out=indptr)
    m = int(indptr[-1])
    blocks = _csr.row_blocks(n_edges, n_vertices, indptr)
    indices = np.empty(m, dtype=index_dtype(n_vertices))
    weights = np.empty(m if weighted else 0, dtype=np.float64)
    no_weights = np.empty(0, dtype=np.float64)
    while chunks:
        src, dst, w = chunks.pop(0)        # drop each chunk once placed
        _csr.place_rows(src, dst, no_weights if w is None else w, weighted, mirror, blocks,
                        indptr, indices, weights)
        del src, dst, w
    _csr.restore_indptr(indptr)
    return Graph(indptr, indices, weights if weighted else None, spec=path, directed=directed,
                 checked=False)


# ---------------------------------------------------------------- readers

def _read_edge_list(stream, path, memory, nonnegative, weighted=None, after_weight=0):
    scan = _Scan(path, memory, comments=b"#%", weight_mode=-1 if weighted is None else 1,
                 after_weight=after_weight, nonnegative=nonnegative)
    scan.messages = {
        _parse.EXTRA_COLUMN: ("unexpected third column '{token}': the first edge line has no "
                              "weight" if weighted is None else
                              "unexpected extra column '{token}'"),
        _parse.NO_WEIGHT: ("missing weight (third column): a .wel file needs 'source target weight'"
                           if weighted else
                           "missing weight (third column): the first edge line has one"),
    }
    chunks, n_edges, max_id, line = scan.run(stream, 1)
    if n_edges == 0:
        what = "the file is empty" if scan.bytes == 0 else "only comments and blank lines"
        raise InputError(f"no edges: {what}", path, max(1, line - 1))
    weighted = scan.weight_mode == 1
    memory.check(max_id + 1, n_edges, weighted)
    return _build(chunks, max_id + 1, n_edges, weighted, False, path, True)


def _read_csv(stream, path, memory, nonnegative):
    # one column after the weight is skipped (SNAP's TIME)
    return _read_edge_list(stream, path, memory, nonnegative, after_weight=1)


def _read_wel(stream, path, memory, nonnegative):
    return _read_edge_list(stream, path, memory, nonnegative, weighted=True)


def _header_lines(stream, path, is_comment, number=0):
    """Yield (line number, stripped bytes) of the lines before the body, skipping comments;
    `number` lines were read before."""
    while True:
        raw = stream.readline()
        number += 1
        if not raw:
            raise InputError("the file ends before its header is complete"
                             if number > 1 else "the file is empty", path, max(1, number - 1))
        text = raw.strip()
        if text and not is_comment(text):
            yield number, text


def _read_mtx(stream, path, memory, nonnegative):
    first = stream.readline()
    if not first:
        raise InputError("the file is empty", path, 1)
    header = first.decode("ascii", "replace").split()
    if not header or header[0].lower() != "%%matrixmarket":
        raise InputError("not a Matrix Market file: the first line must start with %%MatrixMarket",
                         path, 1)
    if len(header) != 5:
        raise InputError("bad Matrix Market header: expected "
                         "'%%MatrixMarket matrix coordinate FIELD SYMMETRY'", path, 1)
    obj, layout, field, symmetry = (t.lower() for t in header[1:])
    for value, allowed in ((obj, ("matrix",)), (layout, ("coordinate",)),
                           (field, ("pattern", "integer", "real")),
                           (symmetry, ("general", "symmetric"))):
        if value not in allowed:
            raise InputError(f"unsupported Matrix Market header '{value}' (supported: matrix "
                             "coordinate, pattern/integer/real, general/symmetric)", path, 1)

    size_line, text = next(_header_lines(stream, path, lambda t: t.startswith(b"%"), number=1))
    parts = text.split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise InputError(f"bad size line '{_show(text)}': expected 'rows columns entries'",
                         path, size_line)
    rows, cols, nnz = (int(p) for p in parts)
    n_vertices = max(rows, cols)
    if n_vertices == 0:
        raise InputError("empty matrix: no vertices declared", path, size_line)
    weighted = field != "pattern"
    mirror = symmetry == "symmetric"
    if mirror and rows != cols:
        raise InputError(f"a symmetric matrix must be square, the size line declares {rows} x "
                         f"{cols}", path, size_line)
    memory.check(n_vertices, nnz * (2 if mirror else 1), weighted)

    scan = _Scan(path, memory, comments=b"%", weight_mode=1 if weighted else 0, one_based=True,
                 limits=(rows, cols), max_edges=nnz, nonnegative=nonnegative, mirror=mirror,
                 vertices=n_vertices, integer=field == "integer")
    scan.messages = {
        _parse.ID_BEYOND_SIZE: f"index '{{token}}' is beyond the declared size {rows} x {cols}",
        _parse.TOO_MANY: f"more entries than the {nnz} declared on the size line (line {size_line})",
        _parse.EXTRA_COLUMN: f"unexpected extra column '{{token}}' in a '{field}' matrix",
        _parse.AFTER_WEIGHT: f"unexpected extra column '{{token}}' in a '{field}' matrix",
        _parse.NO_WEIGHT: f"missing value: a '{field}' matrix needs 'row column value'",
        _parse.ONE_COLUMN: "only one column: an entry needs 'row column'",
        _parse.NOT_INTEGER: "value '{token}' is not an integer (the header says 'integer')",
    }
    chunks, n_edges, _, _ = scan.run(stream, size_line + 1)
    if n_edges != nnz:
        raise InputError(f"the size line declares {nnz} entries but the file has {n_edges}",
                         path, size_line)
    return _build(chunks, n_vertices, n_edges, weighted, mirror, path, directed=not mirror)


def _read_gr(stream, path, memory, nonnegative):
    problem_line, text = next(_header_lines(stream, path, lambda t: t.startswith(b"c")))
    parts = text.split()
    if (len(parts) != 4 or parts[0] != b"p" or parts[1] != b"sp"
            or not parts[2].isdigit() or not parts[3].isdigit()):
        raise InputError(f"expected the problem line 'p sp N M', got '{_show(text)}'",
                         path, problem_line)
    n_vertices, n_arcs = int(parts[2]), int(parts[3])
    if n_vertices == 0:
        raise InputError("no vertices declared", path, problem_line)
    memory.check(n_vertices, n_arcs, True)

    scan = _Scan(path, memory, comments=b"c", prefix=b"a", weight_mode=1, one_based=True,
                 limits=(n_vertices, n_vertices), max_edges=n_arcs, nonnegative=nonnegative,
                 vertices=n_vertices)
    scan.messages = {
        _parse.ID_BEYOND_SIZE: f"vertex id '{{token}}' is beyond the declared {n_vertices} vertices",
        _parse.TOO_MANY: f"more arcs than the {n_arcs} declared on the problem line (line {problem_line})",
        _parse.BAD_LINE: "expected an arc line 'a u v w'",
        _parse.NO_WEIGHT: "missing arc weight: expected 'a u v w'",
        _parse.ONE_COLUMN: "only one column: expected 'a u v w'",
        _parse.AFTER_WEIGHT: "unexpected column '{token}' after the arc weight: expected 'a u v w'",
    }
    chunks, n_edges, _, _ = scan.run(stream, problem_line + 1)
    if n_edges != n_arcs:
        raise InputError(f"the problem line declares {n_arcs} arcs but the file has {n_edges}",
                         path, problem_line)
    return _build(chunks, n_vertices, n_edges, True, False, path, directed=True)


_READERS = {"edgelist": _read_edge_list, "csv": _read_csv, "wel": _read_wel, "mtx": _read_mtx,
            "gr": _read_gr}


# ---------------------------------------------------------------- binary CSR

def npz_writer(graph):
    """A function writing `graph` as our binary CSR (.npz) to a binary file (outputs.Outputs)."""
    arrays = {"format": np.array(NPZ_FORMAT), "version": np.array(NPZ_VERSION),
              "directed": np.array(bool(graph.directed)),
              "indptr": graph.indptr, "indices": graph.indices}
    if graph.weights is not None:
        arrays["weights"] = graph.weights
    return lambda f: np.savez(f, **arrays)


def save_npz(graph, path):
    """Write `graph` as our binary CSR (.npz), all or nothing (totem_py/outputs.py)."""
    from .outputs import Outputs
    Outputs([("the .npz file", path)]).write([npz_writer(graph)])


_NPZ_MEMBERS = ("format", "version", "directed", "indptr", "indices", "weights")


def _gunzip(path, memory):
    """A gzip-compressed .npz decompressed in memory, its size checked as it grows (the
    archive and the arrays read from it are held together)."""
    out = _io.BytesIO()
    with gzip.open(path, "rb") as g:
        while block := g.read(CHUNK_BYTES):
            out.write(block)
            check_memory(2 * out.tell(), "decompressing the file", path, memory.available)
    out.seek(0)
    return out


def _member(archive, info, bad, header_only=False):
    """A member's array, or with header_only its (shape, dtype) from the .npy header, read
    without its data; bad(...) for whatever a damaged archive or member raises."""
    try:
        with archive.open(info) as f:
            if not header_only:
                return np.lib.format.read_array(f, allow_pickle=False)
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy version {version}")
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read(f)
            return shape, dtype
    except MemoryError:
        raise
    except Exception as e:
        raise bad(f"unreadable member '{info.filename}' ({e})") from None


def _load_npz(path, memory, nonnegative):
    with open(path, "rb") as f:
        packed = f.read(2) == _GZIP_MAGIC
    source = _gunzip(path, memory) if packed else path

    def bad(what):
        return InputError(f"not a valid {NPZ_FORMAT} file: {what}", path)

    try:
        archive = zipfile.ZipFile(source)
    except MemoryError:
        raise
    except Exception as e:      # BadZipFile, NotImplementedError (a newer zip version), ...
        raise InputError(f"not a valid .npz file ({e})", path) from None
    with archive:
        members = {i.filename[:-4]: i for i in archive.infolist() if i.filename.endswith(".npy")}
        missing = {"format", "version", "directed", "indptr", "indices"} - set(members)
        if missing:
            raise bad(f"missing {', '.join(sorted(missing))}")
        heads = {k: _member(archive, members[k], bad, header_only=True)
                 for k in _NPZ_MEMBERS if k in members}
        for k in ("format", "version", "directed"):
            if heads[k][0] != () or heads[k][1].hasobject:
                raise bad(f"'{k}' is not a single value")
        for k, kinds in (("indptr", "iu"), ("indices", "iu"), ("weights", "f")):
            if k in heads and (len(heads[k][0]) != 1 or heads[k][1].kind not in kinds):
                raise bad(f"'{k}' is not a 1-d {'integer' if kinds == 'iu' else 'float'} array")
        if heads["indptr"][0][0] < 1:
            raise bad("'indptr' is empty")
        n_vertices, n_edges = heads["indptr"][0][0] - 1, heads["indices"][0][0]
        weighted = "weights" in heads
        if weighted and heads["weights"][0] != heads["indices"][0]:
            raise bad("'weights' is not as long as 'indices'")
        for k, (shape, dtype) in heads.items():
            if members[k].file_size < int(np.prod(shape)) * dtype.itemsize:
                raise bad(f"member '{k}' is shorter than its header declares")
        tag, version, directed = (_member(archive, members[k], bad)
                                  for k in ("format", "version", "directed"))
        if str(tag) != NPZ_FORMAT:
            raise bad(f"format tag is not '{NPZ_FORMAT}'")
        if version.dtype.kind not in "iu" or int(version) != NPZ_VERSION:
            raise InputError(f"unsupported {NPZ_FORMAT} version {_show(str(version).encode())} "
                             f"(this reader knows {NPZ_VERSION})", path)
        if directed.dtype != np.bool_:
            raise bad("'directed' is not a boolean")
        directed = bool(directed)
        memory.check(n_vertices, n_edges, weighted, "load_npz" if directed else
                     "load_npz_undirected")
        indptr, indices = (_member(archive, members[k], bad) for k in ("indptr", "indices"))
        weights = _member(archive, members["weights"], bad) if weighted else None

    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(indptr[1:] < indptr[:-1]):
        raise bad("'indptr' is not a non-decreasing offset array from 0 to len(indices)")
    if indices.size and (indices.min() < 0 or indices.max() >= n_vertices):
        raise bad(f"'indices' has ids outside 0..{n_vertices - 1}")
    graph = Graph(indptr, indices, weights, spec=path, directed=directed, checked=False)
    if weights is not None:
        finite = np.isfinite(weights)
        if not finite.all():
            e = int(np.argmin(finite))
            u, v = _edge(graph, e)
            raise bad(f"the weight of edge {u} -> {v} ({weights[e]}) is not a finite number")
        if nonnegative and weights.size and weights.min() < 0:
            e = int(np.argmin(weights))
            u, v = _edge(graph, e)
            raise InputError(f"the weight of edge {u} -> {v} ({weights[e]}) is negative "
                             f"({needs_nonnegative(nonnegative)})", path)
    if not directed:
        _check_symmetric(graph, bad)
    return graph


def _edge(graph, e):
    """(source, target) of the edge at position `e` of the CSR."""
    return int(np.searchsorted(graph.indptr, e, side="right") - 1), int(graph.indices[e])


def _check_symmetric(graph, bad):
    """An undirected graph stores (v, u) as often as (u, v), with the same weights."""
    problem = graph.asymmetry()
    if problem:
        raise bad(f"marked undirected, but {problem}")
