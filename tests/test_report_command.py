"""``nsys-duck report NAME REPORT`` (nsys_duck/report.py, sql/reports/).

Ground truth is NVIDIA's ``nsys stats`` (2023.4): on dev reports with
kernels, CUDA API calls, NVTX ranges and copies, ``nsys stats --report
cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,cuda_gpu_mem_time_sum,
cuda_gpu_mem_size_sum --format csv`` runs on a copy of the report, and every
row of ours must be one of its rows: same key (name; style and range for
NVTX), integer columns exact, the columns nsys rounds to 0.1 (Avg, Med,
StdDev, Time %) within 0.1 (both sides rounded), sizes within nsys's 0.001
MB. Also: the other formats parse, --sql-dir replaces a report's file, a
bad NAME is one sentence and exit status 2, and a merged workspace gives
one block per report (equal to the reports' own).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from conftest import NEWER, REPORTS, Options, convert
from nsys_duck.cli import main
from nsys_duck.errors import NsysNotFoundError
from nsys_duck.nsys import find_nsys

# dev reports with kernels, API calls, NVTX (push/pop, start/end, unclosed,
# cross-thread) and copies/memsets
COMPARED = [
    "abacus_many_kernels",
    "pytorch_nvtx_profiling",
    "diffevo_nvtx_startend",
    "cpu_nvtx_small",
    "alpa_dev1_2_memcpy",
    "cpu_nvtx_multiproc",  # NVTX domains in three processes
    "keras_darknet53_nvtx_startend",  # start/end ranges in a named domain
    "perlmutter_unified_mem",  # unified-memory copy kinds
    "cufcm_memset",  # memsets
]
# (all 18 dev reports but cpu_nvtx_large_1M matched nsys stats 2023.4 row by
# row when this test was written; these are the ones that cover each rule)
# SQLite exports of newer Nsight (nsys stats 2023.4 reads their SQLite):
# a graph-level CUDA graph trace (graph executions are no kernels) and
# NVTX-annotated fusions (all 6 of data/newer matched)
NEWER_COMPARED = ["flameox_graph_trace_2025_5", "fuser_nvtx_2025_1"]

# our report -> (nsys stats report, key columns)
NSYS_REPORTS = {
    "top-kernels": ("cuda_gpu_kern_sum", ("Name",)),
    "api-summary": ("cuda_api_sum", ("Name",)),
    "nvtx-summary": ("nvtx_sum", ("Style", "Range")),
    "memcpy": ("cuda_gpu_mem_time_sum", ("Operation",)),
}
EXACT = ("Total Time (ns)", "Instances", "Num Calls", "Count", "Min (ns)", "Max (ns)")
ROUNDED = ("Time (%)", "Avg (ns)", "Med (ns)", "StdDev (ns)")
# cuda_gpu_mem_size_sum's MB columns (10^6 B, printed to 0.001) -> ours in B
SIZES = {
    "Total (MB)": "Total (B)",
    "Avg (MB)": "Avg (B)",
    "Med (MB)": "Med (B)",
    "Min (MB)": "Min (B)",
    "Max (MB)": "Max (B)",
    "StdDev (MB)": "StdDev (B)",
}


def run(*args, env=None):
    return CliRunner().invoke(main, ["report", *args], env=env, catch_exceptions=False)


def ours(workspace, report, *extra) -> list[dict]:
    out = run(str(workspace.dir), report, "--format", "csv", *extra)
    assert out.exit_code == 0, out.output
    return list(csv.DictReader(io.StringIO(out.output)))


def _report_file(name: str):
    """The report nsys stats reads: the dev report's .nsys-rep/.qdrep, or a
    newer export's .sqlite."""
    candidates = [REPORTS / name / f"{name}{s}" for s in (".nsys-rep", ".qdrep")]
    for p in [*candidates, NEWER / name / f"{name}.sqlite"]:
        if p.is_file():
            return p
    pytest.skip(f"{name} has no .nsys-rep, .qdrep or .sqlite")


@pytest.fixture(scope="module")
def workspace(converted, tmp_path_factory):
    """name -> its converted workspace (dev reports: the session's
    conversion; newer SQLite exports: converted here)."""
    cache = {}

    def get(name: str):
        if (REPORTS / name / "parquet").is_dir():
            return converted(name)[0].workspace
        if name not in cache:
            root = tmp_path_factory.mktemp("newer-ws")
            cache[name] = convert(NEWER / name / f"{name}.sqlite", Options(), root=root).workspace
        return cache[name]

    return get


