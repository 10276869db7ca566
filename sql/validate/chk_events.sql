-- chk_events for the file validator: one row per element of a loaded
-- .perfetto.json.gz, in the shape the check_* views read (the pipeline
-- builds its own chk_events in 45_check_inputs/ from its tables).
--
-- Reads: json_events (nsys_duck/validate.py: a view over read_json; seq =
-- 0-based position in the file, the other columns the event's values as
-- DuckDB's JSON type: ph, cat, name, pid, tid, ts, dur, id, id2, bp, s, and
-- args of M events).
-- Invariants: one row per array element, seq unique. ts_ns/dur_ns are the
-- exact ns of the µs value (its text read as DECIMAL(18,3): below 2^42 µs a
-- double prints back to the digits written, so x 1000 is exact; values of
-- 9e12 µs and more count as unreadable; the byte scan
-- reports exponents and > 3 fraction digits). A value that cannot be
-- read exactly is NULL and problem says why ('; '-separated, each part
-- starting with the field's name: pid, tid, ts, dur, async id).

CREATE OR REPLACE VIEW chk_events AS
WITH texts AS (
    -- a JSON value's text: '"..."' for a string, digits for an integer,
    -- a '.' or an exponent for other numbers (DuckDB writes doubles so)
    SELECT seq,
        CAST(ph AS VARCHAR) AS ph_text, CAST(cat AS VARCHAR) AS cat_text,
        CAST(name AS VARCHAR) AS name_text,
        CAST(pid AS VARCHAR) AS pid_text, CAST(tid AS VARCHAR) AS tid_text,
        CAST(ts AS VARCHAR) AS ts_text, CAST(dur AS VARCHAR) AS dur_text,
        CAST(id AS VARCHAR) AS id_text, id2, id, bp, s, args
    FROM json_events
), decimals AS (
    SELECT *,
        CASE WHEN ts_text[1] <> '"' THEN TRY_CAST(ts_text AS DECIMAL(18, 3)) END AS ts_d,
        CASE WHEN dur_text[1] <> '"' THEN TRY_CAST(dur_text AS DECIMAL(18, 3)) END AS dur_d
    FROM texts
), typed AS (
    SELECT *,
        CASE WHEN ph_text[1] = '"' THEN ph_text ->> '$' ELSE ph_text END AS ph_v,
        CASE WHEN regexp_full_match(pid_text, '-?[0-9]+') THEN TRY_CAST(pid_text AS BIGINT) END
            AS pid_v,
        CASE WHEN regexp_full_match(tid_text, '-?[0-9]+') THEN TRY_CAST(tid_text AS BIGINT) END
            AS tid_v,
        -- ns = whole µs x 1000 + fraction x 1000 (exact integer parts, no
        -- DECIMAL overflow); beyond 9e12 µs (> 2^42): unreadable
        CASE WHEN abs(ts_d) < 9000000000000
             THEN CAST(trunc(ts_d) AS BIGINT) * 1000 + CAST((ts_d - trunc(ts_d)) * 1000 AS BIGINT)
        END AS ts_v,
        CASE WHEN abs(dur_d) < 9000000000000
             THEN CAST(trunc(dur_d) AS BIGINT) * 1000
                  + CAST((dur_d - trunc(dur_d)) * 1000 AS BIGINT)
        END AS dur_v
    FROM decimals
)
SELECT seq,
    ph_v AS ph,
    CASE WHEN cat_text[1] = '"' THEN cat_text ->> '$' ELSE cat_text END AS cat,
    CASE WHEN name_text[1] = '"' THEN name_text ->> '$' ELSE name_text END AS name,
    pid_v AS pid, tid_v AS tid, ts_v AS ts_ns, dur_v AS dur_ns,
    CASE WHEN ph_v IN ('s', 'f') THEN id_text
         WHEN ph_v IN ('b', 'e', 'n')
              AND json_type(coalesce(id2 -> '$.local', id2 -> '$.global', id))
                  IN ('UBIGINT', 'BIGINT', 'VARCHAR')
             THEN CAST(coalesce(id2 -> '$.local', id2 -> '$.global', id) AS VARCHAR) END AS id,
    CASE WHEN ph_v = 'f' THEN bp ->> '$' END AS bp,
    CASE WHEN ph_v IN ('i', 'I') THEN s ->> '$' END AS scope,
    CASE WHEN json_type(args -> '$.name') = 'VARCHAR' THEN args ->> '$.name' END AS meta_name,
    CASE WHEN json_type(args -> '$.sort_index') IN ('UBIGINT', 'BIGINT')
         THEN TRY_CAST(CAST(args -> '$.sort_index' AS VARCHAR) AS BIGINT) END AS meta_sort_index,
    CASE WHEN json_type(args -> '$.epoch_ns') IN ('UBIGINT', 'BIGINT')
         THEN TRY_CAST(CAST(args -> '$.epoch_ns' AS VARCHAR) AS BIGINT) END AS epoch_ns,
    CASE WHEN pid_text IS NOT NULL AND pid_v IS NULL OR tid_text IS NOT NULL AND tid_v IS NULL
              OR ts_text IS NOT NULL AND ts_v IS NULL OR dur_text IS NOT NULL AND dur_v IS NULL
              OR ph_v IN ('b', 'e', 'n')
         THEN nullif(concat_ws('; ',
        CASE WHEN pid_text IS NOT NULL AND pid_v IS NULL
             THEN 'pid ' || pid_text || ' is not an integer in 1..2^31-1' END,
        CASE WHEN tid_text IS NOT NULL AND tid_v IS NULL
             THEN 'tid ' || tid_text || ' is not an integer in 1..2^31-1' END,
        CASE WHEN ts_text[1] = '"' THEN 'ts is a string (' || ts_text || '), not a JSON number'
             WHEN ts_text IS NOT NULL AND ts_v IS NULL
             THEN 'ts ' || ts_text || ' is not a finite JSON number within range' END,
        CASE WHEN dur_text[1] = '"' THEN 'dur is a string (' || dur_text || '), not a JSON number'
             WHEN dur_text IS NOT NULL AND dur_v IS NULL
             THEN 'dur ' || dur_text || ' is not a finite JSON number within range' END,
        CASE WHEN ph_v IN ('b', 'e', 'n')
                  AND json_type(coalesce(id2 -> '$.local', id2 -> '$.global', id))
                      NOT IN ('UBIGINT', 'BIGINT', 'VARCHAR')
             THEN 'async id ' || CAST(coalesce(id2 -> '$.local', id2 -> '$.global', id) AS VARCHAR)
                  || ' is not an integer or string (Perfetto ignores it)' END
    ), '') END AS problem
FROM typed;

COMMENT ON VIEW chk_events IS 'One row per trace event of the JSON file, as the check_* views read them (exact ns; problem: fields that could not be read exactly).';
