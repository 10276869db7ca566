-- stg_untimed_cuda_events: how many CUDA event records
-- (CUPTI_ACTIVITY_KIND_CUDA_EVENT) carry no GPU timestamp, so are not in
-- stg_cuda_events and not drawn.
--
-- Reads: nsys.CUPTI_ACTIVITY_KIND_CUDA_EVENT.
-- Invariants: one row; untimed counts the rows whose timestamp is 0 or
-- NULL (Nsight writes 0 unless the capture used --cuda-event-trace=true),
-- the complement of stg_cuda_events' timestamp filter. The summary prints
-- it ("CUDA event rows without a timestamp (not drawn)").

CREATE OR REPLACE VIEW stg_untimed_cuda_events AS
SELECT count(*) AS untimed
FROM nsys.CUPTI_ACTIVITY_KIND_CUDA_EVENT
WHERE coalesce(timestamp, 0) = 0;

COMMENT ON VIEW stg_untimed_cuda_events IS 'How many CUDA event records carry no GPU timestamp (not drawn): one row.';
COMMENT ON COLUMN stg_untimed_cuda_events.untimed IS 'CUDA event rows with timestamp 0 or NULL.';