@pytest.fixture(scope="module")
def nsys_stats(tmp_path_factory):
    """name -> {nsys report -> rows}: nsys stats on a copy of the report."""
    try:
        nsys = find_nsys()
    except NsysNotFoundError:
        pytest.skip("no nsys installed (make test installs Debian's nsight-systems)")
    cache: dict[str, dict[str, list[dict]]] = {}

    def get(name: str) -> dict[str, list[dict]]:
        if name not in cache:
            folder = tmp_path_factory.mktemp(f"stats-{name}")
            src = folder / _report_file(name).name
            shutil.copy2(_report_file(name), src)  # nsys stats writes its .sqlite beside it
            reports = [*(r for r, _ in NSYS_REPORTS.values()), "cuda_gpu_mem_size_sum"]
            done = subprocess.run(
                [str(nsys.path), "stats", "--report", ",".join(reports), "--format", "csv"]
                # a report: export it again whatever the folder holds (a .sqlite is read as is)
                + ([] if src.suffix == ".sqlite" else ["--force-export=true"])
                + ["-o", str(folder / "out"), str(src)],
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stderr
            cache[name] = {}
            for r in reports:
                text = (folder / f"out_{r}.csv").read_text(encoding="utf-8")
                cache[name][r] = _nsys_csv(text)
        return cache[name]

    return get


def _nsys_csv(text: str) -> list[dict]:
    """Rows of an nsys stats CSV. nsys 2023.4 quotes a name only when it
    holds a comma, and writes quotes and newlines inside names as they are
    (an NVTX range "tab\there and newline\nsecond line" spans two lines):
    the name is the last column, so a record is the line's first N-1
    fields and the rest of it, and a line not starting with a number
    continues the name of the record before it."""
    lines = text.splitlines()
    if not lines:
        return []
    header = lines[0].split(",")
    records: list[str] = []
    for line in lines[1:]:
        if re.match(r"-?[0-9.]+,", line) or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    rows = []
    for rec in records:
        fields = rec.split(",", len(header) - 1)
        name = fields[-1]
        if len(name) > 1 and name[0] == name[-1] == '"' and "," in name:
            fields[-1] = name[1:-1]
        rows.append(dict(zip(header, fields, strict=False)))
    return rows


def _close(a: str, b: str, tol: float) -> bool:
    return abs(float(a) - float(b)) <= tol + 1e-9


@pytest.mark.nsys
@pytest.mark.parametrize("name", COMPARED + NEWER_COMPARED)
@pytest.mark.parametrize("report", list(NSYS_REPORTS))
def test_matches_nsys_stats_row_by_row(workspace, nsys_stats, name, report):
    theirs_name, key = NSYS_REPORTS[report]
    theirs = nsys_stats(name)[theirs_name]
    mine = ours(workspace(name), report)
    by_key = {tuple(r[k] for k in key): r for r in theirs}
    assert len(by_key) == len(theirs), "nsys stats gave one key twice"
    assert sorted(tuple(r[k] for k in key) for r in mine) == sorted(by_key)
    for row in mine:
        expected = by_key[tuple(row[k] for k in key)]
        for column in EXACT:
            if column in expected:
                assert row[column] == expected[column], (row, expected, column)
        for column in ROUNDED:
            assert _close(row[column], expected[column], 0.1), (row, expected, column)
    # same order where nsys's order is strict (totals differ)
    totals = [int(r["Total Time (ns)"]) for r in theirs]
    if len(set(totals)) == len(totals):
        assert [tuple(r[k] for k in key) for r in mine] == [
            tuple(r[k] for k in key) for r in theirs
        ]
    if report == "memcpy":
        sizes = {r["Operation"]: r for r in nsys_stats(name)["cuda_gpu_mem_size_sum"]}
        assert sorted(sizes) == sorted(r["Operation"] for r in mine)
        for row in mine:
            for mb, b in SIZES.items():
                assert _close(float(row[b]) / 1e6, sizes[row["Operation"]][mb], 0.0005), (
                    row,
                    sizes[row["Operation"]],
                    mb,
                )


def test_formats_parse_and_agree(converted):
    ws = converted("diffevo_nvtx_startend")[0].workspace
    rows = ours(ws, "top-kernels")
    assert rows and list(rows[0])[:3] == ["Time (%)", "Total Time (ns)", "Instances"]
    as_json = json.loads(run(str(ws.dir), "top-kernels", "--format", "json").output)
    assert [r["Name"] for r in as_json] == [r["Name"] for r in rows]
    assert all(isinstance(r["Total Time (ns)"], int) for r in as_json)
    assert sum(r["Total Time (ns)"] for r in as_json) == sum(
        int(r["Total Time (ns)"]) for r in rows
    )
    md = run(str(ws.dir), "top-kernels", "--format", "markdown").output.splitlines()
    assert md[0].startswith("| Time (%) | Total Time (ns) |") and md[1].startswith("|---:|")
    assert len(md) == 2 + len(rows)
    assert all(line.count(" | ") >= 8 for line in md[2:])
    table = run(str(ws.dir), "top-kernels").output
    first = rows[0]
    assert f"{int(first['Total Time (ns)']):,}" in table and first["Name"][:30] in table
    limited = ours(ws, "top-kernels", "--limit", "2")
    assert limited == rows[:2]


def test_gpu_idle_adds_up(converted):
    ws = converted("abacus_many_kernels")[0].workspace
    rows = ours(ws, "gpu-idle")
    devices = [r for r in rows if r["Stream"] == "all"]
    assert devices and len(rows) > len(devices)
    for r in rows:
        span, busy, idle = (int(r[c]) for c in ("Span (ns)", "Busy (ns)", "Idle (ns)"))
        assert span == busy + idle and 0 < busy <= span
        assert _close(r["Idle (%)"], str(round(idle * 100 / span, 1)), 0.05)
    # a stream is never busier than its device; the device is at least its busiest stream
    dev = devices[0]
    streams = [r for r in rows if r["Device"] == dev["Device"] and r["Stream"] != "all"]
    assert max(int(s["Busy (ns)"]) for s in streams) <= int(dev["Busy (ns)"])
    assert sum(int(s["Operations"]) for s in streams) == int(dev["Operations"])
    assert all(s["Span (ns)"] == dev["Span (ns)"] for s in streams)
    # busy time and gaps against a plain sweep over the GPU operations
    import duckdb

    con = duckdb.connect(str(ws.database), read_only=True)
    ops = con.execute(
        "SELECT device_id, stream_id, start_ns, end_ns FROM int_gpu_ops ORDER BY start_ns, end_ns"
    ).fetchall()
    con.close()
    for r in rows:
        mine = [
            (s, e)
            for d, st, s, e in ops
            if d == int(r["Device"]) and r["Stream"] in ("all", str(st))
        ]
        busy, gaps, longest, until = 0, 0, 0, None
        for s, e in mine:
            if until is None or s > until:
                if until is not None:
                    gaps, longest = gaps + 1, max(longest, s - until)
                busy += e - s
                until = e
            elif e > until:
                busy += e - until
                until = e
        assert (int(r["Busy (ns)"]), int(r["Gaps"]), int(r["Longest Gap (ns)"])) == (
            busy,
            gaps,
            longest,
        ), r


def test_sql_dir_replaces_the_packaged_report(converted, tmp_path):
    ws = converted("diffevo_nvtx_startend")[0].workspace
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "top_kernels.sql").write_text(
        "-- top_kernels, edited: kernels per device\n"
        'SELECT device_id AS "Device", count(*) AS "Kernels" FROM int_gpu_ops\n'
        "WHERE cat = 'kernel' GROUP BY ALL ORDER BY 1;\n"
    )
    rows = ours(ws, "top-kernels", "--sql-dir", str(tmp_path))
    packaged = ours(ws, "top-kernels")
    assert rows == [{"Device": "0", "Kernels": str(sum(int(r["Instances"]) for r in packaged))}]
    # the other reports are still the packaged ones
    assert ours(ws, "memcpy", "--sql-dir", str(tmp_path)) == ours(ws, "memcpy")
    (tmp_path / "reports" / "top_kernels.sql").write_text("SELECT * FROM no_such_view;\n")
    out = run(str(ws.dir), "top-kernels", "--sql-dir", str(tmp_path))
    assert out.exit_code == 1
    assert "reports/top_kernels.sql" in out.output and "no_such_view" in out.output


