"""Seeded random mutations of the real graphs of ../shared/data through every reader.

Each case is a prefix of one real file (its header's counts adjusted), mutated the way damaged or
hand-edited files are: truncated, bytes flipped, fields swapped, lines deleted or doubled, CR line
ends, huge ids, extra columns, non-finite weights, gzip-compressed and then damaged, and for
`.npz` damaged archives and bad members. Every case must end as the command promises: a graph
that an algorithm runs on and whose result passes its verifier, or an InputError of one line
naming the file; never another exception or a hang (each case has a time limit). Edge lists are
also checked against an independent parser of the documented format: whatever the reader
accepts is exactly what the file says (weights bit for bit as Python's float() reads them), and
what the format forbids is refused. Further cases put an empty field (two commas, or a comma at
a line's end or start) on one line, which must be refused naming that line, or give every line a
weight whose decimal text needs correct rounding.

Readers run in this process (host memory capped at 2 GiB for the check, so huge ids are refused
on any machine); a few cases go through `python -m totem_py.run` and `totem_py.convert`.

Case k draws from its own generator, seeded by (TOTEM_FUZZ_SEED, k), so a failure names the
seed and case that repeat it. The default run takes a fixed count of cases; `-m extended` runs further
cases (their numbers follow the default run's) until TOTEM_FUZZ_SECONDS are spent, shared out
among the fuzz tests of this file and test_fuzz_options.py:

    TOTEM_FUZZ_SECONDS=1800 TOTEM_FUZZ_SEED=7 python -m pytest -m extended -s \
        tests/test_fuzz.py tests/test_fuzz_options.py
"""

import gzip
import io
import os
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

import totem_py
from totem_py import errors, io as tio
from totem_py.errors import InputError
from totem_py.io import load, save_npz

from tests.support.cli import run_cli, run_here
from tests.support.fuzz import SEED, case_numbers, case_rng, on_demand_seconds, time_limit

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TOTEM_DATA", ROOT.parent / "shared" / "data"))
CASES = 500                 # in process, spread over the files
CLI_CASES = 8               # through the command
PREFIX_LINES = 1500         # edge lines kept of each real file
FIELD_CASES = 60            # empty fields and hard weights, on the edge lists
CASE_SECONDS = 30           # a case that takes longer is a hang
MEMORY = 2 << 30            # what the readers' memory check is told is available

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not here")


# ---------------------------------------------------------------- sources

def _prefix(name):
    """(file name, bytes): the header and the first PREFIX_LINES edge lines of a real file, with
    a Matrix Market size line or DIMACS problem line rewritten to match."""
    with gzip.open(SHARED / name) as f:
        text = f.read(1 << 18)
    lines = text.split(b"\n")[:-1]            # whole lines only
    base = name[:-3]
    if base.endswith(".mtx"):
        head = lines[:next(i for i, ln in enumerate(lines) if not ln.startswith(b"%"))]
        size = lines[len(head)].split()
        body = lines[len(head) + 1:len(head) + 1 + PREFIX_LINES]
        size[2] = str(len(body)).encode()
        return base, b"\n".join(head + [b" ".join(size)] + body) + b"\n"
    if base.endswith(".gr"):
        head = [ln for ln in lines if ln.startswith(b"c")]
        body = [ln for ln in lines if ln.startswith(b"a ")][:PREFIX_LINES]
        problem = next(ln for ln in lines if ln.startswith(b"p ")).split()
        problem[3] = str(len(body)).encode()
        return base, b"\n".join(head + [b" ".join(problem)] + body) + b"\n"
    return base, b"\n".join(lines[:PREFIX_LINES]) + b"\n"


def _sources(folder):
    out = [_prefix(p.name) for p in sorted(SHARED.glob("*.gz"))]
    # .npz: a directed weighted graph (the bitcoin ratings, -10..10) and its undirected version
    csv = dict(out)["soc-sign-bitcoinotc.csv"]
    g = load(_write(folder, "ratings.csv", csv))
    for name, graph in (("d.npz", g), ("u.npz", g.to_undirected())):
        buf = io.BytesIO()
        tio.npz_writer(graph)(buf)
        out.append((name, buf.getvalue()))
    return out


