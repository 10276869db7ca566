"""make bench: conversion speed and memory, as ratios against a floor measured in the same run.

For each input (the largest dev reports, and with --scale the inputs that
``shared/tools/scale_export.py`` derives from real reports) it runs
``nsys-duck convert`` in a child process and reports rows in, JSON events
out, wall seconds, peak RSS and rows/s; then the floor: DuckDB formatting
every input event row as JSON text, compressed with the same gzip library
(ISA-L, same threads and level) into a null sink, also in a child process
(the input floor); and the output floor: as many events as our JSON holds,
as wide on average, formatted by DuckDB from numbers and compressed the
same way (``out fl s``; issue 29's target: ``ours/out`` at most 3).
``ours/floor`` is the figure to watch; absolute seconds on these 2-core
machines are noisy. Every output is checked with the contract validator
(when available): speed never comes from writing less.

With ncompass installed (``pip install -e '.[bench]'``, which ``make bench``
does), its Rust converter ``nsys-chrome`` is timed too, on the SQLite form of
each scaled input (the form it reads), with its default event types and
``--metadata`` (as its own CLI runs it): ``ours/ncompass`` < 1 means we are
faster. It writes no memcpy, memset, sync, flow or projected-copy events, so
it writes fewer events than we do; its event count is printed for that reason.

The timed conversion includes the contract checks (the ``check_*`` views
``convert`` runs before writing); ``checks s`` is their share of ``wall s``
(from ``--timings``), ``checks %`` that share in percent.

A trace written in parts (over ``--max-json-size``) is validated part by
part; ``events`` counts all parts.

With ``--ranks N``, also a simulated N-rank job: N copies of a small real
report converted as Dask tasks on a local cluster and merged into one trace
(``bench/ranks.py``: reports/s, per-task overhead and peak memory, against
converting the same reports one after another in the same run).

With ``--pftrace``, each input is converted once more with ``--format both``
(``--memory-limit 6GB``: both's Kineto writer needs it at 5M rows) and a
second table compares the two Perfetto traces of that run: bytes (the JSON
uncompressed, all parts; the pftrace as written), write seconds
(``--timings``: ``write JSON``, ``write pftrace``), and what
``trace_processor_shell`` (the importer the UI runs) needs to load each:
wall seconds and peak RSS (a split JSON: the sum of its parts' seconds and
the largest part's RSS).

With ``--cpu-side``, each input is converted once more without the CPU side
(``--no-osrt --no-sched --no-cudnn --no-cublas``) and the with/without wall
ratio is printed: what OS runtime calls and thread states cost.

Usage: python bench/bench.py [--scale 1m|5m|10m|20m ...] [--reports N] [--no-validate]
       [--ranks N] [--cpu-side] [--pftrace]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("NSYS_DUCK_SHARED", REPO.parent / "shared"))
REPORTS = SHARED / "data" / "reports"
CACHE = Path(
    os.environ.get("NSYS_DUCK_BENCH_CACHE", Path.home() / ".cache" / "nsys-duck" / "bench")
)
EVENT_TABLES = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
    # the CPU side (sql/05_domain/cpu_trace_sources.sql)
    "OSRT_API",
    "CUDNN_EVENTS",
    "CUBLAS_EVENTS",
    "SCHED_EVENTS",
]
# convert's flags leaving the whole CPU side out (--cpu-side)
NO_CPU_SIDE = ["--no-osrt", "--no-sched", "--no-cudnn", "--no-cublas"]
SEEDS = {
    "1m": {
        "pytorch_nvtx_profiling": 40,
        "abacus_many_kernels": 16,
        "keras_darknet53_nvtx_startend": 32,
    },
    "5m": {
        "pytorch_nvtx_profiling": 200,
        "abacus_many_kernels": 80,
        "keras_darknet53_nvtx_startend": 160,
    },
    # the deep-NVTX seed at 10M rows (issue 12: "a 10M-row input completes")
    "10m": {"pytorch_nvtx_profiling": 400},
    # ~20M trace events (7M kernels and launches), past --max-json-size: written in parts
    "20m": {"abacus_many_kernels": 112},
}

# The output floor: as many events as our JSON has, as wide on average (its
# uncompressed bytes / events), each formatted by DuckDB from numbers (ts,
# dur, pid, tid, a name id) and padded to that width, compressed as ours are
# (ISA-L, level 1, 2 threads) into a null sink: what writing our output costs
# at the least, with no semantics.
OUTPUT_FLOOR_CODE = r"""
import sys, duckdb, numpy as np, pyarrow as pa
from isal import igzip_threaded
events, width = int(sys.argv[1]), int(sys.argv[2])
con = duckdb.connect()
pad = max(width - 100, 0)  # the rest of an event averages 100 bytes
r = con.sql(f'''SELECT '{{"ph":"X","cat":"kernel","name":"k' || (i % 997)
    || '","ts":' || CAST(i * 1.001 AS DECIMAL(18, 3)) || ',"dur":' || CAST((i % 1000) * 0.004
    AS DECIMAL(18, 3)) || ',"pid":' || (i % 4) || ',"tid":' || (i % 16)
    || ',"args":{{"p":"' || repeat('x', {pad}) || '"}}}},' || chr(10) AS j
    FROM range({events}) AS t(i)''')
