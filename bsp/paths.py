"""Execution paths chosen per superstep and partition (SEP-Graph: Wang et al., PPoPP'19).

A program offers paths by name (`Program.paths`: "sync-push-dd", "async-push-dd", ...). The
direction (push or pull) is the mode's, one for every partition of a superstep, since the
exchange is collective: a forced path's direction picks the mode of that exchange, else the
engine's direction switch (Alg. 2's rule, in bsp/engine.py) picks it for a
direction-optimising program, `Program.mode` for the others. Rounds (sync, async) and
worklist (data-driven dd, topology-driven td) are each partition's own: `Paths.choose` picks
them from the partition's vote (the monitor: its active vertices and their out-edges, which
the vote already carries) with one of SEP-Graph's controllers. A path with priority ("-prio",
SEP-Graph's sampled priority for PageRank-Delta) takes in each round only the active vertices
whose priority is among the highest PRIORITY_TOP of PRIORITY_SAMPLE sampled; the program does the
sampling, the controller only names the path.

  traversals (Alg. 2):  the first of the program's `auto_paths` in the superstep's direction;
                        a program lists the form it prefers first (SSSP: async-push-dd). A
                        traversal still going after HIGH_DIAMETER supersteps is on a
                        high-diameter graph (a road network): where every partition may go
                        async (below), all take the async path of the direction the program
                        offers, whose small rounds run in one launch (advance's `rounds`),
                        as SEP-Graph launches once for such graphs.
  iterative (Alg. 1):   each candidate of the direction once, in `auto_paths` order; then the
                        one of least predicted work: the edges it walks (the active set's
                        out-edges for dd, the partition's edges for td, PRIORITY_TOP /
                        PRIORITY_SAMPLE of the active set's with priority) times the local
                        rounds it took when it last ran. Work, not seconds, so that the
                        choices, and with them the values of an algorithm whose result
                        depends on the order of its work (PageRank-Delta), are the same from
                        run to run.

Either takes an async path only on a partition whose boundary edges are at most BOUNDARY of
its edges: local rounds pay where a partition's shortest paths mostly stay inside it; where
half its edges leave it (a road network under HIGH, whose CPU partition holds the crossings and
the GPU's the roads between them), the wave crosses partitions every other hop, so an
exchange is needed about as often as with one round, and the rounds between exchanges relax
vertices whose distances the other partition's messages then lower again: the async path then
takes the fewest supersteps any exact run can, and several times the time. Under BLOCK a road
network's partitions are runs of nearby vertices with few boundary edges, and the async path
takes a few supersteps where sync takes hundreds (`experiments.crossings`,
docs/results/sssp_crossings_road_2core.txt).

A forced path (`--path sync-push-dd`) is taken by every partition in every superstep. A
program that offers no path gets `part.path = None` and no choice is made (no cost at all);
with paths, a superstep's choice costs a few scalar operations per partition.
"""

from .api import PRIORITY_SAMPLE, PRIORITY_TOP, Path

ROUNDS = 100_000        # most local rounds of an async path in one superstep
BOUNDARY = 0.1          # auto: async only where boundary edges are at most this share
HIGH_DIAMETER = 32      # auto: a traversal still going after this many supersteps goes async


class Paths:
    """The controller of one run: `forced` a path name or "auto"."""

    def __init__(self, program, parts, forced="auto", everywhere=bool):
        self.offered = [Path.parse(name) for name in program.paths]
        auto = program.auto_paths if program.auto_paths is not None else program.paths
        self.candidates = [Path.parse(name) for name in auto]
        self.forced = None if forced in (None, "auto") else Path.parse(forced)
        if self.forced is not None and self.forced not in self.offered:
            raise ValueError(offer_note(program, forced))
        self.iterative = program.iterative
        self.parts = parts
        self.rate = [dict() for _ in parts]         # Alg. 1: path -> rounds when last run
        self.work = [0] * len(parts)
        self.steps = 0                              # supersteps chosen for so far
        self._mine = [{} for _ in parts]            # (exchange, view) -> the candidates
        self._deep = {}                             # (exchange, view) -> the async paths
        self.deep = False       # a traversal went async for its depth (then stays in push)
        self.everywhere = everywhere

    def choose(self, mode, votes):
        """Each partition's path for a superstep of `mode` (`votes`: the last superstep's, or
        None before the first), set as `part.path`; returns the record's `path`: one name, or
        the partitions' as "pid:name" joined by commas where they differ."""
        names = []
        self.steps += 1
        deep = self._deep_paths(mode) if self.forced is None and not self.iterative \
            and self.steps > HIGH_DIAMETER else []
        self.deep = self.deep or bool(deep)
        for i, part in enumerate(self.parts):
            path = self.forced or (deep[0] if deep else self._auto(i, part, mode, votes))
            part.path = path
            names.append(path.name)
        if len(set(names)) <= 1:
            return names[0] if names else ""
        return ",".join(f"{p.pid}:{n}" for p, n in zip(self.parts, names))

    def _candidates(self, i, part, mode):
        """The paths partition i may take in a superstep of `mode` (they depend only on the
        mode's direction and view: made once a run)."""
        key = (mode.exchange, mode.view)
        mine = self._mine[i].get(key)
        if mine is None:
            mine = [p for p in self.candidates if p.direction == mode.exchange] \
                or [p for p in self.offered if p.direction == mode.exchange] or self.offered
            if not inward(part, mode):
                mine = [p for p in mine if not p.asynchronous] or mine
            self._mine[i][key] = mine
        return mine

    def _deep_paths(self, mode):
        """The async paths of the mode's direction that every partition takes once a traversal
        is deep: the program's, where every partition of the run (every rank's: `everywhere`
        agrees, collectively) may go async; else none. (A program's sync and async forms need
        not mix: BFS's sync step claims a vertex once, at the superstep's depth.)"""
        key = (mode.exchange, mode.view)
        if key not in self._deep:
            ok = self.everywhere(all(inward(part, mode) for part in self.parts))
            self._deep[key] = [p for p in self.offered if ok and p.asynchronous
                               and p.direction == mode.exchange]
        return self._deep[key]

    def _auto(self, i, part, mode, votes):
        mine = self._candidates(i, part, mode)
        if not self.iterative:
            return mine[0]
        if len(mine) == 1:
            return mine[0]
        rate = self.rate[i]
        untried = [p for p in mine if p not in rate]
        if untried:
            path = untried[0]
        else:
            path = min(mine, key=lambda p: rate[p] * self._work(part, mode, votes, i, p))
        self.work[i] = self._work(part, mode, votes, i, path)
        return path

    def _work(self, part, mode, votes, i, path):
        edges = part.views[mode.view].host.indices.size
        if path.worklist == "td" or votes is None:
            return max(edges, 1)
        if path.priority:
            return max(votes[i].edges * PRIORITY_TOP // PRIORITY_SAMPLE, 1)
        return max(votes[i].edges, 1)

    def measured(self):
        """Alg. 1's observation: each partition's local rounds of the superstep just run."""
        if not self.iterative or self.forced is not None:
            return
        for i, part in enumerate(self.parts):
            self.rate[i][part.path] = part.rounds


def inward(part, mode):
    """Whether a partition may take an async path: at most BOUNDARY of the edges of the mode's
    view leave it."""
    view = part.views[mode.view].host
    return view.boundary_edges <= BOUNDARY * view.indices.size


def offer_note(program, name):
    """The one-line error of a forced path `name` that `program` does not offer."""
    offered = ", ".join(program.paths) or "no path but auto"
    return f"--path {name}: {program.name} offers {offered}"