def _write(folder, name, data):
    path = folder / name
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------- mutations

HUGE = [b"2147483648", b"4294967296", b"1000000000000", b"99999999999999999",
        b"123456789012345678901", b"1" + b"0" * 40]
ODD = [b"nan", b"inf", b"-inf", b"1e400", b"-0", b"1e-400", b"+5", b"0x10", b"1_0", b"\xff",
       b"\x00", b"\x1b[31m", b"", b",", b"#", b"-3", b"7.5", b"1e5", b"3 4", b"\t", b"\v"]


def _lines(data):
    return data.split(b"\n")


def mutate(rng, name, data):
    """One random mutation of `data` (a file named `name`); returns (name, bytes, what)."""
    if name.endswith(".npz"):
        return _mutate_npz(rng, name, data)
    kind = rng.integers(0, 16)
    lines = _lines(data)
    body = [i for i, ln in enumerate(lines) if ln and ln[:1] not in b"#%cp"]
    i = int(rng.choice(body)) if body else 0
    fields = lines[i].replace(b"\t", b" ").replace(b",", b" ").split()
    if kind < 2:
        return _damage(rng, name, data, kind)
    if kind == 2 and len(fields) >= 2:
        a, c = rng.choice(len(fields), 2, replace=False)
        fields[a], fields[c] = fields[c], fields[a]
        lines[i] = b" ".join(fields)
        return name, b"\n".join(lines), "fields swapped"
    if kind == 3:
        return name, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r"), "CR line ends"
    if kind == 4 and fields:
        fields[int(rng.integers(0, min(len(fields), 2)))] = HUGE[int(rng.integers(0, len(HUGE)))]
        lines[i] = b" ".join(fields)
        return name, b"\n".join(lines), "huge id"
    if kind == 5 and fields:
        fields[int(rng.integers(0, len(fields)))] = ODD[int(rng.integers(0, len(ODD)))]
        lines[i] = b" ".join(fields)
        return name, b"\n".join(lines), "odd field"
    if kind == 6:
        lines[i] = lines[i] + b" " + ODD[int(rng.integers(0, len(ODD)))]
        return name, b"\n".join(lines), "extra column"
    if kind == 7:
        del lines[i]
        return name, b"\n".join(lines), "line deleted"
    if kind == 8:
        lines.insert(i, lines[i])
        return name, b"\n".join(lines), "line doubled"
    if kind == 9:
        return name, data.replace(b"\n", b"\r\n"), "CRLF line ends"
    if kind == 10:
        return name, b"\xef\xbb\xbf" + data, "BOM"
    if kind == 11:
        k = int(rng.integers(0, min(len(lines), 8)))     # the header region
        lines[k] = ODD[int(rng.integers(0, len(ODD)))] + lines[k][int(rng.integers(0, 6)):]
        return name, b"\n".join(lines), "header damaged"
    if kind == 12:
        return name + ".gz", gzip.compress(mutate(rng, name, data)[1], 1), "gzip of a mutation"
    if kind == 13:
        packed = bytearray(gzip.compress(data, 1))
        if rng.integers(0, 2):
            packed = packed[:int(rng.integers(0, len(packed)))]
        else:
            packed[int(rng.integers(10, len(packed)))] ^= 0x55
        return name + ".gz", bytes(packed), "gzip damaged"
    if kind == 14:
        return name, data.replace(b"\n", b""), "line ends removed"
    lines[i] = lines[i].replace(b" ", b"\t").replace(b"\t", b"  ,")
    return name, b"\n".join(lines), "separators changed"


def _damage(rng, name, data, kind):
    """Kind 0: truncated at a random byte; 1: one to three bytes replaced at random."""
    if kind == 0:
        return name, data[:int(rng.integers(0, len(data) + 1))], "truncated"
    b = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
    return name, bytes(b), "bytes flipped"


