"""Times of exports made by the real nsys without --ts-normalize and with
--ts-shift (output-contract.md, Time): the same report always gives the
same trace when only the normalization differs, and a shifted export
converts ns-exact with every JSON time in [0, 2^42) us.

Skipped where no nsys is installed (make test installs Debian's 2023.4 CLI).
"""

from __future__ import annotations

import subprocess

import duckdb
import pyarrow.parquet as pq
import pytest

import contract
from conftest import REPORTS, load_events
from nsys_duck.convert import Options, convert
from nsys_duck.errors import NsysNotFoundError
from nsys_duck.nsys import find_nsys

# small reports with GPU work, syncs and NVTX ranges of several kinds
NAMES = ["raiderstream_tiny", "diffevo_nvtx_startend"]
DAY_NS = 86_400 * 10**9
LIMIT_NS = 2**42 * 1000


def _nsys_or_skip():
    try:
        return find_nsys()
    except NsysNotFoundError:
        pytest.skip("no nsys installed (make test installs Debian's nsight-systems)")


def _report(name):
    return next(p for p in (REPORTS / name).iterdir() if p.suffix in (".nsys-rep", ".qdrep"))


def _export(nsys, report, out, kind="parquetdir", normalize=True, shift=0):
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(nsys.path),
        "export",
        f"--type={kind}",
        f"--ts-normalize={str(normalize).lower()}",
        f"--ts-shift={shift}",
        "--force-overwrite=true",
        "-o",
        str(out),
        str(report),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def _rows(res):
    """Aligned Parquet rows without slice_id, sorted (ids depend on row order)."""
    table = pq.read_table(res.workspace.events_parquet).drop(["slice_id"])
    return sorted(tuple(map(repr, r.values())) for r in table.to_pylist())


def _events(res):
    """JSON events with flow ids removed (they are slice ids), sorted."""
    out = []
    for e in load_events(res):
        e.pop("id", None)
        out.append(repr(sorted(e.items())))
    return sorted(out)


@pytest.mark.nsys
@pytest.mark.parametrize("name", NAMES)
def test_session_relative_exports_give_the_normalized_trace(tmp_path, name):
    """nsys export --ts-normalize=false (Parquet and SQLite) holds
    session-relative ns; the trace equals the one of the shipped normalized
    export: same base_ns, same absolute ns, same JSON events."""
    nsys = _nsys_or_skip()
    report = _report(name)
    shipped = convert(REPORTS / name / "parquet", Options(), root=tmp_path / "shipped")
    rel = convert(
        _export(nsys, report, tmp_path / "relpq" / name, normalize=False),
        Options(),
        root=tmp_path / "a",
    )
    rel_sqlite = convert(
        _export(
            nsys, report, tmp_path / "relsql" / f"{name}.sqlite", kind="sqlite", normalize=False
        ),
        Options(),
        root=tmp_path / "b",
    )
    for res in (rel, rel_sqlite):
        assert res.base_ns == shipped.base_ns
        assert _rows(res) == _rows(shipped)
        assert _events(res) == _events(shipped)
    info = (
        duckdb.connect(str(rel.workspace.database), read_only=True)
        .execute("SELECT time_normalized, time_offset_ns, session_start_ns FROM stg_export_info")
        .fetchall()
    )
    assert info[0][0] is False and info[0][1] == info[0][2] > 10**18


@pytest.mark.nsys
@pytest.mark.parametrize("shift_ns", [-5_000 * 10**9, 60 * DAY_NS])
def test_ts_shift_exports_convert_ns_exact(tmp_path, shift_ns):
    """--ts-shift moves every time but not the session start: the time base
    comes from the events, every JSON time is in [0, 2^42) us, and each slice
    is the unshifted one moved by exactly the shift."""
    nsys = _nsys_or_skip()
    name = NAMES[0]
    report = _report(name)
    plain = convert(REPORTS / name / "parquet", Options(), root=tmp_path / "plain")
    shifted_dir = _export(nsys, report, tmp_path / "shifted" / name, shift=shift_ns)
    shifted = convert(shifted_dir, Options(), root=tmp_path / "ws")
    events = load_events(shifted)
    times = [contract.ns(e["ts"]) for e in events if "ts" in e]
    assert times and min(times) >= 0
    assert (
        max(contract.ns(e["ts"]) + contract.ns(e.get("dur", 0)) for e in events if "ts" in e)
        < LIMIT_NS
    )
    moved = sorted(
        (r["start_ns"] - shift_ns, r["end_ns"] - shift_ns, r["track_name"], r["name"])
        for r in pq.read_table(shifted.workspace.events_parquet).to_pylist()
    )
    assert moved == sorted(
        (r["start_ns"], r["end_ns"], r["track_name"], r["name"])
        for r in pq.read_table(plain.workspace.events_parquet).to_pylist()
    )
    # ns-exact against the export's own kernel times
    kernels = sorted(
        zip(
            *pq.read_table(
                shifted_dir / "CUPTI_ACTIVITY_KIND_KERNEL.parquet", columns=["start", "end"]
            )
            .to_pydict()
            .values(),
            strict=True,
        )
    )
    ours = sorted(
        (
            contract.ns(e["ts"]) + shifted.base_ns,
            contract.ns(e["ts"]) + contract.ns(e["dur"]) + shifted.base_ns,
        )
        for e in events
        if e.get("cat") == "kernel"
    )
    assert ours == kernels
    first = min(
        r["start_ns"]
        for r in pq.read_table(shifted.workspace.events_parquet, columns=["start_ns"]).to_pylist()
    )
    assert shifted.base_ns == first - first % 10**9
