"""Rules of the NVTX projection (sql/30_intermediate 36..47: int_nvtx_ranges
through int_nvtx_gpu_projection, run as one chain over given ranges, calls
and GPU operations): output-contract.md, "NVTX projection". A push/pop range
owns the launch calls of its own thread that lie wholly inside it
(inclusive at both ends, Nsight's nvtx_gpu_proj_trace); --nvtx-scope process
adds the calls of other threads of the process that start inside it; the
projection of a range on a device is [first owned op start, last owned op
end]; a range without GPU work has none."""

from __future__ import annotations

import sql_rules

PK = (1 << 24) | 5


def tid(t: int) -> int:
    return (1 << 48) | (5 << 24) | t


class Capture:
    """Ranges, calls and their GPU operations, given consistently."""

    def __init__(self):
        self.ranges: list[dict] = []
        self.calls: list[dict] = []
        self.ops: list[dict] = []
        self.links: list[dict] = []

    def range(self, start, end, message, thread=6, kind="push_pop", ends_on=None):
        nvtx_id = len(self.ranges) + 1
        self.ranges.append(
            {
                "nvtx_id": nvtx_id,
                "event_type": 59 if kind == "push_pop" else 60,
                "range_kind": kind,
                "nvtx_role": "range",
                "start_ns": start,
                "end_ns": end,
                "global_tid": tid(thread),
                "end_global_tid": ends_on,
                "proc_key": PK,
                "os_pid": 5,
                "os_tid": thread,
                "domain_id": 0,
                "domain_name": "default",
                "message": message,
            }
        )
        return nvtx_id

    def call(self, start, end, work, thread=6):
        """A launch call and its GPU operations: work = [(start, end, device)]."""
        call_id = len(self.calls) + 1
        self.calls.append(
            {
                "call_id": call_id,
                "start_ns": start,
                "end_ns": end,
                "global_tid": tid(thread),
                "proc_key": PK,
                "os_pid": 5,
                "os_tid": thread,
                "correlation_id": call_id,
                "launched_gpu_work": bool(work),
                "cat": "cuda_api",
            }
        )
        for s, e, device in work:
            op_id = len(self.ops) + 1
            self.ops.append(
                {
                    "op_id": op_id,
                    "start_ns": s,
                    "end_ns": e,
                    "device_id": device,
                    "proc_key": PK,
                    "correlation_id": call_id,
                    "cat": "kernel",
                }
            )
            self.links.append(
                {"call_id": call_id, "op_id": op_id, "op_cat": "kernel", "device_id": device}
            )
        return call_id

    def run(self, view, query, scope="thread"):
        con = sql_rules.run_view(
            view,
            {
                "stg_nvtx_events": self.ranges,
                "int_runtime_calls": self.calls,
                "int_gpu_ops": self.ops,
                "int_runtime_links": self.links,
            },
            since="int_nvtx_ranges",
            options={"nvtx_scope": scope},
        )
        try:
            return sql_rules.rows(con, query)
        finally:
            con.close()

    def projection(self, scope="thread"):
        return self.run(
            "int_nvtx_gpu_projection",
            "SELECT message, device_id, start_ns, end_ns, gpu_op_count, launch_count "
            "FROM int_nvtx_gpu_projection",
            scope,
        )

    def paths(self, scope="thread"):
        return self.run(
            "int_nvtx_op_paths",
            "SELECT o.start_ns, p.nvtx_names FROM int_nvtx_op_paths p "
            "JOIN int_gpu_ops o USING (op_id)",
            scope,
        )


def two_threads() -> Capture:
    c = Capture()
    c.range(0, 100, "step")
    c.call(10, 20, [(200, 300, 0)])  # inside: owned
    c.call(90, 110, [(400, 500, 0)])  # outlasts the range: not owned
    c.call(30, 40, [(600, 700, 0)], thread=7)  # another thread, starts inside
    return c


def test_thread_scope_owns_calls_wholly_inside_on_its_thread():
    assert two_threads().projection() == [("step", 0, 200, 300, 1, 1)]


def test_process_scope_adds_other_threads_calls_starting_inside():
    assert two_threads().projection("process") == [("step", 0, 200, 700, 2, 2)]


def test_containment_is_inclusive_at_both_ends():
    c = Capture()
    c.range(10, 20, "r")
    c.call(10, 20, [(50, 60, 0)])
    assert c.projection() == [("r", 0, 50, 60, 1, 1)]


def test_nested_ranges_outer_covers_its_children():
    c = Capture()
    c.range(0, 100, "outer")
    c.range(10, 50, "inner")
    c.call(20, 30, [(200, 300, 0)])
    c.call(60, 70, [(400, 500, 0)])
    assert c.projection() == [("inner", 0, 200, 300, 1, 1), ("outer", 0, 200, 500, 2, 2)]
    assert c.paths() == [(200, ["outer", "inner"]), (400, ["outer"])]


def test_projection_is_split_per_device():
    c = Capture()
    c.range(0, 100, "r")
    c.call(10, 20, [(200, 300, 0)])
    c.call(30, 40, [(150, 250, 1), (260, 270, 1)])
    assert c.projection() == [("r", 0, 200, 300, 1, 1), ("r", 1, 150, 270, 2, 1)]


def test_a_graph_launch_counts_once():
    c = Capture()
    c.range(0, 100, "r")
    c.call(10, 20, [(200, 210, 0), (210, 230, 0), (240, 250, 0)])
    assert c.projection() == [("r", 0, 200, 250, 3, 1)]


def test_a_range_without_gpu_work_has_no_projection():
    c = Capture()
    c.range(0, 100, "busy")
    c.range(200, 300, "idle")
    c.call(10, 20, [(50, 60, 0)])
    c.call(210, 220, [])  # a call that launched nothing
    assert [r[0] for r in c.projection()] == ["busy"]


def test_crossing_start_end_ranges_both_own_the_shared_call():
    c = Capture()
    c.range(0, 50, "a", kind="start_end")
    c.range(30, 100, "b", kind="start_end")
    c.call(35, 45, [(200, 210, 0)])
    c.call(60, 70, [(300, 310, 0)])
    assert c.projection() == [("a", 0, 200, 210, 1, 1), ("b", 0, 200, 310, 2, 2)]


def test_range_ending_on_another_thread_uses_the_process_rule():
    c = Capture()
    c.range(0, 100, "handoff", kind="start_end", ends_on=tid(7))
    c.call(10, 20, [(200, 210, 0)], thread=7)
    assert c.projection() == [("handoff", 0, 200, 210, 1, 1)]


def test_op_owners_lists_each_owning_range():
    c = Capture()
    c.range(0, 100, "outer")
    c.range(10, 50, "inner")
    c.call(20, 30, [(200, 300, 0)])
    out = c.run(
        "int_nvtx_op_owners",
        "SELECT nvtx_id, op_id FROM int_nvtx_op_owners",
    )
    assert out == [(1, 1), (2, 1)]


def test_crossing_ranges_contain_inclusively_too():
    # where the range tree does not decide (ranges that cross), ownership is
    # still inclusive at both ends
    c = Capture()
    c.range(0, 50, "a", kind="start_end")
    c.range(30, 100, "b", kind="start_end")
    c.call(40, 50, [(200, 210, 0)])
    c.call(30, 100, [(300, 310, 0)])
    assert c.projection() == [("a", 0, 200, 210, 1, 1), ("b", 0, 200, 310, 2, 2)]
