-- flow_kinds: which kinds of slice each kind of flow joins (one row per
-- flow kind and slice kind it may start or end in).
--
-- Reads: nothing (a domain table: edit a row here to change the rule
-- everywhere: int_flows draws from it, the check_* views check against it).
-- Invariants: flow_cat is the JSON "cat" (and "name") of both events of a
-- flow; flow_end is 's' (the API call end) or 'f' (the GPU end, "bp":"e");
-- slice_cat is the JSON "cat" of the X slice that end lies in. Every
-- flow_cat has at least one 's' row and one 'f' row. Source:
-- output-contract.md, Events (flows: launch, launch_core, copy, copy_pcie,
-- sync; never kernel -> kernel).

CREATE OR REPLACE TABLE flow_kinds AS
SELECT * FROM (VALUES
    ('launch', 's', 'cuda_api'),
    ('launch', 'f', 'kernel'),
    ('launch', 'f', 'cuda_graph'),
    ('launch_core', 's', 'cuda_api'),
    ('launch_core', 'f', 'kernel_core'),
    ('launch_core', 'f', 'cuda_graph_core'),
    ('copy', 's', 'cuda_api'),
    ('copy', 'f', 'memcpy'),
    ('copy', 'f', 'memset'),
    ('copy_pcie', 's', 'cuda_api'),
    ('copy_pcie', 'f', 'memcpy_pcie'),
    ('sync', 's', 'cuda_sync'),
    ('sync', 's', 'cuda_api'),
    ('sync', 'f', 'gpu_sync')
) AS t (flow_cat, flow_end, slice_cat);

COMMENT ON TABLE flow_kinds IS 'Domain table: which kinds of slice (JSON cat) each kind of flow starts (flow_end s) and ends (flow_end f) in. Edit a row to change the rule in int_flows and the check_* views.';
COMMENT ON COLUMN flow_kinds.flow_cat IS 'The flow''s JSON cat and name: launch, launch_core, copy, copy_pcie or sync.';
COMMENT ON COLUMN flow_kinds.flow_end IS '''s'' (start, in the CUDA API call) or ''f'' (finish, in the GPU slice; written with "bp":"e").';
COMMENT ON COLUMN flow_kinds.slice_cat IS 'JSON cat of an X slice this end of the flow may lie in.';
