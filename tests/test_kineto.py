"""The Kineto trace (``convert --format kineto``, ``merge --format kineto``,
sql/60_kineto) read by Holistic Trace Analysis (PyPI ``traceinsight``, the
successor of ``HolisticTraceAnalysis``; both import as ``hta``).

On two real dev reports with kernels (a Parquet export, and a newer SQLite
export with 2 processes on 2 GPUs: 2 ranks) and a merge of 3 rank exports
(tests/multirank.py), HTA's TraceAnalysis loads the folder, and its kernel
breakdown, temporal breakdown and idle-time breakdown agree with our own
SQL over NAME.duckdb (``trace_slices``, ``cat = 'kernel' AND is_primary``).

How the times are compared (Kineto writes us with ns decimals, so do we):

- HTA's default parser rounds such traces to whole us (ts up, ts + dur
  down, dur the difference: trace_parser.round_down_time_stamps). Kernel
  counts are compared exactly; the busy time of the kernel breakdown is
  compared with our SQL's sum of floor(end_us) - ceil(start_us) per kernel,
  allowing 1 us for each kernel whose end is a whole us (HTA computes ts +
  dur in floats, which may land just below that whole us).
- With rounding off (HTA_DISABLE_NS_ROUNDING, HTAEnvOptions), HTA keeps our
  decimal us: the busy time then equals sum(dur_ns) to the ns (the float sum
  rounded to whole ns), and the temporal and idle breakdowns equal the same
  measures in SQL on integer ns to 1e-3 us (temporal) and 0.01 us per idle
  category (HTA rounds that table to 2 decimals).
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import multirank
import perfetto_import
from nsys_duck.convert import Options, convert, up_to_date
from nsys_duck.merge import MergeOptions, merge
from tests.paths import NEWER, REPORTS

hta_trace_analysis = pytest.importorskip("hta.trace_analysis")
hta_env = pytest.importorskip("hta.configs.env_options")

REPO = Path(__file__).resolve().parent.parent
ABACUS = REPORTS / "abacus_many_kernels" / "parquet"
TWO_GPUS = NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite"
STREAMS = (
    REPO / "examples" / "testcuda_streams_events_2026_1" / "testcuda_streams_events_2026_1.sqlite"
)

# HTA's rank lookup (hta/common/trace_file.py, create_rank_to_trace_dict)
HTA_RANK = re.compile(r'"rank":\s+(\d+)')
GPU_CATS = ("kernel", "memcpy", "memset")  # what HTA counts as GPU work (args.stream)


def analysis(folder: Path, *, rounding: bool):
    """HTA's TraceAnalysis of a Kineto folder, with HTA's ns rounding on
    (its default) or off."""
    logging.getLogger("hta").setLevel(logging.ERROR)
    options = hta_env.HTAEnvOptions.instance()
    options.set_disable_ns_rounding(not rounding)
    try:
        return hta_trace_analysis.TraceAnalysis(trace_dir=str(folder))
    finally:
        options.set_disable_ns_rounding(False)


def is_kernel(breakdown, rank: int):
    """The kernel breakdown's rows of the rank's kernels (HTA's kernel types
    COMPUTATION and COMMUNICATION; MEMORY are its memcpys and memsets)."""
    return breakdown["rank"].eq(rank) & breakdown["kernel_type"].ne("MEMORY")


def rank_pids(ta) -> dict[int, int]:
    """rank -> the OS pid of its CPU events (the rank's process)."""
    out = {}
    for rank, df in ta.t.traces.items():
        pids = set(df.loc[df["stream"].eq(-1), "pid"].unique())
        assert len(pids) == 1, (rank, pids)
        out[rank] = int(pids.pop())
    return out


def our(db: Path, sql: str, params=()) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def kernel_stats(db: Path, pid: int) -> dict:
    """Our kernel count and busy time of a process, from NAME.duckdb."""
    (row,) = our(
        db,
        """
        WITH k AS (
            SELECT start_ns - (SELECT base_ns FROM trace_base) AS s,
                end_ns - (SELECT base_ns FROM trace_base) AS e
            FROM trace_slices WHERE cat = 'kernel' AND is_primary AND os_pid = ?
        )
        SELECT count(*), sum(e - s),
            -- HTA's rounding: ceil(ts), floor(ts + dur), in whole us
            sum(floor(e / 1000) - ceil(s / 1000)),
            count(*) FILTER (WHERE e % 1000 = 0)
        FROM k""",
        [pid],
    )
    return dict(zip(("kernels", "busy_ns", "busy_rounded_us", "whole_us_ends"), row, strict=True))


def gpu_union(db: Path, pid: int, cats: tuple[str, ...]) -> tuple[int, int]:
    """(first start to last end, length of the union) of the process's GPU
    events of ``cats``, ns: HTA's kernel_time and busy time."""
    (row,) = our(
        db,
        f"""
        WITH ev AS (
            SELECT start_ns AS s, end_ns AS e FROM trace_slices
            WHERE is_primary AND os_pid = ? AND cat IN ({", ".join("?" for _ in cats)})
        ),
        marked AS (
            SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING
                AND 1 PRECEDING) AS prev_end
            FROM ev
        ),
        islands AS (
            SELECT s, e, sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END)
                OVER (ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
            FROM marked
        )
        SELECT (SELECT max(e) - min(s) FROM ev),
            (SELECT sum(len) FROM (SELECT max(e) - min(s) AS len FROM islands GROUP BY island))
        """,
        [pid, *cats],
    )
    return int(row[0]), int(row[1])


def stream_idle(db: Path, pid: int) -> dict[int, int]:
    """Per stream of the process, the sum of the gaps between consecutive GPU
    events (start - previous end, ns): HTA's idle time of the stream."""
    rows = our(
        db,
        f"""
        SELECT stream_id, sum(start_ns - prev_end) FROM (
            SELECT stream_id, start_ns,
                lag(end_ns) OVER (PARTITION BY stream_id ORDER BY start_ns, end_ns) AS prev_end
            FROM trace_slices
            WHERE is_primary AND os_pid = ? AND cat IN {GPU_CATS}
        ) WHERE prev_end IS NOT NULL GROUP BY 1""",
        [pid],
    )
    return {int(s): int(v) for s, v in rows}


def check_folder(folder: Path, world_size: int) -> list[dict]:
    """The Kineto folder: rank<R>.json.gz files only, each one gzip member of
    one JSON object with Kineto's top-level keys, its rank on the first line
    as HTA finds it; returns the traces."""
    files = sorted(folder.iterdir())
    assert len(files) == world_size
    assert all(re.fullmatch(r"rank\d+\.json\.gz", f.name) for f in files), files
    traces = []
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            first = fh.readline()
        m = HTA_RANK.search(first)
        assert m is not None, f"{f.name}: no rank on the first line"
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            trace = json.load(fh)
        assert {
            "schemaVersion",
            "deviceProperties",
            "distributedInfo",
            "baseTimeNanoseconds",
            "traceEvents",
        } <= set(trace)
        assert trace["schemaVersion"] == 1
        assert trace["distributedInfo"]["rank"] == int(m.group(1))
        assert f.name == f"rank{trace['distributedInfo']['rank']}.json.gz"
        assert trace["distributedInfo"]["world_size"] == world_size
        assert trace["deviceProperties"] and all("id" in d for d in trace["deviceProperties"])
        cats = {e.get("cat") for e in trace["traceEvents"]}
        assert {"kernel", "cuda_runtime", "ac2g"} <= cats, cats
        assert not cats & {"kernel_core", "memcpy_pcie", "memcpy_d2d", "gpu_sync", "nvtx"}
        flows = [e for e in trace["traceEvents"] if e.get("cat") == "ac2g"]
        assert {e["ph"] for e in flows} == {"s", "f"}
        assert all(e.get("bp") == "e" for e in flows if e["ph"] == "f")
        traces.append(trace)
    assert sorted(t["distributedInfo"]["rank"] for t in traces) == sorted(
        {t["distributedInfo"]["rank"] for t in traces}
    )
    return traces


def check_hta(folder: Path, db: Path, ranks: int) -> dict[int, dict]:
    """HTA's analyses of ``folder`` against our SQL over ``db``; returns
    per rank what both gave (the report's numbers)."""
    found: dict[int, dict] = {}
    # --- HTA's default: ns rounded to whole us
    ta = analysis(folder, rounding=True)
    assert len(ta.t.traces) == ranks
    pids = rank_pids(ta)
    sym = ta.t.symbol_table.get_sym_id_map()
    _, kernels = ta.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**9, duration_ratio=1.0)
    for rank, df in ta.t.traces.items():
        ours = kernel_stats(db, pids[rank])
        hta_kernels = int((df["stream"].ne(-1) & df["cat"].eq(sym["kernel"])).sum())
        assert hta_kernels == ours["kernels"] > 0
        gpu = our(
            db,
            f"SELECT count(*) FROM trace_slices WHERE is_primary AND os_pid = ? "
            f"AND cat IN {GPU_CATS}",
            [pids[rank]],
        )[0][0]
        assert int(df["stream"].ne(-1).sum()) == gpu
        busy = kernels.loc[is_kernel(kernels, rank), "sum (us)"].sum()
        assert abs(busy - ours["busy_rounded_us"]) <= ours["whole_us_ends"], (busy, ours)
        found[rank] = {
            "pid": pids[rank],
            "kernels": hta_kernels,
            "gpu events": gpu,
            "busy us (HTA rounded)": float(busy),
            "busy us (SQL, HTA's rounding)": float(ours["busy_rounded_us"]),
        }
    # --- rounding off: our exact decimal us
    ta = analysis(folder, rounding=False)
    _, kernels = ta.get_gpu_kernel_breakdown(visualize=False, num_kernels=10**9, duration_ratio=1.0)
    temporal = ta.get_temporal_breakdown(visualize=False).set_index("rank")
    for rank in ta.t.traces:
        pid = pids[rank]
        ours = kernel_stats(db, pid)
        busy = kernels.loc[is_kernel(kernels, rank), "sum (us)"].sum()
        assert round(busy * 1000) == ours["busy_ns"], (busy, ours["busy_ns"])
        span_ns, union_ns = gpu_union(db, pid, GPU_CATS)
        _, compute_ns = gpu_union(db, pid, ("kernel",))
        row = temporal.loc[rank]
        assert math.isclose(row["kernel_time(us)"], span_ns / 1000, abs_tol=1e-3)
        assert math.isclose(row["idle_time(us)"], (span_ns - union_ns) / 1000, abs_tol=1e-3)
        assert math.isclose(row["compute_time(us)"], compute_ns / 1000, abs_tol=1e-3)
        idle, _ = ta.get_idle_time_breakdown(ranks=[rank], visualize=False)
        per_stream = idle.groupby("stream")["idle_time"].sum()
        expected = stream_idle(db, pid)
        for stream, gap_ns in expected.items():
            assert math.isclose(per_stream.get(stream, 0.0), gap_ns / 1000, abs_tol=0.03), stream
        found[rank].update(
            {
                "busy us (HTA, no rounding)": float(busy),
                "busy ns (SQL)": int(ours["busy_ns"]),
                "kernel_time us (HTA)": float(row["kernel_time(us)"]),
                "kernel_time us (SQL)": span_ns / 1000,
                "idle_time us (HTA)": float(row["idle_time(us)"]),
                "idle_time us (SQL)": (span_ns - union_ns) / 1000,
                "compute_time us (HTA)": float(row["compute_time(us)"]),
                "compute_time us (SQL)": compute_ns / 1000,
            }
        )
    return found