def test_name_by_workspace_name_and_bad_name(converted, tmp_path):
    res = converted("alpa_dev1_2_memcpy")[0]
    env = {"NSYS_WORKSPACE_ROOT": str(res.workspace.dir.parent)}
    by_name = run("alpa_dev1_2_memcpy", "memcpy", "--format", "csv", env=env)
    assert (
        by_name.exit_code == 0
        and by_name.output == run(str(res.workspace.dir), "memcpy", "--format", "csv").output
    )
    # the export it was converted from names the same workspace
    by_source = run(
        str(REPORTS / "alpa_dev1_2_memcpy" / "parquet"), "memcpy", "--format", "csv", env=env
    )
    assert by_source.exit_code == 0 and by_source.output == by_name.output
    bad = run("no_such_workspace", "top-kernels", env={"NSYS_WORKSPACE_ROOT": str(tmp_path)})
    assert bad.exit_code == 2
    lines = bad.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nsys-duck: no_such_workspace: no such file")
    assert "Traceback" not in bad.output
    # a workspace folder without its database
    empty = tmp_path / "ws" / "x"
    empty.mkdir(parents=True)
    (empty / "x.perfetto.json.gz").write_bytes(b"")
    out = run(str(empty), "top-kernels")
    assert out.exit_code == 2 and "has no x.duckdb" in out.output
    unknown = run(str(res.workspace.dir), "top-kernelz")
    assert unknown.exit_code == 2


