"""Nsight SQLite exports (``nsys export --type=sqlite``) as conversion inputs.

A ``.sqlite`` is transcribed into a Parquet export folder
(``nsys_duck/sqlite_export.py``) and then converted like one. Checked here:
the six real newer exports convert (row counts and stand-in column types of
the transcription), an SQLite export made by the real nsys converts to
exactly what the same report's Parquet export gives, the type witness and
type handling on a synthetic SQLite built with Nsight's real DDL, hostile
inputs through the CLI, ``OUT_pqtdir`` folders, and the sentence for a
report newer than the installed nsys.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import stat
import subprocess
from contextlib import closing
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_hostile import (
    PNG,
    assert_converts,
    assert_fails,
    fake_nsys,
    need_nsys,
    run_cli,
    sha256,
    summary,
    ws_files,
)

from conftest import EPOCH, REPORTS, gtid, make_export
from nsys_duck import pipeline, sources, sqlite_export
from nsys_duck.convert import Options, convert, standin_columns
from nsys_duck.errors import ExportDataError
from nsys_duck.sqlite_export import ARROW_OF_DUCKDB, MARKER, transcribe
from paths import NEWER

NEWER_SQLITE = sorted(NEWER.glob("*/*.sqlite"))
# the oldest newer schema (3.16.1): its NVTX_EVENTS has binaryData
DDL_SOURCE = NEWER / "fuser_h100x8_2024_6" / "fuser_h100x8_2024_6.sqlite"
SMALL_SQLITE = NEWER / "testcuda_streams_events_2026_1" / "testcuda_streams_events_2026_1.sqlite"
THREEBODY = REPORTS / "threebody_2023_3" / "threebody_2023_3.nsys-rep"


def expected_columns() -> sources.Expected:
    return standin_columns(pipeline.sql_files(None), Options())


def sqlite_row_counts(path: Path) -> dict[str, int]:
    """Rows per table, read with Python's own sqlite3 (not the code under test)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
            )
        ]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def sqlite_columns(path: Path, table: str) -> list[str]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        return [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]


def parquet_row_counts(folder: Path) -> dict[str, int]:
    return {p.stem: pq.ParquetFile(p).metadata.num_rows for p in sorted(folder.glob("*.parquet"))}


# --- the six real newer exports ------------------------------------------------


@pytest.mark.parametrize("path", NEWER_SQLITE, ids=[p.stem for p in NEWER_SQLITE])
def test_newer_sqlite_export_converts(tmp_path, path):
    res = convert(path, Options(), root=tmp_path)
    assert res.validated and res.source.kind == "sqlite" and not res.export_reused
    assert res.workspace.name == path.stem and res.nsys_version is None
    folder = res.workspace.parquet_dir
    # one file per table with rows, as many rows as the SQLite table
    counts = sqlite_row_counts(path)
    assert parquet_row_counts(folder) == {t: n for t, n in counts.items() if n}
    assert json.loads((folder / MARKER).read_text())["source"] == str(path)
    # every stand-in column the SQLite table has, with the stand-in's type
    checked = 0
    for table, columns in expected_columns().items():
        if not counts.get(table):
            continue
        schema = pq.read_schema(folder / f"{table}.parquet")
        present = sqlite_columns(path, table)
        for col in columns:
            if col.name in present:
                assert schema.field(col.name).type == ARROW_OF_DUCKDB[col.type], (
                    table,
                    col.name,
                    col.type,
                )
                checked += 1
            else:
                assert col.name not in schema.names
    assert checked >= 20
    if "binaryData" in sqlite_columns(path, "NVTX_EVENTS"):
        assert "binaryData" not in pq.read_schema(folder / "NVTX_EVENTS.parquet").names


# --- same report, SQLite export vs Parquet export (real nsys) --------------------


def _aligned_rows(res) -> list[dict]:
    rows = pq.read_table(res.workspace.events_parquet).drop_columns(["slice_id"]).to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _sorted_events(res) -> tuple[list[str], list[str]]:
    """(events without an id, flows), each sorted. A flow is its events without
    their id: ids are GPU slice ids, which differ between runs of the same input
    (slices with equal sort keys), so only which events an id links is compared."""
    with gzip.open(res.workspace.json_gz, "rb") as f:
        events = json.loads(f.read())
    plain, flows = [], {}
    for e in events:
        if "id" in e:
            rest = json.dumps({k: v for k, v in e.items() if k != "id"}, sort_keys=True)
            flows.setdefault((e.get("cat"), e["id"]), []).append(rest)
        else:
            plain.append(json.dumps(e, sort_keys=True))
    return sorted(plain), sorted(json.dumps(sorted(f)) for f in flows.values())


