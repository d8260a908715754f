"""matplotlib, imported only when a figure is drawn (the GPU machine may not have it), with the
Agg backend (no display)."""

import sys

COLORS = {"HIGH": "tab:red", "LOW": "tab:blue", "RAND": "tab:green"}
MARKERS = {"HIGH": "o", "LOW": "s", "RAND": "^"}


def pyplot():
    try:
        import matplotlib
    except ImportError:
        sys.exit("plotting needs matplotlib (pip install matplotlib, or the package's [plot] "
                 "extra); the JSON lines are written: render them where matplotlib is installed "
                 "with python -m experiments.plot_sweep FILE.jsonl --out DIR")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plain_log_axis(axis):
    """Log-scale tick labels as plain numbers (0.5, 2, 20) rather than powers of ten."""
    from matplotlib.ticker import FuncFormatter
    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_formatter(fmt)
    axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "25" else ""))


def save(fig, path):
    fig.savefig(path, dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)
    return path