def test_merged_workspace_gives_each_report_its_own_rows(tmp_path, monkeypatch):
    from nsys_duck.merge import MergeOptions, merge

    names = ["diffevo_nvtx_startend", "alpa_dev1_2_memcpy"]  # captured 458 days apart
    paths = [str(REPORTS / n / "parquet") for n in names]
    env = {"NSYS_WORKSPACE_ROOT": str(tmp_path)}
    monkeypatch.setenv("NSYS_WORKSPACE_ROOT", str(tmp_path))
    res = merge("job", paths, MergeOptions(convert=Options(), align="start"))
    assert not res.failed
    for report in ("memcpy", "top-kernels", "gpu-idle", "api-summary", "nvtx-summary"):
        out = run("job", report, "--format", "csv", env=env)
        assert out.exit_code == 0, out.output
        merged = list(csv.DictReader(io.StringIO(out.output)))
        assert merged and next(iter(merged[0])) == "Report"
        # names not ending in a number: each report is labelled with its name,
        # and they come in name order
        labels = list(dict.fromkeys(r["Report"] for r in merged))
        assert labels == sorted(labels) and set(labels) <= set(names)
        for name in names:
            # the merge converted each report into its ranks/ folder
            (db,) = (tmp_path / "job").glob(f"ranks/**/{name}.duckdb")
            alone = run(str(db), report, "--format", "csv")
            assert alone.exit_code == 0, alone.output
            own = list(csv.DictReader(io.StringIO(alone.output)))
            mine = [
                {k: v for k, v in r.items() if k != "Report"} for r in merged if r["Report"] == name
            ]
            assert mine == own, (report, name)
    limited = list(
        csv.DictReader(
            io.StringIO(run("job", "memcpy", "--limit", "1", "--format", "csv", env=env).output)
        )
    )
    assert len(limited) == 2 and len({r["Report"] for r in limited}) == 2
    # a report's own database gone: one sentence, exit status 2
    (db,) = (tmp_path / "job").glob("ranks/**/alpa_dev1_2_memcpy.duckdb")
    db.rename(db.with_name("moved.duckdb"))
    refused = run("job", "api-summary", env=env)
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    assert "stg_runtime_calls" in refused.output and "is gone" in refused.output
    assert run("job", "top-kernels", env=env).exit_code == 0  # the merged database's own


def test_readme_example_is_what_the_command_prints(tmp_path):
    from paths import REPO

    res = convert(
        REPO / "examples" / "rodinia_gaussian_8k_kernels" / "parquet", Options(), root=tmp_path
    )
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for report in ("top-kernels", "gpu-idle"):
        out = run(str(res.workspace.dir), report)
        assert out.exit_code == 0, out.output
        shown = f"$ nsys-duck report rodinia_gaussian_8k_kernels {report}\n" + out.output
        assert shown in readme, shown


