-- stg_name_fallbacks: names that StringIds does not resolve, per source,
-- so the summary can say which names fell back to a number (nothing is
-- renamed silently).
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_KERNEL,
-- nsys.CUPTI_ACTIVITY_KIND_RUNTIME, nsys.NVTX_EVENTS, nsys.StringIds,
-- stg_cpu_calls.
-- Produces: one row per source with distinct_ids > 0: how many distinct
-- string ids had no StringIds row and what was shown instead (the
-- staging views' fallbacks: kernel#ID, cudaApi#ID, '[unnamed]',
-- '[unnamed call]').
-- string_ids_missing is TRUE when the export has no StringIds rows at
-- all: then no API call can be recognised as synchronization by its name,
-- and only calls with a GPU-side synchronization record
-- (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) are drawn as cuda_sync, the
-- others as cuda_api.

CREATE OR REPLACE TABLE stg_name_fallbacks AS
WITH used AS (
    -- distinct ids first: the anti joins then run over a few rows
    SELECT DISTINCT 'kernel names (shown as kernel#ID)' AS source,
        coalesce(shortName, demangledName) AS id
    FROM nsys.CUPTI_ACTIVITY_KIND_KERNEL
    UNION
    SELECT DISTINCT 'CUDA API names (shown as cudaApi#ID)', nameId
    FROM nsys.CUPTI_ACTIVITY_KIND_RUNTIME
    UNION
    SELECT DISTINCT 'NVTX registered strings (shown as [unnamed] or their text)',
        textId
    FROM nsys.NVTX_EVENTS
    UNION
    SELECT DISTINCT
        'OS runtime, cuDNN and cuBLAS call names (shown as [unnamed call])',
        name_id
    FROM stg_cpu_calls
),
ids AS (
    SELECT source, count(*) AS distinct_ids
    FROM used
    WHERE id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM nsys.StringIds AS s WHERE s.id = used.id)
    GROUP BY source
)
SELECT
    source,
    distinct_ids,
    NOT EXISTS (SELECT 1 FROM nsys.StringIds) AS string_ids_missing
FROM ids
WHERE distinct_ids > 0;

COMMENT ON TABLE stg_name_fallbacks IS 'Names that StringIds does not resolve, per source, so the summary can say which names fell back to a number (nothing is renamed silently).';
COMMENT ON COLUMN stg_name_fallbacks.source IS 'Which names (kernel, CUDA API, NVTX) and what was shown instead.';
COMMENT ON COLUMN stg_name_fallbacks.distinct_ids IS 'Distinct string ids without a StringIds row.';
COMMENT ON COLUMN stg_name_fallbacks.string_ids_missing IS 'The export has no StringIds rows at all.';
