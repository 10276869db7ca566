-- Typed stand-ins for the Nsight tables a lazy export left out.
--
-- Produces: nsys.<TABLE> for every table below that the export lacks, as an
-- EMPTY table with the Nsight 2023.4 column types; where the Parquet file
-- exists, Python has already made nsys.<TABLE> a view over it and the
-- statement is a no-op. Reads: nothing.
-- Invariants: this file lists every Nsight column the pipeline reads (see
-- nsys-tables.md section 1); a missing table means "no rows", never an error.
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
    localMemoryPerThread INTEGER, gridId BIGINT, graphNodeId UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_MEMCPY (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, streamId UBIGINT, correlationId BIGINT, globalPid UBIGINT,
    bytes UBIGINT, copyKind UBIGINT, srcKind BIGINT, dstKind BIGINT,
    srcDeviceId BIGINT, dstDeviceId BIGINT, migrationCause BIGINT,
    graphNodeId UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.CUPTI_ACTIVITY_KIND_MEMSET (
    start BIGINT NOT NULL, "end" BIGINT NOT NULL, deviceId BIGINT NOT NULL,
    contextId UBIGINT, streamId UBIGINT, correlationId BIGINT, globalPid UBIGINT,
    value BIGINT, bytes UBIGINT, memKind BIGINT, graphNodeId UBIGINT
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
    endGlobalTid UBIGINT, textId BIGINT, domainId UBIGINT
);

CREATE TABLE IF NOT EXISTS nsys.TARGET_INFO_GPU (id BIGINT, name VARCHAR);

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

CREATE TABLE IF NOT EXISTS nsys.META_DATA_EXPORT (name VARCHAR, value VARCHAR);
