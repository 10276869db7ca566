"""The contract checks (``check_*`` views) that ``convert`` runs over the
pipeline's tables before writing: they hold on every real report, their
input ``chk_events`` describes exactly the JSON the writer emits, an edited
stage that breaks a rule stops the conversion with one line naming the
check view and publishes nothing, and the views work in the saved
``NAME.duckdb``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from conftest import Options, convert, register_trace, report_ids
from nsys_duck import checks, pipeline
from paths import NEWER, REPORTS

CHECK_VIEWS = [c.view for c in checks.find_checks(pipeline.sql_files())]
# the ones convert runs (the others sort every event: validate runs them)
CONVERT_VIEWS = [c.view for c in checks.find_checks(pipeline.sql_files(), in_convert=True)]
PIPELINE_CHECKS = {
    "check_kernel_launch_flows",
    "check_slice_nesting",
    "check_source_counts",
    "check_flow_targets",
    "check_tracks",
    "check_time_range",
}
NEWER_EXPORTS = sorted(NEWER.glob("*/*.sqlite"))
SMALL = REPORTS / "memfusion_nvtx_d2d" / "parquet"  # kernels, copies, NVTX, 36 launches


def test_the_packaged_sql_defines_the_pipeline_checks():
    assert set(CHECK_VIEWS) >= PIPELINE_CHECKS, CHECK_VIEWS
    for f in pipeline.sql_files():
        for _kind, name in pipeline.created_objects(f.text):
            if name.startswith("check_"):
                assert f.relpath.endswith(f"/{name}.sql"), (f.relpath, name)
                assert f"COMMENT ON VIEW {name} IS" in f.text, f.relpath


def _check_rows(database: Path) -> dict[str, int]:
    """Rows of every packaged check view in a saved NAME.duckdb (SELECT *)."""
    con = duckdb.connect(str(database), read_only=True)
    try:
        out = {}
        for view in CHECK_VIEWS:
            rel = con.sql(f"SELECT * FROM {view}")
            assert {"message", "seq"} <= set(rel.columns), (view, rel.columns)
            out[view] = len(rel.fetchall())
        return out
    finally:
        con.close()


@pytest.mark.parametrize("name", report_ids())
def test_checks_hold_on_every_dev_report(name, converted):
    """The session conversion ran every check (it would have failed
    otherwise), and each view returns zero rows in the saved database."""
    res, _events = converted(name)
    assert res.validated and res.checks == len(CONVERT_VIEWS)
    timed = [t.relpath for t in res.timings if t.relpath.startswith("check ")]
    assert timed == [f"check {v}" for v in CONVERT_VIEWS]
    assert _check_rows(res.workspace.database) == dict.fromkeys(CHECK_VIEWS, 0)


@pytest.mark.parametrize("path", NEWER_EXPORTS, ids=lambda p: p.stem)
def test_checks_hold_on_every_newer_export(path, tmp_path):
    res = convert(path, Options(), root=tmp_path / "ws")
    assert res.validated and res.checks == len(CONVERT_VIEWS)
    assert _check_rows(res.workspace.database) == dict.fromkeys(CHECK_VIEWS, 0)


def _event_fields(e: dict) -> tuple:
    """A JSON event as the chk_events columns ph .. epoch_ns (ns as integers)."""

    def ns(v):
        return None if v is None else int(Decimal(v) * 1000)

    args = e.get("args") or {}
    meta = e["ph"] == "M"
    ident = e.get("id")
    if ident is None and "id2" in e:
        ident = e["id2"].get("local", e["id2"].get("global"))
    return (
        e["ph"],
        e.get("cat"),
        e.get("name"),
        e.get("pid"),
        e.get("tid"),
        ns(e.get("ts")),
        ns(e.get("dur")),
        None if ident is None else str(ident),
        e.get("bp"),
        e.get("s"),
        args.get("name") if meta and e["name"] in ("process_name", "thread_name") else None,
        args.get("sort_index") if meta else None,
        args.get("epoch_ns") if meta else None,
    )


@pytest.mark.parametrize(
    "name",
    [
        "keras_darknet53_nvtx_startend",  # async b/e
        "pytorch_nvtx_profiling",  # deep B/E stacks
        "memfusion_nvtx_d2d",
    ],
)
def test_chk_events_is_the_written_json(name, converted):
    """chk_events (from the tables) = the events of the JSON file, field by
    field; seq orders each track's B/E and b/e events as the file does."""
    res, events = converted(name)
    con = duckdb.connect(str(res.workspace.database), read_only=True)
    rows = con.execute(
        "SELECT ph, cat, name, pid, tid, ts_ns, dur_ns, id, bp, scope, meta_name, "
        "meta_sort_index, epoch_ns, seq, problem FROM chk_events ORDER BY seq"
    ).fetchall()
    con.close()
    assert len({r[13] for r in rows}) == len(rows)  # seq is unique
    assert all(r[14] is None for r in rows)  # no problem
    assert Counter(tuple(r[:13]) for r in rows) == Counter(map(_event_fields, events))
    stacks = "BEbe"
    in_file = [_event_fields(e) for e in events if e["ph"] in stacks]
    by_seq = [tuple(r[:13]) for r in rows if r[0] in stacks]

    def per_track(evs):
        return {k: [e for e in evs if e[3:5] == k] for k in {e[3:5] for e in evs}}

    assert per_track(by_seq) == per_track(in_file)
    assert len(in_file) > 0


