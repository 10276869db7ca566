"""Issue 13, a workbench users can trust: each workspace's own data every time.

- the manifest (NAME/nsys-duck.json): a different report of the same name is
  never served the previous report's export; -o chooses the folder;
- NAME.duckdb is self-contained: ATTACH any number, from any folder, after
  moving the workspace, each reads its own report;
- NAME.duckdb opens in the DuckDB CLI from PyPI (duckdb-cli 1.5) and the
  pipeline runs on Python's DuckDB 1.4 (tests/test_duckdb_versions.py);
- nsys-duck sql: Ctrl-C, formats written by DuckDB, whole tables when piped,
  a workspace folder or NAME.duckdb as NAME, the DuckDB CLI as the prompt;
- sql-files --copy keeps the user's edits; temporary folders are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from test_hostile import assert_converts, assert_fails, need_nsys, run_cli, summary

from conftest import REPORTS
from nsys_duck import manifest

RODINIA = REPORTS / "rodinia_gaussian_8k_kernels" / "parquet"
CUFCM = REPORTS / "cufcm_memset" / "parquet"
THREEBODY_REP = REPORTS / "threebody_2023_3" / "threebody_2023_3.nsys-rep"
LLMC_REP = REPORTS / "llmc_t4_no_kernel_table" / "llmc_t4_no_kernel_table.nsys-rep"
CLI = Path(sys.executable).parent / "duckdb"


def kernels_in(export: Path) -> int:
    """Rows of the export's kernel table (0 when it has none)."""
    f = export / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    return pq.read_metadata(f).num_rows if f.exists() else 0


def export_copy(src: Path, dest: Path) -> Path:
    """A copy of an export folder named ``dest`` (times kept, like cp -p)."""
    shutil.copytree(src, dest, copy_function=shutil.copy2)
    return dest


# --- 1. the manifest -----------------------------------------------------------


def test_same_name_different_report_is_refused_and_o_converts_it(tmp_path):
    a = export_copy(RODINIA, tmp_path / "a" / "report1")
    b = export_copy(CUFCM, tmp_path / "b" / "report1")
    assert kernels_in(a) != kernels_in(b)
    json_gz = assert_converts(tmp_path, run_cli(tmp_path, "convert", a), "report1")
    before = json_gz.read_bytes()
    refused = run_cli(tmp_path, "convert", b)
    line = assert_fails(refused, "holds the conversion of a different report")
    assert str(a) in line and "-o DIR" in line and "--force" in line
    assert json_gz.read_bytes() == before, "the refused run changed the workspace"
    own = tmp_path / "own"
    out = run_cli(tmp_path, "convert", "-o", own, b)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == str(own / "report1.perfetto.json.gz")
    con = duckdb.connect(str(own / "report1.duckdb"), read_only=True)
    assert con.sql("SELECT count(*) FROM stg_kernels").fetchall()[0][0] == kernels_in(b)
    forced = run_cli(tmp_path, "convert", "--force", b)
    assert forced.returncode == 0, forced.stderr
    assert f"note: --force: replaced the conversion of {a}" in forced.stdout
    assert summary(forced)["kernels"] == f"{kernels_in(b):,}"
    assert json.loads((json_gz.parent / manifest.FILE_NAME).read_text())["source"]["path"] == str(b)


