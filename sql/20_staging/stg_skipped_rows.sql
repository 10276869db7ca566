-- stg_skipped_rows: rows of the Nsight tables that the staging views drop,
-- counted per table and reason, so nothing is lost silently (the summary
-- prints every non-zero count).
--
-- Reads: _stg_cpu_call_rows, _stg_gpu_sync_rows, _stg_graph_execution_rows,
-- _stg_kernel_rows, _stg_memcpy_rows, _stg_memset_rows,
-- _stg_nvtx_event_rows, _stg_runtime_call_rows, _stg_sched_event_rows.
-- Invariants: the reasons are the skip_reason of each staging view's rows
-- view (_stg_*_rows, the one place each rule is written): each dropped row
-- is counted once, under the first reason that applies. One row per table
-- and reason some row has (skipped > 0; a reason no row has has no row:
-- the reasons are written once, in the macros the rows views call). The
-- CPU-side tables (OSRT_API, CUDNN_EVENTS, CUBLAS_EVENTS, SCHED_EVENTS)
-- are counted whether or not --no-osrt...
-- leaves the table out. Rows left out on purpose (runtime eventClass other
-- than 0/1, the class-67 backtrace twins) have no skip_reason and are not
-- counted.
-- Role: skipped-rows (named when no slice is left)
-- Python reads: WHERE skipped > 0 ORDER BY source_table, reason

CREATE OR REPLACE VIEW stg_skipped_rows AS
WITH rows AS (
    {%- for table, name in [('CUPTI_ACTIVITY_KIND_KERNEL', '_stg_kernel_rows'),
                            ('CUPTI_ACTIVITY_KIND_MEMCPY', '_stg_memcpy_rows'),
                            ('CUPTI_ACTIVITY_KIND_MEMSET', '_stg_memset_rows'),
                            ('CUPTI_ACTIVITY_KIND_GRAPH_TRACE', '_stg_graph_execution_rows'),
                            ('CUPTI_ACTIVITY_KIND_SYNCHRONIZATION', '_stg_gpu_sync_rows'),
                            ('CUPTI_ACTIVITY_KIND_RUNTIME', '_stg_runtime_call_rows'),
                            ('NVTX_EVENTS', '_stg_nvtx_event_rows'),
                            ('SCHED_EVENTS', '_stg_sched_event_rows')] %}
    SELECT '{{ table }}' AS source_table, skip_reason FROM {{ name }}
    UNION ALL
    {%- endfor %}
    SELECT table_name, skip_reason FROM _stg_cpu_call_rows
)
SELECT source_table, skip_reason AS reason, count(*) AS skipped
FROM rows
WHERE skip_reason IS NOT NULL
GROUP BY ALL;

COMMENT ON VIEW stg_skipped_rows IS 'Rows of the Nsight tables that the staging views drop, counted per table and reason, so nothing is lost silently (the summary prints every non-zero count).';
COMMENT ON COLUMN stg_skipped_rows.source_table IS 'Nsight table.';
COMMENT ON COLUMN stg_skipped_rows.reason IS 'Why the rows were dropped.';
COMMENT ON COLUMN stg_skipped_rows.skipped IS 'Rows dropped for that reason.';
