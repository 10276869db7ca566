-- _int_slices_thread_states: the thread states from the scheduling events
-- (int_thread_states) on the Thread State track of their thread (private
-- helper of int_slices, which documents the columns).
--
-- Reads: int_homes, int_thread_names, int_thread_states.
-- Invariants: one X slice per state (cat thread_state, name Running / Not
-- running), drawn once (is_primary TRUE), under the host home of the
-- thread's process (int_homes), never under a device; the track named
-- after the thread as Nsight names it (host_thread_track_suffix). args:
-- thread_state_args_json (cpu or previousCpu, threadState when Nsight
-- gives one).

CREATE OR REPLACE VIEW _int_slices_thread_states AS
WITH host_homes AS (
    SELECT proc_key, home_id FROM int_homes WHERE home_kind = 'host'
)

SELECT
    'thread_state' AS cat, 'X' AS ph, st.state AS name, st.start_ns,
    st.end_ns, hh.home_id, 'thread_state' AS track_class, st.proc_key,
    st.os_pid AS key1, st.os_tid AS key2, 0 AS key3,
    host_thread_track_suffix(st.os_tid, tl.thread_name)
        AS track_base_name,
    st.proc_key AS owner_proc_key, st.os_pid, st.os_tid,
    TRUE AS is_primary,
    thread_state_args_json(st.is_running, st.cpu, st.thread_state)
        AS args_json
FROM int_thread_states AS st
JOIN host_homes AS hh ON hh.proc_key = st.proc_key
LEFT JOIN int_thread_names AS tl ON tl.global_tid = st.global_tid;

COMMENT ON VIEW _int_slices_thread_states IS 'int_slices rows of the thread states, on the Thread State track of their thread under the host home of its process (private helper of int_slices).';