with igzip_threaded.open("/dev/null", "wb", compresslevel=1, threads=2) as out:
    for b in r.to_arrow_reader(16384):
        a = b.column(0).cast(pa.large_string())
        o = np.frombuffer(a.buffers()[1], dtype=np.int64)
        out.write(memoryview(a.buffers()[2])[o[a.offset]:o[a.offset + len(a)]])
"""

FLOOR_CODE = r"""
import sys, duckdb, pyarrow.compute as pc, pyarrow as pa
from isal import igzip_threaded
folder, tables = sys.argv[1], sys.argv[2:]
con = duckdb.connect()
with igzip_threaded.open("/dev/null", "wb", compresslevel=1, threads=2) as out:
    for t in tables:
        r = con.sql(f"SELECT to_json(t) || ',' AS j FROM read_parquet('{folder}/{t}.parquet') t")
        for b in r.to_arrow_reader(100000):
            a = b.column(0).cast(pa.large_string())
            import numpy as np
            o = np.frombuffer(a.buffers()[1], dtype=np.int64)
            out.write(memoryview(a.buffers()[2])[o[a.offset]:o[a.offset + len(a)]])
"""


def run_measured(cmd: list[str], env=None) -> tuple[float, float, str]:
    """Run ``cmd``; return (wall seconds, the child's peak RSS in MB, its stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err.decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def ncompass_binary() -> Path | None:
    """ncompass's Rust converter (``ncompass/bin/nsys-chrome``), if installed."""
    try:
        import ncompass
    except ImportError:
        return None
    exe = Path(ncompass.__file__).parent / "bin" / "nsys-chrome"
    return exe if exe.exists() else None


def count_json_events(path: Path) -> int:
    """Events in nsys-chrome's output: it writes ``{"traceEvents":[`` then one
    event object per line. Counts the lines that open an object after the first."""
    from isal import igzip

    n = 0
    with igzip.open(path, "rb") as f:
        next(f, None)
        for line in f:
            n += line.startswith(b"{")
    return n


def rows_in(folder: Path) -> int:
    import duckdb

    con = duckdb.connect()
    total = 0
    for t in EVENT_TABLES:
        p = folder / f"{t}.parquet"
        if p.exists():
            total += con.execute(f"SELECT count(*) FROM read_parquet('{p}')").fetchall()[0][0]
    return total


def nsys_path() -> str | None:
    sys.path.insert(0, str(REPO))
    from nsys_duck.nsys import find_nsys

    try:
        return str(find_nsys().path)
    except Exception:
        return None


def scaled_inputs(size: str) -> list[tuple[str, Path]]:
    """Build (once, cached under CACHE) the scaled exports for ``size``."""
    nsys = nsys_path()
    if nsys is None:
        print("note: no nsys, skipping scaled inputs (they need the SQLite seed)")
        return []
    out = []
    for seed, factor in SEEDS[size].items():
        report = next((REPORTS / seed).glob("*.nsys-rep"), None) or next(
            (REPORTS / seed).glob("*.qdrep")
        )
        seed_dir = CACHE / "seeds" / seed
        sqlite = seed_dir / f"{seed}.sqlite"
        if not sqlite.exists():
            seed_dir.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    nsys,
                    "export",
                    "--type=sqlite",
                    "--ts-normalize=true",
                    "-f",
                    "true",
                    "-q",
                    "true",
                    "-o",
                    str(sqlite),
                    str(report),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        name = f"{seed}_x{factor}"
        target = CACHE / name / "parquet"
        if not (target / "StringIds.parquet").exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            print(f"building {name} ...", flush=True)
            subprocess.run(
                [
                    sys.executable,
                    str(SHARED / "tools" / "scale_export.py"),
                    str(sqlite),
                    str(REPORTS / seed / "parquet"),
                    str(factor),
                    str(CACHE / name / f"{name}.sqlite"),
                    str(target),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        out.append((name, target))
    return out


TRACE_PROCESSOR = SHARED / "tools" / "perfetto" / "trace_processor_shell"
LOAD_QUERY = "SELECT count(*) FROM slice;"


def _timing(out: str, label: str) -> float:
    """Seconds of one ``--timings`` row (``time LABEL  N s``)."""
    return next(
        float(line.split()[-2])
        for line in out.splitlines()
        if line.strip().startswith(f"time {label} ")
    )


def _metric(out: str, label: str) -> str:
    return next(line.split()[-1] for line in out.splitlines() if line.strip().startswith(label))


def load_in_perfetto(traces: list[Path]) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of trace_processor_shell loading each
    trace (summed seconds, the largest RSS)."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as q:
        q.write(LOAD_QUERY)
    wall = rss = 0.0
    for trace in traces:
        w, r, _ = run_measured([str(TRACE_PROCESSOR), "-q", q.name, str(trace)])
        wall += w
        rss = max(rss, r)
    os.unlink(q.name)
    return wall, rss


def pftrace_row(name: str, folder: Path, exe: str) -> str:
    """The --pftrace table's row of one input (see the module docstring)."""
    with tempfile.TemporaryDirectory() as ws:
        env = dict(os.environ, NSYS_WORKSPACE_ROOT=ws)
        # both also writes the Kineto trace, whose writer needs more than the
        # default 2GB at 5M rows (abacus x80 ran out of memory there)
        cmd = [exe, "convert", "--format", "both", "--memory-limit", "6GB", "--timings"]
        _, _, out = run_measured([*cmd, str(folder)], env)
        jsons = sorted(Path(ws).glob("*/*.perfetto.json.gz"))
        (pf,) = Path(ws).glob("*/*.pftrace")
        json_mb = float(_metric(out, "JSON size, uncompressed (MB)"))
        pf_mb = pf.stat().st_size / 1e6
        write_json, write_pf = _timing(out, "write JSON"), _timing(out, "write pftrace")
        if TRACE_PROCESSOR.exists():
            (jw, jr), (pw, pr) = load_in_perfetto(jsons), load_in_perfetto([pf])
            loads = f"{jw:>8.2f} {jr:>8.0f} {pw:>8.2f} {pr:>8.0f}"
        else:
            loads = "(no trace_processor_shell)"
    return (
        f"{name:34} {json_mb:>9.1f} {len(jsons):>5} {pf_mb:>9.1f} {pf_mb / json_mb:>6.3f} "
        f"{write_json:>7.2f} {write_pf:>7.2f} {write_pf / write_json:>6.2f} {loads}"
    )


def pftrace_table(inputs: list[tuple[str, Path]], exe: str) -> None:
    header = (
        f"{'input':34} {'JSON MB':>9} {'parts':>5} {'pftr MB':>9} {'size':>6} "
        f"{'wJSON s':>7} {'wpftr s':>7} {'ratio':>6} "
        f"{'lJSON s':>8} {'lJSON MB':>8} {'lpftr s':>8} {'lpftr MB':>8}"
    )
    print("\nJSON vs pftrace (--format both; w: write, l: trace_processor_shell load)")
    print(header)
    print("-" * len(header))
    for name, folder in inputs:
        print(pftrace_row(name, folder, exe), flush=True)


def dev_inputs(n: int) -> list[tuple[str, Path]]:
    found = [(p.parent.name, p) for p in REPORTS.glob("*/parquet")]
    big = CACHE.parent / "exports" / "cpu_nvtx_large_1M" / "parquet"
    if big.exists():
        found.append(("cpu_nvtx_large_1M", big))
    found.sort(key=lambda x: -rows_in(x[1]))
    return found[:n]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--scale",
        choices=list(SEEDS),
        action="append",
        default=[],
        help="also bench scaled inputs (repeat: --scale 1m --scale 5m)",
    )
    ap.add_argument("--reports", type=int, default=4, help="how many of the largest dev reports")
    ap.add_argument("--no-validate", action="store_true")
    ap.add_argument(
        "--ranks",
        type=int,
        default=0,
        help="also a simulated job of this many ranks, converted on a local Dask cluster "
        "and merged (bench/ranks.py)",
    )
    ap.add_argument(
        "--cpu-side",
        action="store_true",
        help="also time each input without the CPU side (" + " ".join(NO_CPU_SIDE) + ") "
        "and print the ratio: what OS runtime calls and thread states cost",
    )
    ap.add_argument(
        "--pftrace",
        action="store_true",
        help="also convert each input with --format both and compare the JSON and the "
        "pftrace: bytes, write seconds, trace_processor_shell load seconds and peak RSS",
    )
    ap.add_argument(
        "--only-pftrace",
        action="store_true",
        help="only the --pftrace table (no conversion timing, floor or ncompass)",
    )
    args = ap.parse_args(argv)
    inputs = dev_inputs(args.reports) + [i for size in args.scale for i in scaled_inputs(size)]
    exe = str(Path(sys.executable).with_name("nsys-duck"))
    if args.only_pftrace:
        pftrace_table(inputs, exe)
        return 0
    nc = ncompass_binary()
    if nc is None:
        print(
            "note: ncompass is not installed (pip install -e '.[bench]'): no ours/ncompass column"
        )
    header = (
        f"{'input':34} {'rows in':>10} {'events':>10} {'wall s':>7} {'RSS MB':>7} "
        f"{'rows/s':>10} {'events/s':>10} {'floor s':>7} {'ours/floor':>10}"
        f" {'out fl s':>8} {'ours/out':>8} {'checks s':>8} {'checks %':>8}"
        + (f" {'nc s':>7} {'nc RSS':>7} {'nc events':>10} {'ours/nc':>7}" if nc else "")
    )
    print(header)
    print("-" * len(header))
    for name, folder in inputs:
        n_in = rows_in(folder)
        with tempfile.TemporaryDirectory() as ws:
            env = dict(os.environ, NSYS_WORKSPACE_ROOT=ws)
            # timed: the conversion with its contract checks and every output
            # (JSON, Parquet, NAME.duckdb); the file validator runs afterwards,
            # untimed, on the same files
            wall, rss, out = run_measured([exe, "convert", "--timings", str(folder)], env)
            checks = sum(
                float(line.split()[-2])
                for line in out.splitlines()
                if line.strip().startswith("time check ")
            )
            events = int(
                next(
                    line.split()[-1].replace(",", "")
                    for line in out.splitlines()
                    if line.strip().startswith("JSON events")
                )
            )
            json_mb = float(
                next(
                    line.split()[-1].replace(",", "")
                    for line in out.splitlines()
                    if line.strip().startswith("JSON size, uncompressed")
                )
            )
            verdict = ""
            traces = sorted(Path(ws).glob("*/*.perfetto.json.gz"))
            if len(traces) > 1:
                verdict = f"{len(traces)} parts; "
            if not args.no_validate:
                t0 = time.perf_counter()
                verdicts = {validate(t) for t in traces}
                verdict += " ".join(sorted(verdicts))
                verdict += f" (validation {time.perf_counter() - t0:.1f} s)"
        tables = [t for t in EVENT_TABLES if (folder / f"{t}.parquet").exists()]
        floor, _, _ = run_measured([sys.executable, "-c", FLOOR_CODE, str(folder), *tables])
        width = round(json_mb * 1e6 / max(events, 1))
        out_floor, _, _ = run_measured(
            [sys.executable, "-c", OUTPUT_FLOOR_CODE, str(events), str(width)]
        )
        theirs = ""
        sqlite = folder.parent / f"{name}.sqlite"
        if nc is not None:
            if sqlite.exists():
                with tempfile.TemporaryDirectory() as tmp:
                    out_path = Path(tmp) / "nc.json.gz"
                    nc_wall, nc_rss, _ = run_measured(
                        [str(nc), "--metadata", "-o", str(out_path), str(sqlite)]
                    )
                    nc_events = count_json_events(out_path)
                theirs = f" {nc_wall:>7.2f} {nc_rss:>7.0f} {nc_events:>10,} {wall / nc_wall:>7.2f}"
            else:
                theirs = f" {'(no SQLite form)':>35}"
        if args.cpu_side:
            with tempfile.TemporaryDirectory() as ws:
                env = dict(os.environ, NSYS_WORKSPACE_ROOT=ws)
                bare, bare_rss, _ = run_measured([exe, "convert", *NO_CPU_SIDE, str(folder)], env)
            verdict += (
                f" | without the CPU side: {bare:.2f} s, {bare_rss:.0f} MB; "
                f"with/without x{wall / bare:.2f}"
            )
        print(
            f"{name:34} {n_in:>10,} {events:>10,} {wall:>7.2f} {rss:>7.0f} "
            f"{n_in / wall:>10,.0f} {events / wall:>10,.0f} {floor:>7.2f} "
            f"{wall / floor:>10.2f} {out_floor:>8.2f} {wall / out_floor:>8.2f}"
            f" {checks:>8.2f} {100 * checks / wall:>8.1f}"
            f"{theirs} {verdict}",
            flush=True,
        )
    if args.pftrace:
        pftrace_table(inputs, exe)
    if args.ranks:
        print(f"\nsimulated job of {args.ranks} ranks (bench/ranks.py):", flush=True)
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "ranks.py"), "--ranks", str(args.ranks)],
            check=True,
        )
    return 0


def validate(path: Path) -> str:
    """Run the contract validator in a child process (so this process stays
    small: a child's peak RSS as reported by wait4 starts from its parent's)."""
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "validate", str(path)],
        capture_output=True,
        text=True,
    )
    if out.returncode == 0:
        return "valid"
    return "INVALID " + " ".join(out.stdout.split()[-12:])


if __name__ == "__main__":
    sys.exit(main())
