-- check_metadata: process_name events without the trace's epoch.
--
-- Reads: chk_events.
-- Invariants: zero rows when every process_name M event has an integer
-- args.epoch_ns and all of them carry the same value. One row per
-- process_name without it, plus one row when the values disagree.

CREATE OR REPLACE VIEW check_metadata AS
WITH names AS (
    SELECT seq, epoch_ns FROM chk_events WHERE ph = 'M' AND name = 'process_name'
), epochs AS (
    SELECT epoch_ns, min(seq) AS seq FROM names WHERE epoch_ns IS NOT NULL GROUP BY epoch_ns
)
SELECT 'process_name args.epoch_ns is missing or not an integer' AS message, seq
FROM names WHERE epoch_ns IS NULL
UNION ALL
SELECT 'process_name events disagree on args.epoch_ns: '
        || array_to_string(list_sort(list(epoch_ns))[1:5], ', ')
        || CASE WHEN count(*) > 5 THEN ' ...' ELSE '' END AS message,
    list_sort(list(seq))[2] AS seq
FROM epochs
HAVING count(*) > 1;

COMMENT ON VIEW check_metadata IS 'Rule metadata: every process_name event has an integer args.epoch_ns, the same in all (output-contract.md, Metadata). One row per process_name without it, one row when they disagree.';
COMMENT ON COLUMN check_metadata.message IS 'What is wrong, one sentence.';
COMMENT ON COLUMN check_metadata.seq IS 'The offending event (chk_events.seq).';