def _mutate_npz(rng, name, data):
    kind = rng.integers(0, 5)
    if kind < 2:
        return _damage(rng, name, data, kind)
    with np.load(io.BytesIO(data)) as z:
        arrays = {k: z[k] for k in z.files}
    if kind == 2:
        key = str(rng.choice(["indptr", "indices", "weights"]))
        a = arrays[key].copy()
        j = int(rng.integers(0, a.size))
        a[j] = rng.choice([-1, a.size * 3, 0, 2**31 - 1]) if key != "weights" else \
            rng.choice([np.nan, np.inf, -1.0, 1e308])
        arrays[key] = a
        what = f"{key}[{j}] changed"
    elif kind == 3:
        arrays["directed"] = np.array(not bool(arrays["directed"]))
        what = "directed flag flipped"
    else:
        key = str(rng.choice(list(arrays)))
        odd = [np.array(1.5), np.zeros((2, 2)), np.array("x"), np.arange(3, dtype=np.float32)]
        arrays[key] = odd[int(rng.integers(0, len(odd)))]
        what = f"{key} replaced"
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    packed = rng.integers(0, 4) == 0
    return (name + ".gz" if packed else name,
            gzip.compress(buf.getvalue(), 1) if packed else buf.getvalue(), what)


# ---------------------------------------------------------------- an independent edge-list parser

_SEP = re.compile(rb"[ \t,\r\v\f]+")
_EMPTY = re.compile(rb"^,|,[ \t\r\v\f]*(,|$)")         # a comma without a value on one side
_FLOAT = re.compile(rb"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_ID = re.compile(rb"[0-9]+")


def expected_edges(name, data):
    """(src, dst, weights or None) the documented edge-list rules give, or None if they refuse
    the file (or it is too big to load under the capped memory)."""
    if name.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, ValueError, zlib.error):
            return None
        name = name[:-3]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    ext = name.rsplit(".", 1)[1]
    mode = 1 if ext == "wel" else -1
    src, dst, w = [], [], []
    for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        line = line.lstrip(b" \t\r")
        if not line or line[:1] in b"#%":
            continue
        if _EMPTY.search(line):
            return None
        tokens = _SEP.split(line)
        if tokens[-1] == b"":
            tokens.pop()
        if len(tokens) < 2 or not all(_ID.fullmatch(t) for t in tokens[:2]):
            return None
        ids = [int(t) for t in tokens[:2]]
        if max(ids) >= 10**8:               # ids this large need more than MEMORY
            return None
        n_fields = 3 if len(tokens) >= 3 else 2
        if len(tokens) > (4 if ext == "csv" else 3):
            return None
        if mode == -1:
            mode = 1 if n_fields == 3 else 0
        if (mode == 1) != (n_fields == 3):
            return None
        if mode == 1:
            if not _FLOAT.fullmatch(tokens[2]):
                return None
            weight = float(tokens[2])
            if not np.isfinite(weight):
                return None
            w.append(weight)
        src.append(ids[0])
        dst.append(ids[1])
    if not src:
        return None
    return np.array(src), np.array(dst), (np.array(w) if mode == 1 else None)


def check_edge_list(graph, expected):
    src, dst, w = expected
    order = np.lexsort((dst, src))           # the CSR keeps file order within a row: compare
    got_src, got_dst = graph.edge_sources(), graph.indices     # as sorted (u, v, w) lists
    got = np.lexsort((got_dst, got_src))
    assert graph.n_vertices == max(src.max(), dst.max()) + 1
    assert np.array_equal(got_src[got], src[order]) and np.array_equal(got_dst[got], dst[order])
    if w is None:
        assert graph.weights is None
    else:
        keys = lambda s, d, x: np.lexsort((x, d, s))
        a = graph.weights[keys(got_src, got_dst, graph.weights)]
        b = w[keys(src, dst, w)]
        assert np.array_equal(a.view(np.int64), b.view(np.int64))


# ---------------------------------------------------------------- running a case

ALGORITHMS = ("bfs", "cc", "sssp", "pagerank")


