-- stg_export_tables: every table of the export, its row count and what the
-- trace does with it, so no table with rows is ignored silently (the
-- summary names each one that is not drawn).
--
-- Reads: every nsys.<TABLE> the export has (template list export_tables),
-- cpu_trace_sources.
-- role:
--   'drawn'     its rows become slices, flows or instants (the tables the
--               staging views read events from);
--   'lookup'    names, ids, enums and metadata the stages read or that
--               describe the capture (StringIds, ThreadNames, PROCESSES,
--               ProcessStreams (the processes' stdout/stderr files),
--               ENUM_*, TARGET_INFO_*, META_DATA_*, ANALYSIS_*);
--   'not drawn' anything else (sampling, overhead records, CUDA graph
--               construction, ...; and a CPU-side table left out by
--               --no-osrt, --no-sched, --no-cudnn, --no-cublas).
-- Table names are quoted as SQL text and identifiers (an export may hold
-- any name). Invariants: one row per table of the export (stand-ins for absent tables
-- are not listed); row_count is exact (count(*), metadata only for Parquet).

CREATE OR REPLACE TABLE stg_export_tables AS
WITH counts (table_name, row_count) AS (
{%- for table in export_tables %}
    {% if not loop.first %}UNION ALL {% endif -%}
    SELECT '{{ table | replace("'", "''") }}', count(*)
    FROM nsys."{{ table | replace('"', '""') }}"
{%- endfor %}
{%- if not export_tables %}
    SELECT NULL::VARCHAR, NULL::BIGINT WHERE FALSE
{%- endif %}
),
drawn (table_name) AS (
    VALUES ('CUPTI_ACTIVITY_KIND_KERNEL'), ('CUPTI_ACTIVITY_KIND_MEMCPY'),
        ('CUPTI_ACTIVITY_KIND_MEMSET'), ('CUPTI_ACTIVITY_KIND_RUNTIME'),
        ('CUPTI_ACTIVITY_KIND_GRAPH_TRACE'),
        ('CUPTI_ACTIVITY_KIND_SYNCHRONIZATION'),
        ('CUPTI_ACTIVITY_KIND_CUDA_EVENT'), ('NVTX_EVENTS')
    -- the CPU-side tables kept (--no-osrt... leaves one 'not drawn')
    UNION ALL
    SELECT table_name FROM cpu_trace_sources
    WHERE source IN ({% for s in cpu_sources %}'{{ s }}', {% endfor %}NULL)
),
lookup_patterns (pattern) AS (
    VALUES ('StringIds'), ('ThreadNames'), ('PROCESSES'), ('ProcessStreams'),
        ('ENUM\_%'),
        ('TARGET\_INFO\_%'), ('META\_DATA\_%'), ('EXPORT\_META\_DATA'),
        ('ANALYSIS\_%')
)
SELECT
    c.table_name,
    c.row_count,
    CASE
        WHEN c.table_name IN (SELECT table_name FROM drawn) THEN 'drawn'
        WHEN EXISTS (SELECT 1 FROM lookup_patterns AS l
            WHERE c.table_name LIKE l.pattern ESCAPE '\') THEN 'lookup'
        ELSE 'not drawn'
    END AS role
FROM counts AS c;

COMMENT ON TABLE stg_export_tables IS 'Every table of the export, its row count and what the trace does with it, so no table with rows is ignored silently (the summary names each one that is not drawn).';
COMMENT ON COLUMN stg_export_tables.table_name IS 'Table of the export.';
COMMENT ON COLUMN stg_export_tables.row_count IS 'Its rows.';
COMMENT ON COLUMN stg_export_tables.role IS 'drawn, lookup or not drawn.';
