-- _int_nvtx_owner_batches: when NVTX chains are deep, the batch in which
-- _int_nvtx_owner_paths builds each innermost owner's path (private helper
-- of _int_nvtx_owner_paths).
--
-- Reads: _int_nvtx_owner_chains, _int_nvtx_path_lookup.
-- Invariants: one row per owner_id of _int_nvtx_owner_chains when
-- _int_nvtx_path_lookup.is_deep (none otherwise); batch = 0, 1, ... by
-- owner_id, each holding the owners whose chains add up to about
-- batch_elements chain elements (an owner is never split; a batch starts
-- at the owner whose first element is past the previous batch's
-- budget), so one batch's list aggregates need a bounded amount of memory.
-- batch_elements: 12M, the most one batch held when pytorch x400 (203M
-- chain elements, 16 batches of owner_id % 16) ran at the default 2GB.
-- Before, the batches were owner_id % 16 whatever the size: 16 statements
-- each scanning every chain; now pytorch x40 (20M elements) is 2 batches
-- and x200 (101M) 9 (_int_nvtx_owner_paths, "Memory").

CREATE OR REPLACE TABLE _int_nvtx_owner_batches AS
WITH limits AS (SELECT 12000000 AS batch_elements),
sizes AS (
    -- no row read unless deep
    SELECT owner_id, count(*) AS elements
    FROM _int_nvtx_owner_chains
    WHERE (SELECT is_deep FROM _int_nvtx_path_lookup)
    GROUP BY owner_id
)
SELECT
    s.owner_id,
    CAST((sum(s.elements) OVER (ORDER BY s.owner_id ROWS UNBOUNDED PRECEDING)
        - s.elements) // l.batch_elements AS INTEGER) AS batch
FROM sizes AS s, limits AS l;

COMMENT ON TABLE _int_nvtx_owner_batches IS 'When NVTX chains are deep: the batch (0, 1, ...) in which each innermost owner''s path is built, about 12M chain elements a batch (private helper of _int_nvtx_owner_paths).';
COMMENT ON COLUMN _int_nvtx_owner_batches.owner_id IS 'The innermost owner (_int_nvtx_owner_chains.owner_id).';
COMMENT ON COLUMN _int_nvtx_owner_batches.batch IS 'Its batch: the chain elements of the owners before it, by owner_id, divided by 12M.';
