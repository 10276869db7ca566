-- _int_nvtx_call_paths: per owned launch call, the owning ranges' ids and
-- names, outer -> inner (private helper of int_nvtx_op_paths).
--
-- Reads: _int_nvtx_call_owners, int_nvtx_ranges.
-- Invariants: one row per call_id; nvtx_ids and nvtx_names have the same
-- length and order: by range start, then the longer range first, then
-- nvtx_id.

-- Paths are per call (every op of a call has the same owners), outer ->
-- inner: by range start, then the longer range first (a parent before the
-- children that share its start), then nvtx_id. The owning ranges are
-- numbered once in that order; each call sorts only those integers and maps
-- them back through two lookup lists (sorting ids and names per call, or
-- list_sort on structs, took 4-10x longer on deep stacks).
CREATE OR REPLACE TABLE _int_nvtx_call_paths AS
WITH owning AS MATERIALIZED (
    SELECT nvtx_id, message,
        CAST(row_number() OVER (ORDER BY start_ns, end_ns DESC, nvtx_id)
            AS BIGINT) AS path_order
    FROM int_nvtx_ranges
    WHERE nvtx_id IN (SELECT nvtx_id FROM _int_nvtx_call_owners)
),
lk AS (
    SELECT list(nvtx_id ORDER BY path_order) AS ids,
        list(message ORDER BY path_order) AS names
    FROM owning
),
orders AS (
    SELECT o.call_id, list(w.path_order ORDER BY w.path_order) AS orders
    FROM _int_nvtx_call_owners AS o
    JOIN owning AS w ON w.nvtx_id = o.nvtx_id
    GROUP BY o.call_id
)
SELECT
    orders.call_id,
    list_transform(orders.orders, lambda k: lk.ids[k]) AS nvtx_ids,
    list_transform(orders.orders, lambda k: lk.names[k]) AS nvtx_names
FROM orders, lk;

COMMENT ON TABLE _int_nvtx_call_paths IS 'Per owned launch call, the owning ranges'' ids and names, outer -> inner (private helper of int_nvtx_op_paths).';