# --- an edited stage that breaks a rule ---------------------------------------

# one kernel loses both its launch flows: the trace stays consistent for
# the generic checks (as many launch as launch_core flows, every flow
# paired and bound), only the ids show the kernel has none
UNLAUNCHED_KERNEL = """-- test stage: int_flows without the flows of one kernel
CREATE OR REPLACE TABLE _test_flows AS
SELECT * FROM int_flows
WHERE NOT (flow_cat IN ('launch', 'launch_core') AND op_id = (
    SELECT min(op_id) FROM int_flows WHERE flow_cat = 'launch'));
CREATE OR REPLACE TABLE int_flows AS SELECT * FROM _test_flows;
"""

# one kernel ends 1 ns after the next kernel on its track starts (after the
# lanes were assigned): two partially overlapping slices on one track
STRETCHED_KERNEL = """-- test stage: one kernel stretched into its neighbour
CREATE OR REPLACE TABLE _test_stretched AS
WITH kernels AS (
    SELECT slice_id, end_ns,
        lead(start_ns) OVER (PARTITION BY json_tid ORDER BY start_ns) AS next_start,
        lead(end_ns) OVER (PARTITION BY json_tid ORDER BY start_ns) AS next_end
    FROM int_slices_on_tracks WHERE cat = 'kernel'
),
victim AS (
    SELECT slice_id, next_start + 1 AS new_end FROM kernels
    WHERE next_start >= end_ns AND next_end > next_start + 1
    ORDER BY slice_id LIMIT 1
)
SELECT s.* REPLACE (coalesce(v.new_end, s.end_ns) AS end_ns)
FROM int_slices AS s LEFT JOIN victim AS v USING (slice_id);
CREATE OR REPLACE TABLE int_slices AS SELECT * FROM _test_stretched;
"""


# one CUDA API call without GPU work (no flow) is no longer drawn: the trace
# stays consistent for every other check, only the count of API slices
# against int_runtime_calls shows it
LOST_API_CALL = """-- test stage: int_slices without one call that has no GPU work
CREATE OR REPLACE TABLE _test_slices AS
SELECT * FROM int_slices
WHERE call_id IS DISTINCT FROM (
    SELECT min(call_id) FROM int_runtime_calls
    WHERE call_id NOT IN (SELECT call_id FROM int_runtime_links));
CREATE OR REPLACE TABLE int_slices AS SELECT * FROM _test_slices;
"""


def _run_cli(tmp_path: Path, *args) -> subprocess.CompletedProcess:
    """The real CLI, workspace root ``tmp_path/ws``; the trace it publishes
    is loaded into Perfetto's importer when the test ends (conftest)."""
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path / "ws")),
    )
    if out.returncode == 0:
        register_trace(Path(out.stdout.strip().splitlines()[-1]))
    return out


