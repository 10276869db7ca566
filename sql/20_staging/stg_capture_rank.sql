-- stg_capture_rank: the rank the capture's environment gives its process,
-- when it gives one: zero or one row.
--
-- Reads: nsys.TARGET_INFO_SYSTEM_ENV, rank_env_vars.
-- Invariants: the environment is TARGET_INFO_SYSTEM_ENV's DeviceEnvironment
-- text, "VAR=VALUE;VAR=VALUE..." (the environment nsys ran in, which a
-- launcher starting one nsys per rank sets); a variable of rank_env_vars
-- whose value is a whole number 0..2^31-1 is a rank, and the one of the
-- smallest priority wins (its smallest value, were the text to hold it
-- twice). A ';' inside a value (LS_COLORS) only splits that value: its
-- pieces never start with a rank variable's name and '='. An export
-- without the table, or without such a variable, has no row. nsys-duck
-- merge reads it (merge_reports: the label "rank N", "from env VAR").
-- Merge: copied (merge_reports reads each report's rank)

CREATE OR REPLACE TABLE stg_capture_rank AS
WITH assignments AS (
    SELECT unnest(string_split(value, ';')) AS assignment
    FROM nsys.TARGET_INFO_SYSTEM_ENV
    WHERE name = 'DeviceEnvironment'
),
ranks AS (
    SELECT
        v.var_name,
        v.priority,
        try_cast(substr(a.assignment, length(v.var_name) + 2) AS BIGINT) AS rank
    FROM assignments AS a
    INNER JOIN rank_env_vars AS v ON starts_with(a.assignment, v.var_name || '=')
)
SELECT
    var_name AS rank_env_var,
    rank
FROM ranks
WHERE rank BETWEEN 0 AND 2147483647
ORDER BY priority, rank
LIMIT 1;

COMMENT ON TABLE stg_capture_rank IS 'The rank the capture''s environment (TARGET_INFO_SYSTEM_ENV DeviceEnvironment) gives its process: zero or one row.';
COMMENT ON COLUMN stg_capture_rank.rank_env_var IS 'The variable it was read from (rank_env_vars.var_name: RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID...).';
COMMENT ON COLUMN stg_capture_rank.rank IS 'Its value, a whole number >= 0.';