def run_case(path, name, k):
    """Load `path`; then run and verify one algorithm. Returns 'error' or 'verified'."""
    try:
        graph = load(path)
    except InputError as e:
        message = str(e)
        assert "\n" not in message and message.startswith(str(path)), message
        return "error", None
    algorithm = ALGORITHMS[k % len(ALGORITHMS)]
    device, share = (("cpu", 1.0), ("emulated", 0.5))[k // len(ALGORITHMS) % 2]
    try:
        totem_py.run(graph, algorithm, device=device, cpu_share=share, verify=True,
                     iterations=3)
    except InputError as e:     # sssp and weighted pagerank on negative weights: one line
        assert algorithm in ("sssp", "pagerank") and "non-negative" in str(e), str(e)
    return "verified", graph


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def sources(folder):
    return _sources(folder)


def make_case(folder, sources, k):
    """Case k: (path, source name, mutated name, mutated bytes, what was done)."""
    name, data = sources[k % len(sources)]
    mutated_name, mutated, what = mutate(case_rng(k, "mutation"), name, data)
    path = _write(folder, f"c{k:05d}_{mutated_name}", mutated)
    return path, name, mutated_name, mutated, what


def mutations(folder, sources, numbers):
    """Load, run and check the mutations numbered `numbers`; returns the outcomes' counts."""
    outcomes = {"error": 0, "verified": 0, "checked": 0}
    for k in numbers:
        path, name, mutated_name, data, what = make_case(folder, sources, k)
        where = f"TOTEM_FUZZ_SEED={SEED} case {k} ({what} of {name}, {path})"
        try:
            with time_limit(CASE_SECONDS):
                outcome, graph = run_case(path, name, k)
        except (AssertionError, Exception) as e:
            raise AssertionError(f"{where}: {type(e).__name__}: {e}") from e
        outcomes[outcome] += 1
        if mutated_name.removesuffix(".gz").rsplit(".", 1)[-1] in ("txt", "el", "csv", "wel"):
            expected = expected_edges(mutated_name, data)
            assert (outcome == "error") == (expected is None), \
                f"{where}: reader {outcome}, the format says " \
                f"{'refuse' if expected is None else 'accept'}"
            if graph is not None:
                check_edge_list(graph, expected)
                outcomes["checked"] += 1
        path.unlink()
    return outcomes


@pytest.fixture
def capped_memory(monkeypatch):
    monkeypatch.setattr(errors, "available_memory", lambda: MEMORY)
    monkeypatch.setattr(tio, "available_memory", lambda: MEMORY)


@pytest.mark.slow
def test_every_mutation_loads_and_verifies_or_is_refused(folder, sources, capped_memory):
    outcomes = mutations(folder, sources, range(CASES))
    # the mutations are neither all fatal nor all harmless
    assert outcomes["error"] > CASES // 5 and outcomes["verified"] > CASES // 5, outcomes
    assert outcomes["checked"] > CASES // 10


@pytest.mark.extended
def test_more_mutations(folder, sources, capped_memory):
    outcomes = mutations(folder, sources, case_numbers(CASES, on_demand_seconds(0.25)))
    print(f"mutations: {outcomes}")


def through_the_command(folder, sources, tmp_path, numbers):
    """exit 0 with a verified result, or exit 2 and one line; never 1, a traceback or a hang.
    The first case of each command runs in a process of its own, the others in this one."""
    codes, started = [], set()
    for k in numbers:
        path, name, mutated_name, data, what = make_case(folder, sources, k)
        if k % 2:
            module, args = "totem_py.run", ["--graph", path, "--verify", "--quiet", "--device",
                                            "emulated", "--output", tmp_path / "r.npy"]
        else:
            module, args = "totem_py.convert", [path, tmp_path / "g.npz"]
        if module in started:
            with time_limit(120):
                proc = run_here(*args, module=module)
        else:
            started.add(module)
            proc = run_cli(*args, module=module)
        codes.append(proc.returncode)
        where = f"TOTEM_FUZZ_SEED={SEED} case {k} ({what} of {name}, {path})"
        assert proc.returncode in (0, 2), f"{where}: {proc.returncode} {proc.stderr[-2000:]}"
        if proc.returncode == 2:
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), f"{where}: {proc.stderr}"
        else:
            assert proc.stderr == "", f"{where}: {proc.stderr}"
    return codes


