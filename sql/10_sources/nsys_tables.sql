-- Typed stand-ins for the Nsight tables a lazy export left out.
--
-- Produces: nsys.<TABLE> for every table below that the export lacks, as an
-- EMPTY table with the Nsight 2023.4 column types; where the Parquet file
-- exists, Python has already made nsys.<TABLE> a view over it and the
-- statement is a no-op. Reads: nothing.
-- Invariants: this file lists every Nsight column the pipeline reads (see
-- nsys-tables.md section 1); a missing table means "no rows", never an error.
-- Newer exports (schema 3.16 ... 3.25, Nsight Systems 2024.6 ... 2026.2) add
-- tables and columns listed here too (graph executions, CUDA events,
-- copyCount, cluster dimensions, graphId); an older export lacks them and
-- reads NULL or no rows. NVTX_EVENTS.binaryData is never read (raw bytes
-- labelled as text: sources.NEVER_READ leaves it out of every view).
-- Column contract for tables the export HAS (checked by Python before any
-- stage runs, from this file's DDL): a column marked NOT NULL here is
-- required, and a table without it is refused with one message naming the
-- table and column; any other column listed here that the export lacks
-- reads as a NULL of this type. (NOT NULL says "the column must exist";
-- NULL values in it are still possible and are skipped and counted by
-- stg_skipped_rows.) Columns not listed here are ignored.

CREATE TABLE IF NOT EXISTS nsys.StringIds (
    id INTEGER NOT NULL, value VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_KERNEL (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, streamId UBIGINT, correlationId BIGINT, globalPid UBIGINT,
    demangledName UBIGINT, shortName UBIGINT, mangledName UBIGINT,
    launchType BIGINT, registersPerThread BIGINT,
    gridX INTEGER, gridY INTEGER, gridZ INTEGER,
    blockX INTEGER, blockY INTEGER, blockZ INTEGER,
    staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,
    localMemoryPerThread INTEGER, gridId BIGINT, graphNodeId UBIGINT,
    greenContextId UBIGINT, graphId UBIGINT,
    clusterX BIGINT, clusterY BIGINT, clusterZ BIGINT,
    -- localMemoryTotal: INTEGER in 2023.4's Parquet, but per-thread local
    -- memory times the resident threads may pass 2^31 (a SQLite export
    -- keeps such a value): read as BIGINT
    cacheConfig BIGINT, localMemoryTotal BIGINT, sharedMemoryExecuted BIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_MEMCPY (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, streamId UBIGINT, correlationId BIGINT, globalPid UBIGINT,
    bytes UBIGINT, copyKind UBIGINT, srcKind BIGINT, dstKind BIGINT,
    srcDeviceId BIGINT, dstDeviceId BIGINT, migrationCause BIGINT,
    graphNodeId UBIGINT, greenContextId UBIGINT, copyCount BIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_MEMSET (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, streamId UBIGINT, correlationId BIGINT, globalPid UBIGINT,
    value BIGINT, bytes UBIGINT, memKind BIGINT, graphNodeId UBIGINT
);

-- Graph executions in graph-level trace mode (--cuda-graph-trace=graph, the
-- default): one row per cudaGraphLaunch as executed (schema 3.24+).
CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, greenContextId UBIGINT, streamId UBIGINT,
    correlationId BIGINT, globalPid UBIGINT, graphId UBIGINT,
    graphExecId UBIGINT
);

-- CUPTI's synchronization records: the interval of a synchronizing API call
-- (stream/event/context synchronize, stream wait event).
CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, streamId UBIGINT, correlationId BIGINT,
    globalPid UBIGINT, syncType BIGINT, eventId BIGINT, eventSyncId UBIGINT
);

-- CUDA event records; timestamp appears in schema 3.23 and is 0 unless the
-- capture used --cuda-event-trace=true.
CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_CUDA_EVENT (
    deviceId BIGINT NOT NULL, contextId UBIGINT, streamId UBIGINT,
    correlationId BIGINT, globalPid UBIGINT, eventId BIGINT,
    timestamp BIGINT, eventSyncId UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_RUNTIME (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, eventClass BIGINT NOT NULL,
    globalTid UBIGINT NOT NULL,
    correlationId BIGINT, nameId UBIGINT, returnValue BIGINT,
    callchainId BIGINT
);

CREATE TABLE IF NOT EXISTS nsys.NVTX_EVENTS (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, eventType BIGINT NOT NULL,
    rangeId UBIGINT, category UBIGINT, color BIGINT, text VARCHAR,
    globalTid UBIGINT NOT NULL,
    endGlobalTid UBIGINT, textId BIGINT, domainId UBIGINT,
    uint64Value UBIGINT, int64Value BIGINT, doubleValue DOUBLE,
    uint32Value BIGINT, int32Value INTEGER, floatValue FLOAT,
    jsonTextId BIGINT, jsonText VARCHAR
);

CREATE TABLE IF NOT EXISTS nsys.TARGET_INFO_GPU (
    id BIGINT, name VARCHAR,
    -- the device properties of the Kineto trace (int_device_properties)
    totalMemory UBIGINT, smCount BIGINT, computeMajor BIGINT, computeMinor BIGINT,
    threadsPerWarp BIGINT, maxThreadsPerBlock BIGINT, maxWarpsPerSm BIGINT,
    maxRegistersPerBlock BIGINT, maxRegistersPerSm BIGINT, maxShmemPerBlock BIGINT,
    maxShmemPerBlockOptin BIGINT, maxShmemPerSm BIGINT
);

-- the environment nsys ran in (name DeviceEnvironment: the rank of a
-- capture, stg_capture_rank)
CREATE TABLE IF NOT EXISTS nsys.TARGET_INFO_SYSTEM_ENV (
    name VARCHAR, value VARCHAR
);

CREATE TABLE IF NOT EXISTS nsys.TARGET_INFO_CUDA_CONTEXT_INFO (
    processId BIGINT, deviceId BIGINT, contextId BIGINT
);

CREATE TABLE IF NOT EXISTS nsys.TARGET_INFO_SESSION_START_TIME (
    utcEpochNs UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.ThreadNames (
    nameId UBIGINT, priority UBIGINT, globalTid UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.PROCESSES (
    globalPid UBIGINT, pid UBIGINT, name VARCHAR
);

CREATE TABLE IF NOT EXISTS nsys.ENUM_CUDA_MEMCPY_OPER (
    id BIGINT, name VARCHAR, label VARCHAR
);

CREATE TABLE IF NOT EXISTS nsys.ENUM_CUPTI_SYNC_TYPE (
    id BIGINT, name VARCHAR, label VARCHAR
);

CREATE TABLE IF NOT EXISTS nsys.META_DATA_EXPORT (name VARCHAR, value VARCHAR);

-- The CPU side (cpu_trace_sources): OS runtime calls, cuDNN/cuBLAS calls
-- (same columns, no returnValue), thread scheduling (isSchedIn TRUE: the
-- thread starts running on cpu at start; FALSE: it stops; threadState,
-- schema 3.16+: ENUM_SAMPLING_THREAD_STATE, e.g. 5 Terminated).
CREATE TABLE IF NOT EXISTS nsys.OSRT_API (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, eventClass BIGINT,
    globalTid UBIGINT NOT NULL, nameId UBIGINT, returnValue BIGINT,
    nestingLevel BIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUDNN_EVENTS (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, eventClass BIGINT,
    globalTid UBIGINT NOT NULL, nameId UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUBLAS_EVENTS (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, eventClass BIGINT,
    globalTid UBIGINT NOT NULL, nameId UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.SCHED_EVENTS (
    start BIGINT NOT NULL, cpu BIGINT, isSchedIn BOOLEAN NOT NULL,
    globalTid UBIGINT NOT NULL, threadState BIGINT
);