@pytest.fixture(scope="module")
def abacus(tmp_path_factory):
    if not ABACUS.is_dir():
        pytest.skip("shared reports missing")
    root = tmp_path_factory.mktemp("ws")
    return convert(ABACUS, Options(trace_format="both"), root=root), root


def test_a_parquet_report_is_one_rank_hta_reads_as_our_sql(abacus):
    res, _ = abacus
    ws = res.workspace
    assert ws.json_gz.is_file()  # --format both: the Perfetto JSON too
    check_folder(ws.kineto_dir, 1)
    found = check_hta(ws.kineto_dir, ws.database, 1)
    print("abacus_many_kernels", found)
    assert dict(res.summary)["Kineto ranks"] == 1


def test_the_kineto_files_are_in_the_manifest_and_reused(abacus):
    res, root = abacus
    ws = res.workspace
    listed = json.loads((ws.dir / "nsys-duck.json").read_text())["conversion"]["files"]
    assert (
        listed[f"{ws.kineto_dir.name}/rank0.json.gz"]
        == (ws.kineto_dir / "rank0.json.gz").stat().st_size
    )
    assert up_to_date(ABACUS, Options(trace_format="both"), root) == ws
    assert up_to_date(ABACUS, Options(), root) is None  # another --format


def test_a_two_process_sqlite_report_is_two_ranks(tmp_path):
    if not TWO_GPUS.is_file():
        pytest.skip("newer exports missing")
    res = convert(TWO_GPUS, Options(trace_format="kineto"), root=tmp_path / "ws")
    ws = res.workspace
    assert not ws.json_gz.exists()  # --format kineto: no Perfetto JSON
    assert ws.events_parquet.is_file() and ws.database.is_file()
    traces = check_folder(ws.kineto_dir, 2)
    # one GPU each (devices 0 and 1), named as the export has no GPU table
    assert [t["deviceProperties"] for t in traces] == [
        [{"id": 0, "name": "GPU 0"}],
        [{"id": 1, "name": "GPU 1"}],
    ]
    found = check_hta(ws.kineto_dir, ws.database, 2)
    print("nsysai_h100_2gpu_1s", found)
    # Perfetto opens a Kineto file too: every X event a slice, no import error
    binary = perfetto_import.find_binary()
    if binary is not None:
        query = tmp_path / "q.sql"
        query.write_text(
            "SELECT (SELECT count(*) FROM slice) AS slices, (SELECT count(*) FROM stats "
            "WHERE value > 0 AND severity IN ('error', 'data_loss')) AS problems;"
        )
        out = subprocess.run(
            [str(binary), "-q", str(query), str(ws.kineto_dir / "rank0.json.gz")],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        ).stdout
        slices = sum(e.get("ph") == "X" for e in traces[0]["traceEvents"])
        assert out.strip().splitlines()[-1] == f"{slices},0", out
    assert {f["pid"] for f in found.values()} == {111, 112}


