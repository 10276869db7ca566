-- stg_cpu_calls: the CPU-side calls Nsight traced outside CUDA, one row per
-- call: OS runtime library calls (OSRT_API: pthread_mutex_lock, poll,
-- read...), cuDNN calls (CUDNN_EVENTS) and cuBLAS calls (CUBLAS_EVENTS).
--
-- Reads: _stg_cpu_call_rows, cpu_trace_sources, nsys.StringIds,
-- stg_export_info.
-- Invariants: only the tables of the sources kept (template list
-- cpu_sources: --no-osrt, --no-cudnn, --no-cublas leave one out); source is
-- the table's cpu_trace_sources.source (also the slices' cat). Every row is a call,
-- also Nsight's zero-length markers ('OS runtime libraries profiling
-- started', eventClass 31/32, 'cuDNN finished', 33/34): start = end, drawn
-- as zero-length slices, so the trace holds exactly the table's rows.
-- name = StringIds.value of nameId ('[unnamed call]' without one, counted
-- in stg_name_fallbacks like the API names). return_value (OSRT only: the
-- function's return, e.g. -1 for a failed read) and nesting_level (OSRT:
-- calls made inside another traced call, such as fopen's open, are 1+)
-- are NULL for the libraries. Rows with a skip_reason (_stg_cpu_call_rows:
-- a NULL start or end, end < start or a NULL globalTid) are NOT here:
-- stg_skipped_rows counts them. Times are UTC-epoch ns
-- (+ stg_export_info.time_offset_ns).

CREATE OR REPLACE VIEW stg_cpu_calls AS
WITH names AS (
    SELECT ids.name_id, clean_text(s.value) AS name
    FROM (SELECT DISTINCT nameId AS name_id FROM _stg_cpu_call_rows) AS ids
    LEFT JOIN nsys.StringIds AS s ON s.id = ids.name_id
)
SELECT
    src.source,
    c.start + x.time_offset_ns AS start_ns,
    c."end" + x.time_offset_ns AS end_ns,
    CAST(c.eventClass AS BIGINT) AS event_class,
    CAST(c.globalTid AS BIGINT) AS global_tid,
    nsys_proc_key(c.globalTid) AS proc_key,
    nsys_os_pid(c.globalTid) AS os_pid,
    nsys_os_tid(c.globalTid) AS os_tid,
    CAST(c.nameId AS BIGINT) AS name_id,
    coalesce(nullif(n.name, ''), '[unnamed call]') AS name,
    CAST(c.returnValue AS BIGINT) AS return_value,
    CAST(c.nestingLevel AS BIGINT) AS nesting_level
FROM _stg_cpu_call_rows AS c
JOIN cpu_trace_sources AS src ON src.table_name = c.table_name
CROSS JOIN stg_export_info AS x
LEFT JOIN names AS n ON n.name_id IS NOT DISTINCT FROM c.nameId
WHERE src.source IN ({% for s in cpu_sources %}'{{ s }}', {% endfor %}NULL)
    AND c.skip_reason IS NULL;

COMMENT ON VIEW stg_cpu_calls IS 'The CPU-side calls Nsight traced outside CUDA (OSRT_API, CUDNN_EVENTS, CUBLAS_EVENTS), one row per call, for the sources kept.';
COMMENT ON COLUMN stg_cpu_calls.source IS 'cpu_trace_sources.source: osrt, cudnn or cublas (also the cat of its slices).';
COMMENT ON COLUMN stg_cpu_calls.start_ns IS 'Start, UTC-epoch ns (Nsight''s clock).';
COMMENT ON COLUMN stg_cpu_calls.end_ns IS 'End, UTC-epoch ns (>= start_ns; = start_ns for Nsight''s markers).';
COMMENT ON COLUMN stg_cpu_calls.event_class IS 'Nsight eventClass (ENUM_NSYS_EVENT_CLASS: 27 OS runtime, 31/32 OSRT start/finish markers, 28 cuDNN, 33/34 its markers, 35/36 cuBLAS markers).';
COMMENT ON COLUMN stg_cpu_calls.global_tid IS 'Nsight globalTid of the thread.';
COMMENT ON COLUMN stg_cpu_calls.proc_key IS 'Process key globalTid >> 24 (PID, VM and hardware id).';
COMMENT ON COLUMN stg_cpu_calls.os_pid IS 'OS process id.';
COMMENT ON COLUMN stg_cpu_calls.os_tid IS 'OS thread id.';
COMMENT ON COLUMN stg_cpu_calls.name_id IS 'StringIds id of the function name (nameId).';
COMMENT ON COLUMN stg_cpu_calls.name IS 'Function name (StringIds.value), ''[unnamed call]'' without one.';
COMMENT ON COLUMN stg_cpu_calls.return_value IS 'OSRT_API.returnValue (the function''s return); NULL for cuDNN/cuBLAS.';
COMMENT ON COLUMN stg_cpu_calls.nesting_level IS 'OSRT_API.nestingLevel (0 = called by the application, 1+ = inside another traced call); NULL for cuDNN/cuBLAS.';