def _summary_without_export_lines(res) -> dict:
    return {m: v for m, v in res.summary if "export" not in m.lower()}


@pytest.mark.nsys
@pytest.mark.parametrize(
    "report",
    [
        "raiderstream_tiny/raiderstream_tiny.qdrep",
        "rodinia_gaussian_8k_kernels/rodinia_gaussian_8k_kernels.nsys-rep",
    ],
)
def test_sqlite_export_converts_like_the_parquet_export(tmp_path, report):
    nsys = need_nsys()
    name = Path(report).name.rsplit(".", 1)[0]
    db = tmp_path / f"{name}.sqlite"
    subprocess.run(
        [
            str(nsys.path),
            "export",
            "--type=sqlite",
            "--ts-normalize=true",
            "-f",
            "true",
            "-q",
            "true",
            "-o",
            str(db),
            str(REPORTS / report),
        ],
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    via_sqlite = convert(db, Options(), root=tmp_path / "a")
    via_parquet = convert(REPORTS / name / "parquet", Options(), root=tmp_path / "b")
    assert via_sqlite.validated and via_parquet.validated
    rows = _aligned_rows(via_sqlite)
    assert len(rows) > 30
    assert rows == _aligned_rows(via_parquet)
    assert _summary_without_export_lines(via_sqlite) == _summary_without_export_lines(via_parquet)
    plain, flows = _sorted_events(via_sqlite)
    assert len(plain) >= len(rows) and all(len(json.loads(f)) == 2 for f in flows)
    assert (plain, flows) == _sorted_events(via_parquet)
    assert via_sqlite.base_ns == via_parquet.base_ns


# --- a synthetic SQLite with Nsight's real DDL --------------------------------------


class RawText(bytes):
    """Bytes stored as TEXT (not BLOB), e.g. invalid UTF-8 as nsys may write it."""


TABLES = (
    "StringIds",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "NVTX_EVENTS",
    "META_DATA_EXPORT",
    "TARGET_INFO_SESSION_START_TIME",
)
HIGH_TID = (1 << 63) | gtid(100, 101)  # a globalTid SQLite stores as a negative int64


def real_ddl(*tables: str) -> list[str]:
    with closing(sqlite3.connect(f"file:{DDL_SOURCE}?mode=ro", uri=True)) as con:
        return [
            con.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (t,)
            ).fetchone()[0]
            for t in tables
        ]


def as_sqlite_int(v):
    return v - (1 << 64) if isinstance(v, int) and v >= 1 << 63 else v


