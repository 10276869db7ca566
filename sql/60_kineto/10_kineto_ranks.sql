-- kineto_ranks: the ranks of the Kineto trace (nsys-duck convert/merge
-- --format kineto): one per profiled process with GPU work, each written
-- as its own trace file NAME.kineto/rank<R>.json.gz.
--
-- Reads: int_gpu_ops.
-- Invariants: a rank is a process (proc_key) with at least one GPU
-- operation (kernel, memcpy, memset, CUDA graph execution); in a merge, a
-- (report, process) pair, and then merge_reports is read too. Rank
-- numbers: in a conversion 0..N-1 by OS pid; in a merge the report's rank
-- number (merge_reports.rank_no, from names like report_3) when every
-- report has one and exactly one process with GPU work, else 0..N-1 by
-- report order (merge_reports.ordinal), then OS pid. world_size = N. The
-- file names hold nothing but the rank: HTA reads the rank from the file
-- (distributedInfo.rank), and takes every .json/.gz file of the folder.
-- Processes without GPU work (only CPU API calls or NVTX) are no rank and
-- are not written. A view: conversions that do not ask for Kineto run none
-- of it.
{% set merged = merge_relations is defined %}

CREATE OR REPLACE VIEW kineto_ranks AS
WITH processes AS (
    SELECT
        {{ 'report' if merged else 'NULL::VARCHAR' }} AS report,
        proc_key,
        min(os_pid) AS os_pid,
        count(*) AS gpu_ops
    FROM int_gpu_ops
    GROUP BY ALL
),
{%- if merged %}
numbered AS (
    SELECT
        p.*,
        m.ordinal,
        m.rank_no,
        m.label AS report_label,
        count(*) OVER (PARTITION BY p.report) AS in_report
    FROM processes AS p
    INNER JOIN merge_reports AS m ON m.report = p.report
),
by_name AS (
    SELECT bool_and(rank_no IS NOT NULL AND in_report = 1) AS ok FROM numbered
),
ranked AS (
    SELECT
        n.report, n.proc_key, n.os_pid, n.gpu_ops,
        CAST(CASE WHEN b.ok THEN n.rank_no
            ELSE row_number() OVER (ORDER BY n.ordinal, n.os_pid, n.proc_key) - 1
        END AS INTEGER) AS rank,
        n.report_label || ' · pid ' || CAST(n.os_pid AS VARCHAR) AS label
    FROM numbered AS n, by_name AS b
)
{%- else %}
ranked AS (
    SELECT
        report, proc_key, os_pid, gpu_ops,
        CAST(row_number() OVER (ORDER BY os_pid, proc_key) - 1 AS INTEGER) AS rank,
        'pid ' || CAST(os_pid AS VARCHAR) AS label
    FROM processes
)
{%- endif %}
SELECT
    rank,
    CAST(count(*) OVER () AS INTEGER) AS world_size,
    report,
    proc_key,
    os_pid,
    label,
    gpu_ops,
    'rank' || CAST(rank AS VARCHAR) || '.json.gz' AS file_name
FROM ranked;

COMMENT ON VIEW kineto_ranks IS 'The ranks of the Kineto trace (--format kineto): one per profiled process with GPU work (in a merge: per report and process), each its own file.';
COMMENT ON COLUMN kineto_ranks.rank IS 'The rank (distributedInfo.rank): 0..N-1 by OS pid; in a merge the report''s rank number when each report is one rank, else by report order and pid.';
COMMENT ON COLUMN kineto_ranks.world_size IS 'Number of ranks (distributedInfo.world_size).';
COMMENT ON COLUMN kineto_ranks.report IS 'The report of the rank in a merge (merge_reports.report); NULL in a conversion.';
COMMENT ON COLUMN kineto_ranks.proc_key IS 'Process key globalPid >> 24 of the rank''s process.';
COMMENT ON COLUMN kineto_ranks.os_pid IS 'OS process id (the pid of the rank''s CPU events).';
COMMENT ON COLUMN kineto_ranks.label IS 'Name of the rank''s CPU process in the trace (pid N; in a merge prefixed with the report label).';
COMMENT ON COLUMN kineto_ranks.gpu_ops IS 'GPU operations of the process.';
COMMENT ON COLUMN kineto_ranks.file_name IS 'The rank''s file in NAME.kineto/: rank<R>.json.gz.';
