"""tests/multirank.py on real captures: per-process parts of a multi-process
export (cpu_nvtx_multiproc: a parent and two children; fuser_nvtx_2025_1's
SQLite export as nsys-duck transcribed it) and simulated ranks of one small
export (cpu_nvtx_small), each checked against the original tables (read here
with DuckDB) and converted by the real pipeline.
"""

from __future__ import annotations

import duckdb
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import multirank
from nsys_duck.convert import Options, convert
from paths import NEWER, REPORTS

MULTIPROC = REPORTS / "cpu_nvtx_multiproc" / "parquet"
# examples/cpu_nvtx_small/parquet is the same files; this one is what the
# session fixture `converted` converts
SMALL = REPORTS / "cpu_nvtx_small" / "parquet"
FUSER = NEWER / "fuser_nvtx_2025_1" / "fuser_nvtx_2025_1.sqlite"
STEP = 1_000_000
PID_BASE = 1000
SERIALIZED = ("globalTid", "globalPid", "endGlobalTid")
PLAIN = ("pid", "processId")
TIMES = ("start", "end", "timestamp")


def rows(path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def assert_same_schema(path, original) -> None:
    """Arrow schema (names, order, types, nullability, metadata) and the
    Parquet schema (physical/logical types, required/optional) are Nsight's."""
    ours, theirs = pq.ParquetFile(path), pq.ParquetFile(original)
    assert ours.schema_arrow.equals(theirs.schema_arrow, check_metadata=True), path
    assert ours.schema.equals(theirs.schema), path


def sql(query: str) -> list[tuple]:
    return duckdb.connect().sql(query).fetchall()


def pid_sql(column: str) -> str:
    """DuckDB: the OS pid of a serialized id or a plain pid column
    (nsys-tables.md 2.1: decimal mask, never hex in DuckDB)."""
    return f"(({column} >> 24) & 16777215)" if column in SERIALIZED else column


def owner(path) -> str | None:
    names = pq.read_schema(path).names
    return next((c for c in ("globalTid", "globalPid", "pid", "processId") if c in names), None)


# --- split_export_by_pid -------------------------------------------------------


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    return multirank.split_export_by_pid(MULTIPROC, tmp_path_factory.mktemp("split"), "mp")


def test_split_makes_one_export_per_traced_process(parts):
    # the processes of the NVTX and OS runtime rows, read here with DuckDB
    traced = {
        pid
        for table in ("NVTX_EVENTS", "OSRT_API")
        for (pid,) in sql(
            f"SELECT DISTINCT {pid_sql('globalTid')} FROM '{MULTIPROC / table}.parquet'"
        )
    }
    assert traced == {23347, 23353, 23354}  # the catalog: parent + 2 children
    assert sorted(parts) == sorted(traced)
    # PROCESSES/ThreadNames name 89 processes of the machine: none gets a part
    assert rows(MULTIPROC / "PROCESSES.parquet") == 89
    for pid, folder in parts.items():
        assert folder.name == f"mp_pid{pid}"
        names = sorted(p.name for p in (folder / "parquet").iterdir())
        assert names == sorted(p.name for p in MULTIPROC.glob("*.parquet"))


def test_split_rows_add_up_and_every_part_keeps_nsights_schema(parts):
    event_tables = 0
    for original in sorted(MULTIPROC.glob("*.parquet")):
        col = owner(original)
        in_parts = [folder / "parquet" / original.name for folder in parts.values()]
        for path in in_parts:
            assert_same_schema(path, original)
        if col is None:  # StringIds, ENUM_*, META_DATA_EXPORT, ...: whole
            assert all(p.read_bytes() == original.read_bytes() for p in in_parts), original
            continue
        # each part holds its own process's rows only (and rows of no process)
        for pid, folder in parts.items():
            path = folder / "parquet" / original.name
            assert sql(f"SELECT count(*) FROM '{path}' WHERE {pid_sql(col)} NOT IN (0, {pid})") == [
                (0,)
            ], path
        if multirank.is_event_table(original.stem, pq.read_schema(original)):
            event_tables += 1
            (unowned,) = sql(
                f"SELECT count(*) FROM '{original}' WHERE {col} IS NULL OR {pid_sql(col)} = 0"
            )[0]
            total = sum(rows(p) for p in in_parts)
            assert total == rows(original) + (len(parts) - 1) * unowned, original.stem
    assert event_tables == 2  # NVTX_EVENTS and OSRT_API
    nvtx = [rows(folder / "parquet" / "NVTX_EVENTS.parquet") for folder in parts.values()]
    assert nvtx == [406, 406, 406]
    # the parent is the one process of PROCESSES among the three (fork+exec
    # children are not listed); its row stays in its part only
    processes = [rows(folder / "parquet" / "PROCESSES.parquet") for folder in parts.values()]
    assert processes == [1, 0, 0]


def test_split_parts_convert_and_their_nvtx_adds_up(parts, converted, tmp_path):
    whole, _ = converted("cpu_nvtx_multiproc")
    ranges = slices = 0
    for pid, folder in parts.items():
        res = convert(folder / "parquet", Options(), root=tmp_path / "ws")
        summary = dict(res.summary)
        assert summary["CPU NVTX ranges"] > 0, pid
        ranges += summary["CPU NVTX ranges"]
        ours = pq.read_table(res.workspace.events_parquet, columns=["cat", "os_pid"])
        assert set(ours.column("os_pid").to_pylist()) == {pid}
        slices += pc.sum(pc.equal(ours.column("cat"), "nvtx")).as_py()
    assert ranges == dict(whole.summary)["CPU NVTX ranges"] == 1206
    assert slices == 1206


def test_split_of_a_transcribed_sqlite_export(tmp_path):
    """The SQLite route: `nsys-duck convert X.sqlite` transcribes into
    ROOT/X/parquet, and that folder splits like an Nsight Parquet export."""
    whole = convert(FUSER, Options(), root=tmp_path / "ws")
    export = whole.workspace.dir / "parquet"
    assert export.is_dir()
    parts = multirank.split_export_by_pid(export, tmp_path / "parts", "fuser")
    # the catalog: pytest (50556, all GPU work) and python3 (50922, 2 CUDA
    # calls); SCHED_EVENTS has 45 processes but makes none a part
    assert sorted(parts) == [50556, 50922]
    [(scheduled,)] = sql(
        f"SELECT count(DISTINCT {pid_sql('globalTid')}) FROM '{export}/SCHED_EVENTS.parquet'"
    )
    assert scheduled == 45
    for original in sorted(export.glob("*.parquet")):
        in_parts = [folder / "parquet" / original.name for folder in parts.values()]
        for path in in_parts:
            assert_same_schema(path, original)
        if multirank.is_event_table(original.stem, pq.read_schema(original)):
            assert sum(rows(p) for p in in_parts) == rows(original), original.stem
    for folder in parts.values():  # only the tables, not nsys-duck's marker
        assert {p.suffix for p in (folder / "parquet").iterdir()} == {".parquet"}
    res = convert(parts[50556] / "parquet", Options(), root=tmp_path / "ws")
    summary, full = dict(res.summary), dict(whole.summary)
    assert (summary["kernels"], summary["CPU NVTX ranges"]) == (18, 13513)
    # the whole capture less the other processes' slices: python3's, and
    # the Thread State slices of the 43 processes that only SCHED_EVENTS has
    [(others,)] = sql(
        f"SELECT count(*) FROM '{whole.workspace.events_parquet}' WHERE os_pid <> 50556"
    )
    assert others > 0
    assert summary["slices"] == full["slices"] - others


# --- make_rank_exports -------------------------------------------------------


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("ranks")
    return multirank.make_rank_exports(SMALL, out, 3, offset_step_ns=STEP, pid_base=PID_BASE)


def original_pids() -> list[int]:
    """Every non-zero process id in any pid column of the export, sorted."""
    found = set()
    for path in SMALL.glob("*.parquet"):
        for c in pq.read_schema(path).names:
            if c in SERIALIZED + PLAIN:
                found.update(v for (v,) in sql(f"SELECT DISTINCT {pid_sql(c)} FROM '{path}'") if v)
    return sorted(found)


def test_rank_exports_folders_and_schemas(ranks):
    assert [r.name for r in ranks] == ["rank0000", "rank0001", "rank0002"]
    for folder in ranks:
        assert sorted(p.name for p in (folder / "parquet").iterdir()) == sorted(
            p.name for p in SMALL.glob("*.parquet")
        )
        for original in SMALL.glob("*.parquet"):
            assert_same_schema(folder / "parquet" / original.name, original)


def test_rank_exports_remap_process_ids(ranks):
    pids = original_pids()
    assert 23075 in pids and len(pids) == 89  # the program + the machine's processes
    index = {p: i for i, p in enumerate(pids)}
    seen: list[set[int]] = []
    for k, folder in enumerate(ranks):
        mine: set[int] = set()
        for original in SMALL.glob("*.parquet"):
            copy = folder / "parquet" / original.name
            a, b = pq.read_table(original), pq.read_table(copy)
            for c in a.schema.names:
                if c not in SERIALIZED + PLAIN:
                    continue
                old, new = a.column(c).to_pylist(), b.column(c).to_pylist()
                for x, y in zip(old, new, strict=True):
                    if x is None:
                        assert y is None
                        continue
                    p = (x >> 24) & 0xFFFFFF if c in SERIALIZED else x
                    q = (y >> 24) & 0xFFFFFF if c in SERIALIZED else y
                    assert q == PID_BASE + k * len(pids) + index[p], (original.stem, c, x)
                    if c in SERIALIZED:  # TID, VM and hardware bits kept
                        assert y & ~(0xFFFFFF << 24) == x & ~(0xFFFFFF << 24)
                    mine.add(q)
        assert 23075 not in mine
        assert all(not (mine & other) for other in seen), k
        seen.append(mine)
        # PROCESSES stays consistent: pid = the PID bits of globalPid
        processes = folder / "parquet" / "PROCESSES.parquet"
        assert sql(f"SELECT count(*) FROM '{processes}' WHERE pid <> {pid_sql('globalPid')}") == [
            (0,)
        ]


def test_rank_exports_shift_times_by_k_steps(ranks):
    shifted = 0
    for k, folder in enumerate(ranks):
        for original in sorted(SMALL.glob("*.parquet")):
            copy = folder / "parquet" / original.name
            a, b = pq.read_table(original), pq.read_table(copy)
            times = [c for c in a.schema.names if c in TIMES]
            for c in times:
                shifted += k > 0
                [(lo_a,)] = sql(f"SELECT min(\"{c}\") FROM '{original}'")
                [(lo_b,)] = sql(f"SELECT min(\"{c}\") FROM '{copy}'")
                assert lo_b - lo_a == k * STEP, (original.stem, c)
                old, new = a.column(c).to_pylist(), b.column(c).to_pylist()
                assert new == [None if x is None else x + k * STEP for x in old]
            # every other column is the original's; pid-free tables are the same bytes
            rest = [c for c in a.schema.names if c not in TIMES + SERIALIZED + PLAIN]
            assert b.select(rest).equals(a.select(rest)), original.stem
            if len(rest) == len(a.schema.names):
                assert copy.read_bytes() == original.read_bytes()
    # start and end of NVTX_EVENTS, OSRT_API, PROFILER_OVERHEAD, in ranks 1 and 2
    assert shifted == 2 * 6


def test_rank_export_converts_like_the_original(ranks, converted, tmp_path):
    whole, _ = converted("cpu_nvtx_small")
    k = 2
    res = convert(ranks[k] / "parquet", Options(), root=tmp_path / "ws")
    keys = ("slices", "CPU NVTX ranges", "NVTX start/end ranges", "NVTX marks", "JSON events")
    assert [dict(res.summary)[x] for x in keys] == [dict(whole.summary)[x] for x in keys]
    cols = ["start_ns", "end_ns", "cat", "name", "os_pid", "os_tid"]
    a = pq.read_table(whole.workspace.events_parquet, columns=cols).sort_by("start_ns")
    b = pq.read_table(res.workspace.events_parquet, columns=cols).sort_by("start_ns")
    new_pid = PID_BASE + k * len(original_pids()) + original_pids().index(23075)
    assert set(b.column("os_pid").to_pylist()) == {new_pid}
    assert set(a.column("os_pid").to_pylist()) == {23075}
    for c in ("start_ns", "end_ns"):
        assert b.column(c).to_pylist() == [x + k * STEP for x in a.column(c).to_pylist()]
    assert b.select(["cat", "name", "os_tid"]).equals(a.select(["cat", "name", "os_tid"]))


def test_rank_exports_refuse_what_they_cannot_make(tmp_path):
    with pytest.raises(ValueError, match="24 bits"):
        multirank.make_rank_exports(SMALL, tmp_path, 200_000)
    with pytest.raises(ValueError, match="nsys-duck convert"):
        multirank.split_export_by_pid(FUSER, tmp_path, "x")
    multirank.make_rank_exports(SMALL, tmp_path, 1)
    with pytest.raises(FileExistsError):  # no stale tables mixed into a copy
        multirank.make_rank_exports(SMALL, tmp_path, 1)
