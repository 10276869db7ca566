-- sync_apis: the CUDA synchronization API calls the trace draws as
-- synchronization (cat 'cuda_sync') even when they have no GPU-side
-- synchronization record.
--
-- Reads: nothing (a domain table: stg_runtime_calls.is_sync reads it).
-- Invariants: api_name is the base name (cuda_api_base: no CUPTI callback
-- version, no _ptsz/_ptds), runtime and driver spellings. Other
-- synchronizing calls (event synchronize, stream wait event) are cuda_sync
-- through their CUPTI_ACTIVITY_KIND_SYNCHRONIZATION rows; every other call
-- is cuda_api (int_runtime_calls).

CREATE OR REPLACE TABLE sync_apis AS
SELECT * FROM (VALUES
    ('cudaDeviceSynchronize', 'device'),
    ('cudaThreadSynchronize', 'device'),
    ('cudaStreamSynchronize', 'stream'),
    ('cuCtxSynchronize', 'device'),
    ('cuStreamSynchronize', 'stream')
) AS t (api_name, sync_scope);

COMMENT ON TABLE sync_apis IS 'Domain table: CUDA runtime/driver synchronization calls drawn as cuda_sync even without a GPU-side synchronization record (add a row to draw another call as cuda_sync).';
COMMENT ON COLUMN sync_apis.api_name IS 'API base name (without _v#### and _ptsz/_ptds), as stg_runtime_calls.api_base.';
COMMENT ON COLUMN sync_apis.sync_scope IS 'What the call waits for: device (context) or stream.';
