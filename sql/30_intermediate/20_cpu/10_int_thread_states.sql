-- int_thread_states: what each CPU thread was doing between two of its
-- scheduling events: running on a CPU, or not running (descheduled:
-- blocked, sleeping or preempted; SCHED_EVENTS does not say which).
--
-- Reads: stg_sched_events.
-- Grain: one row per scheduling event that has a later event of the same
-- thread: the state the event begins, until that next event. So a thread
-- with n events has n - 1 states, and the trace's 'thread_state' slices
-- number the SCHED_EVENTS rows minus the threads (check_source_counts). A
-- sched-in begins 'Running' on its cpu; a sched-out begins 'Not running'
-- (cpu: the CPU it left); thread_state: Nsight's state of the event, when
-- newer exports give one (a sched-out of a Terminated thread). Events at the same ns keep the export's order of
-- sched-out before sched-in (a zero-length state). Nothing is drawn before
-- a thread's first event or after its last: the capture does not say.
-- Invariants: per thread the states are disjoint and contiguous
-- (end_ns = the next state's start_ns).
-- Column comments from: stg_sched_events.

CREATE OR REPLACE TABLE int_thread_states AS
SELECT * FROM (
    SELECT
        global_tid, proc_key, os_pid, os_tid,
        CASE WHEN is_sched_in THEN 'Running' ELSE 'Not running' END AS state,
        is_sched_in AS is_running,
        cpu,
        thread_state,
        at_ns AS start_ns,
        lead(at_ns) OVER (PARTITION BY global_tid
            ORDER BY at_ns, is_sched_in) AS end_ns
    FROM stg_sched_events
)
WHERE end_ns IS NOT NULL;

COMMENT ON TABLE int_thread_states IS 'What each CPU thread was doing between two of its scheduling events (SCHED_EVENTS): Running on a CPU, or Not running.';
COMMENT ON COLUMN int_thread_states.proc_key IS 'Process key globalTid >> 24.';
COMMENT ON COLUMN int_thread_states.state IS 'Running or Not running (the slice name).';
COMMENT ON COLUMN int_thread_states.is_running IS 'TRUE for Running (begun by a sched-in).';
COMMENT ON COLUMN int_thread_states.cpu IS 'Running: the CPU the thread runs on; Not running: the CPU it left.';
COMMENT ON COLUMN int_thread_states.thread_state IS 'Nsight''s thread state of the event (stg_sched_events.thread_state, e.g. Terminated), NULL when not exported.';
COMMENT ON COLUMN int_thread_states.start_ns IS 'Start, UTC-epoch ns: the scheduling event.';
COMMENT ON COLUMN int_thread_states.end_ns IS 'End, UTC-epoch ns: the thread''s next scheduling event.';