def test_cli_offers_every_packaged_report():
    from nsys_duck import report as report_mod
    from nsys_duck.pipeline import packaged_sql_dir

    (param,) = [p for p in main.commands["report"].params if p.name == "report"]
    assert sorted(param.type.choices) == sorted(report_mod.REPORTS)
    packaged = {p.stem for p in (packaged_sql_dir() / "reports").glob("*.sql")}
    assert packaged == set(report_mod.REPORTS.values())


def test_api_summary_of_a_merge_finds_each_report_by_its_source(tmp_path, monkeypatch):
    """api-summary on a merge runs on each report's own database, matched by
    the source the merge's manifest records (kind, SHA-256), not by its
    slice count: after one rank is converted again with --no-osrt (fewer
    slices) it still runs, equal to that rank's own; a different report
    with the same slice count converted into that workspace is refused."""
    import multirank
    from nsys_duck.merge import MergeOptions, merge
    from nsys_duck.pipeline import CPU_SOURCES

    small = REPORTS / "raiderstream_tiny" / "parquet"  # has OS runtime calls
    root = tmp_path / "ws"
    env = {"NSYS_WORKSPACE_ROOT": str(root)}
    monkeypatch.setenv("NSYS_WORKSPACE_ROOT", str(root))
    ranks = [p / "parquet" for p in multirank.make_rank_exports(small, tmp_path / "job", 2)]
    for p in ranks:  # each rank's own workspace, root/rank000k, reused by the merge
        convert(p, Options(), root=root)
    res = merge("job", [str(p) for p in ranks], MergeOptions(convert=Options()))
    assert all(r.status == "up to date" for r in res.reports)
    slices = {r.report: r.slices for r in res.reports}
    before = run("job", "api-summary", "--format", "csv", env=env)
    assert before.exit_code == 0, before.output
    no_osrt = Options(cpu_sources=tuple(s for s in CPU_SOURCES if s != "osrt"))
    again = convert(ranks[1], no_osrt, root=root)
    assert dict(again.summary).get("OS runtime calls", 0) == 0
    n = duckdb_count(again.workspace.database)
    assert n < slices["rank0001"]  # the merge's count no longer matches
    after = run("job", "api-summary", "--format", "csv", env=env)
    assert after.exit_code == 0, after.output
    assert after.output == before.output
    # another job's rank0001: another capture (times 5 ms apart, not 1 ms), same count
    other = multirank.make_rank_exports(small, tmp_path / "other", 2, offset_step_ns=5_000_000)
    replaced = convert(other[1] / "parquet", Options(force=True), root=root)
    assert replaced.workspace.dir == again.workspace.dir
    assert duckdb_count(replaced.workspace.database) == slices["rank0001"]
    refused = run("job", "api-summary", env=env)
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    assert "holds another report" in refused.output