def _stage(tmp_path: Path, rel: str, text: str) -> Path:
    sql = tmp_path / "my-sql"
    (sql / rel).parent.mkdir(parents=True, exist_ok=True)
    (sql / rel).write_text(text)
    return sql


def _assert_refused(
    out: subprocess.CompletedProcess, views: str | tuple[str, ...], tmp_path: Path
) -> str:
    """Exit 1, one stderr line naming the first check (in run order) among
    ``views`` that returned rows, nothing published."""
    assert out.returncode == 1, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    views = (views,) if isinstance(views, str) else views
    named = [v for v in views if f"{v}.sql (view {v}): " in lines[0]]
    assert named, lines[0]
    rule = named[0][len("check_") :]
    assert f"break {rule}: " in lines[0] or f"breaks {rule}: " in lines[0], lines[0]
    assert "nothing was published" in lines[0]
    published = [
        p.name
        for p in (tmp_path / "ws").rglob("*")
        if p.name.endswith((".json.gz", ".perfetto.parquet", ".duckdb"))
    ]
    assert published == [], published
    return lines[0]


def test_a_kernel_without_launch_flows_stops_the_conversion(tmp_path):
    sql = _stage(tmp_path, "30_intermediate/50_tracks/60_test_unlaunched.sql", UNLAUNCHED_KERNEL)
    out = _run_cli(tmp_path, "convert", "--sql-dir", sql, SMALL)
    line = _assert_refused(out, "check_kernel_launch_flows", tmp_path)
    assert "1 row breaks kernel_launch_flows: linked kernel (device " in line
    assert "has 0 launch and 0 launch_core flows, expected 1 and 1: " in line
    # --no-checks publishes the edited trace anyway
    out = _run_cli(tmp_path, "convert", "--no-checks", "--sql-dir", sql, SMALL)
    assert out.returncode == 0, out.stderr
    assert "validation: skipped (--no-checks)" in out.stdout
    assert out.stdout.strip().splitlines()[-1].endswith(".perfetto.json.gz")


def test_a_kernel_stretched_into_its_neighbour_stops_the_conversion(tmp_path):
    """The two kernels overlap partially on one track, and the neighbour's
    launch flow now lands in the stretched kernel: whichever check runs
    first reports it."""
    sql = _stage(tmp_path, "30_intermediate/50_tracks/45_test_stretch.sql", STRETCHED_KERNEL)
    out = _run_cli(tmp_path, "convert", "--sql-dir", sql, SMALL)
    _assert_refused(
        out, ("check_slice_nesting", "check_flow_targets", "check_flow", "check_overlap"), tmp_path
    )


def test_a_cuda_api_call_left_out_stops_the_conversion(tmp_path):
    """Every CUDA API call is drawn: an edited int_slices that loses one
    call without GPU work is refused by check_source_counts."""
    sql = _stage(tmp_path, "30_intermediate/40_slices/70_test_lost_call.sql", LOST_API_CALL)
    out = _run_cli(tmp_path, "convert", "--sql-dir", sql, SMALL)
    line = _assert_refused(out, "check_source_counts", tmp_path)
    assert "primary slices in the trace, but int_runtime_calls (cuda_api) has" in line


def test_a_check_added_with_sql_dir_runs(tmp_path):
    """A --sql-dir file defining a check_* view is run like the packaged ones."""
    sql = _stage(
        tmp_path,
        "55_pipeline_checks/check_no_memset.sql",
        "CREATE OR REPLACE VIEW check_no_memset AS\n"
        "SELECT 'memset ' || name AS message, NULL::BIGINT AS seq\n"
        "FROM int_slices WHERE cat = 'memcpy';\n",
    )
    res = None
    with pytest.raises(
        checks.CheckFailed,
        match=r"check_no_memset.sql \(view "
        r"check_no_memset\): \d+ rows? breaks? no_memset: memset ",
    ):
        res = convert(SMALL, Options(sql_dir=sql, database=False), root=tmp_path / "ws")
    assert res is None and not list((tmp_path / "ws").rglob("*.json.gz"))
