"""HyTGraph's transfer cost model (Wang et al., ICDE 2023, section V-A), in seconds, with constants
measured on this machine by `python -m totem_py.calibrate`.

A GPU partition whose edges do not fit in GPU memory streams them from pinned host memory in
edge-balanced chunks. Each superstep, for every chunk with active vertices, the streaming engine
computes the cost of the three engines (NumPy arrays, one entry per chunk) and `choose` picks one:

    filter      copy the whole chunk:   filter_s(nbytes)
                                          = nbytes / memcpy_h2d_Bps (+ memcpy_latency_s)
    compaction  the CPU gathers the active rows into pinned staging (kernels_cpu/stream.py), one
                copy moves them with their new index (8 bytes per active vertex):
                compaction_s(edge_bytes, n_vertices), with moved = edge_bytes + 8 n_vertices,
                                          = moved / memcpy_h2d_Bps + moved / compaction_Bps
    zerocopy    the kernel reads the active rows from mapped host memory in 128-byte requests:
                zerocopy_s(lines, density, warps)
                                          = 128 lines x ((1 - density) / zerocopy_random_Bps
                                                         + density / dense rate)
                the dense rate being what the engine's own kernels read a whole mapped CSR at:
                zerocopy_rows_Bps (kernels mapping a warp per row) or zerocopy_edges_Bps (a
                thread per edge, or per row); zerocopy_seq_Bps where not measured

`lines` counts the 128-byte requests of the active rows, misaligned starts included (the paper's
ceil(D d1 / m) + am(v)); `zerocopy_lines` computes it from the rows' byte offsets and lengths.
`density` is the chunk's active edges over its edges (the paper's proportion of active edges).

The zero-copy interpolation. The time per byte is linear in the density: isolated rows (density
-> 0) go at the rate of random aligned 128-byte requests, measured by the calibration, and a
chunk whose edges are all active (density 1) reads its rows back to back, at the rate the
engine's kernels read a whole graph's rows (measured by the calibration with the engine's
PageRank kernels over rmat:24, docs/results/calibrate_h100.txt: both mappings read slower than a
coalesced stream of 16-byte loads, zerocopy_seq_Bps, a warp per row slowest; priced at the
stream's rate, dense chunks would be read over the bus where filter copies them faster).
(Throughput is thus the weighted harmonic mean of the two.) This is the paper's damping
RTT_zc = gamma RTT + (1 - gamma) density RTT, written per byte: with RTT = 32 KiB / memcpy rate,
its per-line time is gamma RTT / 256 for sparse requests and RTT / 256 for dense ones, i.e.
zerocopy_random_Bps = memcpy / gamma and zerocopy_seq_Bps = memcpy.

`Profile.fallback()` holds the paper's constants, used when no profile was measured: PCIe 3.0 x16
(12.3 GB/s), gamma = 0.625, compaction_Bps infinite (the paper compares transfer costs only: "in
practice, we compute Tec_i by considering only the transfer overhead") and transfers counted in
whole TLP round trips of 256 requests x 128 bytes (the ceilings of equations 1-3), so that its
costs are the paper's equations (1)-(3) times RTT = 32768 B / 12.3e9 B/s and its choices are the
paper's. A measured profile counts bytes without rounding and adds the CPU gather time the paper
leaves out, measured with the same kernel the engine runs.

`choose` is HyTGraph's rule (section V-A, Algorithm 1): compaction if tec < alpha tef and
tec < beta tiz (alpha = 0.8, from Subway; beta = 0.4); else zero-copy if tiz < tef; else filter.
(The paper's text and its Algorithm 1 differ only on a tie tiz == tef; we follow the text: filter.)
A chunk with no active vertex costs 0 for every engine and gets filter; the engine skips such chunks
before asking.

The profile is JSON ({"version": 1, ...}, keys carry their units) at $TOTEM_PROFILE or
~/.cache/totem_py/transfer_profile.json; `load_profile` falls back to the paper's constants with
one warning line when there is none. Importing this module never imports CuPy.
"""

import json
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError

FILTER, COMPACTION, ZEROCOPY = 0, 1, 2
ENGINES = ("filter", "compaction", "zerocopy")

ALPHA = 0.8             # compaction only if it beats filter by 20% (Subway's observation)
BETA = 0.4              # ... and costs under 40% of zero-copy
LINE_BYTES = 128        # m: one saturated memory request
INDEX_BYTES = 8         # d2: one int64 offset per active vertex in the compacted index

PCIE3_BPS = 12.3e9      # PCIe 3.0 x16, the paper's platform
TLP_REQUESTS = 256      # MR: outstanding requests per saturated TLP round trip (PCIe 3.0)
GAMMA = 0.625           # zero-copy damping factor (the paper, after EMOGI)

VERSION = 1
ENV = "TOTEM_PROFILE"
DEFAULT_PATH = os.path.join("~", ".cache", "totem_py", "transfer_profile.json")
CALIBRATE = "python -m totem_py.calibrate"


def choose(tef, tec, tiz, alpha=ALPHA, beta=BETA):
    """Engine codes (int8: FILTER, COMPACTION, ZEROCOPY) from the per-chunk costs of filter,
    compaction and zero-copy, by HyTGraph's rule (module docstring)."""
    tef, tec, tiz = np.broadcast_arrays(tef, tec, tiz)
    codes = np.where(tiz < tef, ZEROCOPY, FILTER).astype(np.int8)
    codes[(tec < alpha * tef) & (tec < beta * tiz)] = COMPACTION
    return codes


def zerocopy_lines(start_bytes, nbytes):
    """128-byte requests that reading nbytes from byte offset start_bytes takes (0 for empty
    rows): (start + nbytes - 1) // 128 - start // 128 + 1, elementwise."""
    start = np.asarray(start_bytes, dtype=np.int64)
    n = np.asarray(nbytes, dtype=np.int64)
    lines = (start + n - 1) // LINE_BYTES - start // LINE_BYTES + 1
    return np.where(n > 0, lines, 0)