def duckdb_count(db) -> int:
    """int_slices rows of a NAME.duckdb (what the merge counted)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM int_slices").fetchall()[0][0]
    finally:
        con.close()


# --- names as the user sees them: whole, literal ------------------------------

LONG = "void flash::fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false>, " + ", ".join(
    f"cute::tuple<cute::C<{i}>, cute::C<{i * 2}>>" for i in range(1, 7)
)
HOSTILE = [
    "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_"
    "alignc4_execute_kernel__5x_cublas",
    LONG,
    "emoji_:smile:_kernel",
    "markup_[bold]loud[/bold]_kernel",
    "void k<T*, a|b, *bold*>(`x`)",
    "ctrl\x01byte",
]


@pytest.fixture(scope="module")
def hostile_names(tmp_path_factory):
    """A synthetic export (Nsight's exact types) whose 6 kernels are named
    as above, converted: its workspace folder."""
    from conftest import EPOCH, gtid, make_export

    root = tmp_path_factory.mktemp("names")
    strings = [{"id": 1, "value": "cudaLaunchKernel_v7000"}]
    strings += [{"id": 10 + i, "value": name} for i, name in enumerate(HOSTILE)]
    kernels = [
        {
            "start": EPOCH + 1000 * (i + 1),
            "end": EPOCH + 1000 * (i + 1) + 500 - 10 * i,  # a distinct time each: row order
            "deviceId": 0,
            "contextId": 1,
            "streamId": 7,
            "correlationId": i + 1,
            "globalPid": gtid(100),
            "shortName": 10 + i,
            "demangledName": 10 + i,
            "gridX": 1,
            "gridY": 1,
            "gridZ": 1,
            "blockX": 32,
            "blockY": 1,
            "blockZ": 1,
        }
        for i in range(len(HOSTILE))
    ]
    export = make_export(
        root / "in" / "names" / "parquet",
        {"StringIds": strings, "CUPTI_ACTIVITY_KIND_KERNEL": kernels},
    )
    return convert(export, Options(), root=root / "ws").workspace.dir


def _on_a_terminal(args: list[str], columns: int) -> str:
    """``nsys-duck ARGS`` with its stdout on a pseudo-terminal ``columns``
    wide (COLUMNS too): what it printed, ANSI styles removed."""
    import fcntl
    import os
    import pty
    import struct
    import sys
    import termios
    from pathlib import Path

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    exe = Path(sys.executable).with_name("nsys-duck")
    env = dict(os.environ, COLUMNS=str(columns), TERM="xterm")
    proc = subprocess.Popen([str(exe), *args], stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).replace("\r\n", "\n")


def _names_on_a_terminal(ws, columns: int, limit: int = 10) -> tuple[list[str], str]:
    """top-kernels of ``ws`` on a terminal ``columns`` wide: each row's Name
    cell, its lines joined without spaces; and the whole text."""
    text = _on_a_terminal(["report", str(ws), "top-kernels", "--limit", str(limit)], columns)
    lines = text.splitlines()
    at = lines[0].index("Name")
    assert all(len(line.rstrip()) <= columns for line in lines), text
    names: list[list[str]] = []
    for line in lines[2:]:
        if line[:at].strip():  # a row's first line: its numbers
            names.append([])
        names[-1].append(line[at:].rstrip())
    return ["".join(parts).replace(" ", "") for parts in names], text


def test_a_narrow_terminal_wraps_real_kernel_names_whole(tmp_path):
    """On a 140-column terminal the Name column wraps the long cuBLAS and
    ATen kernel names of a real H100 capture: every character is there, in
    order (a line breaks at a space, the break, or inside a word). Before,
    rich's fold dropped the character at each break (..._tn_n_t / lesize...)."""
    src = NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite"
    if not src.is_file():
        pytest.skip("newer exports missing")
    ws = convert(src, Options(), root=tmp_path).workspace
    expected = [r["Name"].replace(" ", "") for r in ours(ws, "top-kernels", "--limit", "10")]
    assert max(len(n) for n in expected) > 100  # names longer than the column
    shown, _ = _names_on_a_terminal(ws.dir, 140)
    assert shown == expected


def test_names_are_shown_not_rendered(hostile_names):
    """A kernel named with a rich emoji code, rich markup or a control byte
    is printed as written (the byte escaped), never as an emoji or a style."""
    shown, text = _names_on_a_terminal(hostile_names, 140)
    assert shown == [n.replace(" ", "").replace("\x01", "\\x01") for n in HOSTILE], shown
    assert "😄" not in text and ":smile:" in text and "[bold]loud[/bold]" in text
    assert "\x01" not in text


def test_markdown_escapes_what_markdown_reads(hostile_names):
    """--format markdown: <, *, |, `, [ ], _ and control bytes of a name are
    escaped (a raw | splits the row, < starts an HTML tag, * emphasis, a
    control byte garbles the table), so each row keeps its 9 cells and
    reads back as the name."""
    md = run(str(hostile_names), "top-kernels", "--format", "markdown").output.splitlines()
    rows = md[2:]
    assert len(rows) == len(HOSTILE)
    assert all(len(re.findall(r"(?<!\\)\|", r)) == 10 for r in rows), rows
    assert not any(c in "\x01" for c in "".join(md))
    names = [re.split(r"(?<!\\)\|", r)[-2].strip() for r in rows]
    unescaped = {re.sub(r"\\(.)", r"\1", n) for n in names}
    assert unescaped == {n.replace("\x01", "\\x01") for n in HOSTILE}
    assert r"void k\<T\*, a\|b, \*bold\*\>(\`x\`)" in names
