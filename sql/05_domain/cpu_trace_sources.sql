-- cpu_trace_sources: the Nsight tables of the CPU side drawn beside the
-- CUDA rows (OS runtime calls, cuDNN and cuBLAS calls, thread scheduling),
-- the flag that leaves each out and its summary line.
--
-- Reads: nothing (a domain table: stg_cpu_calls, stg_sched_events,
-- stg_export_tables and trace_summary read it).
-- Invariants: source is the word of the CLI flag --no-SOURCE (Python passes
-- the kept ones as the template list cpu_sources) and, for the call tables,
-- the JSON cat and the track_class of the slices (track_classes); SCHED_EVENTS
-- rows become cat 'thread_state' slices (int_thread_states). summary_ord
-- places the line among trace_summary's lines (after 'slices', 24).

CREATE OR REPLACE TABLE cpu_trace_sources AS
SELECT * FROM (VALUES
    ('osrt', 'OSRT_API', 'OS runtime calls', 25),
    ('cudnn', 'CUDNN_EVENTS', 'cuDNN calls', 26),
    ('cublas', 'CUBLAS_EVENTS', 'cuBLAS calls', 27),
    ('sched', 'SCHED_EVENTS', 'thread scheduling events', 28)
) AS t (source, table_name, metric, summary_ord);

COMMENT ON TABLE cpu_trace_sources IS 'Domain table: the CPU-side Nsight tables drawn beside the CUDA rows, the --no-SOURCE flag leaving each out, and their summary line.';
COMMENT ON COLUMN cpu_trace_sources.source IS 'Flag word (--no-osrt ...); for call tables also the slices'' cat and track_class.';
COMMENT ON COLUMN cpu_trace_sources.table_name IS 'Nsight table read.';
COMMENT ON COLUMN cpu_trace_sources.metric IS 'trace_summary.metric counting the rows drawn.';
COMMENT ON COLUMN cpu_trace_sources.summary_ord IS 'Print position of that line in trace_summary.';