def test_a_renamed_report_with_an_old_mtime_is_exported_again(tmp_path):
    """The issue's case, with SQLite exports (no nsys): report1 replaced by
    another capture copied with its old timestamp (cp -p) at the same path."""
    from paths import NEWER

    smaller, bigger = sorted(NEWER.rglob("*.sqlite"), key=lambda p: p.stat().st_size)[:2]
    src = tmp_path / "in" / "report1.sqlite"
    src.parent.mkdir()
    shutil.copy2(smaller, src)
    first = run_cli(tmp_path, "convert", src)
    assert_converts(tmp_path, first, "report1")
    old = src.stat()
    shutil.copy2(bigger, src)
    os.utime(src, ns=(old.st_atime_ns, old.st_mtime_ns - 10**9))  # older than parquet/
    again = run_cli(tmp_path, "convert", src)
    assert_converts(tmp_path, again, "report1")
    assert "export: transcribed SQLite export" in again.stdout
    assert "note: the report changed since the last conversion" in again.stdout
    data = json.loads((tmp_path / "ws" / "report1" / manifest.FILE_NAME).read_text())
    assert data["source"]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert summary(first) != summary(again)
    # same content from another path: reused, and said so
    copy = tmp_path / "elsewhere" / "report1.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(src, copy)
    reused = run_cli(tmp_path, "convert", copy)
    assert_converts(tmp_path, reused, "report1")
    assert "export: reused" in reused.stdout and "same content, sha256" in reused.stdout
    assert summary(reused) == summary(again)


@pytest.mark.nsys
def test_nsys_report_replaced_with_old_timestamp_is_exported_again(tmp_path):
    """Before: 'export: reused ...' and the previous report's trace."""
    need_nsys()
    src = tmp_path / "in" / "report1.nsys-rep"
    src.parent.mkdir()
    shutil.copy2(THREEBODY_REP, src)
    first = run_cli(tmp_path, "convert", "--timings", src)
    assert_converts(tmp_path, first, "report1")
    assert "time nsys export" in first.stdout
    shutil.copy2(LLMC_REP, src)  # cp -p: llmc's mtime, older than parquet/
    again = run_cli(tmp_path, "convert", "--timings", src)
    assert_converts(tmp_path, again, "report1")
    assert "export: reused" not in again.stdout and "nsys: " in again.stdout
    assert (
        summary(again)["kernels"]
        == summary(run_cli(tmp_path, "convert", "-o", tmp_path / "llmc", LLMC_REP))["kernels"]
    )
    third = run_cli(tmp_path, "convert", "--timings", src)
    assert "export: reused" in third.stdout and "time reuse the export" in third.stdout
    data = json.loads((tmp_path / "ws" / "report1" / manifest.FILE_NAME).read_text())
    assert data["source"]["path"] == str(src)
    assert data["source"]["size"] == src.stat().st_size
    assert data["export"]["nsys_version"] and data["conversion"]["nsys_duck_version"]
    assert data["conversion"]["options"]["nvtx_scope"] == "thread"


def test_special_characters_in_the_name(tmp_path):
    """'?' made DuckDB open NAME.duckdb's WAL elsewhere; '*' '[' are globs."""
    odd = export_copy(RODINIA, tmp_path / "in" / "run?1*[x]")
    out = run_cli(tmp_path, "convert", odd)
    assert_converts(tmp_path, out, "run_1__x_")


# --- 2. NAME.duckdb reads no file ----------------------------------------------


