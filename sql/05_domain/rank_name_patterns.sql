-- rank_name_patterns: the report names that say a rank, as nsys profile
-- -o NAME_%q{RANK} (or %q{OMPI_COMM_WORLD_RANK}, %q{SLURM_PROCID}) names
-- one report per rank.
--
-- Reads: nothing (a domain table: merge_reports reads it).
-- Invariants: pattern is an RE2 regular expression matched against the
-- report's own name (the last part of merge_reports.report) in lower
-- case; group 1 is the rank. A name matches when it ends in the rank right
-- after a word that says so: report_3, rank3, rank_3, rank-3, x_r3, x.r3,
-- x-r3 (and rank0000, report_0001: leading zeros are read as decimal).
-- A trailing number without such a word (a year, a version, a sequence:
-- flameox_graph_trace_2025_5, report1 of nsys's default report%n) is no
-- rank.

CREATE OR REPLACE TABLE rank_name_patterns AS
SELECT * FROM (VALUES
    ('(?:^|[^a-z0-9])report_(\d+)$', 'report_3'),
    ('(?:^|[^a-z])rank[_-]?(\d+)$', 'rank3, rank_3'),
    ('[_.-]r(\d+)$', 'x_r3')
) AS t (pattern, example);

COMMENT ON TABLE rank_name_patterns IS 'Domain table: report names that say their rank (nsys profile -o report_%q{RANK}); a trailing number alone is no rank.';
COMMENT ON COLUMN rank_name_patterns.pattern IS 'RE2 pattern over the lower-case report name; group 1 is the rank.';
COMMENT ON COLUMN rank_name_patterns.example IS 'Names it matches.';