@pytest.mark.slow
def test_mutations_through_the_command(folder, sources, tmp_path):
    codes = through_the_command(folder, sources, tmp_path, range(CASES, CASES + CLI_CASES))
    assert set(codes) == {0, 2}, codes


@pytest.mark.extended
def test_more_mutations_through_the_command(folder, sources, tmp_path):
    codes = through_the_command(folder, sources, tmp_path,
                                case_numbers(10**6, on_demand_seconds(0.05)))
    print(f"mutations through the command: {len(codes)}, exits {sorted(set(codes))}")


# ---------------------------------------------------------------- empty fields and hard weights

def hard_weight(rng):
    """The decimal text of a double that float() must round correctly: 17 digits and more,
    subnormal, large exponents, long mantissas."""
    x, kind = rng.random(), rng.integers(0, 5)
    if kind == 0:
        return repr(x)
    if kind == 1:
        return f"{x * 2.0 ** int(rng.integers(-1074, 1000)):.17g}"
    if kind == 2:
        return f"{x:.{int(rng.integers(18, 30))}e}"
    if kind == 3:
        return f"{int(rng.integers(1, 10 ** 18))}e{int(rng.integers(-340, 290))}"
    return f"-{x * 10.0 ** int(rng.integers(-25, 25)):.{int(rng.integers(1, 17))}g}"


def empty_field(rng, lines, body):
    """One edge line with an empty field; returns its line number (1-based)."""
    i = int(rng.choice(body))
    fields = [f for f in _SEP.split(lines[i].strip()) if f]
    where = rng.integers(0, 3)
    if where == 0:
        k = int(rng.integers(1, len(fields)))
        lines[i] = b",".join(fields[:k]) + rng.choice([b",,", b", ,", b",\t,"]) + \
            b",".join(fields[k:])
    elif where == 1:
        lines[i] = b",".join(fields) + rng.choice([b",", b", ", b",\r"])
    else:
        lines[i] = rng.choice([b",", b" ,"]) + b",".join(fields)
    return i + 1


def fields(folder, sources, numbers):
    """An empty field is refused naming its line; weights are float()'s, bit for bit."""
    texts = [(n, d) for n, d in sources if n.rsplit(".", 1)[1] in ("txt", "csv")]
    outcomes = {"empty": 0, "weights": 0, "refused": 0}
    for k in numbers:
        rng = case_rng(k, "fields")
        name, data = texts[k % len(texts)]
        lines = _lines(data)
        body = [i for i, ln in enumerate(lines) if ln and ln[:1] not in b"#%"]
        path = folder / f"f_{name}"
        if k % 2 == 0:
            line = empty_field(rng, lines, body)
            path.write_bytes(b"\n".join(lines))
            assert expected_edges(name, path.read_bytes()) is None
            with pytest.raises(InputError) as info:
                load(path)
            message = str(info.value)
            assert message.startswith(f"{path}:{line}: ") and "empty field" in message, message
            outcomes["empty"] += 1
            continue
        sep = b"," if name.endswith(".csv") else b" "
        for i in body:
            parts = [f for f in _SEP.split(lines[i].strip()) if f]
            parts[2:3] = [hard_weight(rng).encode()]
            lines[i] = sep.join(parts)
        data = b"\n".join(lines)
        path.write_bytes(data)
        expected = expected_edges(name, data)
        try:
            graph = load(path)
        except InputError as e:         # a weight past the largest double
            assert expected is None and "not a finite number" in str(e), str(e)
            outcomes["refused"] += 1
            continue
        check_edge_list(graph, expected)
        outcomes["weights"] += 1
    return outcomes


@pytest.mark.slow
def test_empty_fields_and_hard_weights(folder, sources):
    outcomes = fields(folder, sources, range(FIELD_CASES))
    assert outcomes["empty"] == FIELD_CASES // 2 and outcomes["weights"] > FIELD_CASES // 4, \
        outcomes


@pytest.mark.extended
def test_more_empty_fields_and_hard_weights(folder, sources):
    outcomes = fields(folder, sources, case_numbers(FIELD_CASES, on_demand_seconds(0.05)))
    print(f"empty fields and weights: {outcomes}")