def test_a_merge_of_three_ranks(tmp_path):
    if not STREAMS.is_file():
        pytest.skip("example missing")
    first = convert(STREAMS, Options(database=False), root=tmp_path / "one")
    ranks = multirank.make_rank_exports(
        first.workspace.parquet_dir, tmp_path / "ranks", 3, name="report_"
    )
    res = merge(
        "job",
        [str(p / "parquet") for p in ranks],
        MergeOptions(trace_format="both"),
        root=tmp_path / "ws",
    )
    ws = res.workspace
    assert ws.json_gz.is_file()
    traces = check_folder(ws.kineto_dir, 3)
    assert sorted(t["distributedInfo"]["rank"] for t in traces) == [0, 1, 2]
    props = traces[0]["deviceProperties"][0]
    assert props["name"] == "NVIDIA GeForce RTX 4060 Ti" and props["numSms"] == 34
    assert props["computeMajor"] == 8 and props["totalGlobalMem"] == 8585216000
    found = check_hta(ws.kineto_dir, ws.database, 3)
    print("merge of 3 x testcuda_streams_events_2026_1", found)
    # rank k is report_000k: its process ids are its own (make_rank_exports)
    assert len({f["pid"] for f in found.values()}) == 3
    listed = json.loads((ws.dir / "nsys-duck.json").read_text())["merge"]["files"]
    assert {f"job.kineto/rank{r}.json.gz" for r in range(3)} <= set(listed)


