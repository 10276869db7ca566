"""Rules of lanes, stack levels and flows (int_lane_clusters,
int_slice_lanes with the Python lanes hook, int_slice_levels, int_flows):
output-contract.md, Tracks (no partial overlap on a track, lanes as few as
the overlap requires, never deeper than Perfetto keeps) and Events (flow
ends inside their slices, s <= f)."""

from __future__ import annotations

import pytest
import sql_rules


def sl(slice_id, start, end, rule="disjoint", track=1, ph="X", **kw):
    return {
        "slice_id": slice_id,
        "start_ns": start,
        "end_ns": end,
        "lane_rule": rule,
        "track_key": track,
        "needs_lanes": rule is not None,
        "ph": ph,
        **kw,
    }


def lanes(slices) -> dict[int, int]:
    """slice_id -> lane (1 when it has no row: alone in its cluster)."""
    con = sql_rules.run_view("int_slice_lanes", {"int_slices": slices}, since="int_lane_clusters")
    try:
        placed = dict(con.execute("SELECT slice_id, lane FROM int_slice_lanes").fetchall())
    finally:
        con.close()
    return {s["slice_id"]: placed.get(s["slice_id"], 1) for s in slices}


def test_disjoint_slices_stay_in_lane_one():
    assert lanes([sl(1, 0, 10), sl(2, 10, 20), sl(3, 30, 40)]) == {1: 1, 2: 1, 3: 1}


def test_overlapping_kernels_take_as_few_lanes_as_the_overlap():
    # at most two active at once -> two lanes
    got = lanes([sl(1, 0, 10), sl(2, 5, 15), sl(3, 12, 20), sl(4, 16, 25)])
    assert got == {1: 1, 2: 2, 3: 1, 4: 2}


def test_disjoint_rule_never_stacks_even_contained_slices():
    got = lanes([sl(1, 0, 100), sl(2, 10, 20)])
    assert got == {1: 1, 2: 2}


def test_zero_ns_slice_at_a_longer_ones_start_goes_to_the_extra_lane():
    got = lanes([sl(1, 10, 10), sl(2, 10, 50)])
    assert got == {1: 2, 2: 1}


def test_tracks_are_laned_separately():
    got = lanes([sl(1, 0, 10, track=1), sl(2, 5, 15, track=2)])
    assert got == {1: 1, 2: 1}


def test_nest_rule_keeps_children_with_parents_and_splits_siblings():
    # 1 contains 2 and 3; 2 and 3 overlap partially
    got = lanes(
        [
            sl(1, 0, 100, "nest", ph="B"),
            sl(2, 10, 50, "nest", ph="B"),
            sl(3, 40, 80, "nest", ph="B"),
        ]
    )
    assert got[1] == got[2] == 1 and got[3] == 2


def test_nest_rule_equal_intervals_nest():
    got = lanes([sl(1, 0, 10, "nest", ph="B"), sl(2, 0, 10, "nest", ph="B")])
    assert got == {1: 1, 2: 1}


def no_partial_overlap(slices, placed):
    by_lane: dict[tuple, list] = {}
    for s in slices:
        by_lane.setdefault((s["track_key"], placed[s["slice_id"]]), []).append(s)
    for group in by_lane.values():
        for a in group:
            for b in group:
                if a["start_ns"] < b["start_ns"] < a["end_ns"] < b["end_ns"]:
                    return False
    return True


@pytest.mark.parametrize("rule", ["disjoint", "nest"])
def test_no_lane_holds_partially_overlapping_slices(rule):
    ph = "X" if rule == "disjoint" else "B"
    slices = [
        sl(i + 1, (i * 37) % 50, (i * 37) % 50 + 5 + (i * 13) % 30, rule, ph=ph) for i in range(25)
    ]
    placed = lanes(slices)
    assert no_partial_overlap(slices, placed)
    assert max(placed.values()) > 1  # the input does overlap


# --- int_slice_levels ---------------------------------------------------------------


