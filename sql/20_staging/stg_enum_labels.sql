-- stg_enum_labels: the labels of the Nsight enum codes the args show
-- (kernel launch type and cache config, memory kinds of copies and
-- memsets, the thread state of a scheduling event), one row per (enum table, code), from the export's own ENUM_*
-- tables.
--
-- Reads: nsys.<ENUM_CUDA_MEM_KIND, ENUM_CUDA_KERNEL_LAUNCH_TYPE,
-- ENUM_CUDA_FUNC_CACHE_CONFIG, ENUM_SAMPLING_THREAD_STATE> the export has
-- (template list export_tables).
-- Invariants: (enum_table, code) is unique (one label kept for a code
-- listed twice); an ENUM table the export lacks (or one without id and
-- label columns) adds no rows: the staging views then write the code
-- itself as text (stg_kernels, stg_memcpys, stg_memsets). Nsight exports
-- these tables even when no event uses them (nsys-tables.md 1.12), so
-- labels are Nsight's own ('Pageable', 'Pinned', 'Device', 'Regular', ...);
-- no domain table repeats them. A table, not a view: NAME.duckdb keeps no
-- view over the export's files (nsys_duck/database.py), and it is tiny.

CREATE OR REPLACE TABLE stg_enum_labels AS
SELECT enum_table, code, any_value(label) AS label
FROM (
    SELECT NULL::VARCHAR AS enum_table, NULL::BIGINT AS code,
        NULL::VARCHAR AS label
    WHERE FALSE
{%- for table in ['ENUM_CUDA_MEM_KIND', 'ENUM_CUDA_KERNEL_LAUNCH_TYPE',
                  'ENUM_CUDA_FUNC_CACHE_CONFIG', 'ENUM_SAMPLING_THREAD_STATE']
    if table in export_tables and has_column(table, 'id')
        and has_column(table, 'label') %}
    UNION ALL
    SELECT '{{ table }}', TRY_CAST(id AS BIGINT), clean_text(CAST(label AS VARCHAR))
    FROM nsys.{{ table }}
{%- endfor %}
)
WHERE code IS NOT NULL AND label IS NOT NULL
GROUP BY enum_table, code;

COMMENT ON TABLE stg_enum_labels IS 'Labels of the Nsight enum codes the args show (ENUM_CUDA_MEM_KIND, ENUM_CUDA_KERNEL_LAUNCH_TYPE, ENUM_CUDA_FUNC_CACHE_CONFIG), one row per (enum table, code), from the export''s own ENUM tables.';
COMMENT ON COLUMN stg_enum_labels.enum_table IS 'The ENUM table of the export (ENUM_CUDA_MEM_KIND, ...).';
COMMENT ON COLUMN stg_enum_labels.code IS 'The code (ENUM id) as the activity tables store it.';
COMMENT ON COLUMN stg_enum_labels.label IS 'Nsight''s label of the code (e.g. Pageable, Pinned, Device; Regular).';