def test_attached_databases_each_read_their_own_report(tmp_path):
    for src in (RODINIA, CUFCM):
        assert run_cli(tmp_path, "convert", src).returncode == 0
    a = tmp_path / "ws" / "rodinia_gaussian_8k_kernels" / "rodinia_gaussian_8k_kernels.duckdb"
    b = tmp_path / "ws" / "cufcm_memset" / "cufcm_memset.duckdb"
    moved = tmp_path / "moved"
    for where, paths in (("first", (a, b)), ("moved", None)):
        if paths is None:  # move both workspace folders, ask again from elsewhere
            shutil.move(str(a.parent), moved / "x")
            paths = (moved / "x" / a.name, b)
        cwd = tmp_path / "elsewhere" if where == "first" else a.parent.parent
        cwd.mkdir(parents=True, exist_ok=True)
        script = (
            "import duckdb\n"
            "con = duckdb.connect()\n"
            f"con.execute(\"ATTACH '{paths[0]}' AS a (READ_ONLY)\")\n"
            f"con.execute(\"ATTACH '{paths[1]}' AS b (READ_ONLY)\")\n"
            "print(con.sql('SELECT (SELECT count(*) FROM a.main.stg_kernels), "
            "(SELECT count(*) FROM b.main.stg_kernels), "
            "(SELECT count(*) FROM a.nsys.CUPTI_ACTIVITY_KIND_KERNEL)').fetchall()[0])\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == str(
            (kernels_in(RODINIA), kernels_in(CUFCM), kernels_in(RODINIA))
        ), where
    con = duckdb.connect(str(b), read_only=True)
    views = con.sql("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall()
    assert views and not [v for (v,) in views if "read_parquet" in v or "parquet/" in v]


# --- 3. the DuckDB CLI from PyPI opens it --------------------------------------


def test_duckdb_cli_from_pypi_opens_the_database(tmp_path):
    assert CLI.is_file(), "duckdb-cli (a dependency) installs the DuckDB CLI beside python"
    version = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout
    assert version.startswith("v1."), version  # the CLI on PyPI is 1.x
    assert run_cli(tmp_path, "convert", CUFCM).returncode == 0
    db = tmp_path / "ws" / "cufcm_memset" / "cufcm_memset.duckdb"
    con = duckdb.connect(str(db), read_only=True)
    objects = con.sql(
        "SELECT schema_name, table_name FROM duckdb_tables() UNION ALL "
        "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal "
        "ORDER BY ALL"
    ).fetchall()
    counts = {
        f"{s}.{n}": con.sql(f'SELECT count(*) FROM "{s}"."{n}"').fetchall()[0][0]
        for s, n in objects
    }
    con.close()
    query = " UNION ALL ".join(
        f'SELECT \'{s}.{n}\' AS obj, count(*) AS n FROM "{s}"."{n}"' for s, n in objects
    )
    out = subprocess.run(
        [CLI, "-readonly", "-json", str(db), "-c", query],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert {r["obj"]: r["n"] for r in json.loads(out.stdout)} == counts
    assert counts["main.trace_slices"] > 0 and len(counts) > 60


# --- 4. nsys-duck sql ------------------------------------------------------------


@pytest.fixture(scope="module")
def converted_cufcm(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sql")
    assert run_cli(tmp, "convert", CUFCM).returncode == 0
    return tmp


def test_sql_formats_are_written_by_duckdb(converted_cufcm):
    tmp = converted_cufcm
    ws = tmp / "ws" / "cufcm_memset"
    q = "SELECT slice_id, cat, nvtx_ids, nvtx_names FROM trace_slices ORDER BY slice_id"
    n = (
        duckdb.connect(str(ws / "cufcm_memset.duckdb"), read_only=True)
        .sql("SELECT count(*) FROM trace_slices")
        .fetchall()[0][0]
    )
    csv = run_cli(tmp, "sql", "cufcm_memset", "-c", q, "--format", "csv")
    assert csv.returncode == 0, csv.stderr  # list columns crashed pyarrow's CSV
    assert csv.stdout.splitlines()[0] == "slice_id,cat,nvtx_ids,nvtx_names"
    assert len(csv.stdout.splitlines()) == n + 1
    js = run_cli(tmp, "sql", str(ws), "-c", q, "--format", "json")
    rows = json.loads(js.stdout)
    assert len(rows) == n and isinstance(rows[0]["nvtx_ids"], (list, type(None)))
    pq_out = tmp / "out.parquet"
    run_cli(
        tmp, "sql", str(ws / "cufcm_memset.duckdb"), "-c", q, "--format", "parquet", "-o", pq_out
    )
    assert pq.read_metadata(pq_out).num_rows == n


def test_sql_table_piped_shows_every_row_and_column(converted_cufcm):
    tmp = converted_cufcm
    out = run_cli(tmp, "sql", "cufcm_memset", "-c", "SELECT * FROM trace_slices")
    assert out.returncode == 0, out.stderr
    con = duckdb.connect(str(tmp / "ws" / "cufcm_memset" / "cufcm_memset.duckdb"), read_only=True)
    n = con.sql("SELECT count(*) FROM trace_slices").fetchall()[0][0]
    cols = [c for (c,) in con.sql("SELECT column_name FROM (DESCRIBE trace_slices)").fetchall()]
    assert n > 100
    header = out.stdout.splitlines()[1]
    assert [c for c in cols if c not in header] == []
    assert "│" in out.stdout and len(out.stdout.splitlines()) >= n + 4
    assert "rows" not in out.stdout.splitlines()[-1] or "shown" not in out.stdout


def wait_until_open(proc: subprocess.Popen, path: Path, timeout: float = 120) -> None:
    """Wait until ``proc`` holds ``path`` open (its imports are done and its
    work has begun: a fixed sleep lost that race on a loaded machine, and a
    Ctrl-C during Python's imports is another test's), then 1 s more."""
    want = os.path.realpath(path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the command ended before Ctrl-C"
        try:
            fds = os.listdir(f"/proc/{proc.pid}/fd")
            held = {os.path.realpath(f"/proc/{proc.pid}/fd/{fd}") for fd in fds}
        except OSError:  # an fd closed while listed
            held = set()
        if want in held:
            time.sleep(1)
            return
        time.sleep(0.05)
    raise AssertionError(f"the command never opened {path} within {timeout} s")


def test_ctrl_c_while_the_cli_loads_is_one_line():
    """The console script's entry (nsys_duck.entry): a Ctrl-C during the
    CLI's imports (here raised by an import hook, deterministically) ends
    with the one line and 130, not a traceback."""
    code = (
        "import sys\n"
        "class Stop:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name == 'nsys_duck.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop)\n"
        "from nsys_duck.entry import main\n"
        "main()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 130, out.stderr
    assert out.stderr.strip() == "nsys-duck: interrupted"


def test_sql_ctrl_c_stops_the_query(converted_cufcm):
    """timeout -s INT used to never stop; DuckDB may ignore SIGINT itself."""
    tmp = converted_cufcm
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp / "ws"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nsys_duck.cli",
            "sql",
            "cufcm_memset",
            "-c",
            "SELECT sum(hash(a)) FROM range(100000000000) t(a)",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_open(proc, tmp / "ws" / "cufcm_memset" / "cufcm_memset.duckdb")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 10
    assert err.strip() == "nsys-duck: interrupted"


def test_sql_prompt_is_the_duckdb_cli(converted_cufcm, tmp_path):
    tmp = converted_cufcm
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp / "ws"), TMPDIR=str(tmp_path))
    stdin = "SELECT count(*) AS kernels FROM stg_kernels;\n.mode csv\nSELECT 41 + 1;\n"
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "sql", "cufcm_memset"],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert f"{kernels_in(CUFCM)}" in out.stdout and "42" in out.stdout
    assert "DuckDB CLI on" in out.stderr
    # an export folder never converted: built into a temporary database, removed after
    other = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "sql", str(RODINIA)],
        input="SELECT count(*) FROM stg_kernels;\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert other.returncode == 0, other.stderr
    assert f"{kernels_in(RODINIA)}" in other.stdout
    assert list(tmp_path.iterdir()) == []


def test_sql_prompt_without_the_duckdb_cli_says_how_to_get_it(monkeypatch, tmp_path):
    """No DuckDB CLI (1.4 or newer) beside Python or on PATH: one sentence on
    how to get one, exit status 2 (a usage error), before any workspace is
    opened or built."""
    from click.testing import CliRunner

    from nsys_duck import cli, sqlrun

    monkeypatch.setattr(sqlrun, "duckdb_cli", lambda: None)
    monkeypatch.setenv("NSYS_WORKSPACE_ROOT", str(tmp_path))
    res = CliRunner().invoke(cli.main, ["sql", "no_such_workspace"])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert res.stderr == (
        "nsys-duck: the interactive prompt is the DuckDB CLI (1.4 or newer), which is not "
        "installed beside this Python or on PATH: install it with pip install duckdb-cli, "
        "or give the query with -c SQL\n"
    )


def test_sql_errors_are_one_sentence(converted_cufcm):
    tmp = converted_cufcm
    bad = run_cli(tmp, "sql", "cufcm_memset", "-c", "SELECT * FROM no_such_view")
    assert_fails(bad, "SQL error: Catalog Error")
    missing = run_cli(tmp, "sql", "no_such_workspace", "-c", "SELECT 1")
    assert_fails(missing, "no such file or directory, and no workspace", status=2)


# --- 5. sql-files --copy keeps edits -------------------------------------------


def test_sql_files_copy_refuses_a_folder_with_edits(tmp_path):
    dest = tmp_path / "mysql"
    assert run_cli(tmp_path, "sql-files", "--copy", dest).returncode == 0
    edited = dest / "30_intermediate" / "50_tracks" / "50_int_flows.sql"
    edited.write_text(edited.read_text() + "\n-- my edit\n")
    again = run_cli(tmp_path, "sql-files", "--copy", dest)
    assert_fails(again, "not empty")
    assert edited.read_text().endswith("-- my edit\n")
    forced = run_cli(tmp_path, "sql-files", "--copy", dest, "--force")
    assert forced.returncode == 0 and "-- my edit" not in edited.read_text()


# --- 10. Ctrl-C in validate ------------------------------------------------------


def test_validate_ctrl_c_exits_130(tmp_path):
    """A trace big enough to take seconds (3M slices, written by DuckDB)."""
    trace = tmp_path / "big.perfetto.json.gz"
    duckdb.sql(f"""COPY (SELECT 'X' AS ph, 'k' AS name, 'kernel' AS cat, 1 AS pid,
                       1 AS tid, range * 2.0 AS ts, 1.0 AS dur FROM range(3000000))
                 TO '{trace}' (FORMAT json, ARRAY true, COMPRESSION gzip)""")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nsys_duck.cli", "validate", trace],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_open(proc, trace)
    assert proc.poll() is None, "validate finished before Ctrl-C"
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "nsys-duck: interrupted"


# --- found by a newcomer's review (each failed before the fix) -------------------

ALPA = REPORTS / "alpa_dev1_2_memcpy" / "parquet"  # has OSRT_API, not drawn


def test_a_report_path_never_finds_another_reports_workspace(tmp_path):
    a = export_copy(RODINIA, tmp_path / "a" / "report1")
    b = export_copy(CUFCM, tmp_path / "b" / "report1")
    assert run_cli(tmp_path, "convert", a).returncode == 0
    assert run_cli(tmp_path, "convert", "-o", tmp_path / "bws", b).returncode == 0
    for command in (["sql", b, "-c", "SELECT 1"], ["views", b]):  # a usage error, as validate
        assert_fails(run_cli(tmp_path, *command), f"holds another report, {a}", status=2)
    assert_fails(run_cli(tmp_path, "validate", b), "holds another report", status=2)
    assert_fails(run_cli(tmp_path, "open", "--no-browser", b), "holds another report")
    # the report's own workspace folder, and the same content elsewhere, work
    own = run_cli(
        tmp_path,
        "sql",
        tmp_path / "bws",
        "-c",
        "SELECT count(*) AS n FROM stg_kernels",
        "--format",
        "csv",
    )
    assert own.stdout.splitlines() == ["n", str(kernels_in(CUFCM))]
    same = export_copy(RODINIA, tmp_path / "c" / "report1")
    ok = run_cli(
        tmp_path, "sql", same, "-c", "SELECT count(*) AS n FROM stg_kernels", "--format", "csv"
    )
    assert ok.stdout.splitlines() == ["n", str(kernels_in(RODINIA))]


def test_sql_output_keeps_its_place_and_pipes_close_quietly(converted_cufcm):
    tmp = converted_cufcm
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp / "ws"))
    nd = f"{sys.executable} -m nsys_duck.cli"
    script = (
        f'echo previous > acc.csv; {nd} sql cufcm_memset -c "SELECT 42 AS x" '
        f"--format csv >> acc.csv; {{ echo BEFORE; {nd} sql cufcm_memset -c "
        f'"SELECT 42 AS x" --format json; echo AFTER; }} > g.txt; '
        f'{nd} sql cufcm_memset -c "SELECT * FROM trace_slices" | head -1 > /dev/null; '
        'echo "table ${PIPESTATUS[0]}"; '
        f'{nd} sql cufcm_memset -c "SELECT * FROM trace_slices" --format csv | head -1 '
        '> /dev/null; echo "csv ${PIPESTATUS[0]}"'
    )
    out = subprocess.run(
        ["bash", "-c", script], cwd=tmp, env=env, capture_output=True, text=True, timeout=300
    )
    assert (tmp / "acc.csv").read_text() == "previous\nx\n42\n"
    text = (tmp / "g.txt").read_text()
    assert text.startswith("BEFORE\n") and text.endswith("AFTER\n")
    assert json.loads(text[len("BEFORE\n") : -len("AFTER\n")]) == [{"x": 42}]
    assert "table 0" in out.stdout and "csv 0" in out.stdout, out.stdout
    assert out.stderr == "", out.stderr
    several = run_cli(
        tmp, "sql", "cufcm_memset", "-c", "SELECT 1; SELECT 2 AS two", "--format", "csv"
    )
    assert several.returncode == 0 and several.stdout == "two\n2\n", several.stderr