def test_stacks_deeper_than_the_limit_continue_on_levels():
    depth = 1001  # B slices nested 0..1000
    slices = [sl(i + 1, i, 10_000 - i, None, ph="B") for i in range(depth)]
    con = sql_rules.run_view("int_slice_levels", {"int_slices": slices})
    try:
        levels = dict(con.execute("SELECT slice_id, level FROM int_slice_levels").fetchall())
        limit = con.execute("SELECT track_depth_levels()").fetchone()[0]
    finally:
        con.close()
    # slice_id d + 1 is at depth d: levels d // limit, rows only from level 1
    assert levels == {d + 1: d // limit for d in range(limit, depth)}


def test_shallow_stacks_have_no_level_rows():
    slices = [sl(i + 1, i, 1000 - i, None, ph="B") for i in range(50)]
    assert sql_rules.view_rows("int_slice_levels", {"int_slices": slices}) == []


# --- int_flows --------------------------------------------------------------------


def api(slice_id, call_id, start, end, home=0):
    return {
        "slice_id": slice_id,
        "call_id": call_id,
        "start_ns": start,
        "end_ns": end,
        "cat": "cuda_api",
        "home_id": home,
        "json_pid": 1,
        "json_tid": 9,
    }


def gpu(slice_id, op_id, start, end, cat="kernel", home=0):
    return {
        "slice_id": slice_id,
        "op_id": op_id,
        "start_ns": start,
        "end_ns": end,
        "cat": cat,
        "home_id": home,
        "json_pid": 1,
        "json_tid": 2,
    }


def flows(slices, links):
    return sql_rules.view_rows(
        "int_flows",
        {"int_slices_on_tracks": slices, "int_runtime_links": links},
        "flow_cat, api_slice_id, gpu_slice_id, s_ns, f_ns, is_placeable",
    )


def test_launch_and_core_flows_of_a_kernel():
    out = flows(
        [api(1, 1, 100, 200), gpu(2, 7, 300, 400), gpu(3, 7, 300, 400, "kernel_core")],
        [{"call_id": 1, "op_id": 7}],
    )
    # f strictly after the GPU slice's start, s inside the API slice
    assert out == [("launch", 1, 2, 101, 301, True), ("launch_core", 1, 3, 101, 301, True)]


def test_flow_to_work_starting_before_the_call_returns():
    out = flows([api(1, 1, 100, 200), gpu(2, 7, 150, 160, "memcpy")], [{"call_id": 1, "op_id": 7}])
    assert out == [("copy", 1, 2, 101, 151, True)]


def test_zero_ns_slices_take_their_start():
    out = flows([api(1, 1, 100, 100), gpu(2, 7, 100, 100, "memset")], [{"call_id": 1, "op_id": 7}])
    assert out == [("copy", 1, 2, 100, 100, True)]


def test_gpu_work_before_its_call_is_not_placeable():
    out = flows([api(1, 1, 100, 200), gpu(2, 7, 50, 60)], [{"call_id": 1, "op_id": 7}])
    (row,) = out
    assert row[5] is False
    assert 50 <= row[4] < 60 and row[3] <= row[4]


def test_flow_joins_the_call_under_the_same_home_only():
    out = flows(
        [api(1, 1, 100, 200, home=0), api(4, 1, 100, 200, home=1), gpu(2, 7, 300, 400, home=1)],
        [{"call_id": 1, "op_id": 7}],
    )
    assert [r[1] for r in out] == [4]


def test_flow_placement_invariants_hold_for_many_shapes():
    shapes = [
        (100, 200, 150, 151),
        (100, 101, 100, 102),
        (100, 300, 300, 300),
        (100, 102, 101, 101),
        (5, 5, 5, 9),
    ]
    for a0, a1, g0, g1 in shapes:
        (row,) = flows([api(1, 1, a0, a1), gpu(2, 7, g0, g1)], [{"call_id": 1, "op_id": 7}])
        s, f = row[3], row[4]
        assert a0 <= s and (s < a1 or a0 == a1), (a0, a1, g0, g1, s)
        assert g0 <= f and (f < g1 or g0 == g1), (a0, a1, g0, g1, f)
        if g1 - g0 > 1:
            assert f > g0
        assert s <= f


def test_no_flow_ends_on_an_unlisted_slice_kind():
    out = flows(
        [api(1, 1, 100, 200), gpu(2, 7, 300, 400, "memcpy_d2d")], [{"call_id": 1, "op_id": 7}]
    )
    assert out == []


def test_sync_flow_from_its_gpu_sync_record():
    out = flows(
        [api(1, 1, 100, 200), {**gpu(2, None, 120, 180, "gpu_sync"), "linked_call_id": 1}],
        [],
    )
    assert out == [("sync", 1, 2, 101, 121, True)]


def clustered_by_definition(slices) -> set[int]:
    """The slices sharing an overlap cluster, read straight from the rule
    of int_lane_clusters: per track in (start, lane_end, slice_id) order, a
    slice opens a cluster when it starts at or after the lane end of every
    earlier slice; a cluster of one slice needs no lane."""
    out: set[int] = set()
    for track in {s["track_key"] for s in slices}:
        rows = []
        for s in slices:
            if s["track_key"] == track and s["lane_rule"] is not None:
                lane_end = s["end_ns"]
                if s["lane_rule"] == "disjoint":
                    lane_end = max(lane_end, s["start_ns"] + 1)
                rows.append((s["start_ns"], lane_end, s["slice_id"]))
        rows.sort()
        clusters: list[list[int]] = []
        reach = None
        for start, lane_end, slice_id in rows:
            if reach is None or start >= reach:
                clusters.append([])
            clusters[-1].append(slice_id)
            reach = lane_end if reach is None else max(reach, lane_end)
        out.update(i for c in clusters if len(c) > 1 for i in c)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_clusters_are_those_of_the_running_reach(seed):
    # int_lane_clusters finds single-slice clusters with one running max
    # and a lead, not by numbering clusters: random tracks with shared
    # starts, ends on starts, equal intervals and zero-length slices must
    # give the set the rule gives
    import random

    rnd = random.Random(seed)
    slices = []
    for i in range(1, 61):
        rule = rnd.choice(["disjoint", "nest", None])
        start = rnd.randrange(0, 40)
        end = start + rnd.choice([0, 0, 1, 1, 2, 3, 5, 8, 20])
        ph = "X" if rule == "disjoint" else "B"
        slices.append(sl(i, start, end, rule, track=rnd.choice([1, 2, 3]), ph=ph))
    con = sql_rules.run_view("int_lane_clusters", {"int_slices": slices})
    try:
        got = {r[0] for r in con.execute("SELECT slice_id FROM int_lane_clusters").fetchall()}
    finally:
        con.close()
    assert got == clustered_by_definition(slices)
    assert got  # the shapes drawn always make some shared cluster
