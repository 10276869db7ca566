"""Rules of the trace's time base, selection and parts (sql/40_trace:
trace_base, trace_selection, trace_kept_pids, trace_window, trace_size_grid,
trace_json_sizes, trace_parts, trace_part_starts, trace_events_parted,
trace_notes): output-contract.md,
Time (base_ns, [0, 2^42) us) and the headers' --window/--devices and
--max-json-size rules."""

from __future__ import annotations

import pytest
import sql_rules

from nsys_duck import writers
from nsys_duck.errors import InputError

S = 1_000_000_000  # ns per second
EPOCH = 1_700_000_000 * S
DAY = 86_400 * S


def base(slices, session):
    return sql_rules.view_rows(
        "trace_base",
        {
            "int_slices": [
                {"slice_id": i + 1, "start_ns": s, "end_ns": e} for i, (s, e) in enumerate(slices)
            ],
            "stg_export_info": [{"session_start_ns": session, "time_offset_ns": 0}],
        },
        "base_ns, first_ns",
    )


def test_base_is_the_session_start_when_not_later_and_within_a_day():
    start = EPOCH + 123_456_789  # not on a whole second
    assert base([(start + 5 * S, start + 6 * S)], start) == [(EPOCH, start + 5 * S)]


def test_base_is_the_first_event_when_the_session_starts_a_day_before():
    first = EPOCH + DAY + 2 * S + 700
    assert base([(first, first + 10)], EPOCH) == [(EPOCH + DAY + 2 * S, first)]


def test_base_is_the_first_event_when_the_session_starts_later():
    # a --ts-shift moved the events before the session start
    first = EPOCH - 10 * S + 1
    assert base([(first, first + 10)], EPOCH) == [(EPOCH - 10 * S, first)]


def test_base_floors_negative_times_to_whole_seconds():
    assert base([(-1, 5)], None) == [(-S, -1)]
    assert base([(-S, 5)], None) == [(-S, -S)]


def test_every_time_lies_in_perfettos_exact_range_or_is_refused():
    limit_us = 1 << 42
    ok_end = EPOCH + limit_us * 1000 - 1
    ((b, _),) = base([(EPOCH, ok_end)], EPOCH)
    assert 0 <= (ok_end - b) // 1000 < limit_us
    with pytest.raises(InputError, match="more than Perfetto can place exactly"):
        base([(EPOCH, EPOCH + limit_us * 1000)], EPOCH)


def test_base_without_slices_is_the_session_start():
    # rounded down to a whole second, as every base
    assert base([], EPOCH + 3) == [(EPOCH, EPOCH)]


# --- trace_selection, trace_kept_pids, trace_window -----------------------------------

FIRST = EPOCH + 500


def homes():
    return [
        {"json_pid": 1, "home_id": 0, "device_id": 0, "work_devices": [0]},
        {"json_pid": 2, "home_id": 1, "device_id": 1, "work_devices": [1]},
        {"json_pid": 3, "home_id": -10, "device_id": None, "work_devices": [1]},
        {"json_pid": 4, "home_id": -11, "device_id": None, "work_devices": []},
    ]


def selection(**options):
    given = {"trace_base": [{"base_ns": EPOCH, "first_ns": FIRST}], "int_homes": homes()}
    con = sql_rules.run_view("trace_kept_pids", given, since="trace_selection", options=options)
    try:
        sel = sql_rules.rows(con, "trace_selection")
        kept = [r[0] for r in sql_rules.rows(con, "trace_kept_pids")]
    finally:
        con.close()
    return sel, kept


def test_window_counts_seconds_from_the_first_event():
    sel, kept = selection(window_start_s=1.5, window_end_s=2)
    assert sel == [(FIRST + 1_500_000_000, FIRST + 2 * S, None)]
    assert kept == [1, 2, 3, 4]


def test_open_window_and_no_devices_keep_everything():
    assert selection() == ([(None, None, None)], [1, 2, 3, 4])


def test_devices_keep_their_homes_and_the_processes_working_there():
    sel, kept = selection(devices=[1])
    assert sel == [(None, None, [1])]
    # the host process without work on device 1 (a launcher) is left out
    assert kept == [2, 3]


def test_a_device_the_capture_lacks_is_refused():
    with pytest.raises(InputError, match="--devices 7"):
        selection(devices=[7])


def test_trace_window_counts_the_slices_it_holds():
    slices = [{"slice_id": i, "start_ns": FIRST + i * S, "json_pid": 1 + i % 2} for i in range(6)]
    out = sql_rules.view_rows(
        "trace_window",
        {
            "trace_base": [{"base_ns": EPOCH, "first_ns": FIRST}],
            "trace_selection": [
                {"window_start_ns": FIRST + S, "window_end_ns": FIRST + 4 * S, "devices": None}
            ],
            "int_slices_on_tracks": slices,
        },
        "start_after_first_ns, end_after_first_ns, slices, last_start_ns",
    )
    # starts at 1, 2, 3 s are in [1 s, 4 s)
    assert out == [(S, 4 * S, 3, FIRST + 5 * S)]


