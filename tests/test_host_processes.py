"""The CPU side that is not the seed's (OS runtime calls, thread states,
cuDNN/cuBLAS calls) is drawn once, under a Perfetto process per host
process named as Nsight names it, after the devices, never under a device
(issue 26; output-contract.md, Tracks, 2026-12-03); --devices keeps the
host processes that ran GPU work on the devices chosen. Judged on what
Perfetto's importer (trace_processor_shell) makes of the traces, against
the exports' own tables (read here with DuckDB or sqlite3).
"""

from __future__ import annotations

import csv
import re
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import duckdb
import pytest

import multirank
import perfetto_import
from conftest import register_trace
from nsys_duck.convert import Options, convert
from nsys_duck.merge import MergeOptions, merge
from tests.paths import NEWER, REPORTS

ALPA = REPORTS / "alpa_dev1_2_memcpy" / "parquet"
FUSER = NEWER / "fuser_nvtx_2025_1" / "fuser_nvtx_2025_1.sqlite"
SMALL = Path(__file__).resolve().parent.parent / "examples" / "raiderstream_tiny" / "parquet"
CPU_SIDE = ("osrt", "thread_state", "cudnn", "cublas")
PID_OF_PROCESS = "(globalPid >> 24) & 16777215"  # Nsight's OS pid of a globalPid

# each slice of the CPU side with its thread track and Perfetto process
CPU_SLICES = f"""
SELECT s.category, s.ts, s.dur, s.name, t.name, p.name
FROM slice AS s
JOIN thread_track AS tt ON tt.id = s.track_id
JOIN thread AS t USING (utid)
JOIN process AS p USING (upid)
WHERE s.category IN ({", ".join(f"'{c}'" for c in CPU_SIDE)});
"""
# every named thread track with its Perfetto process
TRACKS = """
SELECT p.name, t.name FROM thread AS t JOIN process AS p USING (upid)
WHERE t.name IS NOT NULL AND p.name IS NOT NULL;
"""
PROCESSES = "SELECT p.pid, p.name FROM process AS p WHERE p.name IS NOT NULL;"


def perfetto_rows(json_gz: Path, query: str, tmp_path: Path) -> list[tuple[str, ...]]:
    """The rows of QUERY on the trace as Perfetto's importer loads it, every
    cell as text (the shell writes CSV; the names queried hold no quote)."""
    binary = perfetto_import.find_binary()
    if binary is None:
        pytest.skip(perfetto_import.missing_message())
    q = tmp_path / "query.sql"
    q.write_text(query)
    out = subprocess.run(
        [str(binary), "-q", str(q), str(json_gz)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return [tuple(row) for row in csv.reader(out[1:]) if row]


def is_device(process_name: str) -> bool:
    """A device's Perfetto process ('Device N: GPU', 'rank K · Device N: GPU')."""
    return re.match(r"^(.* · )?Device \d+", process_name) is not None


def thread_tid(track_name: str) -> int:
    """The tid of a host thread's track, 'OS Runtime · NAME [TID]'."""
    m = re.search(r" · (?:.* )?\[(\d+)\]$", track_name)
    assert m, track_name
    return int(m.group(1))


def nsight_names(con, pids: set[int]) -> set[str]:
    """Nsight's 'NAME [PID]' of each pid: PROCESSES' name, else its main
    thread's (tid = pid) name in ThreadNames, else 'Process'."""
    names = {}
    for pid in pids:
        row = (
            con.execute(
                "SELECT name FROM PROCESSES WHERE (globalPid >> 24) & 16777215 = ? AND name <> ''",
                [pid],
            ).fetchone()
            or con.execute(
                "SELECT s.value FROM ThreadNames AS t JOIN StringIds AS s ON s.id = t.nameId "
                "WHERE (t.globalTid >> 24) & 16777215 = ? AND t.globalTid & 16777215 = ?",
                [pid, pid],
            ).fetchone()
        )
        names[pid] = f"{row[0] if row else 'Process'} [{pid}]"
    return set(names.values())


@pytest.fixture(scope="module")
def alpa(tmp_path_factory):
    return convert(ALPA, Options(database=False), root=tmp_path_factory.mktemp("alpa"))


@pytest.fixture(scope="module")
def fuser(tmp_path_factory):
    if not FUSER.exists():
        pytest.skip("needs shared/data/newer")
    return convert(FUSER, Options(database=False), root=tmp_path_factory.mktemp("fuser"))


def test_alpa_draws_each_os_runtime_call_once_under_its_host_process(alpa, tmp_path):
    """alpa (one process, GPU work on devices 1 and 2): Perfetto's slice table
    holds every OSRT_API row exactly once (6,020, was 12,040: once per
    device), each on its thread's track of a host process named as Nsight
    names it, none under a device."""
    con = duckdb.connect()
    for table in ("OSRT_API", "StringIds", "PROCESSES", "ThreadNames"):
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM '{ALPA / (table + '.parquet')}'")
    base = alpa.base_ns
    want = Counter(
        con.execute(
            'SELECT o.start - ?, o."end" - o.start, s.value, o.globalTid & 16777215 '
            "FROM OSRT_API AS o JOIN StringIds AS s ON s.id = o.nameId",
            [base],
        ).fetchall()
    )
    assert sum(want.values()) == 6020
    rows = perfetto_rows(alpa.workspace.json_gz, CPU_SLICES, tmp_path)
    osrt = [r for r in rows if r[0] == "osrt"]
    assert len(osrt) == sum(want.values())  # each once, not once per device
    got = Counter(
        (int(ts), int(dur), name, thread_tid(track)) for _, ts, dur, name, track, _ in osrt
    )
    assert got == want
    assert not [r for r in rows if is_device(r[5])]
    pids = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT (globalTid >> 24) & 16777215 FROM OSRT_API"
        ).fetchall()
    }
    assert {r[5] for r in osrt} == nsight_names(con, pids)
    assert "python [69286]" in {r[5] for r in osrt}


