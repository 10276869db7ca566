"""The summaries ``nsys-duck convert`` and ``merge`` print on stdout.

A conversion's summary (:func:`print_summary`), a merge's
(:func:`print_merge_summary`), and the one line per report of a parallel
convert (:func:`outcome_line`); each summary's last line is the absolute
path of the trace.
"""

from __future__ import annotations

from pathlib import Path

import click

from . import formats as formats_mod
from .console import fail, shown
from .workspace import is_json_part
from .writers import human_size


def export_line(info: dict) -> str | None:
    """One line on what made the export and how its times read (from
    ``stg_export_info``), e.g. ``exported by: Nsight Systems 2025.5.2.266,
    schema 3.24.0, session-relative times (+ session start 1785620044423518993
    ns)``; None when the export says nothing."""
    parts = []
    if info.get("nsys_version"):
        parts.append(f"Nsight Systems {info['nsys_version']}")
    if info.get("schema_version"):
        parts.append(f"schema {info['schema_version']}")
    if not parts:
        return None
    if info.get("time_normalized"):
        parts.append("UTC-epoch times (--ts-normalize)")
    else:
        parts.append(f"session-relative times (+ session start {info.get('time_offset_ns')} ns)")
    if info.get("time_shift_ns"):
        parts.append(f"--ts-shift {info['time_shift_ns']} ns")
    return "exported by: " + ", ".join(parts)


def print_metrics(summary: list[tuple[str, object]]) -> None:
    """The summary's (metric, value) lines: numbers right-aligned with
    thousands separators (floats as given, e.g. MB to 0.1), labels padded to
    the longest (up to 60)."""
    width = min(max(len(m) for m, _ in summary), 60)  # longer labels overflow
    for metric, value in summary:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        click.echo(
            f"  {metric:<{width}}  {value:>12,}" if number else f"  {metric:<{width}}  {value}"
        )


def seconds_text(ns: int) -> str:
    """Integer ns as seconds with the digits needed: 500000000 -> '0.5'."""
    whole, frac = divmod(abs(ns), 10**9)
    return ("-" if ns < 0 else "") + f"{whole}.{frac:09d}".rstrip("0").rstrip(".")


def window_line(window: dict) -> str:
    """The summary line of ``--window`` (a ``trace_window`` row): the window
    in UTC-epoch ns and in seconds after the trace's first event (the 0 of
    ui.perfetto.dev), and the slices it holds."""
    lo, hi = window["window_start_ns"], window["window_end_ns"]
    start = seconds_text(window["start_after_first_ns"]) if lo is not None else "start"
    end = seconds_text(window["end_after_first_ns"]) if hi is not None else "end"
    return (
        f"window: [{lo if lo is not None else 'start'}, {hi if hi is not None else 'end'}) "
        f"UTC-epoch ns = [{start}, {end}) s after the first event ({window['first_ns']} ns); "
        f"{window['slices']:,} slices"
    )


def window_warning(window: dict | None) -> str | None:
    """One line when ``--window`` selects no slice, saying where the slices
    are; None otherwise (also without ``--window``)."""
    if window is None or window["slices"]:
        return None
    last = seconds_text(window["last_start_ns"] - window["first_ns"])
    return (
        "warning: --window selects no slice: the trace's slices start from 0 s to "
        f"{last} s after its first event ({window['first_ns']} ns)"
    )


def print_window(window: dict | None) -> None:
    """The ``--window`` line of a summary (stdout) and its warning (stderr)."""
    if window is None:
        return
    click.echo(window_line(window))
    warning = window_warning(window)
    if warning:
        fail(None, warning)


def print_summary(res, timings: bool) -> None:
    """The contract's summary of ``res`` (a :class:`convert.Result`); the
    last line is the absolute path of what to look at (:func:`trace_path`)."""
    out = click.echo
    out(f"== {res.workspace.name}")
    out(f"source: {res.source.path}")
    same = f"same content, sha256 {res.source_sha256[:12]}"
    if res.export_reused and res.source.kind == "sqlite":
        out(
            f"export: reused {res.workspace.parquet_dir} (transcribed from "
            f"{res.source.path}, {same}; --force transcribes it again)"
        )
    elif res.export_reused and res.source.kind == "report":
        out(
            f"export: reused {res.workspace.parquet_dir} (exported from this report, "
            f"{same}; --force re-exports)"
        )
    elif res.export_reused:
        out(f"export: the workspace's own {res.workspace.parquet_dir}")
    elif res.nsys_version:
        out(f"nsys: {res.nsys_version}")
    elif res.source.kind == "sqlite":
        out(f"export: transcribed SQLite export {res.source.path} (no nsys needed)")
    else:
        out("export: existing Parquet folder (no nsys needed)")
    line = export_line(res.export_info)
    if line:
        out(line)
    for key in ("schema_note", "time_note"):
        if res.export_info.get(key):
            out(f"note: {res.export_info[key]}")
    for note in res.notes:
        out(f"note: {note}")
    if res.overridden_sql:
        out("SQL overridden by --sql-dir: " + ", ".join(res.overridden_sql))
    if res.added_sql:
        out("SQL added by --sql-dir: " + ", ".join(res.added_sql))
    out(f"time base (epoch_ns): {res.base_ns}")
    print_window(res.window)
    print_metrics(res.summary)
    print_ending(res, timings)


