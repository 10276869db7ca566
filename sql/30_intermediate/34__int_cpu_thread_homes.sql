-- _int_cpu_thread_homes: under which homes each CPU thread's CPU-side
-- tracks (OS Runtime, cuDNN, cuBLAS, Thread State) appear (private helper
-- of int_slices).
--
-- Reads: _int_cpu_homes, int_runtime_calls, int_runtime_links,
-- int_thread_states, stg_cpu_calls.
-- Invariants: one row per (global_tid, home_id); is_primary on the lowest
-- home of each thread. A thread that launched GPU work is shown under each
-- device its work ran on, next to its CUDA API track; any other thread
-- where its process's NVTX tracks go (_int_cpu_homes: the devices of the
-- process's GPU work, every device when it has none, or its own host home
-- when the trace has no device).

CREATE OR REPLACE TABLE _int_cpu_thread_homes AS
WITH threads AS (
    SELECT DISTINCT global_tid, proc_key FROM stg_cpu_calls
    UNION
    SELECT DISTINCT global_tid, proc_key FROM int_thread_states
),
gpu_homes AS (
    SELECT DISTINCT call.global_tid, link.device_id AS home_id
    FROM int_runtime_links AS link
    JOIN int_runtime_calls AS call ON call.call_id = link.call_id
),
homes AS (
    SELECT t.global_tid, g.home_id
    FROM threads AS t
    JOIN gpu_homes AS g ON g.global_tid = t.global_tid
    UNION ALL
    SELECT t.global_tid, ch.home_id
    FROM threads AS t
    JOIN _int_cpu_homes AS ch ON ch.proc_key = t.proc_key
    WHERE t.global_tid NOT IN (SELECT global_tid FROM gpu_homes)
)
SELECT
    global_tid, home_id,
    home_id = min(home_id) OVER (PARTITION BY global_tid) AS is_primary
FROM homes;

COMMENT ON TABLE _int_cpu_thread_homes IS 'Under which homes each CPU thread''s CPU-side tracks (OS Runtime, cuDNN, cuBLAS, Thread State) appear (private helper of int_slices).';