@dataclass(frozen=True)
class Profile:
    """Transfer constants of one machine and the per-chunk cost functions (seconds).

    memcpy_h2d_Bps       pinned host-to-device cudaMemcpyAsync, best sustained rate at >= 32 MB
    zerocopy_seq_Bps     zero-copy reads of mapped pinned memory, coalesced sequential stream
    zerocopy_random_Bps  zero-copy reads, random aligned 128-byte requests (bytes read / s)
    zerocopy_rows_Bps    an engine kernel mapping a warp per row reading a whole mapped CSR,
                         edge bytes / s; 0: not measured (zerocopy_seq_Bps is used)
    zerocopy_edges_Bps   the same for a kernel mapping a thread per edge (load-balanced); also
                         used for a thread per row, whose neighbouring reads coalesce as well
    compaction_Bps       CPU gather into pinned staging, bytes written (edges + index) / s;
                         math.inf: not counted (the paper's rule)
    memcpy_latency_s     added to each filter copy
    tlp_bytes            > 0: transfers count whole round trips of this many bytes (the paper's
                         ceilings; the fallback's 256 x 128); 0: bytes as they are
    measured             which parts were measured on this machine: "memcpy", "zerocopy",
                         "compaction" (empty for the fallback)
    tables               the calibration's per-size and per-degree figures, for the record
    """

    memcpy_h2d_Bps: float
    zerocopy_seq_Bps: float
    zerocopy_random_Bps: float
    compaction_Bps: float = math.inf
    memcpy_latency_s: float = 0.0
    zerocopy_rows_Bps: float = 0.0
    zerocopy_edges_Bps: float = 0.0
    tlp_bytes: int = 0
    device: str = "unknown"
    date: str = ""
    measured: tuple = ()
    tables: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def fallback(cls):
        """HyTGraph's own constants (PCIe 3.0 x16, gamma = 0.625, transfer costs only)."""
        return cls(memcpy_h2d_Bps=PCIE3_BPS, zerocopy_seq_Bps=PCIE3_BPS,
                   zerocopy_random_Bps=PCIE3_BPS / GAMMA, compaction_Bps=math.inf,
                   memcpy_latency_s=0.0, tlp_bytes=TLP_REQUESTS * LINE_BYTES,
                   device="HyTGraph's PCIe 3.0 x16 constants (fallback, not measured)")

    @property
    def is_fallback(self):
        return not self.measured

    def _moved(self, nbytes):
        """Bytes a transfer of nbytes costs: rounded up to whole round trips if tlp_bytes."""
        nbytes = np.asarray(nbytes, dtype=np.float64)
        if self.tlp_bytes:
            return np.ceil(nbytes / self.tlp_bytes) * self.tlp_bytes
        return nbytes

    def filter_s(self, nbytes):
        """Seconds to copy whole chunks of nbytes each (ExpTM-filter)."""
        nbytes = np.asarray(nbytes, dtype=np.float64)
        t = self._moved(nbytes) / self.memcpy_h2d_Bps
        if self.memcpy_latency_s:
            t = t + np.where(nbytes > 0, self.memcpy_latency_s, 0.0)
        return t

    def compaction_s(self, edge_bytes, n_vertices):
        """Seconds to gather the active rows (edge_bytes, n_vertices of them) on the CPU and
        copy them with their 8-byte index (ExpTM-compaction)."""
        moved = (np.asarray(edge_bytes, dtype=np.float64)
                 + INDEX_BYTES * np.asarray(n_vertices, dtype=np.float64))
        return self._moved(moved) / self.memcpy_h2d_Bps + moved / self.compaction_Bps

    def zerocopy_s(self, lines, density, warps=False):
        """Seconds to read `lines` 128-byte requests over the bus from a chunk whose proportion
        of active edges is `density` (ImpTM-zero-copy; interpolation in the module docstring),
        by a kernel mapping a warp per row (`warps`) or a thread per edge or row."""
        d = np.clip(np.asarray(density, dtype=np.float64), 0.0, 1.0)
        nbytes = np.asarray(lines, dtype=np.float64) * LINE_BYTES
        return self._moved(nbytes) * ((1.0 - d) / self.zerocopy_random_Bps
                                      + d / self.dense_Bps(warps))

    def dense_Bps(self, warps=False):
        """Zero-copy rate of a whole chunk read by a kernel mapping a warp per row (`warps`) or
        a thread per edge or row: the engine kernels' measured rate, else the stream's."""
        return (self.zerocopy_rows_Bps if warps else self.zerocopy_edges_Bps) \
            or self.zerocopy_seq_Bps

    choose = staticmethod(choose)

    def to_json(self):
        """The versioned JSON object (constants first, then the calibration's tables)."""
        out = {"version": VERSION, "device": self.device, "date": self.date,
               "measured": list(self.measured),
               "memcpy_h2d_Bps": self.memcpy_h2d_Bps,
               "memcpy_latency_s": self.memcpy_latency_s,
               "zerocopy_seq_Bps": self.zerocopy_seq_Bps,
               "zerocopy_rows_Bps": self.zerocopy_rows_Bps or None,
               "zerocopy_edges_Bps": self.zerocopy_edges_Bps or None,
               "zerocopy_random_Bps": {**self.tables.get("zerocopy_random_Bps", {}),
                                       str(LINE_BYTES): self.zerocopy_random_Bps},
               "compaction_Bps": None if math.isinf(self.compaction_Bps) else self.compaction_Bps,
               "tlp_bytes": self.tlp_bytes}
        for key, value in self.tables.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_json(cls, data, path=None):
        """Parse a profile object; InputError naming `path` if it is malformed."""

        def bad(problem):
            return InputError(f"malformed transfer profile: {problem} "
                              f"(write a new one with {CALIBRATE})", path)

        if not isinstance(data, dict):
            raise bad("not a JSON object")
        if data.get("version") != VERSION:
            raise bad(f"version {data.get('version')!r}, expected {VERSION}")

        def number(key, value, allow_zero=False):
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
                raise bad(f"{key} must be a {'non-negative' if allow_zero else 'positive'} "
                          f"number, not {value!r}")
            return float(value)

        def required(key):
            if key not in data:
                raise bad(f"no {key}")
            return data[key]

        random = required("zerocopy_random_Bps")
        if isinstance(random, dict):
            if str(LINE_BYTES) not in random:
                raise bad(f"zerocopy_random_Bps has no {LINE_BYTES}-byte entry")
            for size, value in random.items():
                number(f"zerocopy_random_Bps[{size}]", value)
            random = random[str(LINE_BYTES)]
        compaction = data.get("compaction_Bps")
        tlp = data.get("tlp_bytes", 0)
        if isinstance(tlp, bool) or not isinstance(tlp, int) or tlp < 0:
            raise bad(f"tlp_bytes must be a non-negative integer, not {tlp!r}")
        measured = data.get("measured", [])
        if not isinstance(measured, list) or not all(isinstance(m, str) for m in measured):
            raise bad("measured must be a list of names")
        core = {"version", "device", "date", "measured", "memcpy_h2d_Bps", "memcpy_latency_s",
                "zerocopy_seq_Bps", "zerocopy_rows_Bps", "zerocopy_edges_Bps", "compaction_Bps",
                "tlp_bytes"}

        def optional(key):      # absent or null: not measured (0)
            return 0.0 if data.get(key) is None else number(key, data[key])

        return cls(
            memcpy_h2d_Bps=number("memcpy_h2d_Bps", required("memcpy_h2d_Bps")),
            zerocopy_seq_Bps=number("zerocopy_seq_Bps", required("zerocopy_seq_Bps")),
            zerocopy_random_Bps=number("zerocopy_random_Bps", random),
            zerocopy_rows_Bps=optional("zerocopy_rows_Bps"),
            zerocopy_edges_Bps=optional("zerocopy_edges_Bps"),
            compaction_Bps=math.inf if compaction is None else number("compaction_Bps",
                                                                      compaction),
            memcpy_latency_s=number("memcpy_latency_s", data.get("memcpy_latency_s", 0.0),
                                    allow_zero=True),
            tlp_bytes=tlp, device=str(data.get("device", "unknown")),
            date=str(data.get("date", "")), measured=tuple(measured),
            tables={k: v for k, v in data.items() if k not in core})