def print_ending(res, timings: bool) -> None:
    """How a conversion's or a merge's summary ends (one code path for
    both): the validation line (checks, seconds), the ``--timings`` rows,
    the files written, the ``--part K`` hint of a split JSON, and last the
    absolute path of what to look at (:func:`trace_path`)."""
    out = click.echo
    if res.validated:
        also = " and the JSON file validator" if res.file_validated else ""
        out(
            f"validated: no violations of {res.checks} contract checks{also} "
            f"({res.validate_seconds:.1f} s)"
        )
    else:
        out("validation: skipped (--no-checks)")
    if timings:
        for t in res.timings:
            out(f"  time {t.relpath:<45} {t.seconds:8.3f} s")
    for f in res.files:
        out(f"{f}  ({human_size(f.stat().st_size)})")
    parts = [f for f in res.workspace.json_parts if f in res.files]
    if parts:
        out(
            f"the JSON trace is in {len(parts)} parts (over --max-json-size): open each "
            f"in ui.perfetto.dev on its own (nsys-duck open {res.workspace.name} --part K; "
            "same tracks and time base); the Parquet holds every slice"
        )
    out(str(trace_path(res.files, res.workspace).resolve()))


def trace_path(files: list[Path], ws) -> Path:
    """The summary's last line: the trace ``open`` serves (the preferred
    format Perfetto opens among ``files``: :data:`formats.OPENED`), else
    (--format kineto) the Kineto folder (:func:`formats.written_trace`)."""
    return formats_mod.written_trace(ws, files) or files[0]


def progress_counts(done: int, failed: int, running: int, total: int) -> str:
    """The progress line of a parallel convert (running: not finished yet)."""
    return f"converting: {done}/{total} done, {failed} failed, {running} running"


def outcome_line(outcome) -> str:
    """One report of a parallel convert: ``NAME: converted (N slices, S s)
    TRACE``, ``NAME: up to date TRACE`` or ``PATH: failed``."""
    name = outcome.name or shown(outcome.path)
    if outcome.status == "failed":
        return f"{name}: failed (the reason is on stderr)"
    trace = str(outcome.trace) if outcome.trace is not None else "(no trace Perfetto opens)"
    if outcome.trace is not None and is_json_part(outcome.trace):
        trace += " (part 1 of a split JSON trace)"
    if outcome.status == "up to date":
        return f"{name}: up to date (converted before with these options) {trace}"
    slices = dict(outcome.summary).get("slices")
    what = f"{slices:,} slices, " if isinstance(slices, int) else ""
    return f"{name}: converted ({what}{outcome.seconds:.1f} s) {trace}"


MERGE_ROWS_SHOWN = 40  # reports listed in the merge summary (all: SELECT * FROM merge_reports)


def rank_line(r) -> str:
    """How a merged report's rank was decided, one line: ``report X: rank 3
    (from file name 'rank3')``, ``(from env RANK)``, or ``(order)`` (no rank
    recorded: its place in the merge, counted from 0)."""
    if r.rank_no is None:
        return f"report {r.report}: rank {r.ordinal - 1} (order)"
    return f"report {r.report}: rank {r.rank_no} ({r.rank_source})"


def print_merge_summary(res) -> None:
    """The merge's summary: alignment, one line per report (label, how its
    conversion went, its first CUDA/NVTX event in seconds after the merged
    trace's first event, the 0 of ui.perfetto.dev and of --window, and the
    shift applied, slices), how each report's rank was decided, the summed
    counts, then the ending a conversion's has too (:func:`print_ending`)."""
    out = click.echo
    n = len(res.reports)
    out(f"== {res.workspace.name} (merge of {n} report{'s' if n != 1 else ''})")
    for note in res.notes:
        out(f"note: {note}")
    if res.align == "utc":
        out("time alignment: UTC epoch (Nsight's --ts-normalize times; clocks assumed in sync)")
    else:
        out(
            "time alignment: first CUDA/NVTX events (--align start: each report shifted so "
            "its first kernel, copy, CUDA API call or NVTX range lies at the first report's)"
        )
    out(f"time base (epoch_ns): {res.base_ns}")
    print_window(res.window)
    origin = res.first_ns if res.first_ns is not None else res.base_ns
    width = min(max(6, *(len(r.label) for r in res.reports)), 40)
    first_col = "first CUDA/NVTX"
    out(f"  {'report':<{width}}  {'conversion':<10}  {first_col:>16}  {'shift ns':>20}  slices")
    rows = res.reports
    shown = rows if len(rows) <= MERGE_ROWS_SHOWN else rows[: MERGE_ROWS_SHOWN // 2]
    for r in shown:
        first = (
            f"{(r.align_ns + r.shift_ns - origin) / 1e9:.6f} s" if r.align_ns is not None else "-"
        )
        out(f"  {r.label:<{width}}  {r.status:<10}  {first:>16}  {r.shift_ns:>20,}  {r.slices:,}")
    for r in shown:
        out(rank_line(r))
    for r in rows:
        for note in r.notes:
            out(f"note: {r.label}: {note}")
    if len(shown) < len(rows):
        out(
            f"  ... {len(rows) - len(shown)} more (nsys-duck sql {res.workspace.name} -c "
            "'SELECT * FROM merge_reports')"
        )
    print_metrics(res.summary)
    print_ending(res, timings=False)
