"""The real pipeline on every dev report, checked against the output contract.

Expected counts come from Nsight's own tables (read here with DuckDB), never
from our outputs.
"""

from __future__ import annotations

import zlib
from collections import Counter

import duckdb
import pyarrow.parquet as pq
import pytest

import contract
import perfetto_import
from conftest import REPORTS, check_dev_trace, report_ids

IDS = report_ids()


def nsight_count(name: str, table: str, where: str = "TRUE") -> int:
    path = REPORTS / name / "parquet" / f"{table}.parquet"
    if not path.exists():
        return 0
    return duckdb.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE {where}").fetchall()[
        0
    ][0]


def sched_threads(name: str) -> int:
    """Threads with SCHED_EVENTS rows (each has one state fewer than rows)."""
    path = REPORTS / name / "parquet" / "SCHED_EVENTS.parquet"
    if not path.exists():
        return 0
    sql = f"SELECT count(DISTINCT globalTid) FROM read_parquet('{path}')"
    return duckdb.execute(sql).fetchall()[0][0]


def test_reports_exist():
    assert len(IDS) >= 15, f"dev reports not found under {REPORTS}"


@pytest.mark.parametrize("name", IDS)
def test_counts_equal_nsight_tables(name, converted):
    res, events = converted(name)
    summary = dict(res.summary)
    kernels = nsight_count(name, "CUPTI_ACTIVITY_KIND_KERNEL")
    memcpys = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY")
    memsets = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMSET")
    h2d = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (1, 3, 11)")
    d2h = nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (2, 4, 12)")
    pushpop = nsight_count(name, "NVTX_EVENTS", "eventType IN (59, 70)")
    assert summary["kernels"] == kernels
    assert summary["memcpy H2D"] == h2d and summary["memcpy D2H"] == d2h
    assert (
        summary["memcpy H2D"]
        + summary["memcpy D2H"]
        + summary["memcpy D2D/peer"]
        + summary["memcpy other"]
    ) == memcpys
    assert summary["memset"] == memsets
    assert summary["CPU NVTX ranges"] == pushpop

    cats = Counter(e.get("cat") for e in events if e["ph"] == "X")
    assert cats["kernel"] == kernels and cats["kernel_core"] == kernels
    assert cats["memcpy"] == memcpys and cats["memset"] == memsets
    assert cats["memcpy_pcie"] == h2d + d2h
    # every linked kernel: exactly one launch and one launch_core flow
    flows = Counter(e["cat"] for e in events if e["ph"] == "s")
    assert flows["launch"] == flows["launch_core"] == summary["stream launch flows"]
    assert flows["copy_pcie"] == summary["PCIe copy flows"]
    linked = (
        nsight_count(
            name,
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "correlationId IN (SELECT correlationId FROM read_parquet('"
            + str(REPORTS / name / "parquet" / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet")
            + "') WHERE eventClass IN (0, 1))",
        )
        if kernels
        else 0
    )
    assert flows["launch"] == linked
    assert summary["JSON events"] == len(events)
    # one Parquet row per X, per B/E pair, per async b/e pair and per instant
    n_be = sum(1 for e in events if e["ph"] in ("B", "b", "i"))
    assert summary["Parquet rows"] == cats.total() + n_be


@pytest.mark.parametrize("name", IDS)
def test_perfetto_imports_without_loss(name, converted):
    """Perfetto's own importer (trace_processor_shell) loads the trace with no
    error or data-loss stat, and counts the slices of our aligned Parquet and
    the flows of our JSON (tests/perfetto_import.py). This is where the dev
    traces of ``converted`` are checked, once each."""
    converted(name)
    check_dev_trace(name)


@pytest.mark.parametrize("name", IDS)
def test_gzip_single_member_json_array(name, converted):
    res, events = converted(name)
    data = res.workspace.json_gz.read_bytes()
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    text = d.decompress(data)
    assert d.eof and d.unused_data == b"", "exactly one gzip member"
    assert text.startswith(b"[\n{") and text.endswith(b"}\n]"), "nothing after ]"
    assert events and all(isinstance(e, dict) for e in events)
    assert b"\\ud8" not in text.lower() and b"\\u0000" not in text


@pytest.mark.parametrize("name", IDS)
def test_tracks_named_and_ids_in_range(name, converted):
    res, events = converted(name)
    assert contract.unnamed_tracks(events) == []
    assert contract.bad_ids(events) == []
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert not any("Device -1" in n for n in names)
    epochs = {
        e["args"]["epoch_ns"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
    }
    assert epochs == {res.base_ns}


@pytest.mark.parametrize("name", IDS)
def test_no_partial_overlap_on_any_track(name, converted):
    res, _ = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    # start/end ranges ("b"/"e") live on Perfetto async tracks, which may overlap
    assert contract.partial_overlaps([s for s in slices if s["ph"] != "b"]) == []


@pytest.mark.parametrize("name", IDS)
def test_flows_inside_slices_and_monotonic(name, converted):
    res, events = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    assert contract.flow_problems(events, slices, res.base_ns) == []


@pytest.mark.parametrize("name", IDS)
def test_times_are_ns_exact(name, converted):
    """round(ts*1000) + base_ns gives back Nsight's integer ns for every slice."""
    res, events = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    want = Counter(
        (s["pid"], s["tid"], s["start_ns"], s["end_ns"])
        for s in slices
        if s["cat"] not in ("nvtx", "nvtx_kernel")
    )
    got = Counter(
        (
            e["pid"],
            e["tid"],
            contract.ns(e["ts"]) + res.base_ns,
            contract.ns(e["ts"]) + contract.ns(e["dur"]) + res.base_ns,
        )
        for e in events
        if e["ph"] == "X" and e["cat"] not in ("nvtx", "nvtx_kernel")
    )
    assert got == want
    assert res.base_ns % 1_000_000_000 == 0
    assert all(contract.ns(e["ts"]) >= 0 for e in events if "ts" in e)
    # the Nsight kernel times themselves survive
    path = REPORTS / name / "parquet" / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    if path.exists():
        nsight = Counter(
            zip(*pq.read_table(path, columns=["start", "end"]).to_pydict().values(), strict=True)
        )
        ours = Counter(
            (
                contract.ns(e["ts"]) + res.base_ns,
                contract.ns(e["ts"]) + contract.ns(e["dur"]) + res.base_ns,
            )
            for e in events
            if e["ph"] == "X" and e["cat"] == "kernel"
        )
        assert ours == nsight


@pytest.mark.parametrize("name", IDS)
def test_kernel_dependencies_schema(name, converted):
    res, _ = converted(name)
    table = pq.read_table(res.workspace.kernel_dependencies)
    assert table.num_rows == 0
    assert "src_correlation_id" in table.schema.names


KERAS = "keras_darknet53_nvtx_startend"  # TensorFlow: short names shared by several kernels
KERNEL_IDS = [
    n for n in IDS if (REPORTS / n / "parquet" / "CUPTI_ACTIVITY_KIND_KERNEL.parquet").exists()
]


def nsight_kernels(name: str) -> Counter:
    """Every kernel of the export with its demangled name (StringIds)."""
    folder = REPORTS / name / "parquet"
    return Counter(
        duckdb.execute(f"""
        SELECT k.correlationId, k.start, k."end", k.deviceId, k.streamId, s.value
        FROM read_parquet('{folder / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"}') AS k
        LEFT JOIN read_parquet('{folder / "StringIds.parquet"}') AS s
            ON s.id = k.demangledName""").fetchall()
    )


def test_one_short_name_several_demangled_kernels(converted):
    """keras: 'EigenMetaKernel' (the slice name) is 7 different kernels; the
    demangled_name column tells them apart, as Nsight's demangledName does."""
    res, _ = converted(KERAS)
    con = duckdb.connect()
    ours = con.execute(f"""
        SELECT count(DISTINCT demangled_name), count(*)
        FROM read_parquet('{res.workspace.events_parquet}')
        WHERE cat = 'kernel' AND name = 'EigenMetaKernel'""").fetchone()
    want = con.execute(f"""
        SELECT count(DISTINCT k.demangledName), count(*)
        FROM read_parquet('{REPORTS / KERAS / "parquet"}/CUPTI_ACTIVITY_KIND_KERNEL.parquet') AS k
        JOIN read_parquet('{REPORTS / KERAS / "parquet" / "StringIds.parquet"}') AS s
            ON s.id = k.shortName
        WHERE s.value = 'EigenMetaKernel'""").fetchone()
    assert ours == want and ours[0] == 7 and ours[1] == 844


def nsight_api_calls(name: str) -> Counter:
    """The class 0/1 RUNTIME rows of the export (Nsight's CUDA API row), per
    (OS tid, API name without its CUPTI callback version _vNNNN)."""
    folder = REPORTS / name / "parquet"
    return Counter(
        duckdb.execute(f"""
        SELECT r.globalTid % 16777216,
            regexp_replace(s.value, '_v[0-9]{{4,}}$', '')
        FROM read_parquet('{folder / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet"}') AS r
        JOIN read_parquet('{folder / "StringIds.parquet"}') AS s ON s.id = r.nameId
        WHERE r.eventClass IN (0, 1)""").fetchall()
    )


def test_every_cuda_api_call_is_drawn(converted):
    """keras: every CUDA runtime and driver call is one slice on its thread's
    CUDA API track (primary once; one device here, so no repeat), as
    Nsight's CUDA API row shows them, in our Parquet and in what Perfetto's
    importer makes of the JSON. Only launches and synchronization calls
    were drawn before (10,816 of 19,876), without cudaStreamCreateWithFlags,
    half of the capture's API time."""
    res, _ = converted(KERAS)
    want = nsight_api_calls(KERAS)
    assert want.total() == 19_876
    slices = contract.slices_table(res.workspace.events_parquet)
    api = [s for s in slices if s["cat"] in ("cuda_api", "cuda_sync")]
    assert all(s["is_primary"] for s in api)
    assert all(s["track_name"].startswith("CUDA API [") for s in api)
    assert Counter((s["os_tid"], s["name"]) for s in api) == want
    assert any(name == "cudaStreamCreateWithFlags" for _tid, name in want)
    assert dict(res.summary)["CUDA API calls"] == want.total()
    if perfetto_import.find_binary() is None:
        if perfetto_import.required():
            pytest.fail(perfetto_import.missing_message())
        pytest.skip(perfetto_import.missing_message())
    problems, imported = perfetto_import.check(res.workspace.json_gz)
    assert problems == []
    drawn = imported.slices_by_cat
    assert drawn.get("cuda_api", 0) + drawn.get("cuda_sync", 0) == want.total()


@pytest.mark.parametrize("name", KERNEL_IDS)
def test_kernel_rows_carry_the_exports_demangled_name(name, converted):
    """Each kernel row, as executed and its Core copy, has the demangledName
    string of its own export row; no other row has one."""
    res, _ = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    want = nsight_kernels(name)
    for cat in ("kernel", "kernel_core"):
        got = Counter(
            (
                s["correlation_id"],
                s["start_ns"],
                s["end_ns"],
                s["device_id"],
                s["stream_id"],
                s["demangled_name"],
            )
            for s in slices
            if s["cat"] == cat
        )
        assert got == want, (cat, list((want - got).items())[:3], list((got - want).items())[:3])
    assert all(
        s["demangled_name"] is None for s in slices if s["cat"] not in ("kernel", "kernel_core")
    )


def nsight_drawn_calls(name: str) -> tuple[int, int]:
    """(calls drawn as cuda_api, synchronization calls drawn as cuda_sync),
    from the export: every class 0/1 RUNTIME row is drawn; cuda_sync are
    those without a GPU row of the same process and correlationId that are
    named as a device/stream synchronize or have a SYNCHRONIZATION row
    (stg_runtime_calls.sql, 20_int_runtime_calls.sql), cuda_api the others."""
    folder = REPORTS / name / "parquet"
    if not (folder / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet").exists():
        return 0, 0

    def keys(tables):
        parts = [
            f"""SELECT globalPid >> 24 AS pk, correlationId AS corr
                     FROM read_parquet('{folder / f"CUPTI_ACTIVITY_KIND_{t}.parquet"}')
                     WHERE start IS NOT NULL AND "end" >= start AND deviceId >= 0"""
            for t in tables
            if (folder / f"CUPTI_ACTIVITY_KIND_{t}.parquet").exists()
        ]
        return " UNION ALL ".join(parts) or "SELECT NULL::UBIGINT AS pk, NULL::BIGINT AS corr"

    return duckdb.execute(f"""
        WITH gpu AS ({keys(("KERNEL", "MEMCPY", "MEMSET"))}),
        sync AS ({keys(("SYNCHRONIZATION",))}),
        calls AS (
            SELECT
                EXISTS (SELECT 1 FROM gpu WHERE gpu.pk = r.globalTid >> 24
                    AND gpu.corr = r.correlationId AND r.correlationId <> 0) AS launched,
                EXISTS (SELECT 1 FROM sync WHERE sync.pk = r.globalTid >> 24
                    AND sync.corr = r.correlationId AND r.correlationId <> 0) AS has_sync,
                regexp_matches(s.value, '^(cudaDeviceSynchronize|cudaThreadSynchronize|'
                    || 'cudaStreamSynchronize|cuCtxSynchronize|cuStreamSynchronize)'
                    || '(_pt(sz|ds))?(_v[0-9]{{4,}})?$') AS named_sync
            FROM read_parquet('{folder / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet"}') AS r
            LEFT JOIN read_parquet('{folder / "StringIds.parquet"}') AS s ON s.id = r.nameId
            WHERE r.eventClass IN (0, 1) AND r.start IS NOT NULL AND r."end" >= r.start
                AND r.globalTid IS NOT NULL)
        SELECT count(*) - count(*) FILTER (WHERE NOT launched AND (has_sync OR named_sync)),
            count(*) FILTER (WHERE NOT launched AND (has_sync OR named_sync))
        FROM calls""").fetchone()


@pytest.mark.parametrize("name", IDS)
def test_primary_rows_are_each_nsight_row_once(name, converted):
    """``WHERE is_primary`` gives each drawn Nsight row exactly once: per
    category the export's row count (an API call drawn under both devices of
    alpa's process, an NVTX range under every device, counts once; no Core,
    PCIe, D2D or NVTX-projection copy is primary), and no source event has
    two primary rows or none."""
    res, _ = converted(name)
    slices = contract.slices_table(res.workspace.events_parquet)
    assert contract.primary_problems(slices) == []
    calls, syncs = nsight_drawn_calls(name)
    drawable = 'start IS NOT NULL AND "end" >= start AND deviceId >= 0'
    want = Counter(
        {
            "kernel": nsight_count(name, "CUPTI_ACTIVITY_KIND_KERNEL", drawable),
            "memcpy": nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMCPY", drawable),
            "memset": nsight_count(name, "CUPTI_ACTIVITY_KIND_MEMSET", drawable),
            "gpu_sync": nsight_count(name, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", drawable),
            "cuda_api": calls,
            "cuda_sync": syncs,
            # the CPU side (tests/test_cpu_side.py checks it row by row)
            "osrt": nsight_count(name, "OSRT_API"),
            "cudnn": nsight_count(name, "CUDNN_EVENTS"),
            "cublas": nsight_count(name, "CUBLAS_EVENTS"),
            "thread_state": nsight_count(name, "SCHED_EVENTS") - sched_threads(name),
            "nvtx": nsight_count(
                name,
                "NVTX_EVENTS",
                """start IS NOT NULL AND globalTid IS NOT NULL
            AND (eventType = 34 OR (eventType IN (59, 60, 70, 71)
                AND coalesce("end", start) >= start))""",
            ),
        }
    )
    primary = Counter(s["cat"] for s in slices if s["is_primary"])
    assert primary == +want
    # the multi-device process: its calls are drawn under both devices, once primary
    if name == "alpa_dev1_2_memcpy":
        api = [s for s in slices if s["cat"] in ("cuda_api", "cuda_sync")]
        assert len(api) > sum(1 for s in api if s["is_primary"]) == calls + syncs > 0