def test_cli_format_kineto_ends_with_the_folder(tmp_path):
    if not STREAMS.is_file():
        pytest.skip("example missing")
    nsys_duck = Path(sys.executable).with_name("nsys-duck")
    out = tmp_path / "ws"
    run = subprocess.run(
        [str(nsys_duck), "convert", "--format", "kineto", "-o", str(out), str(STREAMS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    folder = out / "testcuda_streams_events_2026_1.kineto"
    assert run.stdout.strip().splitlines()[-1] == str(folder)
    assert not (out / "testcuda_streams_events_2026_1.perfetto.json.gz").exists()
    check_folder(folder, 1)
    # the Perfetto JSON again: the Kineto folder of the earlier run goes
    again = subprocess.run(
        [str(nsys_duck), "convert", "-o", str(out), str(STREAMS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert not folder.exists()
    assert (out / "testcuda_streams_events_2026_1.perfetto.json.gz").is_file()


RODINIA = REPO / "examples" / "rodinia_gaussian_8k_kernels" / "parquet"


def test_a_merge_of_big_ranks_loads_in_hta_with_ranks_from_0(tmp_path):
    """Two ranks of a real report with 24,582 X and 40,981 events each and
    correlation ids below 32,768 (pandas downcasts them to int16), named
    x_r3 and x_r5: HTA (with the venv's pandas 3) loads the folder and its
    idle-time breakdown works, so the API calls and kernels HTA pairs lie
    first in each file (HTA stores their row numbers in the correlation
    column's dtype); the Kineto ranks are 0 and 1 of 2, while the processes
    keep the labels rank 3 and rank 5. threads=4: the DuckDB plan that
    interleaved flows with the X events before."""
    built = multirank.make_rank_exports(RODINIA, tmp_path / "src", 2, name="copy")
    paths = []
    for folder, name in zip(built, ["x_r3", "x_r5"], strict=True):
        shutil.copytree(folder, tmp_path / "in" / name)
        paths.append(str(tmp_path / "in" / name / "parquet"))
    opts = MergeOptions(convert=Options(threads=4), trace_format="kineto")
    res = merge("job", paths, opts, root=tmp_path / "ws")
    ws = res.workspace
    assert [r.label for r in res.reports] == ["rank 3", "rank 5"]
    traces = check_folder(ws.kineto_dir, 2)
    assert [t["distributedInfo"] for t in traces] == [
        {"rank": 0, "world_size": 2},
        {"rank": 1, "world_size": 2},
    ]
    for trace in traces:
        evs = trace["traceEvents"]
        assert len(evs) > 32_767
        ids = [e["args"]["correlation"] for e in evs if "correlation" in e.get("args", {})]
        assert max(ids) < 32_768
        labels = {e["args"]["name"] for e in evs if e.get("name") == "process_name"}
        assert any(n.startswith(("rank 3 · pid", "rank 5 · pid")) for n in labels), labels
    if sys.version_info >= (3, 11):  # the pandas users get (pyproject's test extra)
        assert int(pytest.importorskip("pandas").__version__.split(".")[0]) >= 3
    ta = analysis(ws.kineto_dir, rounding=True)
    assert sorted(ta.t.traces) == [0, 1]
    idle, _ = ta.get_idle_time_breakdown(ranks=[0, 1], visualize=False)
    assert set(idle["rank"]) == {0, 1} and (idle["idle_time"] >= 0).all()
    found = check_hta(ws.kineto_dir, ws.database, 2)
    assert all(f["kernels"] > 8_000 for f in found.values())


def _marker(signum, frame):  # a handler of the test's own, to see it come back
    raise AssertionError("not called")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["convert", "--format", "kineto", "-o", "{tmp}/ws", str(STREAMS)], id="ok"),
        pytest.param(["convert", "{tmp}/no-such.nsys-rep"], id="convert-fails"),
        pytest.param(["merge", "job", "{tmp}/no-such.nsys-rep"], id="merge-fails"),
        pytest.param(["sql", "{tmp}/no-such", "-c", "SELECT 1"], id="sql-fails"),
    ],
)
def test_cli_main_in_process_leaves_the_signal_handlers_as_they_were(tmp_path, args):
    """convert, merge and sql stop on SIGTERM/SIGHUP like on Ctrl-C only while
    they run: a caller of cli.main in-process gets its handlers back, on
    success and on failure. (Left bound to nsys-duck's handler, SIGTERM made
    HTA's fork Pool hang in the next test: a worker inherits the Python-level
    handler, and pool.terminate()'s SIGTERM landing just before it blocks on
    the queue's lock is never acted on.)"""
    from click.testing import CliRunner

    from nsys_duck.cli import main

    if not STREAMS.is_file():
        pytest.skip("example missing")
    wanted = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    before = {sig: signal.signal(sig, _marker) for sig in wanted}
    try:
        run = CliRunner().invoke(main, [a.replace("{tmp}", str(tmp_path)) for a in args])
        after = {sig: signal.getsignal(sig) for sig in wanted}
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert (run.exit_code == 0) == (args[-1] == str(STREAMS)), run.output
    assert after == dict.fromkeys(wanted, _marker)
