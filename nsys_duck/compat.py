"""What differs between the DuckDB versions nsys-duck runs on (1.4 LTS to 2.x).

The pipeline's SQL runs unchanged on DuckDB 1.4, 1.5 and 2.0 (tested:
``tests/test_duckdb_versions.py``); only a few Python API names moved.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa


def arrow_reader(rel: duckdb.DuckDBPyRelation, batch_rows: int) -> pa.RecordBatchReader:
    """Stream ``rel`` as Arrow record batches of at most ``batch_rows`` rows
    (``to_arrow_reader`` from DuckDB 1.5 on, ``fetch_arrow_reader`` before;
    2.0 deprecates the old name)."""
    if hasattr(rel, "to_arrow_reader"):
        return rel.to_arrow_reader(batch_rows)
    return rel.fetch_arrow_reader(batch_rows)