def profile_path(path=None):
    """The profile's path: `path`, else $TOTEM_PROFILE, else ~/.cache/totem_py/..."""
    if path is None:
        path = os.environ.get(ENV) or DEFAULT_PATH
    return os.path.expanduser(os.fspath(path))


_warned = set()


def without_warning(path=None):
    """load_profile will not warn about `path` in this process (MPI ranks other than 0)."""
    _warned.add(profile_path(path))


def load_profile(path=None, warn=True):
    """The Profile at `path` (default: profile_path()). No file: Profile.fallback(), with one
    warning line on stderr (once per path and process) unless warn=False. A file that cannot be
    read or parsed: InputError naming it."""
    path = profile_path(path)
    if not os.path.exists(path):
        if warn and path not in _warned:
            _warned.add(path)
            how = CALIBRATE if path == profile_path(DEFAULT_PATH) else \
                f"{CALIBRATE} --output {path}"
            print(f"warning: no transfer profile at {path}: the transfer engines use HyTGraph's "
                  f"PCIe 3.0 constants; measure this machine with `{how}`", file=sys.stderr)
        return Profile.fallback()
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read transfer profile: {getattr(exc, 'strerror', None) or exc}",
                         path) from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:     # RecursionError: nesting too deep
        raise InputError(f"malformed transfer profile: not JSON ({exc}); write a new one with "
                         f"{CALIBRATE}", path) from None
    return Profile.from_json(data, path)


def save_profile(profile, path=None):
    """Write `profile` as JSON to `path` (default: profile_path()) through a temporary file and
    a rename, creating the directory; returns the path. InputError if it cannot be written."""
    path = profile_path(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(profile.to_json(), f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(f"cannot write: {exc.strerror or exc}", path) from None
    return path
