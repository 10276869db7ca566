"""Shared fixtures: the real dev reports and a builder for synthetic exports."""

from __future__ import annotations

import gzip
import json
import os
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nsys_duck.convert import Options, convert

REPO = Path(__file__).resolve().parent.parent
REPORTS = Path(os.environ.get("NSYS_DUCK_REPORTS", REPO.parent / "shared" / "data" / "reports"))


def pytest_sessionstart(session):
    """Stop at once, with one message, when the real reports are not there:
    the suite runs on them, and dozens of FileNotFoundErrors would hide why."""
    if not any(REPORTS.glob("*/parquet")):
        pytest.exit(f"the dev reports are not at {REPORTS}: clone nsys-duck beside the "
                    "team's shared/ folder (../shared/data/reports) or set "
                    "NSYS_DUCK_REPORTS to that folder", returncode=4)


def report_exports() -> list[Path]:
    """Every dev report's Parquet export folder (``REPORTS/*/parquet``)."""
    return sorted(p for p in REPORTS.glob("*/parquet") if p.is_dir())


def report_ids() -> list[str]:
    return [p.parent.name for p in report_exports()]


@pytest.fixture(scope="session")
def converted(tmp_path_factory):
    """Convert every dev report once; name -> (Result, parsed JSON events)."""
    root = tmp_path_factory.mktemp("workspace")
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            res = convert(REPORTS / name / "parquet", Options(), root=root)
            with gzip.open(res.workspace.json_gz, "rb") as f:
                events = json.loads(f.read(), parse_float=Decimal)
            cache[name] = (res, events)
        return cache[name]

    return get


# --- synthetic exports -------------------------------------------------------

_TYPES = {
    "StringIds": {"id": pa.int32(), "value": pa.string()},
    "CUPTI_ACTIVITY_KIND_KERNEL": {
        "start": pa.int64(), "end": pa.int64(), "deviceId": pa.int64(),
        "contextId": pa.uint64(), "streamId": pa.uint64(), "correlationId": pa.int64(),
        "globalPid": pa.uint64(), "demangledName": pa.uint64(), "shortName": pa.uint64(),
        "registersPerThread": pa.int64(), "gridX": pa.int32(), "gridY": pa.int32(),
        "gridZ": pa.int32(), "blockX": pa.int32(), "blockY": pa.int32(),
        "blockZ": pa.int32(), "staticSharedMemory": pa.int32(),
        "dynamicSharedMemory": pa.int32(), "graphNodeId": pa.uint64()},
    "CUPTI_ACTIVITY_KIND_MEMCPY": {
        "start": pa.int64(), "end": pa.int64(), "deviceId": pa.int64(),
        "contextId": pa.uint64(), "streamId": pa.uint64(), "correlationId": pa.int64(),
        "globalPid": pa.uint64(), "bytes": pa.uint64(), "copyKind": pa.uint64()},
    "CUPTI_ACTIVITY_KIND_MEMSET": {
        "start": pa.int64(), "end": pa.int64(), "deviceId": pa.int64(),
        "contextId": pa.uint64(), "streamId": pa.uint64(), "correlationId": pa.int64(),
        "globalPid": pa.uint64(), "value": pa.int64(), "bytes": pa.uint64()},
    "CUPTI_ACTIVITY_KIND_RUNTIME": {
        "start": pa.int64(), "end": pa.int64(), "eventClass": pa.int64(),
        "globalTid": pa.uint64(), "correlationId": pa.int64(), "nameId": pa.uint64(),
        "returnValue": pa.int64(), "callchainId": pa.int64()},
    "NVTX_EVENTS": {
        "start": pa.int64(), "end": pa.int64(), "eventType": pa.int64(),
        "rangeId": pa.uint64(), "category": pa.uint64(), "color": pa.int64(),
        "text": pa.string(), "globalTid": pa.uint64(), "endGlobalTid": pa.uint64(),
        "textId": pa.int64(), "domainId": pa.uint64()},
    "TARGET_INFO_GPU": {"id": pa.int64(), "name": pa.string()},
    "TARGET_INFO_SESSION_START_TIME": {"utcEpochNs": pa.uint64()},
    "META_DATA_EXPORT": {"name": pa.string(), "value": pa.string()},
}

EPOCH = 1_700_000_000_000_000_000


def gtid(pid: int, tid: int | None = None) -> int:
    """Nsight's serialized globalTid/globalPid (VM id 1, as real exports have)."""
    return (1 << 48) | (pid << 24) | (tid if tid is not None else 0)


def make_export(folder: Path, tables: dict[str, list[dict]]) -> Path:
    """Write a synthetic Nsight Parquet export with the real column types.

    ``tables`` maps table name -> rows (dicts; absent columns are NULL).
    StringIds, META_DATA_EXPORT and the session start are added if absent.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tables = dict(tables)
    tables.setdefault("META_DATA_EXPORT", [{"name": "EXPORT_PRODUCT_VERSION",
                                            "value": "synthetic"}])
    tables.setdefault("TARGET_INFO_SESSION_START_TIME", [{"utcEpochNs": EPOCH}])
    tables.setdefault("StringIds", [])
    for name, rows in tables.items():
        types = _TYPES[name]
        cols = {c: pa.array([r.get(c) for r in rows], t) for c, t in types.items()}
        pq.write_table(pa.table(cols), folder / f"{name}.parquet")
    return folder


def load_events(result) -> list[dict]:
    with gzip.open(result.workspace.json_gz, "rb") as f:
        return json.loads(f.read(), parse_float=Decimal)
