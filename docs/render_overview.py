"""Render docs/overview.png: a picture of what nsys-duck makes of a shipped example.

There is no browser here to take a screenshot of ui.perfetto.dev, so this
script draws the trace itself, from the conversion's own output:

1. ``nsys-duck convert`` (the CLI, in a subprocess) converts a shipped
   example into a temporary ``NSYS_WORKSPACE_ROOT`` (or ``--workspace DIR``,
   kept), without the CPU-side tracks (``--no-osrt --no-sched ...``: the
   figure is about the GPU side and its CUDA API calls);
2. every slice is read from ``NAME.perfetto.parquet`` (one row per slice of
   the trace), the process names and track order from the ``M`` metadata
   events of ``NAME.perfetto.json.gz`` and, unless ``--no-flows``, the flow
   arrows from its ``s``/``f`` events;
3. matplotlib draws a Perfetto-like timeline: one group per process (JSON
   pid), one row per track (JSON tid, labelled with its track name),
   nested slices at depth lanes within the row as Perfetto stacks them,
   instants as small triangles, slices coloured by ``cat``, time in ms from
   the first slice. Slices narrower than one pixel are drawn one pixel wide
   (so a burst of short API calls stays visible); nothing else is added.

Rerun from the repository root (needs matplotlib: ``pip install matplotlib``,
or the ``docs`` extra)::

    .venv/bin/python docs/render_overview.py                # writes docs/overview.png
    .venv/bin/python docs/render_overview.py --out /tmp/x.png --window 37.3:37.75
    .venv/bin/python docs/render_overview.py --input examples/cpu_nvtx_small/parquet

The default example, ``testcuda_streams_events_2026_1.sqlite`` (an SQLite
export of Nsight Systems 2026.1, converted without nsys), has the most kinds
of slice of the shipped examples: copies and kernels on four CUDA streams,
their Core/PCIe views, event and device synchronization and the CUDA API
calls that launched them, with the flows between them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = (
    REPO / "examples" / "testcuda_streams_events_2026_1" / "testcuda_streams_events_2026_1.sqlite"
)
DEFAULT_OUT = REPO / "docs" / "overview.png"

WIDTH_PX, HEIGHT_PX, DPI = 1000, 560, 100

# One colour per `cat` of README's "Aligned Parquet" table; related categories
# share a hue (a GPU operation dark, its Core/PCIe/projection copy light).
CAT_COLORS = {
    "kernel": "#1f6fb4",
    "kernel_core": "#8fbbe0",
    "cuda_graph": "#6a3d9a",
    "cuda_graph_core": "#c2a5cf",
    "memcpy": "#2c9c3c",
    "memcpy_pcie": "#9fd99a",
    "memcpy_d2d": "#138a80",
    "memset": "#b8b01e",
    "gpu_sync": "#d62728",
    "cuda_sync": "#f08a8b",
    "cuda_event": "#e377c2",
    "cuda_api": "#8c6bb1",
    "nvtx": "#f28e1c",
    "nvtx_kernel": "#fdc07a",
}
OTHER_COLOR = "#999999"
# Flow arrows drawn: an API call to its GPU operation (launch, copy) and a
# synchronizing call to its sync record. The launch_core/copy_pcie flows
# repeat launch/copy towards the Core/PCIe rows; drawn too, they would only
# double the arrows (README, "What the trace contains").
FLOW_CATS = ("launch", "copy", "sync")


# The figure shows the GPU side and the CUDA API: the example's ~3,400 OS
# runtime calls and thread states (OS Runtime / Thread State tracks) would
# squeeze its streams into slivers, so they are left out of the picture.
CPU_SIDE_OFF = ("--no-osrt", "--no-sched", "--no-cudnn", "--no-cublas")


def convert(source: Path, root: Path) -> Path:
    """``nsys-duck convert SOURCE`` into workspace root ROOT; the trace's path."""
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(root))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nsys_duck.cli",
            "convert",
            "--no-database",
            *CPU_SIDE_OFF,
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode != 0:
        sys.exit(f"nsys-duck convert {source} failed:\n{out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])  # the .perfetto.json.gz


def read_trace(json_gz: Path):
    """Slices (from NAME.perfetto.parquet), metadata and flows (from the JSON)."""
    parquet = json_gz.with_name(json_gz.name.replace(".perfetto.json.gz", ".perfetto.parquet"))
    slices = duckdb.sql(
        "SELECT pid, tid, track_name, cat, ph, name, start_ns, end_ns "
        f"FROM read_parquet('{parquet.as_posix()}') "
        "ORDER BY pid, tid, start_ns, end_ns DESC, cat, name"
    ).fetchall()
    with gzip.open(json_gz, "rt", encoding="utf-8") as f:
        events = json.load(f)
    meta = {"process_name": {}, "process_sort": {}, "thread_sort": {}}
    flows: dict[object, dict[str, dict]] = defaultdict(dict)
    for e in events:
        ph = e.get("ph")
        if ph == "M":
            if e["name"] == "process_name":
                meta["process_name"][e["pid"]] = e["args"]["name"]
                meta["epoch_ns"] = int(e["args"]["epoch_ns"])
            elif e["name"] == "process_sort_index":
                meta["process_sort"][e["pid"]] = e["args"]["sort_index"]
            elif e["name"] == "thread_sort_index":
                meta["thread_sort"][(e["pid"], e["tid"])] = e["args"]["sort_index"]
        elif ph in ("s", "f"):
            flows[(e.get("cat"), e["id"])][ph] = e
    pairs = sorted(
        ((v["s"], v["f"]) for v in flows.values() if "s" in v and "f" in v),
        key=lambda p: (
            float(p[0]["ts"]),
            float(p[1]["ts"]),
            p[0]["tid"],
            p[1]["tid"],
            str(p[0].get("cat")),
        ),
    )  # a stable drawing order
    return parquet, slices, meta, pairs


def depths(rows):
    """Depth of each slice of one track (rows sorted by start, longest first),
    the way Perfetto stacks nested slices."""
    out, open_ends = [], []
    for r in rows:
        start, end = r[6], r[7]
        while open_ends and open_ends[-1] <= start and not (open_ends[-1] == start == end):
            open_ends.pop()
        out.append(len(open_ends))
        if end > start:
            open_ends.append(end)
    return out


def fit(t, text: str, width_px: float, renderer, min_chars: int = 10) -> None:
    """Set matplotlib Text T to TEXT, cut with an ellipsis to WIDTH_PX as
    Perfetto cuts slice names; remove T when fewer than MIN_CHARS would fit."""
    t.set_text(text)
    n = len(text)
    while t.get_window_extent(renderer).width > width_px:
        n -= 1
        if n < min_chars:
            t.remove()
            return
        t.set_text(text[: n - 1] + "\u2026")


def render(
    json_gz: Path, source: Path, out: Path, window: tuple[float, float] | None, flows: bool
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

    parquet, slices, meta, pairs = read_trace(json_gz)
    n_all_flows = len(pairs)
    if not slices:
        sys.exit(f"{parquet} holds no slices")
    t0 = min(r[6] for r in slices)
    ms = lambda ns: (ns - t0) / 1e6  # noqa: E731
    t_end = ms(max(r[7] for r in slices))
    lo, hi = window if window else (0.0, t_end)
    span = hi - lo
    lo, hi = (lo, hi) if window else (lo - 0.01 * span, hi + 0.01 * span)

    # Tracks in Perfetto's order: processes, then threads, by sort index.
    tracks: dict[tuple, list] = defaultdict(list)
    for r in slices:
        tracks[(r[0], r[1])].append(r)
    order = sorted(
        tracks,
        key=lambda k: (
            meta["process_sort"].get(k[0], k[0]),
            k[0],
            meta["thread_sort"].get(k, k[1]),
            k[1],
        ),
    )

    # Vertical layout, in lane units from the top: a header per process, then
    # each track with as many lanes as its deepest slice needs.
    lane_h, header_h, gap = 1.0, 1.1, 0.35
    y, rows, headers, depth_of = 0.0, {}, [], {}
    for pid in dict.fromkeys(k[0] for k in order):
        headers.append((y, pid))
        y += header_h
        for key in (k for k in order if k[0] == pid):
            d = depths(tracks[key])
            for r, di in zip(tracks[key], d, strict=True):
                depth_of[id(r)] = di
            n_lanes = max(d) + 1
            rows[key] = (y, n_lanes)
            y += n_lanes * lane_h + gap
    total_h = y

    fig = plt.figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
    left, right, top, bottom = 0.29, 0.985, 0.855, 0.165
    ax = fig.add_axes((left, bottom, right - left, top - bottom))
    ax.set_xlim(lo, hi)
    ax.set_ylim(total_h, 0)
    plot_w_px = (right - left) * WIDTH_PX
    px_ms = (hi - lo) / plot_w_px  # one pixel, in ms
    plot_h_px = (top - bottom) * HEIGHT_PX
    lane_px = plot_h_px / total_h
    fontsize = max(6.0, min(8.5, lane_px * 0.55 * 72 / DPI))
    char_px = fontsize * DPI / 72 * 0.58
    ax_trans = ax.get_yaxis_transform()  # x in axes fraction, y in data
    renderer = fig.canvas.get_renderer()

    for y0, pid in headers:
        ax.add_patch(
            Rectangle(
                (-left / (right - left), y0),
                1 + left / (right - left),
                header_h * 0.92,
                transform=ax_trans,
                clip_on=False,
                facecolor="#e8eaed",
                edgecolor="none",
                zorder=0,
            )
        )
        name = meta["process_name"].get(pid, f"pid {pid}")
        ax.text(
            -left / (right - left) + 0.008,
            y0 + header_h * 0.46,
            f"\u25be {name}",
            transform=ax_trans,
            ha="left",
            va="center",
            fontsize=fontsize + 0.5,
            fontweight="bold",
            color="#202124",
            clip_on=False,
        )
    label_px = left * WIDTH_PX - 16
    for key, (y0, n_lanes) in rows.items():
        name = tracks[key][0][2]
        ax.axhline(y0 + n_lanes * lane_h + gap / 2, color="#dadce0", lw=0.6, zorder=0)
        fit(
            ax.text(
                -0.012,
                y0 + lane_h / 2,
                "",
                transform=ax_trans,
                ha="right",
                va="center",
                fontsize=fontsize,
                color="#3c4043",
                clip_on=False,
            ),
            name,
            label_px,
            renderer,
            min_chars=1,
        )

    counts: dict[str, int] = defaultdict(int)
    for key, rs in tracks.items():
        y0, _ = rows[key]
        for r in rs:
            cat, name, s, e = r[3], r[5], ms(r[6]), ms(r[7])
            if e < lo or s > hi:
                continue
            counts[cat] += 1
            color = CAT_COLORS.get(cat, OTHER_COLOR)
            yl = y0 + depth_of[id(r)] * lane_h
            if r[7] == r[6]:  # instant: a small triangle, as in Perfetto
                ax.plot(
                    [s],
                    [yl + 0.45 * lane_h],
                    marker="v",
                    ms=fontsize * 0.8,
                    color=color,
                    mec="#333333",
                    mew=0.4,
                    zorder=3,
                )
                continue
            w = max(e - s, px_ms)
            ax.add_patch(
                Rectangle(
                    (s, yl + 0.06 * lane_h),
                    w,
                    0.88 * lane_h,
                    facecolor=color,
                    zorder=2,
                    edgecolor="white" if w > 3 * px_ms else "none",
                    lw=0.4,
                )
            )
            vis_s, vis_e = max(s, lo), min(s + w, hi)
            room_px = (vis_e - vis_s) / px_ms - 6
            if room_px > 10 * char_px * 0.6:
                rgb = matplotlib.colors.to_rgb(color)
                dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 0.6
                fit(
                    ax.text(
                        (vis_s + vis_e) / 2,
                        yl + 0.5 * lane_h,
                        "",
                        ha="center",
                        va="center",
                        fontsize=fontsize - 0.5,
                        zorder=4,
                        color="white" if dark else "#202124",
                        clip_on=True,
                    ),
                    name,
                    room_px,
                    renderer,
                )

    n_flows = 0
    pairs = [p for p in pairs if p[0].get("cat") in FLOW_CATS]
    if flows and "epoch_ns" in meta:

        def anchor(ev):
            key = (ev["pid"], ev["tid"])
            if key not in rows:
                return None
            # JSON ts: µs after args.epoch_ns of process_name (README)
            t = float(ev["ts"]) / 1e3 + (meta["epoch_ns"] - t0) / 1e6
            best = 0  # the deepest slice of that track holding t
            for r in tracks[key]:
                if ms(r[6]) - 1e-6 <= t <= ms(r[7]) + 1e-6:
                    best = max(best, depth_of[id(r)])
            return t, rows[key][0] + (best + 0.5) * lane_h

        for s_ev, f_ev in pairs:
            a, b = anchor(s_ev), anchor(f_ev)
            if a is None or b is None or max(a[0], b[0]) < lo or min(a[0], b[0]) > hi:
                continue
            n_flows += 1
            ax.add_patch(
                FancyArrowPatch(
                    a,
                    b,
                    arrowstyle="-|>",
                    color="#3c4043",
                    lw=0.6,
                    alpha=0.55,
                    mutation_scale=6,
                    shrinkA=0,
                    shrinkB=0,
                    zorder=5,
                )
            )  # clipped to the axes

    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.spines["bottom"].set_color("#9aa0a6")
    ax.tick_params(axis="x", labelsize=fontsize, colors="#3c4043")
    ax.set_xlabel("ms from the first slice", fontsize=fontsize + 0.5, color="#3c4043", labelpad=2)
    ax.grid(axis="x", color="#f1f3f4", lw=0.8, zorder=-1)
    ax.set_axisbelow(True)

    name = json_gz.name.replace(".perfetto.json.gz", "")
    fig.text(
        0.012,
        0.965,
        f"nsys-duck: {name} in Perfetto's model (tracks per process, slices by category)",
        fontsize=11.5,
        fontweight="bold",
        color="#202124",
        va="center",
    )
    try:
        shown = source.resolve().relative_to(REPO)
    except ValueError:
        shown = source
    what = (
        f"zoom {lo:g}\u2013{hi:g} ms of a {t_end:.1f} ms trace"
        if window
        else f"whole trace, {t_end:.1f} ms"
    )
    n_slices = sum(counts.values())
    fig.text(
        0.012,
        0.925,
        f"{shown}  \u2192  nsys-duck convert  \u2192  {parquet.name}",
        fontsize=8,
        color="#5f6368",
        va="center",
    )
    note = f"{n_slices} slices ({what})"
    if flows:
        note += f"; arrows: {n_flows} of the trace's {n_all_flows} flows ({', '.join(FLOW_CATS)})"
    fig.text(
        0.012,
        0.895,
        note + "; slices under 1 px drawn 1 px wide",
        fontsize=8,
        color="#5f6368",
        va="center",
    )

    handles = [
        Patch(facecolor=CAT_COLORS.get(c, OTHER_COLOR), label=f"{c} ({counts[c]})")
        for c in sorted(
            counts, key=lambda c: (list(CAT_COLORS).index(c) if c in CAT_COLORS else 99, c)
        )
    ]
    if flows and n_flows:
        handles.append(
            Line2D(
                [],
                [],
                color="#3c4043",
                lw=0.8,
                alpha=0.7,
                label="flow (API call \u2192 its GPU operation or sync)",
            )
        )
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.005),
        ncol=min(len(handles), 5),
        fontsize=8,
        frameon=False,
        handlelength=1.4,
        columnspacing=1.4,
        title="cat (slices shown)",
        title_fontsize=8,
    )

    out.parent.mkdir(parents=True, exist_ok=True)
    # no bbox_inches: a fixed pixel size
    fig.savefig(
        out, dpi=DPI, facecolor="white", pil_kwargs={"optimize": True}, metadata={"Software": None}
    )  # same bytes from the same matplotlib
    plt.close(fig)


