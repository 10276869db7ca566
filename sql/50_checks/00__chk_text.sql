-- _chk_us and _chk_q: how check messages print a time and a name.
--
-- Reads: nothing (scalar macros).
-- Invariants: _chk_us(ns) is exact integer arithmetic: µs with 3 decimals
-- ('-' for negative values, '?' for NULL); _chk_q(s) is s in single quotes,
-- or null when NULL.

CREATE OR REPLACE MACRO _chk_us(ns) AS
    CASE WHEN ns IS NULL THEN '?'
         ELSE CASE WHEN ns < 0 THEN '-' ELSE '' END
              || CAST(abs(ns) // 1000 AS VARCHAR) || '.'
              || lpad(CAST(abs(ns) % 1000 AS VARCHAR), 3, '0') END;

CREATE OR REPLACE MACRO _chk_q(s) AS coalesce('''' || s || '''', 'null');
