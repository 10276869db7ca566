"""make bench --ranks N: a simulated N-rank job converted on Dask and merged.

The ranks are copies of one small real report (``examples/raiderstream_tiny``:
kernels, H2D/D2H copies and their API calls) with distinct process ids and
start times 1 ms apart (``tests/multirank.make_rank_exports``), built once
and cached. Three measurements in one run:

1. baseline: ``SAMPLE`` ranks converted one after another in this process
   (``parallel.convert_many`` with ``jobs=1``: no Dask), seconds per report;
2. the N ranks converted as Dask tasks on a ``LocalCluster`` of ``--jobs``
   worker processes (fresh workspaces), wall time, reports/s, the summed
   task seconds and the per-task overhead
   ``(wall x jobs - sum of task seconds) / N`` (scheduling, idle workers,
   cluster start), and the peak memory of the whole process tree
   (this process and every worker, sampled every 0.2 s);
3. the merge of the N converted workspaces into one trace (no conversion
   left to do: every report is up to date), wall time and peak memory.

Figures are ratios against the baseline of the same run (these machines are
noisy); nothing here is asserted.

Usage: python bench/ranks.py [--ranks 1000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import multirank  # noqa: E402
from nsys_duck.convert import Options  # noqa: E402
from nsys_duck.merge import MergeOptions, merge  # noqa: E402
from nsys_duck.parallel import convert_many  # noqa: E402

SEED = REPO / "examples" / "raiderstream_tiny" / "parquet"
CACHE = Path(
    os.environ.get("NSYS_DUCK_BENCH_CACHE", Path.home() / ".cache" / "nsys-duck" / "bench")
)
SAMPLE = 20  # ranks converted sequentially for the baseline


class TreeMemory:
    """Peak RSS (bytes) of this process and all its descendants, sampled."""

    def __init__(self, every_s: float = 0.2) -> None:
        self.peak = 0
        self._every = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for p in [me, *me.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self._every)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def rank_inputs(n: int) -> list[Path]:
    """The N rank exports (cached under CACHE/ranks-N)."""
    folder = CACHE / f"ranks-{n}"
    done = folder / ".complete"
    if not done.exists():
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        multirank.make_rank_exports(SEED, folder, n, name="report_", offset_step_ns=1_000_000)
        done.write_text("ok\n")
    return sorted(p / "parquet" for p in folder.iterdir() if (p / "parquet").is_dir())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    paths = rank_inputs(args.ranks)
    print(f"{len(paths)} rank exports of {SEED.parent.name} ({time.perf_counter() - t0:.1f} s)")
    opts = Options(memory_limit="1GB")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sample = paths[:SAMPLE]
        t0 = time.perf_counter()
        base = convert_many(sample, opts, jobs=1, root=root / "baseline")
        seq_wall = time.perf_counter() - t0
        assert all(o.status == "converted" for o in base), [o.message for o in base][:3]
        per_report = seq_wall / len(sample)
        print(f"baseline: {len(sample)} reports one after another: {per_report:.3f} s/report")

        with TreeMemory() as mem:
            t0 = time.perf_counter()
            outcomes = convert_many(paths, opts, jobs=args.jobs, root=root / "ws")
            wall = time.perf_counter() - t0
        failed = [o for o in outcomes if o.status == "failed"]
        task_s = sum(o.seconds for o in outcomes)
        overhead = (wall * args.jobs - task_s) / len(paths)
        print(
            f"dask: {len(paths)} reports on {args.jobs} workers: {wall:.1f} s, "
            f"{len(paths) / wall:.2f} reports/s, {len(failed)} failed; "
            f"task s/report {task_s / len(paths):.3f}, per-task overhead {overhead:.3f} s; "
            f"speed-up over the baseline x{per_report * len(paths) / wall:.2f}; "
            f"peak RSS of the tree {mem.peak / 2**20:.0f} MB"
        )
        with TreeMemory() as mem:
            t0 = time.perf_counter()
            res = merge(
                f"ranks{len(paths)}",
                [str(p) for p in paths],
                MergeOptions(convert=opts),
                root=root / "ws",
            )
            merge_wall = time.perf_counter() - t0
        summary = dict(res.summary)
        up = sum(r.status == "up to date" for r in res.reports)
        print(
            f"merge: {len(res.reports)} reports ({up} up to date) into one trace: "
            f"{merge_wall:.1f} s, {summary['slices']:,} slices, {summary['JSON events']:,} "
            f"JSON events, {len(res.workspace.json_parts) or 1} JSON file(s); "
            f"peak RSS {mem.peak / 2**20:.0f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