def parse_window(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError("expected START:END in ms, e.g. 37.3:37.75") from None
    if not b > a:
        raise argparse.ArgumentTypeError("END must be after START")
    return a, b


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--input",
        type=Path,
        default=DEFAULT_INPUT,
        help="example to convert (default: %(default)s)",
    )
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="PNG to write (default: %(default)s)"
    )
    p.add_argument(
        "--window",
        type=parse_window,
        default=None,
        help="START:END in ms from the first slice (default: the whole trace)",
    )
    p.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="NSYS_WORKSPACE_ROOT to convert into and keep (default: a temporary folder, removed)",
    )
    p.add_argument(
        "--no-flows", dest="flows", action="store_false", help="do not draw the flow arrows"
    )
    args = p.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("render_overview.py needs matplotlib: .venv/bin/pip install matplotlib")
    if args.workspace is not None:
        args.workspace.mkdir(parents=True, exist_ok=True)
        json_gz = convert(args.input, args.workspace)
        render(json_gz, args.input, args.out, args.window, args.flows)
    else:
        with tempfile.TemporaryDirectory(prefix="nsys-duck-overview-") as root:
            json_gz = convert(args.input, Path(root))
            render(json_gz, args.input, args.out, args.window, args.flows)
    print(args.out)


if __name__ == "__main__":
    main()
