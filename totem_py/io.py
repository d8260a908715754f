"""Graph files: readers for edge lists, Matrix Market, DIMACS and our binary CSR, and its writer.

Formats and vertex-id rules are those of DESIGN.md ("Command line contract"). Text is read in chunks
of whole lines and parsed by a Numba byte scanner (`kernels_cpu/parse.py`), so a file is never held in
memory whole and no Python code runs per line; the CSR is built from the parsed chunks by a stable
counting sort. Bad input raises `InputError` naming the file and line; nothing is guessed.
"""

import gzip
import os
import tempfile
import zipfile
import zlib

import numpy as np

from kernels_cpu import parse as _parse

from .errors import InputError, check_memory
from .graph import Graph, csr_bytes, index_dtype

FORMATS = {".txt": "edgelist", ".el": "edgelist", ".csv": "edgelist", ".tsv": "edgelist",
           ".wel": "wel", ".mtx": "mtx", ".gr": "gr", ".npz": "npz"}
NPZ_FORMAT = "totem_py-csr"
NPZ_VERSION = 1
CHUNK_BYTES = 1 << 24
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


def load(path, undirected=False):
    """Read a graph file. `undirected=True` adds the reverse of every edge (`--undirected`);
    a graph that already stores both directions (symmetric Matrix Market) is returned as is."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a directory, not a graph file", path)
    fmt = file_format(path)
    try:
        if fmt == "npz":
            graph = _load_npz(path)
        else:
            with _open(path) as stream:
                graph = _READERS[fmt](stream, path)
    except (OSError, EOFError, zlib.error) as e:
        # gzip's errors for corrupt or truncated files, and unreadable files
        raise InputError(f"cannot read the file: {e}", path) from None
    if undirected and graph.directed:
        graph = graph.to_undirected()
    return graph


def _open(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb")


# ---------------------------------------------------------------- text scanning

def _chunks(stream):
    """Yield (bytes, end) where data[:end] is whole lines; the last chunk may lack a newline."""
    tail = b""
    while True:
        block = stream.read(CHUNK_BYTES)
        if not block:
            if tail:
                yield tail, len(tail)
            return
        data = tail + block
        end = data.rfind(b"\n") + 1
        if end == 0:
            tail = data
            continue
        yield data, end
        tail = data[end:]


def _token(buf, pos):
    """The text of the token at buf[pos] for an error message."""
    stop = pos
    while stop < buf.size and stop - pos < 40 and buf[stop] not in b" \t,\r\n":
        stop += 1
    return bytes(buf[pos:stop]).decode("utf-8", "replace")


class _Scan:
    """How a format's edge lines look; `run` parses a stream's remaining lines into chunk arrays."""

    def __init__(self, path, comments=b"#%", prefix=b"", weight_mode=-1, strict=False,
                 one_based=False, limits=(_NO_LIMIT, _NO_LIMIT), max_edges=_NO_LIMIT):
        self.path = path
        self.comment1, self.comment2 = comments[0], comments[-1]
        self.prefix = prefix[0] if prefix else 0
        self.weight_mode = weight_mode
        self.strict, self.one_based = strict, one_based
        self.limits = limits
        self.max_edges = max_edges
        self.messages = {}

    def run(self, stream, first_line):
        """Returns (chunks [(src, dst, weights)], n_edges, max_id, last line number)."""
        chunks, n_edges, max_id = [], 0, -1
        line = first_line                  # number of the next line to read, 1-based
        dtype = np.int32
        mode = self.weight_mode
        for data, end in _chunks(stream):
            buf = np.frombuffer(data, dtype=np.uint8)
            start = 3 if line == 1 and data.startswith(b"\xef\xbb\xbf") else 0  # UTF-8 BOM
            newlines = _parse.count_lines(buf, start, end)
            cap = newlines + 1
            while True:
                item = np.dtype(dtype).itemsize
                check_memory(cap * (2 * item + (8 if mode != 0 else 0)), "the parsed edges", self.path)
                src = np.empty(cap, dtype)
                dst = np.empty(cap, dtype)
                w = np.empty(cap if mode != 0 else 0, np.float64)
                k, mode_out, mx, err, eline, epos = _parse.scan_edges(
                    buf, start, end, self.comment1, self.comment2, self.prefix, mode,
                    self.strict, self.one_based, self.limits[0], self.limits[1],
                    self.max_edges - n_edges, np.iinfo(dtype).max, src, dst, w)
                if err == _parse.WIDE_ID and dtype == np.int32:
                    dtype = np.int64
                    continue
                break
            if err != _parse.OK:
                raise self._error(err, line + eline, _token(buf, epos))
            mode = mode_out
            if k:
                if k < 0.9 * cap:          # mostly comments: don't keep the slack
                    src, dst, w = src[:k].copy(), dst[:k].copy(), w[:k].copy()
                chunks.append((src[:k], dst[:k], w[:k] if mode == 1 else None))
                n_edges += k
                max_id = max(max_id, mx)
            line += newlines
            del data, buf
        if chunks and mode != 1:
            chunks = [(s, d, None) for s, d, _ in chunks]
        self.weight_mode = mode
        return chunks, n_edges, max_id, line

    def _error(self, code, line, token):
        p = _parse
        default = {
            p.BAD_ID: "vertex id '{token}' is not a non-negative integer",
            p.NEGATIVE_ID: "negative vertex id '{token}'",
            p.ONE_COLUMN: "only one column: an edge line needs a source and a target id",
            p.BAD_WEIGHT: "weight '{token}' is not a number",
            p.NO_WEIGHT: "missing weight (third column)",
            p.EXTRA_COLUMN: "unexpected extra column '{token}'",
            p.ID_TOO_LARGE: "vertex id '{token}' is too large",
            p.ID_BELOW_ONE: "vertex id '{token}' is below 1 (ids in this format start at 1)",
            p.ID_BEYOND_SIZE: "vertex id '{token}' is beyond the declared size",
            p.TOO_MANY: "more entries than the header declares",
            p.BAD_LINE: "unexpected line starting with '{token}'",
        }
        template = self.messages.get(code, default.get(code, f"parse error {code}"))
        return InputError(template.format(token=token), self.path, line)


def _build(chunks, n_vertices, n_edges, weighted, mirror, path, directed):
    """The CSR of the parsed chunks (with mirror: each (u, v), u != v, also as (v, u))."""
    check_memory(csr_bytes(n_vertices, n_edges * (2 if mirror else 1), weighted), "the graph", path)
    indptr = np.zeros(n_vertices + 1, dtype=np.int64)
    for src, dst, _ in chunks:
        _parse.count_rows(src, dst, mirror, indptr)
    np.cumsum(indptr, out=indptr)
    m = int(indptr[-1])
    indices = np.empty(m, dtype=index_dtype(n_vertices))
    weights = np.empty(m if weighted else 0, dtype=np.float64)
    no_weights = np.empty(0, dtype=np.float64)
    while chunks:
        src, dst, w = chunks.pop(0)        # drop each chunk once placed
        _parse.scatter_rows(src, dst, no_weights if w is None else w, weighted, mirror,
                            indptr, indices, weights)
        del src, dst, w
    _parse.restore_indptr(indptr)
    return Graph(indptr, indices, weights if weighted else None, spec=path, directed=directed)


# ---------------------------------------------------------------- readers

def _read_edge_list(stream, path, weighted=None):
    scan = _Scan(path, comments=b"#%", weight_mode=-1 if weighted is None else 1)
    scan.messages = {
        _parse.EXTRA_COLUMN: "unexpected third column '{token}': the first edge line has no weight",
        _parse.NO_WEIGHT: ("missing weight (third column): a .wel file needs 'source target weight'"
                           if weighted else
                           "missing weight (third column): the first edge line has one"),
    }
    chunks, n_edges, max_id, line = scan.run(stream, 1)
    if n_edges == 0:
        what = "the file is empty" if line == 1 else "only comments and blank lines"
        raise InputError(f"no edges: {what}", path, max(1, line - 1))
    return _build(chunks, max_id + 1, n_edges, scan.weight_mode == 1, False, path, True)


def _read_wel(stream, path):
    return _read_edge_list(stream, path, weighted=True)


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


def _read_mtx(stream, path):
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
        raise InputError(f"bad size line '{text.decode('ascii', 'replace')}': expected "
                         "'rows columns entries'", path, size_line)
    rows, cols, nnz = (int(p) for p in parts)
    n_vertices = max(rows, cols)
    if n_vertices == 0:
        raise InputError("empty matrix: no vertices declared", path, size_line)
    weighted = field != "pattern"
    mirror = symmetry == "symmetric"
    item = index_dtype(n_vertices).itemsize
    check_memory(nnz * (2 * item + (8 if weighted else 0))
                 + csr_bytes(n_vertices, nnz * (2 if mirror else 1), weighted), "the graph", path)

    scan = _Scan(path, comments=b"%", weight_mode=1 if weighted else 0, strict=True,
                 one_based=True, limits=(rows, cols), max_edges=nnz)
    scan.messages = {
        _parse.ID_BEYOND_SIZE: f"index '{{token}}' is beyond the declared size {rows} x {cols}",
        _parse.TOO_MANY: f"more entries than the {nnz} declared on the size line (line {size_line})",
        _parse.EXTRA_COLUMN: f"unexpected extra column '{{token}}' in a '{field}' matrix",
        _parse.NO_WEIGHT: f"missing value: a '{field}' matrix needs 'row column value'",
        _parse.ONE_COLUMN: "only one column: an entry needs 'row column'",
    }
    chunks, n_edges, _, _ = scan.run(stream, size_line + 1)
    if n_edges != nnz:
        raise InputError(f"the size line declares {nnz} entries but the file has {n_edges}",
                         path, size_line)
    return _build(chunks, n_vertices, n_edges, weighted, mirror, path, directed=not mirror)


def _read_gr(stream, path):
    problem_line, text = next(_header_lines(stream, path, lambda t: t.startswith(b"c")))
    parts = text.split()
    if (len(parts) != 4 or parts[0] != b"p" or parts[1] != b"sp"
            or not parts[2].isdigit() or not parts[3].isdigit()):
        raise InputError(f"expected the problem line 'p sp N M', got '{text.decode('ascii', 'replace')}'",
                         path, problem_line)
    n_vertices, n_arcs = int(parts[2]), int(parts[3])
    if n_vertices == 0:
        raise InputError("no vertices declared", path, problem_line)
    item = index_dtype(n_vertices).itemsize
    check_memory(n_arcs * (2 * item + 8) + csr_bytes(n_vertices, n_arcs, True), "the graph", path)

    scan = _Scan(path, comments=b"c", prefix=b"a", weight_mode=1, strict=True, one_based=True,
                 limits=(n_vertices, n_vertices), max_edges=n_arcs)
    scan.messages = {
        _parse.ID_BEYOND_SIZE: f"vertex id '{{token}}' is beyond the declared {n_vertices} vertices",
        _parse.TOO_MANY: f"more arcs than the {n_arcs} declared on the problem line (line {problem_line})",
        _parse.BAD_LINE: "expected an arc line 'a u v w'",
        _parse.NO_WEIGHT: "missing arc weight: expected 'a u v w'",
        _parse.ONE_COLUMN: "only one column: expected 'a u v w'",
    }
    chunks, n_edges, _, _ = scan.run(stream, problem_line + 1)
    if n_edges != n_arcs:
        raise InputError(f"the problem line declares {n_arcs} arcs but the file has {n_edges}",
                         path, problem_line)
    return _build(chunks, n_vertices, n_edges, True, False, path, directed=True)


_READERS = {"edgelist": _read_edge_list, "wel": _read_wel, "mtx": _read_mtx, "gr": _read_gr}


# ---------------------------------------------------------------- binary CSR

def save_npz(graph, path):
    """Write `graph` as our binary CSR (.npz), through a temporary file so nothing is half-written."""
    path = os.fspath(path)
    arrays = {"format": np.array(NPZ_FORMAT), "version": np.array(NPZ_VERSION),
              "directed": np.array(bool(graph.directed)),
              "indptr": graph.indptr, "indices": graph.indices}
    if graph.weights is not None:
        arrays["weights"] = graph.weights
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)   # mkstemp makes it private; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _load_npz(path):
    check_memory(os.path.getsize(path), "the graph", path)
    with open(path, "rb") as f:
        source = path
        if f.read(2) == _GZIP_MAGIC:
            import io as _io
            with gzip.open(path, "rb") as g:
                source = _io.BytesIO(g.read())
    try:
        archive = np.load(source, allow_pickle=False)
    except (ValueError, zipfile.BadZipFile, OSError, EOFError) as e:
        raise InputError(f"not a valid .npz file ({e})", path) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise InputError("not a .npz archive", path)

    def bad(what):
        return InputError(f"not a valid {NPZ_FORMAT} file: {what}", path)

    with archive:
        try:
            missing = {"format", "version", "directed", "indptr", "indices"} - set(archive.files)
            if missing:
                raise bad(f"missing {', '.join(sorted(missing))}")
            if archive["format"].shape != () or str(archive["format"]) != NPZ_FORMAT:
                raise bad(f"format tag is not '{NPZ_FORMAT}'")
            version = archive["version"]
            if version.shape != () or version.dtype.kind not in "iu" or int(version) != NPZ_VERSION:
                raise InputError(f"unsupported {NPZ_FORMAT} version {version} (this reader knows "
                                 f"{NPZ_VERSION})", path)
            directed = archive["directed"]
            indptr, indices = archive["indptr"], archive["indices"]
            weights = archive["weights"] if "weights" in archive.files else None
        except (ValueError, zipfile.BadZipFile, OSError, EOFError, zlib.error) as e:
            raise bad(f"unreadable member ({e})") from None

    if directed.shape != () or directed.dtype != np.bool_:
        raise bad("'directed' is not a boolean")
    if indptr.ndim != 1 or indptr.size < 1 or indptr.dtype.kind not in "iu":
        raise bad("'indptr' is not a 1-d integer array")
    if indices.ndim != 1 or indices.dtype.kind not in "iu":
        raise bad("'indices' is not a 1-d integer array")
    n_vertices = indptr.size - 1
    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(indptr[1:] < indptr[:-1]):
        raise bad("'indptr' is not a non-decreasing offset array from 0 to len(indices)")
    if indices.size and (indices.min() < 0 or indices.max() >= n_vertices):
        raise bad(f"'indices' has ids outside 0..{n_vertices - 1}")
    if weights is not None:
        if weights.shape != indices.shape or weights.dtype.kind != "f":
            raise bad("'weights' is not a float array as long as 'indices'")
    return Graph(indptr, indices, weights, spec=path, directed=bool(directed))
