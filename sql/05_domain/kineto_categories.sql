-- kineto_categories: which slices the Kineto trace (nsys-duck convert
-- --format kineto, sql/60_kineto) holds and the Kineto (PyTorch profiler)
-- category each is written with.
--
-- Reads: nothing (a domain table: kineto_events reads it; edit a row here to
-- write a kind of slice with another category, or delete it to leave it out).
-- Invariants: one row per (slice_cat, event_class); slice_cat is
-- int_slices.cat of a primary slice (is_primary), event_class the CUPTI
-- eventClass of an API call (0 runtime, 1 driver; NULL for the other
-- slices). kineto_cat is the "cat" Kineto's ChromeTraceLogger writes
-- (libkineto ActivityType names: kernel, gpu_memcpy, gpu_memset,
-- cuda_runtime, cuda_driver, user_annotation). on_gpu: the event goes on
-- the GPU process of its device (pid = device id, tid = stream id, args
-- "stream" set: HTA counts it as GPU work), else on the CPU process (pid =
-- OS pid, tid = OS tid, no "stream" arg). name_prefix: the event's name
-- for memcpys ("Memcpy " + kineto_copy_kinds.kineto_kind) and memsets,
-- which HTA recognizes as memory kernels by these names (^Memcpy, ^Memset);
-- NULL keeps the slice's name (a kernel: its demangled name, as Kineto).
-- Left out on purpose (no row): the Core/PCIe/D2D copies of GPU work (not
-- primary), the GPU-side synchronization records (gpu_sync: HTA would count
-- them as kernels), CUDA event records and the projected NVTX ranges
-- (nvtx_kernel: Kineto's gpu_user_annotation lie on a stream; ours are
-- per CPU thread). A CUDA graph execution (graph-level capture, no kernel
-- rows) is GPU work like a kernel: cat kernel.

CREATE OR REPLACE TABLE kineto_categories AS
SELECT * FROM (VALUES
    ('kernel', NULL, 'kernel', TRUE, NULL),
    ('cuda_graph', NULL, 'kernel', TRUE, NULL),
    ('memcpy', NULL, 'gpu_memcpy', TRUE, 'Memcpy '),
    ('memset', NULL, 'gpu_memset', TRUE, 'Memset'),
    ('cuda_api', 0, 'cuda_runtime', FALSE, NULL),
    ('cuda_api', 1, 'cuda_driver', FALSE, NULL),
    ('cuda_sync', 0, 'cuda_runtime', FALSE, NULL),
    ('cuda_sync', 1, 'cuda_driver', FALSE, NULL),
    ('nvtx', NULL, 'user_annotation', FALSE, NULL)
) AS t (slice_cat, event_class, kineto_cat, on_gpu, name_prefix);

COMMENT ON TABLE kineto_categories IS 'Domain table: the slices the Kineto trace (--format kineto) holds and the Kineto category each is written with; a slice kind without a row is left out.';
COMMENT ON COLUMN kineto_categories.slice_cat IS 'int_slices.cat of the (primary) slice.';
COMMENT ON COLUMN kineto_categories.event_class IS 'CUPTI eventClass of an API call (0 runtime, 1 driver); NULL for other slices.';
COMMENT ON COLUMN kineto_categories.kineto_cat IS 'The Kineto "cat" of the event (libkineto ActivityType name).';
COMMENT ON COLUMN kineto_categories.on_gpu IS 'TRUE: on the device''s GPU process (pid device, tid stream, args.stream); FALSE: on the CPU process (pid OS pid, tid OS tid).';
COMMENT ON COLUMN kineto_categories.name_prefix IS 'Name of memcpys (+ the copy kind) and memsets as Kineto writes them; NULL keeps the slice''s (demangled) name.';
