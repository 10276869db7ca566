-- flow_summary_metrics: the trace_summary line that counts the drawn flows
-- of each flow cat, and its print position.
--
-- Reads: nothing (a domain table: trace_summary reads it).
-- Invariants: one row per flow_cat of flow_kinds; summary_ord places the
-- line among trace_summary's fixed lines (1..24). Flows that cannot be
-- placed are counted on one separate line.

CREATE OR REPLACE TABLE flow_summary_metrics AS
SELECT * FROM (VALUES
    ('launch', 'stream launch flows', 5),
    ('launch_core', 'Core launch flows', 6),
    ('sync', 'sync flows', 9),
    ('copy', 'stream copy flows', 15),
    ('copy_pcie', 'PCIe copy flows', 16)
) AS t (flow_cat, metric, summary_ord);

COMMENT ON TABLE flow_summary_metrics IS 'Domain table: per flow cat, the trace_summary metric counting its drawn flows and that line''s position.';
COMMENT ON COLUMN flow_summary_metrics.flow_cat IS 'flow_kinds.flow_cat (the JSON cat of the flow).';
COMMENT ON COLUMN flow_summary_metrics.metric IS 'trace_summary.metric of the line.';
COMMENT ON COLUMN flow_summary_metrics.summary_ord IS 'Print position of the line in trace_summary.';