def test_no_database_run_removes_the_old_database_and_sql_rebuilds_with_its_options(tmp_path):
    keras = REPORTS / "keras_darknet53_nvtx_startend" / "parquet"
    assert run_cli(tmp_path, "convert", keras).returncode == 0
    ws = tmp_path / "ws" / "keras_darknet53_nvtx_startend"
    out = run_cli(tmp_path, "convert", "--no-database", "--nvtx-scope", "process", keras)
    assert out.returncode == 0, out.stderr
    assert not (ws / f"{ws.name}.duckdb").exists()
    owned = duckdb.sql(
        f"SELECT count(*) FROM '{ws}/{ws.name}.perfetto.parquet' WHERE len(nvtx_ids) > 0"
    ).fetchall()[0][0]
    got = run_cli(
        tmp_path,
        "sql",
        ws.name,
        "-c",
        "SELECT count(*) AS n FROM trace_slices WHERE len(nvtx_ids) > 0",
        "--format",
        "csv",
    )
    assert got.stdout.splitlines() == ["n", str(owned)], got.stderr


def test_replacing_a_workspace_leaves_no_old_output(tmp_path):
    """A workspace of nsys-duck 0.1 (no manifest) whose next conversion fails,
    and -o --force over a workspace of another NAME."""
    a = export_copy(RODINIA, tmp_path / "a" / "report1")
    b = export_copy(CUFCM, tmp_path / "b" / "report1")
    assert run_cli(tmp_path, "convert", a).returncode == 0
    ws = tmp_path / "ws" / "report1"
    (ws / manifest.FILE_NAME).unlink()
    broken = tmp_path / "broken-sql"
    (broken / "40_trace").mkdir(parents=True)
    (broken / "40_trace" / "99_broken.sql").write_text("SELECT * FROM no_such_table;\n")
    assert run_cli(tmp_path, "convert", "--sql-dir", broken, b).returncode == 1
    assert not list(ws.glob("report1.*")), "report A's outputs outlived its export"
    assert json.loads((ws / manifest.FILE_NAME).read_text())["conversion"] is None
    other = tmp_path / "other"
    export_copy(CUFCM, tmp_path / "c" / "cufcm")
    assert run_cli(tmp_path, "convert", "-o", other, tmp_path / "c" / "cufcm").returncode == 0
    refused = run_cli(tmp_path, "convert", "-o", other, a)
    assert "another file with the same name" not in assert_fails(refused, "different report")
    assert run_cli(tmp_path, "convert", "-o", other, "--force", a).returncode == 0
    assert sorted(p.name for p in other.glob("*.*") if not p.name.startswith(".")) == [
        "nsys-duck.json",
        "report1.duckdb",
        "report1.kernel_dependencies.parquet",
        "report1.perfetto.json.gz",
        "report1.perfetto.parquet",
    ]