def test_no_trace_window_row_without_window():
    out = sql_rules.view_rows(
        "trace_window",
        {
            "trace_base": [{"base_ns": EPOCH, "first_ns": FIRST}],
            "trace_selection": [{"window_start_ns": None, "window_end_ns": None}],
        },
    )
    assert out == []


# --- trace_size_grid, trace_json_sizes, trace_parts, trace_part_starts, -----------
# --- trace_events_parted ---------------------------------------------------------


def x_events(sizes):
    """X events 1 us apart, the i-th ``sizes[i]`` bytes with its separator."""
    return [
        {"event_json": "x" * (n - 2), "part_ns": i * 1000, "part_ns_other": i * 1000, "ph": "X"}
        for i, n in enumerate(sizes)
    ]


def measured_trace(events, max_json_bytes):
    """A DuckDB on which the parts' stages ran over ``events``
    (trace_events_selected rows) and the JSON writer's measurement was saved
    as the writer saves it (writers.SizeMeter over trace_events_parted, then
    save_json_sizes): what the parts of the written trace are cut from."""
    starts = sorted({e["part_ns"] for e in events if e["part_ns"] is not None})
    con = sql_rules.run_view(
        "trace_events_parted",
        {
            "trace_events_selected": events,
            "int_slices": [{"slice_id": i, "start_ns": t} for i, t in enumerate(starts)],
            "trace_selection": [{"window_start_ns": None, "window_end_ns": None}],
        },
        since="trace_size_grid",
        options={"max_json_bytes": max_json_bytes},
    )
    grid = con.execute("SELECT buckets, max_json_bytes FROM trace_size_grid").fetchall()
    (buckets, limit) = grid[0]
    meter = writers.SizeMeter(buckets, limit)
    batch = con.sql(
        "SELECT size_bucket, event_json || ',\n' AS text FROM trace_events_parted"
    ).to_arrow_table()
    meter.add(batch.column("size_bucket").combine_chunks(), batch.column("text").combine_chunks())
    writers.save_json_sizes(con, meter)
    return con


def parted(n_events, event_bytes, max_json_bytes, meta=0):
    """trace_parts and the events placed in them for ``n_events`` X events
    1 us apart, of ``event_bytes`` bytes each (or the i-th of a list)."""
    sizes = event_bytes if isinstance(event_bytes, list) else [event_bytes] * n_events
    events = x_events(sizes)
    events += [{"event_json": "m" * 8, "part_ns": None, "ph": "M"} for _ in range(meta)]
    con = measured_trace(events, max_json_bytes)
    try:
        parts = sql_rules.rows(con, "trace_parts", "part, start_ns, end_ns, json_bytes")
        starts = con.execute("SELECT starts FROM trace_part_starts").fetchone()[0]
        located = sql_rules.rows(
            con,
            "SELECT part, count(*) FROM trace_events_parted WHERE part IS NOT NULL GROUP BY part",
        )
        meta_rows = con.execute(
            "SELECT count(*) FROM trace_events_parted WHERE part IS NULL"
        ).fetchone()[0]
        written = dict(
            con.execute(
                "SELECT part, sum(strlen(event_json) + 2) FROM trace_events_parted "
                "WHERE part IS NOT NULL GROUP BY part"
            ).fetchall()
        )
    finally:
        con.close()
    # what each part's file holds: its events and every metadata event
    for k, n in written.items():
        assert [p[3] for p in parts if p[0] == k] == [n + meta * 10] or len(parts) == 1
    return parts, starts, located, meta_rows


def test_one_part_when_it_fits():
    parts, starts, located, _ = parted(10, 100, 10_000)
    assert parts == [(1, None, None, 1000)]
    assert starts == []
    assert located == [(1, 10)]


def test_no_measurement_is_one_part():
    # before the JSON is written, or when no JSON is (--format pftrace)
    con = sql_rules.run_view(
        "trace_parts",
        {
            "int_slices": [{"slice_id": 1, "start_ns": 0}],
            "trace_selection": [{"window_start_ns": None, "window_end_ns": None}],
        },
        since="trace_size_grid",
        options={"max_json_bytes": 1},
    )
    try:
        assert sql_rules.rows(con, "trace_parts", "*") == [(1, None, None, None, 0)]
    finally:
        con.close()


