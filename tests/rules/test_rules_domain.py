"""Rules of the domain tables (sql/05_domain), read against the output
contract (/work/shared/spec/output-contract.md, Tracks and Events): each
expectation below is the contract's sentence, not the table pasted."""

from __future__ import annotations

import pytest
import sql_rules


def table(name: str, columns: str) -> list[tuple]:
    return sql_rules.view_rows(name, columns=columns)


# output-contract.md, Tracks: "Copy kinds"
PCIE = {1, 2, 3, 4, 11, 12}
D2D = {5, 6, 7, 8, 10, 13}
STREAM_ONLY = {9, None}


@pytest.mark.parametrize("kind", sorted(PCIE | D2D | {9}))
def test_copy_kind_projection_is_the_contracts(kind):
    rows = dict(table("copy_kinds", "copy_kind, projection"))
    want = "pcie" if kind in PCIE else "d2d" if kind in D2D else "none"
    assert rows[kind] == want


def test_copy_kinds_have_one_unknown_row_and_unified_flags():
    rows = table("copy_kinds", "copy_kind, label, projection, is_unified")
    unknown = [r for r in rows if r[0] is None]
    assert unknown == [(None, "Unknown", "none", False)]
    assert {r[0] for r in rows if r[3]} == {11, 12, 13}
    assert {r[0] for r in rows} == PCIE | D2D | STREAM_ONLY


def test_copy_kind_summary_buckets_share_their_position():
    rows = table("copy_kinds", "summary_bucket, summary_ord")
    by_bucket: dict[str, set[int]] = {}
    for bucket, ord_ in rows:
        by_bucket.setdefault(bucket, set()).add(ord_)
    assert all(len(v) == 1 for v in by_bucket.values())
    h2d = {r[0] for r in table("copy_kinds", "copy_kind, summary_bucket") if r[1] == "memcpy H2D"}
    assert h2d == {1, 3, 11}


def test_track_classes_follow_the_contracts_order():
    rows = table("track_classes", "track_class, class_order, thread_kind, track_name")
    order = sorted(rows, key=lambda r: (r[1], r[2] or 0))
    names = [r[3] for r in order]
    # 1. Core Timeline, 2. PCIe Usage, 3. D2D Copy, Unified Memory after D2D,
    # then streams, then per CPU thread NVTX Kernel, NVTX Thread, CUDA API
    assert names[:4] == ["CUDA Core Timeline", "PCIe Usage", "D2D Copy", "Unified Memory"]
    thread = [r[3] for r in order if r[2] is not None]
    assert thread[:3] == ["NVTX Kernel", "NVTX Thread", "CUDA API"]
    assert len({(r[1], r[2]) for r in rows if r[2] is not None}) == len(thread)


def test_track_classes_lane_rules():
    rules = dict(table("track_classes", "track_class, lane_rule"))
    # X slices of GPU work never overlap partially: a lane holds disjoint ones
    for cls in ("core", "pcie", "d2d", "stream", "cuda_api"):
        assert rules[cls] == "disjoint"
    assert rules["nvtx_kernel"] == "nest"
    assert rules["thread_state"] is None  # disjoint by construction


def test_cpu_side_classes_are_not_cuda_side():
    rows = dict(table("track_classes", "track_class, cuda_side"))
    sources = {r[0] for r in table("cpu_trace_sources", "source")}
    # the call tables' track_class is their source word; sched -> thread_state
    for s in sources - {"sched"}:
        assert rows[s] is False
    assert rows["thread_state"] is False
    assert all(rows[c] for c in ("core", "stream", "nvtx_kernel", "nvtx_thread", "cuda_api"))


def test_cpu_trace_sources_are_the_cli_flags():
    from nsys_duck.pipeline import CPU_SOURCES

    assert {r[0] for r in table("cpu_trace_sources", "source")} == set(CPU_SOURCES)


# output-contract.md, Events (the flow rows)
FLOWS = {
    ("launch", "s", "cuda_api"),
    ("launch", "f", "kernel"),
    ("launch", "f", "cuda_graph"),
    ("launch_core", "f", "kernel_core"),
    ("launch_core", "f", "cuda_graph_core"),
    ("copy", "f", "memcpy"),
    ("copy", "f", "memset"),
    ("copy_pcie", "f", "memcpy_pcie"),
}