def test_host_processes_sort_after_the_devices_by_os_pid(alpa):
    """process_sort_index: devices first (by id), then the host processes by
    OS pid; their JSON pids are in 1..2^31-1 and distinct from the devices'."""
    import gzip
    import json

    with gzip.open(alpa.workspace.json_gz, "rt", encoding="utf-8") as f:
        events = json.load(f)
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    order = sorted(
        (e["args"]["sort_index"], e["pid"]) for e in events if e.get("name") == "process_sort_index"
    )
    kinds = [is_device(names[pid]) for _, pid in order]
    assert kinds == sorted(kinds, reverse=True) and kinds.count(False) >= 2
    host_pids = [
        int(re.search(r"\[(\d+)\]$", names[pid]).group(1))
        for _, pid in order
        if not is_device(names[pid])
    ]
    assert host_pids == sorted(host_pids)
    assert all(1 <= pid < 2**31 for pid in names) and len(names) == len(order)


def test_fuser_files_git_and_sleep_under_their_own_processes(fuser, tmp_path):
    """fuser_nvtx_2025_1 (one H200; SCHED_EVENTS holds 45 processes of the
    capture's process tree): no Device process holds a thread of a process
    without CUDA API, NVTX or GPU rows (git, sleep, python subprocesses);
    those are host processes named as Nsight names them ('git [50623]'),
    and every thread state is one slice under its host process."""
    con = sqlite3.connect(f"file:{FUSER}?mode=ro", uri=True)
    pid = "(globalTid >> 24) & 16777215"
    scheduled = {
        r[0]
        for r in con.execute(
            f"SELECT {pid} FROM SCHED_EVENTS GROUP BY globalTid HAVING count(*) > 1"
        )
    }
    seed = {
        r[0]
        for r in con.execute(
            f"SELECT {pid} FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION SELECT {pid} FROM NVTX_EVENTS"
        )
    }
    cpu_only = scheduled - seed
    assert len(cpu_only) >= 40
    tracks = perfetto_rows(fuser.workspace.json_gz, TRACKS, tmp_path)
    under_devices = {
        int(m.group(1))
        for process, track in tracks
        if is_device(process)
        for m in [re.search(r"\[pid (\d+) ", track)]
        if m
    }
    assert under_devices and not under_devices & cpu_only
    hosts = {
        name
        for _, name in perfetto_rows(fuser.workspace.json_gz, PROCESSES, tmp_path)
        if not is_device(name)
    }
    assert hosts == nsight_names(con, scheduled)
    assert {"git [50623]", "pytest [50556]"} <= hosts
    rows = perfetto_rows(fuser.workspace.json_gz, CPU_SLICES, tmp_path)
    states = [r for r in rows if r[0] == "thread_state"]
    [(events, threads)] = con.execute(
        "SELECT count(*), count(DISTINCT globalTid) FROM SCHED_EVENTS"
    ).fetchall()
    assert len(states) == events - threads and not [r for r in states if is_device(r[5])]


