-- nsys_column_versions: the export schema version that added each column
-- of the stand-in DDL (nsys_tables.sql) that older exports lack.
--
-- Produces: table nsys_column_versions(table_name, column_name,
-- since_schema). Reads: nothing.
-- Why: a column the export lacks reads as NULL and the summary says so
-- ("export columns missing (read as NULL)"); a column that did not exist
-- yet in the export's schema is expected to be missing and is not reported
-- (nsys_duck/convert.py filters with this table and stg_export_info).
-- Versions: first seen in the real exports of shared/data/newer
-- (CATALOG.md, "Column changes"); lazy exports make them upper bounds.

CREATE OR REPLACE TABLE nsys_column_versions AS
SELECT * FROM (VALUES
    ('CUPTI_ACTIVITY_KIND_KERNEL', 'graphId', '3.23.3'),
    ('CUPTI_ACTIVITY_KIND_KERNEL', 'clusterX', '3.23.3'),
    ('CUPTI_ACTIVITY_KIND_KERNEL', 'clusterY', '3.23.3'),
    ('CUPTI_ACTIVITY_KIND_KERNEL', 'clusterZ', '3.23.3'),
    ('CUPTI_ACTIVITY_KIND_MEMCPY', 'copyCount', '3.17.2'),
    ('CUPTI_ACTIVITY_KIND_SYNCHRONIZATION', 'eventSyncId', '3.17.1'),
    ('CUPTI_ACTIVITY_KIND_CUDA_EVENT', 'timestamp', '3.23.3'),
    ('CUPTI_ACTIVITY_KIND_CUDA_EVENT', 'eventSyncId', '3.23.3'),
    ('SCHED_EVENTS', 'threadState', '3.16.1')
) AS t (table_name, column_name, since_schema);

COMMENT ON TABLE nsys_column_versions IS 'The export schema version that added each column of the stand-in DDL (nsys_tables.sql) that older exports lack.';
COMMENT ON COLUMN nsys_column_versions.table_name IS 'Nsight table name.';
COMMENT ON COLUMN nsys_column_versions.column_name IS 'Column name.';
COMMENT ON COLUMN nsys_column_versions.since_schema IS 'Export schema version that added the column.';