def test_sql_dir_table_macro_keeps_its_export_table(tmp_path):
    extra = tmp_path / "extra"
    (extra / "40_trace").mkdir(parents=True)
    (extra / "40_trace" / "90_my_osrt.sql").write_text(
        "-- my_osrt: OS runtime calls, through a table macro.\n"
        "CREATE OR REPLACE MACRO osrt_rows() AS TABLE SELECT * FROM nsys.OSRT_API;\n"
        "CREATE OR REPLACE VIEW my_osrt AS SELECT count(*) AS n FROM osrt_rows();\n"
    )
    out = run_cli(tmp_path, "convert", "--sql-dir", extra, ALPA)
    assert out.returncode == 0, out.stderr
    ws = tmp_path / "ws" / "alpa_dev1_2_memcpy"
    shutil.rmtree(ws / "parquet")
    con = duckdb.connect(str(ws / "alpa_dev1_2_memcpy.duckdb"), read_only=True)
    rows = pq.read_metadata(ALPA / "OSRT_API.parquet").num_rows
    assert rows > 0 and con.sql("SELECT n FROM my_osrt").fetchall() == [(rows,)]


def test_one_sentence_for_a_bad_database_a_locked_one_and_bad_folders(tmp_path):
    assert run_cli(tmp_path, "convert", CUFCM).returncode == 0
    db = tmp_path / "ws" / "cufcm_memset" / "cufcm_memset.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; "
            "c = duckdb.connect(sys.argv[1]); print('open', flush=True); "
            "time.sleep(60)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        assert_fails(
            run_cli(tmp_path, "sql", "cufcm_memset", "-c", "SELECT 1"),
            "is open for writing in another program",
        )
    finally:
        holder.kill()
        holder.wait()
    db.write_bytes(b"junk" * 100)
    for command in (["sql", "cufcm_memset", "-c", "SELECT 1"], ["views", "cufcm_memset"]):
        assert_fails(run_cli(tmp_path, *command), "cannot open cufcm_memset.duckdb")
    assert_fails(
        run_cli(tmp_path, "sql-files", "--copy", "/proc/nsys-duck-sql"), "cannot write there"
    )
    typo = run_cli(tmp_path, "convert", "--sql-dir", tmp_path / "typo", CUFCM)
    assert typo.returncode == 2 and "does not exist" in typo.stderr


def test_a_symlink_names_the_workspace(tmp_path):
    from paths import NEWER

    src = next(NEWER.rglob("testcuda_streams_events_2026_1.sqlite"))
    link = tmp_path / "mymodel.sqlite"
    link.symlink_to(src)
    assert_converts(tmp_path, run_cli(tmp_path, "convert", link), "mymodel")


def test_sigterm_during_sql_leaves_no_temporary(converted_cufcm, tmp_path):
    tmp = converted_cufcm
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp / "ws"), TMPDIR=str(tmp_path))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nsys_duck.cli",
            "sql",
            "cufcm_memset",
            "-c",
            "SELECT sum(hash(a)) FROM range(100000000000) t(a)",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert list(tmp_path.iterdir()) == []