@pytest.mark.parametrize("row", sorted(FLOWS))
def test_flow_kinds_hold_the_contracts_flows(row):
    assert row in set(table("flow_kinds", "flow_cat, flow_end, slice_cat"))


def test_no_flow_joins_two_kernels():
    rows = table("flow_kinds", "flow_cat, flow_end, slice_cat")
    gpu = {
        "kernel",
        "kernel_core",
        "cuda_graph",
        "cuda_graph_core",
        "memcpy",
        "memset",
        "memcpy_pcie",
    }
    for cat in {r[0] for r in rows}:
        starts = {r[2] for r in rows if r[0] == cat and r[1] == "s"}
        ends = {r[2] for r in rows if r[0] == cat and r[1] == "f"}
        assert starts and ends, cat
        assert not starts & gpu, f"{cat} starts on GPU work"


def test_every_flow_cat_has_a_summary_line():
    cats = {r[0] for r in table("flow_kinds", "flow_cat")}
    assert {r[0] for r in table("flow_summary_metrics", "flow_cat")} == cats


def test_gpu_activity_kinds_one_projection_per_track_class():
    rows = table("gpu_activity_kinds", "slice_cat, op_cat, is_projection, track_class")
    proj = [(r[1], r[3]) for r in rows if r[2]]
    assert len(proj) == len(set(proj))
    assert ("kernel", "core") in proj and ("cuda_graph", "core") in proj
    assert ("memcpy", "pcie") in proj and ("memcpy", "d2d") in proj
    assert not [p for p in proj if p[0] == "memset"]  # memsets are not projected


@pytest.mark.parametrize(
    ("api", "scope"),
    [
        ("cudaDeviceSynchronize", "device"),
        ("cudaStreamSynchronize", "stream"),
        ("cuCtxSynchronize", "device"),
        ("cuStreamSynchronize", "stream"),
    ],
)
def test_sync_apis(api, scope):
    assert dict(table("sync_apis", "api_name, sync_scope"))[api] == scope


def test_sync_types_cover_every_id_combination_once():
    rows = table("sync_types", "has_stream, has_event")
    assert sorted(rows) == sorted({(a, b) for a in (False, True) for b in (False, True)})


def test_nvtx_event_types_ranges():
    rows = {r[0]: r[1:] for r in table("nvtx_event_types", "event_type, role, range_kind")}
    assert rows[59] == ("range", "push_pop")
    assert rows[60] == ("range", "start_end")
    assert rows[34][0] == "mark" and rows[75][0] == "domain"


def test_kineto_copy_kinds_cover_copy_kinds():
    kinds = {r[0] for r in table("copy_kinds", "copy_kind")}
    rows = dict(table("kineto_copy_kinds", "copy_kind, kineto_kind"))
    assert set(rows) == kinds
    assert rows[1] == "HtoD" and rows[2] == "DtoH" and rows[10] == "PtoP"
    assert rows[11] == rows[1] and rows[12] == rows[2] and rows[13] == rows[8]


def test_kineto_categories_leave_projections_out():
    rows = table("kineto_categories", "slice_cat, kineto_cat, on_gpu")
    cats = {r[0] for r in rows}
    assert not cats & {"kernel_core", "memcpy_pcie", "memcpy_d2d", "gpu_sync", "nvtx_kernel"}
    assert all(r[2] for r in rows if r[0] in {"kernel", "memcpy", "memset", "cuda_graph"})


@pytest.mark.parametrize(
    ("name", "rank"),
    [
        ("report_3", "3"),
        ("job_rank7", "7"),
        ("rank_0001", "0001"),
        ("x_r3", "3"),
        ("flameox_graph_trace_2025_5", None),
        ("report1", None),
    ],
)
def test_rank_name_patterns(name, rank):
    con = sql_rules.run_view("rank_name_patterns")
    try:
        got = con.execute(
            "SELECT any_value(regexp_extract(?, pattern, 1)) FILTER "
            "(WHERE regexp_matches(?, pattern)) FROM rank_name_patterns",
            [name, name],
        ).fetchone()[0]
    finally:
        con.close()
    assert got == rank


def test_rank_env_vars_believe_global_ranks_first():
    rows = dict(table("rank_env_vars", "var_name, priority"))
    assert rows["RANK"] < rows["LOCAL_RANK"]
    assert rows["SLURM_PROCID"] < rows["SLURM_LOCALID"]
    assert len(set(rows.values())) == len(rows)
