-- stg_columns_not_in_schema: stand-in columns that the export's schema is too
-- old to have (nsys_column_versions), so their absence is expected.
--
-- Reads: nsys_column_versions, stg_export_info.
-- Invariants: empty when the export has no schema version (then every
-- missing column is reported); versions compare as integer lists
-- (3.17.2 < 3.23.3). nsys_duck/convert.py leaves these columns out of the
-- summary line "export columns missing (read as NULL)".
-- Column comments from: nsys_column_versions.
-- Role: columns-not-in-schema

CREATE OR REPLACE VIEW stg_columns_not_in_schema AS
SELECT v.table_name, v.column_name, v.since_schema
FROM nsys_column_versions AS v
CROSS JOIN stg_export_info AS x
WHERE TRY_CAST(string_split(x.schema_version, '.') AS INTEGER[])
    < TRY_CAST(string_split(v.since_schema, '.') AS INTEGER[]);

COMMENT ON VIEW stg_columns_not_in_schema IS 'Stand-in columns that the export''s schema is too old to have (nsys_column_versions), so their absence is expected.';
COMMENT ON COLUMN stg_columns_not_in_schema.table_name IS 'Nsight table of the stand-in column.';
