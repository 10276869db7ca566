-- kineto_events: the events of the Kineto trace, one JSON event object per
-- row (text), with the rank whose file it goes to.
--
-- Reads: int_gpu_ops, int_nvtx_op_paths, int_runtime_links,
-- int_slices_on_tracks, int_device_properties, kineto_categories,
-- kineto_copy_kinds, kineto_ranks, trace_base.
-- Invariants (Kineto's ChromeTraceLogger and CuptiActivity, as HTA reads
-- them):
-- - Only primary slices (is_primary: each Nsight row once, never the
--   Core/PCIe/D2D copies) of a kind with a kineto_categories row, of a
--   process that is a rank (kineto_ranks).
-- - Times: ts and dur in us after trace_base.base_ns
--   (baseTimeNanoseconds), exact decimal text from integer ns (json_us:
--   "12" or "12.345", ns kept, never a rounded float).
-- - GPU work (on_gpu): ph X, pid = device id, tid = stream id; name = the
--   kernel's demangled name, "Memcpy <kind>" (kineto_copy_kinds), "Memset",
--   or the CUDA graph's name; args "device", "context", "stream",
--   "correlation" (CUPTI correlationId; 0 when Nsight has none) and for
--   kernels "registers per thread", "shared memory" (static + dynamic),
--   "grid", "block", and when the device's SM count is known "blocks per
--   SM" (blocks / SMs) and "warps per SM" (blocks per SM x warps per
--   block), for copies and memsets "bytes" and, when dur > 0, "memory
--   bandwidth (GB/s)" (bytes / ns). No "queued" and no occupancy (Nsight
--   exports neither).
-- - CPU events: pid = OS pid, tid = OS tid; CUDA API calls (cuda_runtime,
--   cuda_driver: the API name without its _vNNNN, args "correlation") and
--   NVTX ranges (user_annotation, ph X; marks ph i, "s":"t"). They carry no
--   "stream" arg (HTA: stream -1 = CPU).
-- - "External id" (Kineto: the CPU op an event belongs to): an NVTX range's
--   own nvtx_id, and on API calls and GPU work the nvtx_id of the innermost
--   NVTX range that owns them (int_nvtx_op_paths, under --nvtx-scope); left
--   out when none does.
-- - Flows (cat and name ac2g, id = the correlationId, as Kineto links
--   runtime calls to GPU work): one "s" per API call at its start on its
--   thread, one "f" ("bp":"e") per GPU event it launched at that event's
--   start on its stream.
-- - Metadata (ph M): process_name and process_sort_index of the rank's CPU
--   process (kineto_ranks.label) and of each GPU it used ("GPU <id>",
--   process_labels the GPU name), thread_name of each stream ("stream
--   <id>") and CPU thread ("thread <tid>").
-- - Order (event_order, order_key: nsys_duck/writers.py writes each file
--   in it): 1 the X events HTA pairs by correlation (the API calls whose
--   correlation some GPU event of the rank carries, and those GPU events),
--   by correlation; 2 the other X and i events, by start; 3 the flows, by
--   start; 4 the metadata. HTA numbers the events of a file in file order
--   (its "index", flows and metadata included) and writes the index of
--   each paired event into a column of the dtype pandas downcast the
--   correlation ids to (int16 when they are below 32,768): pandas 3
--   refuses an index past that dtype (TypeError "Invalid value ... for
--   dtype 'int16'"). With the paired events first, their indices are below
--   their own count, which stays below the largest correlation id as long
--   as the rank has fewer paired GPU events than API calls (one kernel per
--   launch); flows and metadata (which HTA drops) and unpaired events
--   (NVTX ranges, API calls without GPU work) never push an index up.
-- Role: kineto-events
-- Columns: rank INTEGER, event_order INTEGER, order_key BIGINT, event_json VARCHAR
-- Python reads: ORDER BY event_order, order_key NULLS LAST, event_json
{% set merged = merge_relations is defined %}
{% set slice_report = 's.report' if merged else 'NULL::VARCHAR' %}

CREATE OR REPLACE VIEW kineto_events AS
WITH base AS (
    SELECT base_ns FROM trace_base
),
slices AS (
    -- the primary slices the trace holds, with their rank and category
    SELECT
        s.cat, s.ph, s.name, s.start_ns, s.end_ns, s.op_id, s.call_id, s.nvtx_id,
        s.device_id, s.os_pid, s.os_tid, s.context_id, s.stream_id,
        s.correlation_id, s.bytes,
        {{ slice_report }} AS report,
        r.rank, k.kineto_cat, k.on_gpu, k.name_prefix
    FROM int_slices_on_tracks AS s
    INNER JOIN kineto_categories AS k
        ON k.slice_cat = s.cat AND k.event_class IS NOT DISTINCT FROM s.event_class
    INNER JOIN kineto_ranks AS r
        ON r.proc_key = s.owner_proc_key AND r.report IS NOT DISTINCT FROM {{ slice_report }}
    WHERE s.is_primary
),
op_owners AS (
    -- the innermost NVTX range owning a GPU operation
    SELECT op_id, list_extract(nvtx_ids, -1) AS nvtx_id FROM int_nvtx_op_paths
),
call_owners AS (
    SELECT link.call_id, any_value(o.nvtx_id) AS nvtx_id
    FROM int_runtime_links AS link
    INNER JOIN op_owners AS o ON o.op_id = link.op_id
    GROUP BY link.call_id
),
unlisted_copy_kind AS (
    SELECT kineto_kind FROM kineto_copy_kinds WHERE copy_kind IS NULL
),
gpu AS (
    SELECT
        sl.*,
        op.cat AS op_cat,
        CASE
            WHEN sl.name_prefix IS NULL THEN coalesce(op.demangled_name, sl.name)
            WHEN op.cat = 'memcpy' THEN sl.name_prefix || coalesce(ck.kineto_kind,
                    (SELECT kineto_kind FROM unlisted_copy_kind))
            ELSE sl.name_prefix
        END AS kineto_name,
        op.registers_per_thread, op.static_shared_memory, op.dynamic_shared_memory,
        op.grid_x, op.grid_y, op.grid_z, op.block_x, op.block_y, op.block_z,
        op.graph_id,
        CAST(op.grid_x AS DOUBLE) * op.grid_y * op.grid_z / nullif(dp.sm_count, 0)
            AS blocks_per_sm,
        (op.block_x * op.block_y * op.block_z + dp.threads_per_warp - 1)
            // nullif(dp.threads_per_warp, 0) AS warps_per_block,
        o.nvtx_id AS owner_nvtx_id
    FROM slices AS sl
    INNER JOIN int_gpu_ops AS op ON op.op_id = sl.op_id
    LEFT JOIN kineto_copy_kinds AS ck ON ck.copy_kind = op.copy_kind
    LEFT JOIN int_device_properties AS dp
        ON dp.device_id = sl.device_id
        {%- if merged %} AND dp.report = sl.report{% endif %}
    LEFT JOIN op_owners AS o ON o.op_id = sl.op_id
    WHERE sl.on_gpu
),
cpu AS (
    SELECT
        sl.*,
        coalesce(o.nvtx_id, sl.nvtx_id) AS external_id
    FROM slices AS sl
    LEFT JOIN call_owners AS o ON o.call_id = sl.call_id
    WHERE NOT sl.on_gpu
),
paired AS (
    -- the correlation ids HTA pairs in a rank: an API call's and a GPU event's
    SELECT DISTINCT g.rank, g.correlation_id
    FROM gpu AS g
    INNER JOIN cpu AS c ON c.rank = g.rank AND c.correlation_id = g.correlation_id
),
events AS (
    -- GPU work
    SELECT
        g.rank,
        CASE WHEN pr.correlation_id IS NULL THEN 2 ELSE 1 END AS event_order,
        coalesce(pr.correlation_id, g.start_ns - base.base_ns) AS order_key,
        '{"ph":"X","cat":' || to_json(g.kineto_cat)
            || ',"name":' || to_json(g.kineto_name)
            || ',"pid":' || CAST(g.device_id AS VARCHAR)
            || ',"tid":' || CAST(coalesce(g.stream_id, 0) AS VARCHAR)
            || ',"ts":' || json_us(g.start_ns - base.base_ns)
            || ',"dur":' || json_us(g.end_ns - g.start_ns)
            || ',"args":{'
            || coalesce('"External id":' || CAST(g.owner_nvtx_id AS VARCHAR) || ',', '')
            || '"device":' || CAST(g.device_id AS VARCHAR)
            || ',"context":' || CAST(coalesce(g.context_id, 0) AS VARCHAR)
            || ',"stream":' || CAST(coalesce(g.stream_id, 0) AS VARCHAR)
            || ',"correlation":' || CAST(coalesce(g.correlation_id, 0) AS VARCHAR)
            || CASE
                WHEN g.grid_x IS NOT NULL THEN
                    ',"registers per thread":'
                    || CAST(coalesce(g.registers_per_thread, 0) AS VARCHAR)
                    || ',"shared memory":' || CAST(coalesce(g.static_shared_memory, 0)
                        + coalesce(g.dynamic_shared_memory, 0) AS VARCHAR)
                    || coalesce(',"blocks per SM":'
                        || CAST(round(g.blocks_per_sm, 6) AS VARCHAR), '')
                    || coalesce(',"warps per SM":'
                        || CAST(round(g.blocks_per_sm * g.warps_per_block, 6) AS VARCHAR), '')
                    || ',"grid":[' || CAST(g.grid_x AS VARCHAR) || ','
                    || CAST(coalesce(g.grid_y, 1) AS VARCHAR) || ','
                    || CAST(coalesce(g.grid_z, 1) AS VARCHAR) || ']'
                    || ',"block":[' || CAST(coalesce(g.block_x, 1) AS VARCHAR) || ','
                    || CAST(coalesce(g.block_y, 1) AS VARCHAR) || ','
                    || CAST(coalesce(g.block_z, 1) AS VARCHAR) || ']'
                WHEN g.bytes IS NOT NULL THEN
                    ',"bytes":' || CAST(g.bytes AS VARCHAR)
                    || coalesce(',"memory bandwidth (GB/s)":' || CAST(round(
                        g.bytes / nullif(g.end_ns - g.start_ns, 0), 6) AS VARCHAR), '')
                ELSE coalesce(',"graph id":' || CAST(g.graph_id AS VARCHAR), '')
            END
            || '}}' AS event_json
    FROM gpu AS g
    CROSS JOIN base
    LEFT JOIN paired AS pr ON pr.rank = g.rank AND pr.correlation_id = g.correlation_id
    UNION ALL
    -- CUDA API calls and NVTX ranges: slices of the CPU threads
    SELECT
        c.rank,
        CASE WHEN pr.correlation_id IS NULL THEN 2 ELSE 1 END,
        coalesce(pr.correlation_id, c.start_ns - base.base_ns),
        '{"ph":' || CASE WHEN c.ph = 'i' THEN '"i","s":"t"' ELSE '"X"' END
            || ',"cat":' || to_json(c.kineto_cat)
            || ',"name":' || to_json(c.name)
            || ',"pid":' || CAST(c.os_pid AS VARCHAR)
            || ',"tid":' || CAST(c.os_tid AS VARCHAR)
            || ',"ts":' || json_us(c.start_ns - base.base_ns)
            || CASE WHEN c.ph = 'i' THEN ''
                ELSE ',"dur":' || json_us(c.end_ns - c.start_ns) END
            || ',"args":{' || ltrim(
                coalesce(',"External id":' || CAST(c.external_id AS VARCHAR), '')
                || coalesce(',"correlation":' || CAST(c.correlation_id AS VARCHAR), ''),
                ',')
            || '}}'
    FROM cpu AS c
    CROSS JOIN base
    LEFT JOIN paired AS pr ON pr.rank = c.rank AND pr.correlation_id = c.correlation_id
    UNION ALL
    -- flows: API call -> the GPU work it launched
    SELECT DISTINCT
        c.rank,
        3,
        c.start_ns - base.base_ns,
        '{"ph":"s","id":' || CAST(c.correlation_id AS VARCHAR)
            || ',"pid":' || CAST(c.os_pid AS VARCHAR)
            || ',"tid":' || CAST(c.os_tid AS VARCHAR)
            || ',"ts":' || json_us(c.start_ns - base.base_ns)
            || ',"cat":"ac2g","name":"ac2g"}'
    FROM int_runtime_links AS link
    INNER JOIN cpu AS c ON c.call_id = link.call_id
    INNER JOIN gpu AS g ON g.op_id = link.op_id
    CROSS JOIN base
    WHERE c.correlation_id IS NOT NULL
    UNION ALL
    SELECT
        g.rank,
        3,
        g.start_ns - base.base_ns,
        '{"ph":"f","id":' || CAST(c.correlation_id AS VARCHAR)
            || ',"pid":' || CAST(g.device_id AS VARCHAR)
            || ',"tid":' || CAST(coalesce(g.stream_id, 0) AS VARCHAR)
            || ',"ts":' || json_us(g.start_ns - base.base_ns)
            || ',"cat":"ac2g","name":"ac2g","bp":"e"}'
    FROM int_runtime_links AS link
    INNER JOIN cpu AS c ON c.call_id = link.call_id
    INNER JOIN gpu AS g ON g.op_id = link.op_id
    CROSS JOIN base
    WHERE c.correlation_id IS NOT NULL
    UNION ALL
    -- metadata: the rank's CPU process and its threads
    SELECT
        r.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"process_name","pid":' || CAST(r.os_pid AS VARCHAR)
            || ',"tid":0,"args":{"name":' || to_json(r.label) || '}}'
    FROM kineto_ranks AS r
    UNION ALL
    SELECT
        r.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"process_sort_index","pid":' || CAST(r.os_pid AS VARCHAR)
            || ',"tid":0,"args":{"sort_index":0}}'
    FROM kineto_ranks AS r
    UNION ALL
    SELECT DISTINCT
        c.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"thread_name","pid":' || CAST(c.os_pid AS VARCHAR)
            || ',"tid":' || CAST(c.os_tid AS VARCHAR)
            || ',"args":{"name":"thread ' || CAST(c.os_tid AS VARCHAR) || '"}}'
    FROM cpu AS c
    UNION ALL
    -- metadata: the GPUs of the rank and their streams
    SELECT DISTINCT
        g.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"process_name","pid":' || CAST(g.device_id AS VARCHAR)
            || ',"tid":0,"args":{"name":"GPU ' || CAST(g.device_id AS VARCHAR) || '"}}'
    FROM gpu AS g
    UNION ALL
    SELECT DISTINCT
        g.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"process_labels","pid":' || CAST(g.device_id AS VARCHAR)
            || ',"tid":0,"args":{"labels":' || to_json(dp.gpu_name) || '}}'
    FROM gpu AS g
    INNER JOIN int_device_properties AS dp
        ON dp.device_id = g.device_id
        {%- if merged %} AND dp.report = g.report{% endif %}
    UNION ALL
    SELECT DISTINCT
        g.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"process_sort_index","pid":' || CAST(g.device_id AS VARCHAR)
            || ',"tid":0,"args":{"sort_index":' || CAST(g.device_id + 1 AS VARCHAR) || '}}'
    FROM gpu AS g
    UNION ALL
    SELECT DISTINCT
        g.rank,
        4,
        NULL::BIGINT,
        '{"ph":"M","name":"thread_name","pid":' || CAST(g.device_id AS VARCHAR)
            || ',"tid":' || CAST(coalesce(g.stream_id, 0) AS VARCHAR)
            || ',"args":{"name":"stream ' || CAST(coalesce(g.stream_id, 0) AS VARCHAR) || '"}}'
    FROM gpu AS g
)
SELECT rank, event_order, order_key, event_json FROM events;

COMMENT ON VIEW kineto_events IS 'The events of the Kineto trace (--format kineto), one JSON event object per row, with the rank whose file it goes to.';
COMMENT ON COLUMN kineto_events.rank IS 'The rank (kineto_ranks.rank) whose file holds the event.';
COMMENT ON COLUMN kineto_events.event_order IS 'Place of the event in its file: 1 X events HTA pairs by correlation, 2 other X and i events, 3 flows, 4 metadata.';
COMMENT ON COLUMN kineto_events.order_key IS 'Order inside event_order: the correlation id (1), the start in ns after baseTimeNanoseconds (2, 3); NULL for metadata.';
COMMENT ON COLUMN kineto_events.event_json IS 'The event as a JSON object (text, no separator).';
