-- kineto_ranks: the ranks of the Kineto trace (nsys-duck convert/merge
-- --format kineto): one per profiled process with GPU work, each written
-- as its own trace file NAME.kineto/rank<R>.json.gz.
--
-- Reads: int_gpu_ops.
-- Invariants: a rank is a process (proc_key) with at least one GPU
-- operation (kernel, memcpy, memset, CUDA graph execution); in a merge, a
-- (report, process) pair, and then merge_reports is read too. Rank
-- numbers are always 0..N-1 with world_size = N (HTA's analyses index
-- ranks by them: a rank 5 of 2 makes get_idle_time_breakdown fail): in a
-- conversion by OS pid; in a merge by report order (merge_reports.ordinal:
-- the reports' own ranks, from their environment or name, keep their
-- order), then OS pid. The report's own rank stays in the label of the
-- rank's CPU process (merge_reports.label, "rank 5 · pid N"). The file
-- names hold nothing but the rank: HTA reads the rank from the file
-- (distributedInfo.rank), and takes every .json/.gz file of the folder.
-- Processes without GPU work (only CPU API calls or NVTX) are no rank and
-- are not written. A view: conversions that do not ask for Kineto run none
-- of it.
-- Role: kineto-ranks (none: no Kineto trace is written)
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
ranked AS (
    SELECT
        p.report, p.proc_key, p.os_pid, p.gpu_ops,
        CAST(row_number() OVER (ORDER BY m.ordinal, p.os_pid, p.proc_key) - 1 AS INTEGER)
            AS rank,
        m.label || ' · pid ' || CAST(p.os_pid AS VARCHAR) AS label
    FROM processes AS p
    INNER JOIN merge_reports AS m ON m.report = p.report
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
COMMENT ON COLUMN kineto_ranks.rank IS 'The rank (distributedInfo.rank): 0..N-1 by OS pid; in a merge 0..N-1 by report order (merge_reports.ordinal), then pid.';
COMMENT ON COLUMN kineto_ranks.world_size IS 'Number of ranks (distributedInfo.world_size).';
COMMENT ON COLUMN kineto_ranks.report IS 'The report of the rank in a merge (merge_reports.report); NULL in a conversion.';
COMMENT ON COLUMN kineto_ranks.proc_key IS 'Process key globalPid >> 24 of the rank''s process.';
COMMENT ON COLUMN kineto_ranks.os_pid IS 'OS process id (the pid of the rank''s CPU events).';
COMMENT ON COLUMN kineto_ranks.label IS 'Name of the rank''s CPU process in the trace (pid N; in a merge prefixed with the report label).';
COMMENT ON COLUMN kineto_ranks.gpu_ops IS 'GPU operations of the process.';
COMMENT ON COLUMN kineto_ranks.file_name IS 'The rank''s file in NAME.kineto/: rank<R>.json.gz.';
