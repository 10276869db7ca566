-- chk_us: a time in integer ns as the text the check messages print: µs
-- with exactly 3 decimals and the unit ("12.345 µs", "-0.001 µs").
--
-- Reads: nothing (a scalar macro).
-- Invariants: integer arithmetic only (never a float), exact for every
-- BIGINT; NULL in, NULL out. Used by the check_* views of
-- 55_pipeline_checks/ (and free for those of 50_checks/).

CREATE OR REPLACE MACRO chk_us(ns) AS
    CASE WHEN ns < 0 THEN '-' ELSE '' END
    || CAST(abs(CAST(ns AS HUGEINT)) // 1000 AS VARCHAR) || '.'
    || lpad(CAST(abs(CAST(ns AS HUGEINT)) % 1000 AS VARCHAR), 3, '0')
    || ' µs';
