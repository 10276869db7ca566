"""The trace formats, one record each (:data:`FORMATS`): the ``--format``
word and its help, where the format's files go in the workspace, its writer
and the summary rows it adds, and whether (and how eagerly) Perfetto opens
it.

Everything that handles traces loops over these records: writing and
publishing (:mod:`outputs`), removing an earlier run's files (:mod:`convert`),
``open`` (:func:`serve.resolve_trace`), the summary's last line and the
``--format`` choices. Adding a format is its SQL view (a ``-- Role:`` the
writer reads, docs/sql.md), its writer, and one record here.

The Parquet (``NAME.perfetto.parquet``, ``NAME.kernel_dependencies.parquet``)
and ``NAME.duckdb`` are not trace formats: every run writes them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import contract, writers
from .errors import NsysDuckError
from .json_spool import Spool, SpoolMisread
from .pftrace import write_pftrace
from .workspace import PFTRACE_SUFFIX, Workspace

Say = Callable[[str], None]  # prints one progress line


@dataclass(frozen=True)
class Wrote:
    """What a format's writer wrote: the (metric, value) rows it adds to the
    summary, and for a folder format the names of the files inside it (what
    the manifest lists)."""

    rows: list[tuple[str, object]]
    inside: tuple[str, ...] = ()
    # (final, temporary) of each file written in place of the targets (a
    # JSON trace over --max-json-size, written in parts once measured)
    instead: tuple[tuple[Path, Path], ...] = ()


@dataclass(frozen=True)
class TraceFormat:
    """One trace format.

    ``targets(con, ws)`` is where this run's files go (the JSON: one file,
    until its writer has measured it; a folder format: its folder),
    ``left(ws)`` what a run published there (on disk now; what a run does
    not write again is removed: another format, or the JSON in another
    layout, would disagree), ``write(con, ws, temporaries, say)`` writes
    the targets under their temporary names (``say``: a progress line; a
    JSON over the limit is written in parts instead, :attr:`Wrote.instead`).
    ``opens`` ranks the formats
    Perfetto opens (1: preferred by ``open`` and the summary's last line;
    None: Perfetto does not open it).
    """

    name: str  # its --format word
    help: str  # its words in --format's help
    doing: str  # what runs while it is written (progress, a failure's step)
    timing: str  # its --timings row (bench/bench.py reads it)
    folder: bool  # one folder of files, published whole
    targets: Callable[[duckdb.DuckDBPyConnection, Workspace], list[Path]]
    left: Callable[[Workspace], list[Path]]
    write: Callable[[duckdb.DuckDBPyConnection, Workspace, list[Path], Say], Wrote]
    opens: int | None
    endings: tuple[str, ...]  # how its files' names end (open takes such a file itself)
    content_type: str  # what `open` serves it as


def _json_targets(con: duckdb.DuckDBPyConnection, ws: Workspace) -> list[Path]:
    return [ws.json_gz]  # in parts instead when the write measures it over the limit


def _json_left(ws: Workspace) -> list[Path]:
    return [f for f in (ws.json_gz,) if f.is_file()] + ws.json_parts


def _write_json(con: duckdb.DuckDBPyConnection, ws: Workspace, tmps: list[Path], say: Say) -> Wrote:
    """The JSON trace: written as one file while measuring it
    (``trace_json_sizes``: the write is the size estimate); past
    ``--max-json-size`` that file is dropped (compression stopped where it
    passed the limit, the rest of the rows kept in a spool beside it) and
    the rows, formatted once, are written again in the parts
    ``trace_parts`` cuts from the measurement (``trace_bucket_parts``).
    Raises NsysDuckError when a trace measured under the limit is cut in
    parts (a bug in the SQL stages)."""
    (tmp,) = tmps
    grid = contract.query("json-size-grid", "buckets, max_json_bytes")
    meter = writers.SizeMeter(*con.execute(grid).fetchall()[0])
    spool = Spool(tmp, tmp.with_name(tmp.name + ".spool"), len(writers.JSON_HEADER))
    try:
        written = writers.write_trace_json(con, [tmp], meter=meter, spool=spool)
        writers.save_json_sizes(con, meter)
        parts = [p for (p,) in con.execute(contract.query("json-parts", "part")).fetchall()]
        if isinstance(written, list):
            return _json_rows([(ws.json_gz, tmp)], written, meter, parts)
        if len(parts) <= 1:  # over the limit, but one bucket (or the metadata) holds it all
            files = [(ws.json_gz, tmp)]
            targets = [tmp.with_name(tmp.name + ".whole")]  # tmp is being read
        else:
            files = [(ws.json_part(p), writers.temp_path(ws.json_part(p))) for p in parts]
            targets = [t for _, t in files]
            say(f"writing the JSON trace in {len(parts)} parts (over --max-json-size)")
        stats_of = _rewrite(con, spool, targets)
        if len(files) == 1:
            os.replace(targets[0], tmp)
        else:
            writers.discard([tmp])
        return _json_rows(files, stats_of, meter, parts)
    finally:
        try:
            spool.close()
        finally:
            writers.discard([spool.ipc_path])


def _rewrite(con: duckdb.DuckDBPyConnection, spool: Spool, targets: list[Path]):
    """Write the parts into ``targets`` from ``spool``, routed by bucket;
    when its rows do not read back one a line (an edited stage's event text
    with a raw newline: valid JSON, but not one row a line), by formatting
    the trace again by its part column, as before the spool."""
    query = contract.query("json-bucket-parts", "part")
    bucket_part = [p for (p,) in con.execute(query).fetchall()]
    try:
        try:
            return writers.write_spooled_parts(spool, targets, bucket_part)
        except SpoolMisread:
            writers.discard(targets)
            return writers.write_trace_json(con, targets)
    except BaseException:
        writers.discard(targets)
        raise


def _json_rows(files, stats_of, meter: writers.SizeMeter, parts: list[int]) -> Wrote:
    """The summary rows of the JSON trace written as ``files`` ((final,
    temporary) per part), its files checked against ``stats_of``."""
    if len(files) == 1 and len(parts) > 1:
        raise NsysDuckError(
            f"the JSON trace measured {meter.total} bytes, under the limit of {meter.limit}, "
            f"but {contract.view_with_role('json-parts').view} cut {len(parts)} parts "
            "(a bug in the SQL stages)"
        )
    for (_, t), stats in zip(files, stats_of, strict=True):
        writers.check_gzip_trailer(t, stats)
    rows: list[tuple[str, object]] = [
        ("JSON events", sum(s.events for s in stats_of)),
        (
            "JSON size, uncompressed (MB)",
            round(sum(s.bytes_uncompressed for s in stats_of) / 1e6, 1),
        ),
    ]
    return Wrote(rows, instead=tuple(files) if len(files) > 1 else ())


def _write_pftrace(con: duckdb.DuckDBPyConnection, ws: Workspace, tmps: list[Path], say) -> Wrote:
    (tmp,) = tmps
    stats = write_pftrace(con, tmp)
    return Wrote(
        [("pftrace TrackEvents", stats.events), ("pftrace size (MB)", round(stats.bytes / 1e6, 1))]
    )


def _write_kineto(con: duckdb.DuckDBPyConnection, ws: Workspace, tmps: list[Path], say) -> Wrote:
    (folder,) = tmps
    kineto = writers.write_kineto_json(con, folder)
    return Wrote(
        [("Kineto ranks", len(kineto.files)), ("Kineto events", kineto.events)],
        tuple(path.name for path, _ in kineto.files),
    )


def _existing(path: Callable[[Workspace], Path]) -> Callable[[Workspace], list[Path]]:
    return lambda ws: [p for p in (path(ws),) if p.exists()]


PERFETTO = TraceFormat(
    name="perfetto",
    help="perfetto (NAME.perfetto.json.gz, split in parts when large)",
    doing="writing the JSON trace",
    timing="write JSON",
    folder=False,
    targets=_json_targets,
    left=_json_left,
    write=_write_json,
    opens=2,
    endings=(".json.gz", ".json"),  # also a Kineto rank file, which Perfetto opens
    content_type="application/gzip",
)
PFTRACE = TraceFormat(
    name="pftrace",
    help="pftrace (NAME.pftrace: Perfetto's protobuf format, one file, a fraction of the "
    "JSON's size)",
    doing="writing the protobuf trace",
    timing="write pftrace",
    folder=False,
    targets=lambda con, ws: [ws.pftrace],
    left=_existing(lambda ws: ws.pftrace),
    write=_write_pftrace,
    opens=1,
    endings=(PFTRACE_SUFFIX,),
    content_type="application/octet-stream",
)
KINETO = TraceFormat(
    name="kineto",
    help="kineto (NAME.kineto/: one PyTorch-profiler (Kineto) trace per rank, for "
    "Holistic Trace Analysis)",
    doing="writing the Kineto trace",
    timing="write Kineto JSON",
    folder=True,
    targets=lambda con, ws: [ws.kineto_dir],
    left=_existing(lambda ws: ws.kineto_dir),
    write=_write_kineto,
    opens=None,
    endings=(),
    content_type="application/gzip",
)

# every format, in the order a run writes them (and the summary lists them)
FORMATS = (PERFETTO, PFTRACE, KINETO)

# --format: one format, or both: every one of them
CHOICES = {**{f.name: (f,) for f in FORMATS}, "both": FORMATS}

# the formats Perfetto opens, the preferred first (open, the summary's last line)
OPENED = tuple(sorted((f for f in FORMATS if f.opens is not None), key=lambda f: f.opens))


def format_help() -> str:
    """--format's help: each format's words, then what every run writes."""
    words = ", ".join(f.help for f in FORMATS)
    return (
        f"Which trace to write: {words} or both (every one of them); the Parquet and "
        "NAME.duckdb are always written, and a capture with no GPU work (no Kineto rank) "
        "gets the Perfetto trace instead of a Kineto one."
    )


def opened_trace(ws: Workspace, files: list[Path] | None = None) -> Path | None:
    """The trace ``open`` serves from ``ws`` (the preferred format Perfetto
    opens that ``ws`` holds, among ``files`` when given: a run's published
    files; of a split JSON trace, its first part), or None."""
    for fmt in OPENED:
        held = [f for f in fmt.left(ws) if files is None or f in files]
        if held:
            return held[0]
    return None


def written_trace(ws: Workspace, files: list[Path]) -> Path | None:
    """What a run that published ``files`` wrote to look at: the trace
    :func:`opened_trace` picks, else the first other format's file or
    folder among them (``--format kineto``: the Kineto folder), else None."""
    opened = opened_trace(ws, files)
    if opened is not None:
        return opened
    for fmt in FORMATS:
        for target in fmt.left(ws):
            if target in files or any(f.parent == target for f in files):
                return target
    return None


def folders(ws: Workspace) -> list[Path]:
    """The folders of the folder formats ``ws`` holds (the manifest lists
    the files inside them as ``FOLDER/FILE``)."""
    return [p for fmt in FORMATS if fmt.folder for p in fmt.left(ws)]


def kineto_only(ws: Workspace) -> bool:
    """``ws`` holds a Kineto trace (``--format kineto``) and no trace
    Perfetto opens."""
    return bool(KINETO.left(ws)) and opened_trace(ws) is None


def format_of(trace: Path) -> TraceFormat | None:
    """The format Perfetto opens whose file ``trace`` is (by its ending), or
    None: not a trace file ``open`` serves."""
    for fmt in OPENED:
        if trace.name.endswith(fmt.endings):
            return fmt
    return None