def make_sqlite(path: Path, rows: dict[str, list[dict]]) -> Path:
    """An SQLite export with the real 2024.6 DDL of ``TABLES`` and these rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as con:
        for ddl in real_ddl(*TABLES):
            con.execute(ddl)
        for table, table_rows in rows.items():
            for row in table_rows:
                cols = ", ".join(f'"{c}"' for c in row)
                marks = ", ".join(
                    "CAST(? AS TEXT)" if isinstance(v, RawText) else "?" for v in row.values()
                )
                con.execute(
                    f'INSERT INTO "{table}" ({cols}) VALUES ({marks})',
                    [
                        bytes(v) if isinstance(v, RawText) else as_sqlite_int(v)
                        for v in row.values()
                    ],
                )
        con.commit()
    return path


def kernel_row(t0, t1, corr=1, **kw):
    row = {
        "start": EPOCH + t0,
        "end": EPOCH + t1,
        "deviceId": 0,
        "contextId": 1,
        "streamId": 7,
        "correlationId": corr,
        "globalPid": gtid(100),
        "demangledName": 2,
        "shortName": 2,
        "registersPerThread": 32,
        "gridX": 4,
        "gridY": 1,
        "gridZ": 1,
        "blockX": 256,
        "blockY": 1,
        "blockZ": 1,
        "staticSharedMemory": 0,
        "dynamicSharedMemory": 0,
        "localMemoryPerThread": 0,
        "localMemoryTotal": 1 << 40,
        "gridId": 5,
    }
    row.update(kw)
    return row


def api_row(t0, t1, corr=1, **kw):
    row = {
        "start": EPOCH + t0,
        "end": EPOCH + t1,
        "eventClass": 1,
        "globalTid": gtid(100, 101),
        "correlationId": corr,
        "nameId": 1,
        "returnValue": 0,
    }
    row.update(kw)
    return row


def nvtx_row(t0, t1, **kw):
    row = {"start": EPOCH + t0, "end": EPOCH + t1, "eventType": 59, "globalTid": gtid(100, 101)}
    row.update(kw)
    return row


def synthetic_rows() -> dict[str, list[dict]]:
    return {
        "StringIds": [{"id": 1, "value": "cudaLaunchKernel_v7000"}, {"id": 2, "value": "kA"}],
        "CUPTI_ACTIVITY_KIND_KERNEL": [kernel_row(1000, 2000)],
        "CUPTI_ACTIVITY_KIND_RUNTIME": [api_row(100, 300), api_row(400, 500, corr=2)],
        "NVTX_EVENTS": [
            # text NULL in the first rows (the first batch), filled later
            nvtx_row(10, 3000, binaryData=RawText(b"\x00\xff\x10raw")),
            nvtx_row(20, 2900),
            nvtx_row(30, 2800, binaryData=RawText(b"\xfe\xfe")),
            nvtx_row(40, 2700, text="outer", doubleValue=1.5),
            nvtx_row(50, 2600, text=RawText(b"\xff\xfeA")),
            nvtx_row(60, 2500, text="inner"),
        ],
        "META_DATA_EXPORT": [
            {"name": "EXPORT_SCHEMA_VERSION", "value": "3.16.1"},
            {"name": "EXPORT_PARAM_TIME_NORMALIZE", "value": "true"},
        ],
        "TARGET_INFO_SESSION_START_TIME": [{"utcEpochNs": EPOCH}],
    }


def test_transcription_types_values_and_empty_tables(tmp_path):
    rows = synthetic_rows()
    rows["CUPTI_ACTIVITY_KIND_RUNTIME"].append(api_row(600, 700, corr=3, globalTid=HIGH_TID))
    src = make_sqlite(tmp_path / "synth.sqlite", rows)
    dest = tmp_path / "out"
    seen = []
    expected = expected_columns()
    result = transcribe(
        src, dest, expected, batch_rows=2, progress=lambda t, n: seen.append((t, n))
    )
    assert result.tables == {
        "StringIds": 2,
        "CUPTI_ACTIVITY_KIND_KERNEL": 1,
        "CUPTI_ACTIVITY_KIND_RUNTIME": 3,
        "NVTX_EVENTS": 6,
        "META_DATA_EXPORT": 2,
        "TARGET_INFO_SESSION_START_TIME": 1,
    }
    assert result.empty == ["CUPTI_ACTIVITY_KIND_MEMSET"]
    assert sorted(p.name for p in dest.iterdir()) == sorted(
        [MARKER] + [f"{t}.parquet" for t in result.tables]
    )
    assert ("NVTX_EVENTS", 6) in seen and ("NVTX_EVENTS", 0) in seen
    # every column: the stand-in's type, else the declared SQLite type's
    by_declared = {"INTEGER": pa.int64(), "TEXT": pa.string(), "REAL": pa.float64()}
    standin_typed = 0
    with closing(sqlite3.connect(src)) as con:
        for table in result.tables:
            standin = {c.name: ARROW_OF_DUCKDB[c.type] for c in expected.get(table, [])}
            schema = pq.read_schema(dest / f"{table}.parquet")
            declared = [
                (r[1], r[2])
                for r in con.execute(f'PRAGMA table_info("{table}")')
                if (table, r[1]) != ("NVTX_EVENTS", "binaryData")
            ]
            assert schema.names == [n for n, _ in declared]
            for name, decl in declared:
                want = standin.get(name, by_declared[decl])
                assert schema.field(name).type == want, (table, name)
                standin_typed += name in standin
    assert standin_typed >= 40

    nvtx = pq.read_table(dest / "NVTX_EVENTS.parquet")
    assert "binaryData" not in nvtx.column_names
    assert nvtx.column_names == [c for c in sqlite_columns(src, "NVTX_EVENTS") if c != "binaryData"]
    assert nvtx.schema.field("text").type == pa.string()
    # NULL through the first batches, then text; invalid UTF-8 bytes unchanged
    assert nvtx.column("text").combine_chunks().view(pa.binary()).to_pylist() == [
        None,
        None,
        None,
        b"outer",
        b"\xff\xfeA",
        b"inner",
    ]
    assert nvtx.schema.field("doubleValue").type == pa.float64()
    assert nvtx.column("doubleValue").to_pylist() == [None, None, None, 1.5, None, None]
    assert nvtx.schema.field("globalTid").type == pa.uint64()

    api = pq.read_table(dest / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet")
    assert api.schema.field("globalTid").type == pa.uint64()
    assert api.column("globalTid").to_pylist() == [gtid(100, 101), gtid(100, 101), HIGH_TID]

    strings = pq.read_table(dest / "StringIds.parquet")
    assert strings.schema.field("id").type == pa.int32()
    assert strings.to_pylist() == rows["StringIds"]

    k = pq.read_table(dest / "CUPTI_ACTIVITY_KIND_KERNEL.parquet")
    assert [k.schema.field(c).type for c in ("gridX", "blockX", "start", "contextId")] == [
        pa.int32(),
        pa.int32(),
        pa.int64(),
        pa.uint64(),
    ]
    assert k.column("localMemoryTotal").to_pylist() == [1 << 40]

    assert pq.read_table(dest / "META_DATA_EXPORT.parquet").to_pylist() == rows["META_DATA_EXPORT"]
    marker = json.loads((dest / MARKER).read_text())
    assert marker["source"] == str(src.resolve())
    assert marker["size"] == src.stat().st_size
    assert marker["mtime_ns"] == src.stat().st_mtime_ns


def test_witness_row_comes_first(tmp_path):
    """SQLite emits the left side of UNION ALL first: the transcription drops
    row 0 of the first batch, so it must be the witness, and the table's rows
    follow in their own order."""
    import adbc_driver_sqlite.dbapi as dbapi

    rows = synthetic_rows()
    src = make_sqlite(tmp_path / "w.sqlite", rows)
    cols = [
        sqlite_export._Column(n, d, sqlite_export._affinity(d))
        for n, d in [
            (r[1], r[2])
            for r in sqlite3.connect(src).execute(
                'PRAGMA table_info("CUPTI_ACTIVITY_KIND_RUNTIME")'
            )
        ]
    ]
    query = sqlite_export._select("CUPTI_ACTIVITY_KIND_RUNTIME", cols)
    with closing(sqlite3.connect(src)) as con:
        plain = con.execute('SELECT * FROM "CUPTI_ACTIVITY_KIND_RUNTIME"').fetchall()
        python_side = con.execute(query).fetchall()
    witness = tuple(0 for _ in cols)
    assert python_side == [witness] + plain
    with closing(dbapi.connect(sqlite_export._uri(src))) as con, closing(con.cursor()) as cur:
        cur.adbc_statement.set_options(**{sqlite_export.BATCH_OPTION: "1"})
        cur.execute(query)
        batches = list(cur.fetch_record_batch())
    assert [b.num_rows for b in batches] == [1] * (len(plain) + 1)
    adbc_side = [tuple(r.values()) for b in batches for r in b.to_pylist()]
    assert adbc_side == [witness] + plain


def test_value_that_does_not_fit_its_column_is_an_error(tmp_path):
    rows = synthetic_rows()
    rows["StringIds"].append({"id": 1 << 40, "value": "too big for INTEGER"})
    src = make_sqlite(tmp_path / "big.sqlite", rows)
    with pytest.raises(ExportDataError) as err:
        transcribe(src, tmp_path / "out", expected_columns())
    assert str(err.value).startswith(
        'the SQLite export\'s table StringIds has a value in column "id" that does not '
        "fit INTEGER ("
    )


@pytest.mark.parametrize(
    ("batch_rows", "bad_row"), [(65536, 0), (2, 5)], ids=["in the first batch", "in a later batch"]
)
def test_text_in_an_integer_column_is_an_error_not_zero(tmp_path, batch_rows, bad_row):
    """SQLite would CAST 'abc' to 0 silently (a kernel drawn from the session
    start); the transcription stops with one sentence instead, whether the
    value is in the batch that types the columns or a later one."""
    rows = synthetic_rows()
    rows["CUPTI_ACTIVITY_KIND_RUNTIME"] = [api_row(100 + i, 200 + i, corr=10 + i) for i in range(8)]
    rows["CUPTI_ACTIVITY_KIND_RUNTIME"][bad_row]["start"] = "abc"
    src = make_sqlite(tmp_path / "edited.sqlite", rows)
    with pytest.raises(ExportDataError) as err:
        transcribe(src, tmp_path / "out", expected_columns(), batch_rows=batch_rows)
    msg = str(err.value)
    assert msg.startswith(
        "the SQLite export's table CUPTI_ACTIVITY_KIND_RUNTIME holds a "
        "value whose type differs from its column's declared type ("
    ), msg
    assert msg.endswith("it was not written by nsys, or was edited")


def test_committed_rows_still_in_the_wal_file_are_read(tmp_path):
    """A database in WAL mode whose last commit is still only in its -wal
    file (its writer exited without a checkpoint): the transcription reads
    what SQLite itself reads, not the older main file."""
    import subprocess
    import sys

    src = make_sqlite(tmp_path / "wal.sqlite", synthetic_rows())
    code = (
        "import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('PRAGMA journal_mode=wal'); c.execute('PRAGMA wal_autocheckpoint=0'); "
        "c.execute('DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 2'); "
        "c.commit(); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code, str(src)], check=True)
    assert (tmp_path / "wal.sqlite-wal").stat().st_size > 0
    transcribe(src, tmp_path / "out", expected_columns())
    assert parquet_row_counts(tmp_path / "out")["CUPTI_ACTIVITY_KIND_RUNTIME"] == 1


def test_synthetic_sqlite_through_the_cli(tmp_path):
    src = make_sqlite(tmp_path / "in" / "synth.sqlite", synthetic_rows())
    before = sha256(src)
    out = run_cli(tmp_path, "convert", src)
    json_gz = assert_converts(tmp_path, out, "synth")
    assert f"export: transcribed SQLite export {src} (no nsys needed)" in out.stdout
    s = summary(out)
    assert s["kernels"] == "1" and s["CPU NVTX ranges"] == "6"
    assert s["linked CUDA API launches"] == "1"
    assert s["strings with invalid UTF-8 repaired: NVTX_EVENTS.text"] == "1"
    assert "binaryData" not in out.stdout
    with gzip.open(json_gz, "rb") as f:
        events = json.loads(f.read())
    assert {e["name"] for e in events if e.get("cat") == "kernel"} == {"kA"}
    nvtx_names = sorted(e["name"] for e in events if e.get("cat") == "nvtx" and e["ph"] in "Bb")
    assert nvtx_names == sorted(["[unnamed]"] * 3 + ["outer", "\ufffd\ufffdA", "inner"])
    assert sha256(src) == before
    # same content: reused; --force: transcribed again
    parquet = tmp_path / "ws" / "synth" / "parquet"
    again = run_cli(tmp_path, "convert", src)
    assert_converts(tmp_path, again, "synth")
    assert f"export: reused {parquet} (transcribed from {src}, same content" in again.stdout
    forced = run_cli(tmp_path, "convert", "--force", src)
    assert_converts(tmp_path, forced, "synth")
    assert "export: transcribed SQLite export" in forced.stdout
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    touched = run_cli(tmp_path, "convert", src)  # same content: still reused
    assert_converts(tmp_path, touched, "synth")
    assert f"export: reused {parquet}" in touched.stdout
    # a report of the same name is another report: refused, --force replaces
    shutil.copyfile(THREEBODY, tmp_path / "in" / "synth.nsys-rep")
    report = run_cli(
        tmp_path,
        "convert",
        "--nsys",
        fake_nsys(tmp_path, "exit 0"),
        tmp_path / "in" / "synth.nsys-rep",
    )
    assert_fails(report, "holds the conversion of a different report")
    report = run_cli(
        tmp_path,
        "convert",
        "--force",
        "--nsys",
        fake_nsys(tmp_path, "exit 0"),
        tmp_path / "in" / "synth.nsys-rep",
    )
    assert_fails(report, "reported success but wrote no Parquet export")
    assert (parquet / MARKER).is_file()


def test_odd_file_name_and_read_only_folder(tmp_path):
    """SQLite opens the file by URI: '#', '%', '?' and spaces must be quoted."""
    odd = tmp_path / "a?b=1&c#d%20e.sqlite"
    shutil.copyfile(SMALL_SQLITE, odd)
    result = transcribe(odd, tmp_path / "direct", expected_columns())
    assert result.tables == {t: n for t, n in sqlite_row_counts(SMALL_SQLITE).items() if n}
    # through the CLI ('?' left out: DuckDB reads it in the NAME.duckdb path as options)
    folder = tmp_path / "ro"
    folder.mkdir()
    name = "it's #1 x=50% ü"
    src = folder / f"{name}.sqlite"
    shutil.copyfile(SMALL_SQLITE, src)
    src.chmod(0o444)
    folder.chmod(0o555)
    try:
        out = run_cli(tmp_path, "convert", src)
        assert_converts(tmp_path, out, name)
        assert sorted(p.name for p in folder.iterdir()) == [src.name]  # no journal
        assert sha256(src) == sha256(SMALL_SQLITE)
        assert stat.S_IMODE(src.stat().st_mode) == 0o444
    finally:
        folder.chmod(0o755)


def test_parquet_export_with_binary_data_is_never_read(tmp_path):
    """binaryData (raw bytes labelled as text) in a Parquet export: left out of
    the view and of the UTF-8 scan, also when another column is repaired."""
    for repaired in (False, True):
        exp = make_export(
            tmp_path / f"e{int(repaired)}" / "parquet",
            {
                "NVTX_EVENTS": [
                    {
                        "start": EPOCH + 10,
                        "end": EPOCH + 20,
                        "eventType": 59,
                        "text": "ok",
                        "globalTid": gtid(100, 101),
                    }
                ]
                * 2
            },
        )
        f = exp / "NVTX_EVENTS.parquet"
        t = pq.read_table(f)
        t = t.append_column(
            "binaryData", pa.array([b"\xff\x00raw", b"\xfe"], pa.binary()).view(pa.string())
        )
        if repaired:
            t = t.set_column(
                t.schema.get_field_index("text"),
                "text",
                pa.array([b"ok", b"b\xffd"], pa.binary()).view(pa.string()),
            )
        pq.write_table(t, f)
        con = duckdb.connect()
        notes = sources.ExportNotes()
        scratch = tmp_path / f"scratch{int(repaired)}"
        scratch.mkdir()
        columns = sources.register_export(
            con, exp, expected=expected_columns(), scratch=scratch, notes=notes
        )
        assert "binaryData" not in columns["NVTX_EVENTS"]
        view = con.sql("SELECT * FROM nsys.NVTX_EVENTS").to_arrow_table()
        assert "binaryData" not in view.column_names and view.num_rows == 2
        assert notes.repaired_strings == ([("NVTX_EVENTS", "text", 1)] if repaired else [])
        assert view.column("text").to_pylist() == (["ok", "b\ufffdd"] if repaired else ["ok", "ok"])
        con.close()


# --- hostile inputs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"), [("notes.sqlite", b"just some text\n" * 100), ("picture.sqlite", PNG)]
)
def test_sqlite_that_is_not_sqlite(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    out = run_cli(tmp_path, "convert", name)
    assert_fails(
        out,
        f"{name}: not an SQLite database (a .sqlite file must be made by "
        "nsys export --type=sqlite)",
    )
    assert ws_files(tmp_path) == []


def test_empty_sqlite(tmp_path):
    (tmp_path / "empty.sqlite").write_bytes(b"")
    out = run_cli(tmp_path, "convert", "empty.sqlite")
    assert_fails(out, "empty.sqlite: the report is empty (0 bytes)")
    assert ws_files(tmp_path) == []


def test_sqlite_git_lfs_pointer(tmp_path):
    (tmp_path / "model.sqlite").write_text(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 12345\n"
    )
    out = run_cli(tmp_path, "convert", "model.sqlite")
    assert_fails(out, "model.sqlite: this is a Git LFS pointer, not the report itself")
    assert ws_files(tmp_path) == []


def test_fifo_named_sqlite(tmp_path):
    os.mkfifo(tmp_path / "pipe.sqlite")
    out = run_cli(tmp_path, "convert", "pipe.sqlite", timeout=60)
    assert_fails(out, "pipe.sqlite: not a regular file (an SQLite export must be a .sqlite file)")
    assert ws_files(tmp_path) == []


def test_truncated_sqlite(tmp_path):
    (tmp_path / "cut.sqlite").write_bytes(SMALL_SQLITE.read_bytes()[:65536])
    out = run_cli(tmp_path, "convert", "cut.sqlite")
    assert_fails(
        out, "cut.sqlite: the SQLite export is damaged (SQLite: database disk image is malformed)"
    )
    assert ws_files(tmp_path) == []


def test_sqlite_with_damaged_data_pages(tmp_path):
    """Schema intact, NVTX_EVENTS's leaf pages scrambled: found while transcribing."""
    src = NEWER / "nsysai_h100_2gpu_1s" / "nsysai_h100_2gpu_1s.sqlite"
    with closing(sqlite3.connect(f"file:{src}?mode=ro", uri=True)) as con:
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        pages = [
            r[0]
            for r in con.execute(
                "SELECT pageno FROM dbstat WHERE name = 'NVTX_EVENTS' AND pagetype = 'leaf' "
                "ORDER BY pageno"
            )
        ]
    data = bytearray(src.read_bytes())
    for page in pages[len(pages) // 2 : len(pages) // 2 + 20]:
        for i in range((page - 1) * page_size, page * page_size):
            data[i] ^= 0x5A
    (tmp_path / "scrambled.sqlite").write_bytes(bytes(data))
    out = run_cli(tmp_path, "convert", "scrambled.sqlite")
    assert_fails(
        out,
        "scrambled.sqlite: the SQLite export is damaged (SQLite: database disk image is malformed)",
    )
    assert ws_files(tmp_path) == []


def test_sqlite_without_nsight_tables(tmp_path):
    with closing(sqlite3.connect(tmp_path / "other.sqlite")) as con:
        con.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
        con.execute("INSERT INTO recipes VALUES ('soup', 30)")
        con.commit()
    out = run_cli(tmp_path, "convert", "other.sqlite")
    assert_fails(
        out,
        "other.sqlite: not an Nsight Systems SQLite export (no StringIds or "
        "META_DATA_EXPORT table in it)",
    )
    assert ws_files(tmp_path) == []


def test_other_file_names_still_refused(tmp_path):
    (tmp_path / "model.db").write_bytes(SMALL_SQLITE.read_bytes()[:4096])
    out = run_cli(tmp_path, "convert", "model.db")
    assert_fails(
        out,
        "model.db: not an Nsight Systems report (expected a .nsys-rep or "
        ".qdrep file, an SQLite export .sqlite, or a Parquet export folder)",
    )
    assert ws_files(tmp_path) == []


# --- _pqtdir folders -------------------------------------------------------------------


def test_pqtdir_export_folder_takes_the_out_name(tmp_path):
    src = tmp_path / "in" / "model_pqtdir"
    shutil.copytree(REPORTS / "raiderstream_tiny" / "parquet", src)
    out = run_cli(tmp_path, "convert", src)
    assert_converts(tmp_path, out, "model")
    assert ws_files(tmp_path)[0] == "model"


def test_nsys_that_writes_out_pqtdir(tmp_path):
    """Newer nsys appends _pqtdir to the -o name; the export is found there."""
    export = REPORTS / "raiderstream_tiny" / "parquet"
    script = (
        'while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out="$2"; shift; done\n'
        f'mkdir -p "${{out}}_pqtdir" && cp "{export}"/*.parquet "${{out}}_pqtdir/"'
    )
    shutil.copyfile(THREEBODY, tmp_path / "tiny.nsys-rep")
    out = run_cli(tmp_path, "convert", "--nsys", fake_nsys(tmp_path, script), "tiny.nsys-rep")
    assert_converts(tmp_path, out, "tiny")
    assert "nsys: 2023.4.4.54" in out.stdout
    assert (tmp_path / "ws" / "tiny" / "parquet" / "StringIds.parquet").is_file()


# --- a report newer than the installed nsys ---------------------------------------------


@pytest.mark.nsys
def test_report_newer_than_nsys_suggests_its_sqlite_export(tmp_path):
    nsys = need_nsys()
    if nsys.version_key >= (2024, 6, 2):
        pytest.skip(f"nsys {nsys.version} can read 2024.6 reports")
    report = NEWER / "fuser_h100x8_2024_6" / "fuser_h100x8_2024_6.nsys-rep"
    out = run_cli(tmp_path, "convert", report)
    ours = ".".join(map(str, nsys.version_key))
    assert_fails(
        out,
        f"fuser_h100x8_2024_6.nsys-rep: the report was created by Nsight "
        f"Systems 2024.6.2.25, newer than this nsys ({ours}); install Nsight "
        "Systems 2024.6.2.25 or newer, pass --nsys FILE, or convert its "
        "SQLite export (nsys export --type=sqlite, with Nsight Systems "
        "2024.6.2.25 or newer) instead",
    )
    assert ws_files(tmp_path) == []