def test_devices_drops_the_host_processes_without_work_there(fuser, tmp_path):
    """--devices 0 on fuser: Device 0 and the host processes whose GPU work
    ran on it (pytest) stay, with every slice of theirs; the processes
    without GPU work (git, sleep, python subprocesses) are dropped."""
    res = convert(FUSER, Options(output_dir=tmp_path / "d0", database=False, devices=(0,)))
    con = sqlite3.connect(f"file:{FUSER}?mode=ro", uri=True)
    worked = {
        r[0]
        for r in con.execute(
            f"SELECT {PID_OF_PROCESS} FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0 "
            f"UNION SELECT {PID_OF_PROCESS} FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE deviceId = 0"
        )
    }
    [(scheduled_pids,)] = duckdb.execute(
        f"SELECT count(DISTINCT os_pid) FROM '{res.workspace.events_parquet}' "
        "WHERE cat = 'thread_state'"
    ).fetchall()
    assert scheduled_pids > len(worked)  # the Parquet stays whole
    processes = perfetto_rows(res.workspace.json_gz, PROCESSES, tmp_path)
    names = {name for _, name in processes}
    hosts = {name for name in names if not is_device(name)}
    assert hosts == nsight_names(con, worked) == {"pytest [50556]"}
    assert [n for n in names if is_device(n)] == ["Device 0: NVIDIA H200"]
    rows = perfetto_rows(res.workspace.json_gz, "SELECT count(*) FROM slice;", tmp_path)
    kept = ",".join(pid for pid, _ in processes)
    [(expected,)] = duckdb.execute(
        f"SELECT count(*) FROM '{res.workspace.events_parquet}' WHERE pid IN ({kept})"
    ).fetchall()
    assert int(rows[0][0]) == expected > 0


def test_a_merge_keeps_each_ranks_host_processes(tmp_path):
    """Two ranks of raiderstream_tiny: each rank's host processes are
    Perfetto processes of their own ('rank 1 · raiderstream [PID]') after its
    devices, every OS runtime call once; --devices 0 keeps the processes that
    ran work on device 0 and drops the launchers."""
    paths = [
        str(p / "parquet")
        for p in multirank.make_rank_exports(SMALL, tmp_path / "ranks", 2, name="report_")
    ]
    res = merge("job", paths, root=tmp_path / "ws")
    register_trace(res.workspace.json_gz, res.workspace.events_parquet)
    rows = perfetto_rows(res.workspace.json_gz, CPU_SLICES, tmp_path)
    osrt = [r for r in rows if r[0] == "osrt"]
    assert len(osrt) == 2 * 1212 and not [r for r in rows if is_device(r[5])]
    ranks = {r[5].split(" · ")[0] for r in osrt}
    assert ranks == {"rank 0", "rank 1"}
    assert all(re.match(r"^rank \d · \S+ \[\d+\]$", r[5]) for r in rows)
    sel = merge("job0", paths, MergeOptions(devices=(0,)), root=tmp_path / "ws")
    names = {name for _, name in perfetto_rows(sel.workspace.json_gz, PROCESSES, tmp_path)}
    assert {n.split(" · ")[1].split(" [")[0] for n in names} == {
        "Device 0: Tesla V100-PCIE-32GB",
        "raiderstream",
    }
    assert len(names) == 4


def test_window_and_devices_apply_to_the_host_processes(alpa, tmp_path):
    """alpa with --devices 1 --window 0:2: its python process (work on
    devices 1 and 2) stays with the OS runtime calls starting in the first
    2 s, each once; the process without GPU work is dropped."""
    opts = Options(output_dir=tmp_path / "sel", database=False, devices=(1,), window=(0.0, 2.0))
    res = convert(ALPA, opts)
    names = {name for _, name in perfetto_rows(res.workspace.json_gz, PROCESSES, tmp_path)}
    assert names == {"Device 1: NVIDIA GeForce RTX 3090", "python [69286]"}
    rows = perfetto_rows(res.workspace.json_gz, CPU_SLICES, tmp_path)
    # the window counts from the trace's first event (what the UI shows as 0)
    [(first,)] = duckdb.execute(
        f"SELECT min(start_ns) FROM '{alpa.workspace.events_parquet}'"
    ).fetchall()
    start, end = first, first + 2 * 10**9
    [(expected,)] = duckdb.execute(
        f"SELECT count(*) FROM '{alpa.workspace.events_parquet}' WHERE cat = 'osrt' "
        f"AND os_pid = 69286 AND start_ns >= {start} AND start_ns < {end}"
    ).fetchall()
    assert 6020 > len(rows) == expected > 0
    assert {r[5] for r in rows} == {"python [69286]"}
