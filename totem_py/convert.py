"""Convert a graph file (or a generator spec) to our binary CSR (.npz) or to the format MPI
ranks read in parallel (.tcsr, totem_py/store.py).

    python -m totem_py.convert IN OUT.npz|OUT.tcsr [--undirected]

Bad input or usage prints one line, `error: ...`, and exits with 2 (DESIGN.md). The output is
checked before the input is read and written as totem_py/outputs.py writes every output: never
over the input, through a temporary file renamed at the end, so an interrupted run leaves no
half-written file.
"""

import argparse
import sys

from .errors import InputError
from .generators import graph_from_spec
from .io import npz_writer
from .outputs import Outputs
from .store import EXTENSION, is_store, writer as store_writer


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"error: {message} (usage: {self.format_usage().strip()[7:]})", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    parser = _Parser(prog="python -m totem_py.convert",
                     description="Convert a graph file (.txt .el .csv .tsv .wel .mtx .gr .npz, "
                                 "optionally .gz) or a generator spec (rmat:SCALE) to .npz CSR, "
                                 "or to .tcsr, the format MPI ranks read in parallel.")
    parser.add_argument("input", help="graph file or generator spec")
    parser.add_argument("output", help="the .npz or .tcsr file to write")
    parser.add_argument("--undirected", action="store_true", help="add the reverse of every edge")
    args = parser.parse_args(argv)
    try:
        if not args.output.endswith(".npz") and not is_store(args.output):
            raise InputError(f"the output file name must end in .npz or {EXTENSION}",
                             args.output)
        output = Outputs([("the output", args.output)], inputs=[args.input])
        graph = graph_from_spec(args.input, undirected=args.undirected)
        output.write([(store_writer if is_store(args.output) else npz_writer)(graph)])
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{args.output}: {graph.n_vertices} vertices, {graph.n_edges} edges"
          f"{', weighted' if graph.weights is not None else ''}")
    return 0


if __name__ == "__main__":
    from .run import exit_code      # anything but bad input: one line and exit 1
    sys.exit(exit_code(main))