def test_a_trace_past_the_limit_is_split_in_time_order():
    # 200 events of 100 bytes (one per time bucket, 2% of the limit each)
    parts, starts, located, meta_rows = parted(200, 100, 5_000, meta=2)
    n = len(parts)
    assert n >= 2
    assert [p[0] for p in parts] == list(range(1, n + 1))
    # part 1 opens at minus infinity, the last is open at the end; parts touch
    assert parts[0][1] is None and parts[-1][2] is None
    assert [p[2] for p in parts[:-1]] == [p[1] for p in parts[1:]]
    assert starts == [p[1] for p in parts[1:]] and starts == sorted(starts)
    # every part's measured size under the limit, and full: the next
    # event would not have fit; metadata (2 rows) in every part
    assert all(5_000 - 100 < p[3] <= 5_000 for p in parts[:-1])
    assert sum(c for _, c in located) == 200
    assert meta_rows == 2


def test_no_part_is_past_the_limit_with_coarse_buckets():
    # events of 20% of the limit: a part closes before the bucket that
    # would take it past the limit, never after
    parts, _, located, _ = parted(10, 100, 500, meta=2)
    assert len(parts) > 1 and all(p[3] <= 500 for p in parts)
    assert sum(c for _, c in located) == 10


def test_a_bucket_alone_above_the_limit_is_a_part_of_its_own():
    events = [100] * 3 + [2_000] + [100] * 3
    parts, _, located, _ = parted(len(events), events, 500)
    big = [p for p in parts if p[3] > 500]
    assert len(big) == 1 and dict(located)[big[0][0]] == 1
    assert all(p[3] <= 500 for p in parts if p is not big[0])


def test_part_bounds_are_bucket_starts():
    # the first event of part k starts at or after start_ns, the last of
    # part k-1 before it: an event's part agrees with its measured bucket
    con = measured_trace(x_events([100] * 997), 5_000)
    try:
        wrong = con.execute(
            "SELECT count(*) FROM trace_events_parted AS e, trace_parts AS p, trace_size_grid AS g "
            "WHERE e.part = p.part AND e.size_bucket IS NOT NULL "
            "AND p.start_ns IS NOT NULL AND e.size_bucket < "
            "(p.start_ns - g.lo_ns) * g.buckets // (g.hi_ns - g.lo_ns)"
        ).fetchone()[0]
        n = con.execute("SELECT count(*) FROM trace_parts").fetchone()[0]
    finally:
        con.close()
    assert n > 10 and wrong == 0


def test_each_bucket_goes_to_the_part_of_its_events():
    # trace_bucket_parts routes a spooled row by its bucket (json_spool):
    # every event's part is that of its size_bucket, and of its
    # size_bucket_other for the flows the split keeps; a bucket before the
    # first event still has a part
    events = x_events([100] * 997)
    events.append({"event_json": "flow", "part_ns": 0, "part_ns_other": 996_000, "ph": "s"})
    con = measured_trace(events, 5_000)
    try:
        wrong = con.execute(
            "SELECT count(*) FROM trace_events_parted AS e "
            "JOIN trace_bucket_parts AS b ON b.size_bucket = e.size_bucket "
            "JOIN trace_bucket_parts AS o ON o.size_bucket = e.size_bucket_other "
            "WHERE b.part <> e.part OR o.part <> e.part"
        ).fetchone()[0]
        routed = con.execute(
            "SELECT count(*) FROM trace_events_parted WHERE size_bucket IS NOT NULL"
        ).fetchone()[0]
        buckets = sql_rules.rows(
            con, "SELECT count(*), min(part), max(part) FROM trace_bucket_parts"
        )
        n = con.execute("SELECT count(*) FROM trace_parts").fetchone()[0]
    finally:
        con.close()
    assert n > 10 and wrong == 0 and routed == 997  # the flow across parts is left out
    assert buckets == [(1000, 1, n)]


def test_a_flow_across_parts_is_left_out():
    events = x_events([100] * 10)
    events.append({"event_json": "flow", "part_ns": 0, "part_ns_other": 9000, "ph": "s"})
    events.append({"event_json": "flow-in", "part_ns": 0, "part_ns_other": 0, "ph": "s"})
    con = measured_trace(events, 500)
    try:
        kept = {r[0] for r in con.execute("SELECT event_json FROM trace_events_parted").fetchall()}
    finally:
        con.close()
    assert "flow-in" in kept and "flow" not in kept


# --- trace_notes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cats", "ords"),
    [([], [1]), (["memcpy", "memset"], [2]), (["kernel", "memcpy"], []), (["cuda_graph"], [])],
)
def test_trace_notes(cats, ords):
    out = sql_rules.view_rows(
        "trace_notes",
        {"int_gpu_ops": [{"op_id": i, "cat": c} for i, c in enumerate(cats)]},
        "ord",
    )
    assert [r[0] for r in out] == ords
