"""Streaming validator for nsys-duck ``.perfetto.json.gz`` traces.

``validate_trace(path)`` checks a trace against the output contract
(``output-contract.md``) and the Perfetto JSON importer rules, in bounded
memory, and returns a :class:`ValidationReport`. It never raises for a bad
trace: every problem becomes a :class:`Violation`. Only a missing file raises
``FileNotFoundError``.

Units
-----
JSON ``ts`` and ``dur`` are microseconds (µs), written as plain JSON numbers
with at most 3 fraction digits (``<int>`` or ``<int>.<1-3 digits>``). Every
check uses their exact value in integer nanoseconds (ns); all intervals are
half-open ``[ts, ts+dur)`` in ns. Messages print times back as µs with 3
decimals.

How it works
------------
There are two paths with the same rules, ids and messages. The fast path
answers whenever it can vouch for its answer; otherwise the exact path runs
(``last_fallback`` says why). Ctrl-C stops either (KeyboardInterrupt).

Fast path (``_validate_fast``):

1. A byte scan thread (``_FastScan``) reads and decompresses the file in
   blocks (``isal``) beside DuckDB, and runs the byte-level checks: gzip
   integrity and single member, head/tail (``json``), surrogate and ``\\u0000``
   escapes (``string``, reported as the exact path does), plus one RE2 pass
   for what DuckDB's reader would accept or hide (``_FAST_BAD``: raw control
   bytes, invalid UTF-8, NaN/Infinity, trailing commas, a ts/dur that is not
   a plain number with at most 3 decimals, a non-integer pid/tid, a
   non-string ph/cat/name/bp, escaped ASCII). Any of those, or any gzip
   problem, sends the trace to the exact path (and interrupts DuckDB).
2. DuckDB reads the array itself: one ``read_json(format='array')`` with
   typed columns ``WITH ORDINALITY`` into table ``evs`` (``_FAST_SQL``), which
   also decides per event whether the SQL values are exactly what the exact
   per-event checks would store with no violation (``ok``). ts/dur come as
   DOUBLE and ``round(x * 1000)`` is their exact ns (see ``_FAST_SQL``). If
   DuckDB rejects the file (malformed JSON, a non-object element, duplicate
   keys, a pid beyond 32 bits, ...) the exact path runs.
3. Events that are not ``ok`` are read again as text (``read_json_objects``)
   and go through the exact path's per-event checks (``_Loader``, Python).
4. The structural checks (below) run on views over ``evs`` plus those rows.

Exact path (``_validate``): a producer thread decompresses and byte-checks
the stream (raw control bytes and invalid UTF-8 are reported, then replaced
so one bad byte does not hide the rest); the main thread parses events with
``ijson`` (``yajl2_c``, ``use_float=False``: exact ``Decimal``/``int``), does
the per-event checks and loads compact rows into DuckDB.

Structural checks (both paths, ``_structure``), in DuckDB with
``memory_limit`` and a private ``temp_directory`` so it spills: B/E matching
is a window query (``_BE_SQL``) with a Python stack pass only for broken
tracks; b/e matching a Python pass over sorted rows; overlap and flow
binding one sorted "bracket" sequence per track, swept with numpy over
Arrow batches (``_sweep``); only when the sweep finds a problem are the
exact tables built (``_SEQ_SQL``) for the reports. Track stats and s/f
pairing run meanwhile on a second cursor. Example events for violations
found in SQL are fetched afterwards (fast path: DuckDB's reader; exact
path: ijson), only when there are such violations; their text is the event
re-serialised compactly in both paths.

Memory: Python holds one batch, the M events, the B/E stack and the kept
examples; everything else lives in DuckDB, which spills beyond
``memory_limit``.

Rules (ids used in ``ValidationReport.violation_counts``)
---------------------------------------------------------
``gzip``
    Gzip magic, full decompression, CRC/length ok, exactly one gzip member
    (later members are still decoded, as Perfetto does, so the rest of the
    checks see what Perfetto sees).
``json``
    One JSON array of objects, non-empty; no BOM; after deleting whitespace
    the first 128 bytes start with ``[{"``; nothing (not even whitespace)
    after the closing ``]``; parse errors.
``number``
    ``ts``/``dur`` are plain JSON numbers: no exponent, no NaN/Infinity, at
    most 3 fraction digits, not strings; ``0 <= ts < 2^42 µs``, ``dur >= 0``,
    ``ts + dur < 2^42 µs``; every non-M event has ``ts``, every X has ``dur``.
``string``
    No ``\\uD800``-``\\uDFFF`` escape and no ``\\u0000`` escape anywhere (an
    escaped backslash followed by ``uD800`` is plain text and fine), no raw
    control byte < 0x20 (raw NUL included) inside strings, valid UTF-8.
``ph``
    Phase is one of X B E i I M s f b e C n.
``pid_tid``
    pid/tid are JSON integers in 1..2^31-1. Every event needs pid; every
    event needs tid except b/e/n and M other than thread_name /
    thread_sort_index.
``track_named``
    Each pid with non-M events has ``process_name`` and
    ``process_sort_index``; each (pid,tid) with X/B/E/i/I/s/f events has
    ``thread_name`` and ``thread_sort_index``; names are non-empty strings,
    sort indexes are integers.
``be_balance``
    Per (pid,tid), ordered by (ts, E before other events at equal ts, file
    order): each E closes the innermost open B with the same name and cat
    (an E without name/cat matches any, as in Perfetto); no B left open.
``overlap``
    Per (pid,tid), X slices and matched B/E slices are laminar: any two
    slices with positive length are disjoint or one contains the other
    (equal intervals nest; a slice starting at another's end is disjoint).
    Counted per slice that breaks the nesting (a crossing pair counts 2).
``b_e_async``
    b/e have pid, cat and ``id2.local`` (or ``id``/``id2.global``, integer
    or string); each e closes an earlier open b with the same (pid, cat,
    id, name) (an e without name matches any); no b left open.
``flow``
    v1 flows (s/f): integer id (int64); each id has exactly one s and one
    f, with equal cat and name; f has ``"bp":"e"``; ``s.ts <= f.ts``; s and
    f each lie in an X slice on their own (pid,tid), which must be the
    innermost slice there: ``start <= ts < end``, and ``ts > start``
    when the slice is longer than 1 ns (contract); ``ts == start`` for a
    zero-duration slice.
``flow_kind``
    Flow cat ``launch`` ends in X cat ``kernel`` or ``cuda_graph``,
    ``launch_core`` in ``kernel_core`` or ``cuda_graph_core``, ``copy`` in
    ``memcpy``/``memset``, ``copy_pcie`` in ``memcpy_pcie``, ``sync`` in
    ``gpu_sync``; their s lies in a ``cuda_api`` X (``sync``: a
    ``cuda_sync`` or ``cuda_api`` X); no slice receives two flows of one of
    these cats; #launch == #launch_core flows.
``metadata``
    Every ``process_name`` event has an integer ``args.epoch_ns``, the same
    in all of them.
``internal``
    The validator itself failed (a bug); the trace is then not known good.

Command line: ``python -m nsys_duck.validate FILE [--max-examples N] [--json]``
(exit 0 clean, 1 violations, 2 missing file).
"""

from __future__ import annotations

import argparse
import codecs
import decimal
import json
import os
import queue
import re
import shutil
import sys
import tempfile
import threading
import zlib
from array import array
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any, Iterable

import duckdb
import ijson
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .compat import arrow_reader

try:  # ISA-L is ~2x faster than zlib; same API.
    from isal import isal_zlib as _zlib
except ImportError:  # pragma: no cover - isal is a dependency
    _zlib = zlib

try:  # the C backend; the pure-Python fallbacks give the same results, slower
    _ijson = ijson.get_backend("yajl2_c")
except ImportError:  # pragma: no cover
    _ijson = ijson
#: ijson backend in use (``yajl2_c`` expected).
IJSON_BACKEND = _ijson.backend

__all__ = ["Violation", "ValidationReport", "validate_trace", "main", "RULES"]

#: Rule ids, in report order.
RULES = (
    "gzip", "json", "number", "string", "ph", "pid_tid", "track_named",
    "be_balance", "overlap", "b_e_async", "flow", "flow_kind", "metadata", "internal",
)

VALID_PH = frozenset("XBEiIMsfbeCn")
MAX_ID = 2**31 - 1  # pid/tid upper bound (inclusive)
TS_LIMIT_US = 2**42  # Perfetto is ns-exact below 2^42 µs
TS_LIMIT_NS = TS_LIMIT_US * 1000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
TEXT_LIMIT = 300  # characters of event text kept per violation
BATCH_ROWS = 50_000
READ_BLOCK = 1 << 20  # compressed bytes per file read
OUT_CHUNK = 1 << 22  # decompressed bytes per queue item
FEED = 1 << 16  # bytes handed to ijson per read() call
CARRY = 256  # bytes of the previous chunk re-scanned with the next one
MAX_SEARCH = 1024  # open B/b searched below the stack top for a matching E/e
FLOW_TARGET = {  # flow cat -> X cats its f may end in
    "launch": ("kernel", "cuda_graph"),
    "launch_core": ("kernel_core", "cuda_graph_core"),
    "copy": ("memcpy", "memset"),
    "copy_pcie": ("memcpy_pcie",),
    "sync": ("gpu_sync",),
}
FLOW_SOURCE = {  # flow cat -> X cats its s may lie in
    "launch": ("cuda_api",),
    "launch_core": ("cuda_api",),
    "copy": ("cuda_api",),
    "copy_pcie": ("cuda_api",),
    "sync": ("cuda_sync", "cuda_api"),
}
_SCALE = (1000, 100, 10, 1)  # ns per unit of the last written µs digit

# Byte-level patterns. _PREFILTER (RE2, run on every chunk) is a superset of
# the three Python patterns, which only run on chunks it flags.
_PREFILTER = (
    r'[\x00-\x08\x0b\x0c\x0e-\x1f]|\\u(?:[dD][89a-fA-F]|0000)'
    r'|"(?:ts|dur)"\s*:\s*-?(?:N|I|[0-9][0-9.]*[eE])'
)
_RE_CTRL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_RE_ESC = re.compile(rb"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")
_RE_NUM = re.compile(
    rb'"(ts|dur)"\s*:\s*(-?(?:NaN|Infinity|[0-9][0-9.]*[eE][-+]?[0-9]*))'
)
_WS = b" \t\n\r"
_CTRL_TO_SPACE = bytes(
    0x20 if b < 0x20 and b not in (0x09, 0x0A, 0x0D) else b for b in range(256)
)


@dataclass
class Violation:
    """One broken rule.

    ``rule`` is a rule id (see module docstring), ``message`` says what is
    wrong (times in µs), ``event`` is the text of (one of) the offending
    event(s), truncated to ~300 characters: the event re-serialised compactly
    (key order and number digits as written), or for byte-level findings the
    raw bytes around the offending position. ``None`` for file-wide findings.
    """

    rule: str
    message: str
    event: str | None = None


@dataclass
class ValidationReport:
    """Result of :func:`validate_trace`.

    ``events`` is the number of elements of the top-level array that were
    read. ``counts`` holds ``ph:<ph>`` and ``cat:<cat>`` event counts plus
    ``flows`` (ids with exactly one s and one f), ``slices`` (X + matched
    B/E), ``processes`` and ``threads``. ``violations`` keeps at most
    ``max_examples`` examples per rule; ``violation_counts`` has the total
    per rule.
    """

    path: str
    events: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    violation_counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no rule was broken."""
        return not self.violation_counts


# --------------------------------------------------------------------------
# helpers


def _fmt_us(ns: int | None) -> str:
    """Integer ns -> µs text with 3 decimals (exact)."""
    if ns is None:
        return "?"
    sign = "-" if ns < 0 else ""
    q, r = divmod(abs(ns), 1000)
    return f"{sign}{q}.{r:03d}"


def _dump(obj: Any) -> str:
    """Compact JSON text of a parsed value; Decimals keep their digits."""
    if isinstance(obj, dict):
        return "{" + ",".join(
            json.dumps(str(k), ensure_ascii=False) + ":" + _dump(v) for k, v in obj.items()
        ) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(_dump(v) for v in obj) + "]"
    if isinstance(obj, Decimal):
        return str(obj)
    try:
        return json.dumps(obj, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(obj)


def _text(obj: Any) -> str:
    """Event text for a report: compact JSON, at most TEXT_LIMIT characters,
    printable (lone surrogates become backslash escapes)."""
    s = _dump(obj)
    if len(s) > TEXT_LIMIT:
        s = s[: TEXT_LIMIT - 3] + "..."
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def _escaped(buf: bytes, pos: int) -> bool:
    """Is the backslash at ``buf[pos]`` itself escaped (an odd run of
    backslashes right before it)?"""
    j = pos
    while j > 0 and buf[j - 1] == 0x5C:
        j -= 1
    return (pos - j) % 2 == 1


def _snippet(buf: bytes, pos: int) -> str:
    """Raw bytes around ``pos`` (from the start of the enclosing event if near)."""
    start = buf.rfind(b"{", max(0, pos - 200), pos + 1)
    if start < 0:
        start = max(0, pos - 100)
    s = buf[start : start + TEXT_LIMIT].decode("utf-8", "backslashreplace")
    return s[:TEXT_LIMIT]


class _Collector:
    """Counts violations per rule and keeps the first ``max_examples`` each.

    Examples found in SQL carry an event index; their text is filled in later
    by :func:`_resolve_texts`. Thread-safe (the producer thread adds too).
    """

    def __init__(self, max_examples: int):
        self.max_examples = max(0, max_examples)
        self.counts: dict[str, int] = {}
        self.examples: list[tuple[str, str, str | None, int | None]] = []
        self._per_rule: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, rule: str, message: str, event: Any = None,
            idx: int | None = None, n: int = 1) -> None:
        """Count ``n`` violations of ``rule``; keep this one as an example if
        there is room. ``event`` is its text, or the parsed event (serialised
        only when kept), or None with ``idx`` to fetch the text later."""
        with self._lock:
            self.counts[rule] = self.counts.get(rule, 0) + n
            kept = self._per_rule.get(rule, 0)
            if kept < self.max_examples:
                self._per_rule[rule] = kept + 1
                if event is not None and not isinstance(event, str):
                    event = _text(event)
                self.examples.append((rule, message, event, idx))

    def bump(self, rule: str, n: int = 1) -> None:
        """Count without an example (cheap path for long violation lists)."""
        with self._lock:
            self.counts[rule] = self.counts.get(rule, 0) + n

    def want(self, rule: str) -> bool:
        """True while more examples of ``rule`` would be kept."""
        return self._per_rule.get(rule, 0) < self.max_examples


# --------------------------------------------------------------------------
# stage 1: decompression and byte-level checks (producer thread)


class _Producer(threading.Thread):
    """Reads, decompresses and byte-checks the file; feeds chunks to a queue."""

    def __init__(self, path: str, col: _Collector | None, q: queue.Queue | None):
        super().__init__(daemon=True, name="nsys-duck-validate-reader")
        self.path = path
        self.col = col  # None: no checks (second pass)
        self.q = q
        self.stop = threading.Event()
        self.total = 0  # decompressed bytes
        self.head = b""  # first 128 bytes
        self.last = b""  # last non-whitespace byte
        self.trailing_ws = 0  # whitespace bytes after it
        self.carry = b""
        self.utf8 = codecs.getincrementaldecoder("utf-8")("strict")

    # -- plumbing
    def _emit(self, chunk: bytes) -> None:
        if not chunk:
            return
        chunk = self._check(chunk) if self.col is not None else self._sanitize(chunk)
        while not self.stop.is_set():
            try:
                self.q.put(chunk, timeout=0.5)
                return
            except queue.Full:
                continue

    def run(self) -> None:
        try:
            self._read()
            if self.col is not None:
                self._finish()
        except OSError as exc:
            if self.col is not None:
                self.col.add("gzip", f"cannot read the file: {exc}")
        except Exception as exc:  # a bug: report it, never leave the consumer hanging
            if self.col is not None:
                self.col.add("internal", f"reader thread failed: {type(exc).__name__}: {exc}")
        finally:
            if self.q is not None:
                self.q.put(None)  # the consumer always drains to this sentinel

    def _read(self) -> None:
        col = self.col
        with open(self.path, "rb") as f:
            buf = f.read(READ_BLOCK)
            if buf[:2] != b"\x1f\x8b":
                if col is not None:
                    col.add("gzip", "not a gzip file (no 1f 8b magic); checked as plain JSON")
                while buf and not self.stop.is_set():
                    for i in range(0, len(buf), OUT_CHUNK):
                        self._emit(buf[i : i + OUT_CHUNK])
                    buf = f.read(READ_BLOCK)
                return
            member = 1
            d = _zlib.decompressobj(wbits=31)
            while not self.stop.is_set():
                if not buf:
                    buf = f.read(READ_BLOCK)
                    if not buf:
                        try:  # output still pending inside the decompressor
                            self._emit(d.flush())
                        except Exception as exc:
                            if col is not None:
                                col.add("gzip", f"gzip member {member} is corrupt: {exc}")
                            return
                        break
                try:
                    out = d.decompress(buf, OUT_CHUNK)
                except Exception as exc:
                    if col is not None:
                        col.add("gzip", f"gzip member {member} is corrupt after "
                                f"{self.total} decompressed bytes: {exc}")
                    return
                buf = d.unconsumed_tail
                self._emit(out)
                if d.eof:
                    rest = d.unused_data + buf
                    if not rest:
                        rest = f.read(READ_BLOCK)
                    if not rest:
                        return  # clean end after this member
                    if member == 1 and col is not None:
                        where = f"after {self.total} decompressed bytes"
                        if rest[:2] == b"\x1f\x8b":
                            col.add("gzip", "more than one gzip member: a second member "
                                    f"starts {where} (Perfetto concatenates them; the "
                                    "contract wants exactly one)")
                        else:
                            col.add("gzip", f"{len(rest)}+ trailing bytes after the gzip "
                                    f"member ({where}), not a gzip member")
                    if rest[:2] != b"\x1f\x8b":
                        return
                    member += 1
                    d = _zlib.decompressobj(wbits=31)
                    buf = rest
            if not self.stop.is_set() and not d.eof and col is not None:
                col.add("gzip", f"truncated gzip stream: member {member} ends without its "
                        f"trailer after {self.total} decompressed bytes")

    # -- checks
    def _utf8_ok(self, chunk: bytes, base: int) -> bool:
        """Feed the incremental UTF-8 decoder; report errors when checking."""
        if chunk.isascii() and not self.utf8.getstate()[0]:
            return True
        ok, rest, off = True, chunk, 0
        for _ in range(100):
            try:
                self.utf8.decode(rest)
                break
            except UnicodeDecodeError as exc:
                ok = False
                self.utf8.reset()
                if self.col is not None:
                    self.col.add("string", f"invalid UTF-8 at byte offset {base + off + exc.start}",
                                 _snippet(chunk, off + exc.start))
                off += exc.end
                rest = rest[exc.end :]
        return ok

    @staticmethod
    def _fix_utf8(chunk: bytes) -> bytes:
        """Replace invalid UTF-8 in ``chunk``, keeping characters split at its ends."""
        i = 0
        while i < 3 and i < len(chunk) and 0x80 <= chunk[i] <= 0xBF:
            i += 1
        j = len(chunk)
        for p in range(len(chunk) - 1, max(i, len(chunk) - 4) - 1, -1):
            b = chunk[p]
            if b >= 0xC0:
                need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
                if p + need > len(chunk):
                    j = p
                break
            if b < 0x80:
                break
        return chunk[:i] + chunk[i:j].decode("utf-8", "replace").encode() + chunk[j:]

    def _sanitize(self, chunk: bytes, ctrl: bool | None = None, utf8_ok: bool | None = None
                  ) -> bytes:
        """Make reported byte problems parseable, so one bad byte does not hide
        the rest of the trace: raw control bytes -> space, bad UTF-8 -> U+FFFD.
        Both passes apply it identically, so event indexes agree."""
        if ctrl is None:
            ctrl = _RE_CTRL.search(chunk) is not None
        if ctrl:
            chunk = chunk.translate(_CTRL_TO_SPACE)
        if utf8_ok is None:
            utf8_ok = self._utf8_ok(chunk, 0)
        if not utf8_ok:
            chunk = self._fix_utf8(chunk)
        return chunk

    def _track(self, chunk: bytes) -> int:
        """Record the head, last byte and trailing whitespace (``json`` rules)
        and count ``chunk``; returns the stream offset of ``carry + chunk``."""
        if len(self.head) < 128:
            self.head += chunk[: 128 - len(self.head)]
        stripped = chunk.rstrip(_WS)
        if stripped:
            self.last = stripped[-1:]
            self.trailing_ws = len(chunk) - len(stripped)
        else:
            self.trailing_ws += len(chunk)
        base = self.total - len(self.carry)  # stream offset of buf[0]
        self.total += len(chunk)
        return base

    def _keep_carry(self, buf: bytes, keep: int) -> None:
        """Next carry: the last ``keep`` bytes of ``buf``, extended back over a
        run of backslashes so escape parity can be decided."""
        cut = max(0, len(buf) - keep)
        while cut > 0 and buf[cut - 1] == 0x5C:
            cut -= 1
        self.carry = buf[cut:]

    def _check(self, chunk: bytes) -> bytes:
        base = self._track(chunk)
        utf8_ok = self._utf8_ok(chunk, base + len(self.carry))
        buf = self.carry + chunk
        ctrl = False
        if pc.match_substring_regex(pa.array([buf], pa.binary()), _PREFILTER)[0].as_py():
            self._slow(buf, len(self.carry), base, final=False)
            ctrl = _RE_CTRL.search(chunk) is not None
        self._keep_carry(buf, CARRY)
        return self._sanitize(chunk, ctrl, utf8_ok)

    def _slow(self, buf: bytes, lo: int, base: int, final: bool) -> None:
        """Exact byte checks on ``buf``; report matches ending in [lo, len)."""
        col = self.col
        hi = len(buf) + (1 if final else 0)

        def fresh(m: re.Match) -> bool:
            return lo <= m.end() < hi

        for m in _RE_CTRL.finditer(buf):
            if fresh(m):
                b = buf[m.start()]
                what = "NUL" if b == 0 else f"control byte 0x{b:02x}"
                col.add("string", f"raw {what} at byte offset {base + m.start()} "
                        "(must be escaped, NUL never written)", _snippet(buf, m.start()))
        for m in _RE_ESC.finditer(buf):
            if not fresh(m):
                continue
            if _escaped(buf, m.start()):
                continue
            esc = m.group().decode()
            if esc == "\\u0000":
                msg = "\\u0000 escape (Perfetto cuts the string there)"
            else:
                msg = f"surrogate escape {esc} (Perfetto rejects the whole file)"
            col.add("string", f"{msg} at byte offset {base + m.start()}", _snippet(buf, m.start()))
        for m in _RE_NUM.finditer(buf):
            if not fresh(m):
                continue
            key, lit = m.group(1).decode(), m.group(2).decode()
            if "N" in lit or "I" in lit:
                col.add("number", f"{key} is {lit} (not a JSON number)", _snippet(buf, m.start()))
                continue
            try:
                exp = Decimal(lit).as_tuple().exponent
            except Exception:
                exp = -1
            if isinstance(exp, int) and -3 <= exp < 0:
                # The parsed Decimal looks plain (e.g. 15e-1 == 1.5); the
                # per-event check cannot see this one, so report it here.
                col.add("number", f"{key} {lit} uses exponent notation",
                        _snippet(buf, m.start()))

    def _finish(self) -> None:
        self._finish_bytes()
        self._finish_shape()

    def _finish_bytes(self) -> None:
        """Deferred byte checks at the end of the stream."""
        if self.carry:  # matches deferred because they touched the end
            self._slow(self.carry, len(self.carry), self.total - len(self.carry), final=True)
        try:
            self.utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            self.col.add("string", "invalid UTF-8: stream ends inside a multi-byte character")

    def _finish_shape(self) -> None:
        """``json`` rules on the head and tail of the stream."""
        col = self.col
        head, total = self.head, self.total
        if total == 0:
            col.add("json", "empty trace (no bytes after decompression)")
            return
        if head.startswith(b"\xef\xbb\xbf"):
            col.add("json", "starts with a UTF-8 BOM (Perfetto: unknown trace type)",
                    head.decode("utf-8", "backslashreplace"))
        elif not bytes(head).translate(None, _WS).startswith(b'[{"'):
            col.add("json", 'first 128 bytes do not start with [{" after whitespace '
                    "(need a bare array whose first element is an object)",
                    head.decode("utf-8", "backslashreplace"))
        if self.last != b"]":
            col.add("json", "the stream does not end with ] (last non-blank byte is "
                    f"{self.last.decode('utf-8', 'backslashreplace')!r})")
        elif self.trailing_ws:
            col.add("json", f"{self.trailing_ws} whitespace byte(s) after the closing ] "
                    "(nothing may follow it)")


class _QueueReader:
    """File-like ``read(n)`` over the producer's queue."""

    def __init__(self, q: queue.Queue):
        self.q = q
        self.buf = b""
        self.pos = 0
        self.eof = False

    def read(self, n: int = -1) -> bytes:
        if self.pos >= len(self.buf):
            if self.eof:
                return b""
            item = self.q.get()
            if item is None:
                self.eof = True
                return b""
            self.buf, self.pos = item, 0
        if n is None or n < 0:
            n = len(self.buf) - self.pos
        out = self.buf[self.pos : self.pos + n]
        self.pos += len(out)
        return out

    def drain(self) -> None:
        while not self.eof:
            self.pos = len(self.buf)
            self.read(1)


# --------------------------------------------------------------------------
# stage 2: per-event checks and loading into DuckDB

_XO_DDL = """
-- X events (the bulk of a trace) get a narrow table of their own.
CREATE TABLE {x} (
    idx BIGINT,      -- position in the array (0-based, file order)
    cat VARCHAR,
    ts BIGINT,       -- ns; NULL when invalid or missing (violation reported)
    dur BIGINT,      -- ns; NULL when invalid or missing
    pid BIGINT,      -- NULL when invalid or missing
    tid BIGINT
);
-- every other non-M event
CREATE TABLE {o} (
    idx BIGINT, ph VARCHAR, cat VARCHAR, name VARCHAR,
    ts BIGINT, dur BIGINT, pid BIGINT, tid BIGINT,
    fid BIGINT,      -- flow id (s/f)
    aid VARCHAR,     -- async id key (b/e/n): scope:type:value
    bp_e BOOLEAN     -- f has "bp":"e"
);
"""
_REST_DDL = """
CREATE VIEW ev AS
    SELECT idx, 'X' AS ph, cat, NULL::VARCHAR AS name, ts, dur, pid, tid,
           NULL::BIGINT AS fid, NULL::VARCHAR AS aid, NULL::BOOLEAN AS bp_e
    FROM xev
    UNION ALL
    SELECT * FROM oev;
-- M events (few)
CREATE TABLE meta (idx BIGINT, mname VARCHAR, pid BIGINT, tid BIGINT);
-- matched B/E pairs (from the Python stack pass)
CREATE TABLE be (pid BIGINT, tid BIGINT, s BIGINT, e BIGINT, idx BIGINT,
                 e_idx BIGINT, cat VARCHAR);
"""
_EV_DDL = _XO_DDL.format(x="xev", o="oev") + _REST_DDL
# Batches are typed arrays (zero conversion cost); NULL is a sentinel that
# no valid value can take: -1 for ts/dur/pid/tid, INT64_MIN for flow ids,
# -1 for bp. ph/cat are dictionary codes into a per-batch string list.
_INSERT_X = """
INSERT INTO {x} SELECT idx, cat, nullif(ts, -1), nullif(dur, -1),
    nullif(pid, -1), nullif(tid, -1) FROM _batch
"""
_INSERT_O = """
INSERT INTO {o} SELECT idx, ph, cat, name, nullif(ts, -1), nullif(dur, -1),
    nullif(pid, -1), nullif(tid, -1), nullif(fid, -9223372036854775808),
    aid, CASE bp WHEN 1 THEN true WHEN 0 THEN false END FROM _batch
"""


class _Writer(threading.Thread):
    """Inserts Arrow batches into DuckDB off the parsing thread.

    DuckDB releases the GIL while it executes, so inserting overlaps with
    parsing. The queue is bounded, which bounds memory.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection):
        super().__init__(daemon=True, name="nsys-duck-validate-writer")
        self.cur = con.cursor()
        self.q: queue.Queue = queue.Queue(maxsize=4)
        self.error: BaseException | None = None

    def run(self) -> None:
        while True:
            item = self.q.get()
            if item is None:
                break
            if self.error is not None:
                continue
            sql, tbl = item
            try:
                self.cur.register("_batch", tbl)
                self.cur.execute(sql)
                self.cur.unregister("_batch")
            except BaseException as exc:  # reported by close()
                self.error = exc

    def put(self, sql: str, tbl: pa.Table) -> None:
        self.q.put((sql, tbl))

    def close(self) -> None:
        """Wait for pending inserts; re-raise an insert error."""
        self.close_quietly()
        if self.error is not None:
            raise self.error

    def close_quietly(self) -> None:
        if self.is_alive():
            self.q.put(None)
            self.join()
        if self.cur is not None:
            self.cur.close()
            self.cur = None


def _i64(a: array) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), len(a), [None, pa.py_buffer(a.tobytes())])


class _Loader:
    """Per-event checks; compact rows into DuckDB (tables ``xev`` and ``oev``
    unless ``tables`` names others)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, col: _Collector,
                 tables: tuple[str, str] = ("xev", "oev")):
        self.con = con
        self.col = col
        self.insert_x = _INSERT_X.format(x=tables[0])
        self.insert_o = _INSERT_O.format(o=tables[1])
        self.writer = _Writer(con)
        self.writer.start()
        # X events
        self.x_idx, self.x_cat = array("q"), array("i")
        self.x_ts, self.x_dur = array("q"), array("q")
        self.x_pid, self.x_tid = array("q"), array("q")
        # other non-M events
        self.o_idx, self.o_ph, self.o_cat = array("q"), array("i"), array("i")
        self.o_ts, self.o_dur = array("q"), array("q")
        self.o_pid, self.o_tid = array("q"), array("q")
        self.o_fid, self.o_bp = array("q"), array("b")
        self.o_name: list[str | None] = []
        self.o_aid: list[str | None] = []
        self.codes: dict[str | None, int] = {None: 0}  # per-batch dictionary
        self.strs: list[str | None] = [None]
        self.meta: list[tuple] = []
        self.m_count = 0
        self.epochs: dict[int, int] = {}  # epoch_ns -> first idx
        self.events = 0

    def _code(self, v: Any) -> int:
        if v is not None and type(v) is not str:
            v = _dump(v)
        c = self.codes.get(v)
        if c is None:
            c = self.codes[v] = len(self.strs)
            self.strs.append(v)
        return c

    # -- numbers
    def _time_slow(self, ev: dict, key: str, v: Any) -> int:
        """Full check of a ts/dur value; returns ns, or -1 (violation added)."""
        col = self.col
        t = type(v)
        if t is int:
            ns = v * 1000
        elif t is Decimal:
            s = str(v)
            p = s.find(".")
            if not v.is_finite():
                col.add("number", f"{key} is {s}", ev)
                return -1
            if "E" in s or p < 0:
                col.add("number", f"{key} {s} is not a plain number "
                        "(exponent notation or > 3 fraction digits)", ev)
                return -1
            nf = len(s) - p - 1
            if nf > 3:
                col.add("number", f"{key} {s} has {nf} fraction digits (max 3: ns)", ev)
                return -1
            ns = int(s.replace(".", "")) * _SCALE[nf]
        else:
            what = "a string" if t is str else f"{t.__name__}"
            col.add("number", f"{key} is {what}, not a JSON number", ev)
            return -1
        if ns < 0:
            col.add("number", f"{key} {_fmt_us(ns)} is negative", ev)
            return -1
        if key == "ts" and ns >= TS_LIMIT_NS:
            col.add("number", f"ts {_fmt_us(ns)} >= 2^42 µs (not ns-exact in Perfetto)", ev)
            return -1
        if ns >= TS_LIMIT_NS * 1000:
            col.add("number", f"{key} {_fmt_us(ns)} is absurdly large", ev)
            return -1
        return ns

    def _ident(self, ev: dict, key: str, v: Any, ph: Any) -> int:
        """pid/tid check (slow path); returns the value or -1."""
        col = self.col
        if v is None and key not in ev:
            if key == "pid" or not (
                ph in ("b", "e", "n")
                or (ph == "M" and ev.get("name") not in ("thread_name", "thread_sort_index"))
            ):
                col.add("pid_tid", f"ph {ph!r} event without {key}", ev)
            return -1
        if type(v) is int and 1 <= v <= MAX_ID:
            return v
        if type(v) is int:
            col.add("pid_tid", f"{key} {v} outside 1..2^31-1", ev)
        else:
            t = "a string" if isinstance(v, str) else type(v).__name__
            col.add("pid_tid", f"{key} is {t} ({_dump(v)}), not an integer", ev)
        return -1

    # -- events
    def run(self, items: Iterable[tuple[int, Any]]) -> None:
        """Consume ``(array index, parsed event)`` pairs (indexes increasing).
        This is the hot loop: keep it lean."""
        col = self.col
        time_slow, ident, code, flush = self._time_slow, self._ident, self._code, self.flush
        D, SCALE, LIM_NS, LIM_US = Decimal, _SCALE, TS_LIMIT_NS, TS_LIMIT_US
        codes = self.codes
        xi, xc, xt, xd = self.x_idx.append, self.x_cat.append, self.x_ts.append, self.x_dur.append
        xp, xtid = self.x_pid.append, self.x_tid.append
        x_len = self.x_idx
        oi, oph, oc = self.o_idx.append, self.o_ph.append, self.o_cat.append
        ot, od, op, otid = self.o_ts.append, self.o_dur.append, self.o_pid.append, self.o_tid.append
        ofid, obp, oname, oaid = (self.o_fid.append, self.o_bp.append,
                                  self.o_name.append, self.o_aid.append)
        o_len = self.o_idx
        idx = self.events - 1
        try:
            for idx, ev in items:
                if type(ev) is not dict:
                    col.add("json", f"array element {idx} is not an object", ev)
                    continue
                ph = ev.get("ph")
                if ph == "M":
                    self._meta(ev, idx)
                    continue
                if type(ph) is not str or ph not in VALID_PH:
                    col.add("ph", f"ph {_dump(ph)} is not one of X B E i I M s f b e C n",
                            ev)
                    if type(ph) is not str:
                        ph = _dump(ph)  # counted as e.g. "ph:null"
                # ts (fast path: "<int>.<1-3 digits>" or a small int)
                ts = ev.get("ts")
                if type(ts) is D:
                    s = str(ts)
                    p = s.find(".")
                    nf = len(s) - p - 1
                    if p > 0 and nf <= 3 and s[0] != "-":
                        ts = int(s.replace(".", "")) * SCALE[nf]
                        if ts >= LIM_NS:
                            ts = time_slow(ev, "ts", ev["ts"])
                    else:
                        ts = time_slow(ev, "ts", ts)
                elif type(ts) is int and 0 <= ts < LIM_US:
                    ts *= 1000
                elif ts is None and "ts" not in ev:
                    col.add("number", f"ph {_dump(ph)} event without ts", ev)
                    ts = -1
                else:
                    ts = time_slow(ev, "ts", ts)
                dur = ev.get("dur")
                if dur is not None:
                    if type(dur) is D:
                        s = str(dur)
                        p = s.find(".")
                        nf = len(s) - p - 1
                        if p > 0 and nf <= 3 and s[0] != "-":
                            dur = int(s.replace(".", "")) * SCALE[nf]
                        else:
                            dur = time_slow(ev, "dur", dur)
                    elif type(dur) is int and 0 <= dur < LIM_US:
                        dur *= 1000
                    else:
                        dur = time_slow(ev, "dur", dur)
                    if ts >= 0 and dur >= 0 and ts + dur >= LIM_NS:
                        col.add("number", f"end ts+dur = {_fmt_us(ts + dur)} >= 2^42 µs",
                                ev)
                        dur = -1
                elif "dur" in ev:  # "dur": null
                    dur = time_slow(ev, "dur", dur)
                else:
                    dur = -1
                    if ph == "X":
                        col.add("number", "X event without dur", ev)
                pid = ev.get("pid")
                if type(pid) is not int or not 0 < pid <= MAX_ID:
                    pid = ident(ev, "pid", pid, ph)
                tid = ev.get("tid")
                if type(tid) is not int or not 0 < tid <= MAX_ID:
                    tid = ident(ev, "tid", tid, ph)
                cat = ev.get("cat")
                try:
                    c = codes[cat]
                except (KeyError, TypeError):
                    c = code(cat)
                if ph == "X":
                    xi(idx)
                    xc(c)
                    xt(ts)
                    xd(dur)
                    xp(pid)
                    xtid(tid)
                    if len(x_len) >= BATCH_ROWS:
                        flush()
                    continue
                name = ev.get("name")
                if type(name) is not str and name is not None:
                    name = _dump(name)
                fid = INT64_MIN
                bp = -1
                aid = None
                if ph == "s" or ph == "f":
                    fid = ev.get("id")
                    if type(fid) is not int or not INT64_MIN < fid <= INT64_MAX:
                        col.add("flow", f"flow id {_dump(fid) if 'id' in ev else '(missing)'} "
                                "is not a 64-bit integer", ev)
                        fid = INT64_MIN
                    if ph == "f":
                        bp = 1 if ev.get("bp") == "e" else 0
                        if not bp:
                            col.add("flow", 'f without "bp":"e" (binds to the next slice '
                                    "instead of the enclosing one)", ev)
                elif ph == "b" or ph == "e" or ph == "n":
                    aid = self._async_id(ev)
                    if cat is None or cat == "":
                        col.add("b_e_async", f"async {ph} without cat", ev)
                try:
                    pc_ = codes[ph]
                except (KeyError, TypeError):
                    pc_ = code(ph)
                oi(idx)
                oph(pc_)
                oc(c)
                ot(ts)
                od(dur)
                op(pid)
                otid(tid)
                ofid(fid)
                obp(bp)
                oname(name)
                oaid(aid)
                if len(o_len) >= BATCH_ROWS:
                    flush()
        finally:
            self.events = idx + 1

    def _async_id(self, ev: dict) -> str | None:
        id2 = ev.get("id2")
        if isinstance(id2, dict) and "local" in id2:
            v, scope = id2["local"], "L"
        elif isinstance(id2, dict) and "global" in id2:
            v, scope = id2["global"], "G"
        elif "id" in ev:
            v, scope = ev["id"], "G"
        else:
            self.col.add("b_e_async", "async event without id2.local / id", ev)
            return None
        if type(v) is int or type(v) is str:
            return f"{scope}:{type(v).__name__[0]}:{v}"
        self.col.add("b_e_async", f"async id {_dump(v)} is not an integer or string "
                     "(Perfetto ignores it)", ev)
        return None

    def _meta(self, ev: dict, idx: int) -> None:
        col = self.col
        self.m_count += 1
        mname = ev.get("name")
        pid = ev.get("pid")
        if type(pid) is not int or not 0 < pid <= MAX_ID:
            pid = self._ident(ev, "pid", pid, "M")
        tid = ev.get("tid")
        if type(tid) is not int or not 0 < tid <= MAX_ID:
            tid = self._ident(ev, "tid", tid, "M")
        pid = None if pid == -1 else pid
        tid = None if tid == -1 else tid
        if "ts" in ev:
            self._time_slow(ev, "ts", ev["ts"])
        args = ev.get("args")
        args = args if isinstance(args, dict) else {}
        if mname in ("process_name", "thread_name"):
            nm = args.get("name")
            if type(nm) is not str or not nm:
                col.add("track_named", f"{mname} with empty or missing args.name", ev)
        elif mname in ("process_sort_index", "thread_sort_index"):
            si = args.get("sort_index")
            if type(si) is not int:
                col.add("track_named", f"{mname} args.sort_index {_dump(si)} is not an integer",
                        ev)
        if mname == "process_name":
            ep = args.get("epoch_ns")
            if type(ep) is not int:
                what = "missing" if "epoch_ns" not in args else f"{_dump(ep)}, not an integer"
                col.add("metadata", f"process_name args.epoch_ns is {what}", ev)
            elif ep not in self.epochs and len(self.epochs) < 100:
                self.epochs[ep] = idx
        if isinstance(mname, str):
            self.meta.append((idx, mname, pid, tid))

    def flush(self) -> None:
        """Hand the buffered rows to the writer thread and reset the buffers."""
        dic = pa.array(self.strs, pa.string())

        def dict_col(a: array) -> pa.Array:
            ind = pa.Array.from_buffers(pa.int32(), len(a), [None, pa.py_buffer(a.tobytes())])
            return pa.DictionaryArray.from_arrays(ind, dic)

        if self.x_idx:
            self.writer.put(self.insert_x, pa.table({
                "idx": _i64(self.x_idx), "cat": dict_col(self.x_cat),
                "ts": _i64(self.x_ts), "dur": _i64(self.x_dur),
                "pid": _i64(self.x_pid), "tid": _i64(self.x_tid),
            }))
        if self.o_idx:
            bp = pa.Array.from_buffers(pa.int8(), len(self.o_bp),
                                       [None, pa.py_buffer(self.o_bp.tobytes())])
            self.writer.put(self.insert_o, pa.table({
                "idx": _i64(self.o_idx), "ph": dict_col(self.o_ph),
                "cat": dict_col(self.o_cat), "name": pa.array(self.o_name, pa.string()),
                "ts": _i64(self.o_ts), "dur": _i64(self.o_dur),
                "pid": _i64(self.o_pid), "tid": _i64(self.o_tid),
                "fid": _i64(self.o_fid), "aid": pa.array(self.o_aid, pa.string()),
                "bp": bp,
            }))
        for a in (self.x_idx, self.x_cat, self.x_ts, self.x_dur, self.x_pid, self.x_tid,
                  self.o_idx, self.o_ph, self.o_cat, self.o_ts, self.o_dur, self.o_pid,
                  self.o_tid, self.o_fid, self.o_bp, self.o_name, self.o_aid):
            del a[:]
        self.codes.clear()
        self.codes[None] = 0
        del self.strs[1:]

    def finish(self, check_epochs: bool = True) -> None:
        """Flush, wait for the writer, load M events, compare epochs (unless
        the caller merges ``epochs`` with its own first)."""
        self.flush()
        self.writer.close()
        if self.meta:
            tbl = pa.Table.from_arrays(
                [pa.array(c) for c in zip(*self.meta)], names=["idx", "mname", "pid", "tid"]
            )
            self.con.register("_meta", tbl)
            self.con.execute(
                "INSERT INTO meta SELECT idx, mname, pid::BIGINT, tid::BIGINT FROM _meta"
            )
            self.con.unregister("_meta")
        if check_epochs:
            _check_epochs(self.col, self.epochs)


def _check_epochs(col: _Collector, epochs: dict[int, int]) -> None:
    """``metadata``: all process_name events carry the same epoch_ns.
    ``epochs`` maps each value to the index of its first event."""
    if len(epochs) > 1:
        vals = sorted(epochs)
        col.add("metadata", f"process_name events disagree on args.epoch_ns: "
                f"{', '.join(map(str, vals[:5]))}{' ...' if len(vals) > 5 else ''}",
                idx=epochs[vals[1]])


# --------------------------------------------------------------------------
# stage 3: structural checks


def _one(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> tuple | None:
    """First row of ``sql`` (the result is fully consumed, as DuckDB wants)."""
    rows = con.execute(sql, params).fetchall() if params else con.execute(sql).fetchall()
    return rows[0] if rows else None


def _batches(con: duckdb.DuckDBPyConnection, sql: str) -> Iterable[tuple]:
    """Rows of ``sql``, streamed through a cursor of their own (so the caller
    may write to the database while iterating)."""
    cur = con.cursor()
    try:
        res = cur.execute(sql)
        while rows := res.fetchmany(65536):
            yield from rows
    finally:
        cur.close()


def _report(col: _Collector, rule: str, idx: int | None, message) -> None:
    """Count a violation; build its message (a callable) only if it is kept."""
    if col.want(rule):
        col.add(rule, message(), idx=idx)
    else:
        col.bump(rule)


# Per (pid, tid, ph, cat): event count and first index. Feeds the track
# checks and the counts (one scan of the events).
_TSTAT_SQL = """
CREATE TABLE tstat AS
SELECT pid, tid, ph, cat, count(*) AS n, min(idx) AS first FROM ev GROUP BY ALL
"""


def _check_tracks(con, col: _Collector) -> None:
    q_proc = """
        WITH p AS (SELECT pid, min(first) AS idx FROM tstat WHERE pid IS NOT NULL
                   GROUP BY pid),
        m AS (SELECT pid, bool_or(mname = 'process_name') AS has_name,
                     bool_or(mname = 'process_sort_index') AS has_sort
              FROM meta WHERE pid IS NOT NULL GROUP BY pid)
        SELECT p.pid, p.idx, coalesce(m.has_name, false), coalesce(m.has_sort, false)
        FROM p LEFT JOIN m USING (pid)
        WHERE NOT coalesce(m.has_name, false) OR NOT coalesce(m.has_sort, false)
        ORDER BY p.idx
    """
    for pid, idx, has_name, has_sort in con.execute(q_proc).fetchall():
        missing = [n for n, ok in (("process_name", has_name), ("process_sort_index", has_sort))
                   if not ok]
        col.add("track_named", f"pid {pid} has events but no {' / '.join(missing)}", idx=idx)
    q_thread = """
        WITH t AS (SELECT pid, tid, min(first) AS idx FROM tstat
                   WHERE pid IS NOT NULL AND tid IS NOT NULL
                     AND ph IN ('X', 'B', 'E', 'i', 'I', 's', 'f')
                   GROUP BY pid, tid),
        m AS (SELECT pid, tid, bool_or(mname = 'thread_name') AS has_name,
                     bool_or(mname = 'thread_sort_index') AS has_sort
              FROM meta WHERE pid IS NOT NULL AND tid IS NOT NULL GROUP BY pid, tid)
        SELECT t.pid, t.tid, t.idx, coalesce(m.has_name, false), coalesce(m.has_sort, false)
        FROM t LEFT JOIN m USING (pid, tid)
        WHERE NOT coalesce(m.has_name, false) OR NOT coalesce(m.has_sort, false)
        ORDER BY t.idx
    """
    for pid, tid, idx, has_name, has_sort in con.execute(q_thread).fetchall():
        missing = [n for n, ok in (("thread_name", has_name), ("thread_sort_index", has_sort))
                   if not ok]
        col.add("track_named", f"track pid {pid} tid {tid} has slices but no "
                f"{' / '.join(missing)}", idx=idx)


# B/E matching, fast path in SQL. Per (pid, tid), in Perfetto order (ts, E
# before other events at equal ts, file order), depth d = running count of
# open B. A track is clean iff d never drops below 0, ends at 0, and each E
# closes the B it pairs with by level (the last B whose depth-after equals
# the E's depth-before, i.e. the stack top) with a matching name and cat.
# Clean tracks' pairs go straight to ``be``; the others get the exact
# Perfetto-style stack pass in Python (``_check_be``).
_BE_SQL = """
CREATE TABLE be_seq AS
SELECT pid, tid, ph, name, cat, ts, idx,
    sum(CASE WHEN ph = 'B' THEN 1 ELSE -1 END) OVER w AS d,
    row_number() OVER w AS pos
FROM oev
WHERE ph IN ('B', 'E') AND pid IS NOT NULL AND tid IS NOT NULL AND ts IS NOT NULL
WINDOW w AS (PARTITION BY pid, tid ORDER BY ts, ph <> 'E', idx
             ROWS UNBOUNDED PRECEDING);

CREATE TABLE be_pair AS
WITH e AS (SELECT pid, tid, d + 1 AS lvl, pos, ts, idx, name, cat FROM be_seq WHERE ph = 'E'),
b AS (SELECT pid, tid, d AS lvl, pos, ts, idx, name, cat FROM be_seq WHERE ph = 'B')
SELECT e.pid, e.tid, b.ts AS s, e.ts AS e, b.idx, e.idx AS e_idx, b.cat,
    b.idx IS NOT NULL
    AND (e.name IS NULL OR e.name IS NOT DISTINCT FROM b.name)
    AND (e.cat IS NULL OR e.cat IS NOT DISTINCT FROM b.cat) AS ok
FROM e ASOF LEFT JOIN b
    ON b.pid = e.pid AND b.tid = e.tid AND b.lvl = e.lvl AND e.pos > b.pos;

CREATE TABLE be_dirty AS
SELECT pid, tid FROM be_seq GROUP BY pid, tid
HAVING min(d) < 0 OR sum(CASE WHEN ph = 'B' THEN 1 ELSE -1 END) <> 0
UNION
SELECT DISTINCT pid, tid FROM be_pair WHERE NOT ok;

INSERT INTO be
SELECT pid, tid, s, e, idx, e_idx, cat FROM be_pair
WHERE (pid, tid) NOT IN (SELECT (pid, tid) FROM be_dirty);
"""


def _check_be(con, col: _Collector) -> None:
    """B/E matching. Tracks the SQL fast path (``_BE_SQL``) found clean are
    done; on the others, a Python stack pass in Perfetto order reports each
    problem and adds the pairs Perfetto would make to table ``be``."""
    _execute(con, _BE_SQL)
    if not _one(con, "SELECT count(*) FROM be_dirty")[0]:
        return
    sql = """
        SELECT pid, tid, ph, name, cat, ts, idx FROM oev
        WHERE ph IN ('B', 'E') AND ts IS NOT NULL
          AND (pid, tid) IN (SELECT (pid, tid) FROM be_dirty)
        ORDER BY pid, tid, ts, ph <> 'E', idx
    """
    pairs: list[tuple] = []

    def flush_pairs() -> None:
        if pairs:
            tbl = pa.Table.from_arrays(
                [pa.array(c, pa.int64()) for c in list(zip(*pairs))[:6]]
                + [pa.array([p[6] for p in pairs], pa.string())],
                names=["pid", "tid", "s", "e", "idx", "e_idx", "cat"],
            )
            con.register("_pairs", tbl)
            con.execute("INSERT INTO be SELECT * FROM _pairs")
            con.unregister("_pairs")
            pairs.clear()

    def close_track(stack: list, pid: int, tid: int) -> None:
        for name, cat, ts, idx in stack:
            _report(col, "be_balance", idx, lambda: (
                f"B {name!r} (cat {cat!r}) at {_fmt_us(ts)} on pid {pid} tid {tid} "
                "is never closed"))

    cur = None
    stack: list[tuple] = []
    for pid, tid, ph, name, cat, ts, idx in _batches(con, sql):
        if (pid, tid) != cur:
            if cur is not None:
                close_track(stack, *cur)
            cur, stack = (pid, tid), []
        if ph == "B":
            stack.append((name, cat, ts, idx))
            continue
        j = len(stack) - 1
        stop = max(-1, j - MAX_SEARCH)
        while j > stop and not (
            (name is None or stack[j][0] == name) and (cat is None or stack[j][1] == cat)
        ):
            j -= 1
        if j <= stop:
            _report(col, "be_balance", idx, lambda: (
                f"E {name!r} (cat {cat!r}) at {_fmt_us(ts)} on pid {pid} tid {tid} matches "
                "no open B (" + (f"innermost open B is {stack[-1][0]!r} (cat {stack[-1][1]!r})"
                                 if stack else "no B is open") + "); Perfetto ignores it"))
            continue
        if j < len(stack) - 1:
            _report(col, "be_balance", idx, lambda: (
                f"E {name!r} at {_fmt_us(ts)} on pid {pid} tid {tid} closes an outer B while "
                f"B {stack[-1][0]!r} (from {_fmt_us(stack[-1][2])}) is still open"))
        bname, bcat, bts, bidx = stack[j]
        del stack[j:]
        pairs.append((pid, tid, bts, ts, bidx, idx, bcat))
        if len(pairs) >= BATCH_ROWS:
            flush_pairs()
    if cur is not None:
        close_track(stack, *cur)
    flush_pairs()


def _check_async(con, col: _Collector) -> None:
    """b/e matching per (pid, cat, id)."""
    sql = """
        SELECT pid, cat, aid, ph, name, ts, idx FROM oev
        WHERE ph IN ('b', 'e') AND pid IS NOT NULL AND aid IS NOT NULL AND ts IS NOT NULL
        ORDER BY pid, cat, aid, ts, idx
    """
    cur = None
    stack: list[tuple] = []

    def close_key(stack: list) -> None:
        for name, ts, idx in stack:
            _report(col, "b_e_async", idx,
                    lambda: f"async b {name!r} at {_fmt_us(ts)} is never closed by an e")

    for pid, cat, aid, ph, name, ts, idx in _batches(con, sql):
        key = (pid, cat, aid)
        if key != cur:
            close_key(stack)
            cur, stack = key, []
        if ph == "b":
            stack.append((name, ts, idx))
            continue
        j = len(stack) - 1
        stop = max(-1, j - MAX_SEARCH)
        while j > stop and not (name is None or stack[j][0] == name):
            j -= 1
        if j <= stop:
            _report(col, "b_e_async", idx, lambda: (
                f"async e {name!r} (cat {cat!r}, id {aid.split(':', 2)[2]}) at {_fmt_us(ts)} "
                f"on pid {pid} matches no earlier open b"))
            continue
        del stack[j]
    close_key(stack)


# Overlap check and flow binding share one "bracket sequence" per track
# (pid, tid), built in SQL with one window:
#
#   * every slice (X, or a matched B/E pair) of positive length is an open
#     row at s and a close row at e; a zero-length slice is an open and a
#     close at s (it can never overlap anything);
#   * every flow event (s/f) is a point row at its ts;
#   * rows are ordered by (t, cls, o1, o2): at equal t, closes (inner
#     first), opens (outer first), zero-length opens, points, zero-length
#     closes. So a slice ending at t does not contain a point at t, a slice
#     starting at t does; a zero-length slice contains only a point at its t.
#
# depth = running sum of +1 (open) / -1 (close). An open sits on level
# depth-after, a close on depth-before, a point on the current depth.
# Laminar (no partial overlap) <=> every slice's open and close are on the
# same level: if the first close that does not close the stack top closes X
# while Y (opened later) is on top, X's open level < Y's level = that
# close's level. A point's innermost enclosing slice is the stack top: the
# last open on the point's level before it (an ASOF join).
#
# Example (A [0,10), B [2,5), D [3,4), C [4,8)):
#   t:     0   2   3   4   4   5   8   10
#   row:   oA  oB  oD  cD  oC  cB  cC  cA
#   level: 1   2   3   3   3   3   2   1     -> B (2 vs 3) and C (3 vs 2) overlap
_SL_SQL = """
CREATE VIEW sl AS
SELECT pid, tid, ts AS s, ts + dur AS e, idx, true AS is_x, cat FROM xev
WHERE pid IS NOT NULL AND tid IS NOT NULL AND ts IS NOT NULL AND dur IS NOT NULL
UNION ALL
SELECT pid, tid, s, e, idx, false AS is_x, cat FROM be;
"""
# The exact tables for reports: only built when the sweep (below) finds a
# problem; seq holds every row's level, bind each flow event's slice.
_SEQ_SQL = """
CREATE TABLE seq AS
WITH bracket AS (
    SELECT pid, tid, idx, s AS t, CASE WHEN e > s THEN 1 ELSE 2 END AS cls,
           -e AS o1, idx AS o2, 1 AS delta
    FROM sl
    UNION ALL
    SELECT pid, tid, idx, CASE WHEN e > s THEN e ELSE s END,
           CASE WHEN e > s THEN 0 ELSE 4 END, -s, -idx, -1
    FROM sl
    UNION ALL
    SELECT pid, tid, idx, ts, 3, 0, idx, 0 FROM oev
    WHERE ph IN ('s', 'f') AND pid IS NOT NULL AND tid IS NOT NULL AND ts IS NOT NULL
)
SELECT pid, tid, idx, t, cls,
    sum(delta) OVER (PARTITION BY pid, tid ORDER BY t, cls, o1, o2
                     ROWS UNBOUNDED PRECEDING)
    + CASE WHEN delta < 0 THEN 1 ELSE 0 END AS lvl
FROM bracket;

-- innermost enclosing slice (idx) of each flow event, NULL when none: the
-- last open on the point's level before it. (t, cls) is unique among the
-- opens of one level, so t * 8 + cls orders them.
CREATE TABLE bind AS
WITH pt AS (
    SELECT pid, tid, idx, t * 8 + 3 AS key, lvl AS depth FROM seq WHERE cls = 3
),
opens AS (
    SELECT pid, tid, lvl, t * 8 + cls AS key, idx FROM seq WHERE cls IN (1, 2)
)
SELECT pt.idx, CASE WHEN pt.depth > 0 THEN opens.idx END AS encl
FROM pt ASOF LEFT JOIN opens
    ON opens.pid = pt.pid AND opens.tid = pt.tid AND opens.lvl = pt.depth
    AND pt.key >= opens.key;
"""


# The same sequence, swept without a window: DuckDB sorts the rows (in
# parallel, spilling) and numpy runs the running sum over the sorted Arrow
# batches.
# Each track's rows sum to 0, so one running sum over all tracks in order is
# each track's depth. For a point, the last row before it that is not a point
# tells everything the clean case needs: if it is an open, that slice is the
# stack top, i.e. the innermost enclosing slice (it is the last open of all,
# so also the last on the point's level: the same answer as the ASOF join),
# and it contains the point by the ordering; if it is a close and the depth
# is > 0, the point needs the ASOF join (``hard``); depth 0: no slice.
# Codes carried through the sort: for opens, is_x and the slice cat; for
# points, f-or-s and the flow cat (FLOW_TARGET's).
_SCAT_CODES = {"cuda_api": 1}
for _xcats in list(FLOW_SOURCE.values()) + list(FLOW_TARGET.values()):
    for _xc in _xcats:
        _SCAT_CODES.setdefault(_xc, len(_SCAT_CODES) + 1)
assert len(_SCAT_CODES) < 16, "slice cat codes must fit in 4 bits"
_FCAT_CODES = {fc: i + 1 for i, fc in enumerate(FLOW_TARGET)}
_KIND_OK = [16 * _FCAT_CODES[fc] + _SCAT_CODES[xc] for fc, xcs in FLOW_TARGET.items()
            for xc in xcs]
_SOURCE_OK = [16 * _FCAT_CODES[fc] + _SCAT_CODES[xc] for fc, xcs in FLOW_SOURCE.items()
              for xc in xcs]


def _case_code(col: str, codes: dict[str, int]) -> str:
    return ("CASE " + col + " " + " ".join(f"WHEN '{k}' THEN {v}" for k, v in codes.items())
            + " ELSE 0 END")


# The rows are materialized before sorting: an ORDER BY straight over the
# union runs out of memory on large traces (DuckDB 2.0, 1GB), the sort of a
# table spills fine.
_SWEEP_ROWS_SQL = f"""
CREATE TABLE brkt AS
WITH bracket AS (
    SELECT pid, tid, s AS t, CASE WHEN e > s THEN 1 ELSE 2 END AS cls, -e AS o1, idx AS o2,
           CASE WHEN is_x THEN 16 ELSE 0 END + {_case_code("cat", _SCAT_CODES)} AS info
    FROM sl
    UNION ALL
    SELECT pid, tid, CASE WHEN e > s THEN e ELSE s END, CASE WHEN e > s THEN 0 ELSE 4 END,
           -s, -idx, 0
    FROM sl
    UNION ALL
    SELECT pid, tid, ts, 3, 0, idx,
           CASE WHEN ph = 'f' THEN 16 ELSE 0 END + {_case_code("cat", _FCAT_CODES)}
    FROM oev
    WHERE ph IN ('s', 'f') AND pid IS NOT NULL AND tid IS NOT NULL AND ts IS NOT NULL
)
SELECT pid * 2147483648 + tid AS k1, t * 8 + cls AS k2, o1, o2 * 32 + info AS o2
FROM bracket
"""
# Only sort keys go through the sort (a payload column makes DuckDB's sort of
# 10M rows several times slower); ``info`` rides in o2's low 5 bits, which
# keeps the order (o2 is unique among rows tied on the other keys). Read
# back: cls = k2 & 7 (delta: +1 for 1 and 2, -1 for 0 and 4, 0 for 3),
# t = k2 >> 3, idx = |o2 >> 5|, info = o2 & 31, and an open's end e = -o1.
_SWEEP_SQL = "SELECT k2, o1, o2 FROM brkt ORDER BY k1, k2, o1, o2"
_DELTA = np.array([-1, 1, 1, 0, -1, 0, 0, 0], np.int8)  # by cls
SWEEP_BATCH = 1 << 20


def _prefetch(reader, interrupt, depth: int = 2) -> Iterable[pa.RecordBatch]:
    """The batches of ``reader``, fetched by a thread ahead of the consumer
    (DuckDB materializes the next batch while numpy works on this one).
    ``interrupt`` stops DuckDB when the consumer leaves early (Ctrl-C, or
    it has seen enough)."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():  # the consumer may have left
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def fetch() -> None:
        try:
            for batch in reader:
                if not put(batch):
                    return
            put(None)
        except BaseException as exc:  # handed to the consumer
            put(exc)
        finally:
            done.set()

    threading.Thread(target=fetch, daemon=True, name="nsys-duck-validate-fetch").start()
    finished = False
    try:
        while True:
            item = q.get()
            if item is None:
                finished = True
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        if not finished:
            try:
                interrupt()
            except Exception:
                pass
        done.wait()  # not Thread.join (see _execute)


def _sweep(con) -> tuple[int | None, bool]:
    """Sweep the sorted bracket sequence (see above). Returns the number of
    slices whose open and close levels differ (partial overlaps; None when
    the sweep stopped early) and whether any flow event needs the exact
    binding tables: not inside a slice, inside a B/E slice, at a slice start,
    needs the ASOF join, or breaks a ``flow_kind`` rule. Bracket levels go to
    table ``brk`` (DuckDB, spilling), so Python holds one batch."""
    ins = con.cursor()
    cur = con.cursor()
    batches = None
    try:
        ins.execute("CREATE TABLE brk (idx BIGINT, lvl INTEGER); "
                    "CREATE TABLE frecv (encl BIGINT, fcat TINYINT)")
        _execute(ins, _SWEEP_ROWS_SQL)
        kind_ok = np.array(_KIND_OK, np.int64)
        source_ok = np.array(_SOURCE_OK, np.int64)
        depth0 = 0
        # the last bracket of the batches so far: (is an open, idx, t, end, info)
        last: tuple[bool, int, int, int, int] | None = None
        batches = _prefetch(arrow_reader(cur.sql(_SWEEP_SQL), SWEEP_BATCH), cur.interrupt)
        for batch in batches:
            n = batch.num_rows
            if not n:
                continue
            k2, o1, o2 = (batch.column(i).to_numpy() for i in range(3))
            cls, t = k2 & 7, k2 >> 3
            idx, info, se = np.abs(o2 >> 5), o2 & 31, -o1
            d = _DELTA[cls]
            depth = np.cumsum(d, dtype=np.int64)
            depth += depth0
            depth0 = int(depth[-1])
            br = d != 0
            # brackets: level = depth after an open, before a close
            lvl = depth + (d < 0)
            ins.register("_brk", pa.table({"idx": idx[br], "lvl": lvl[br].astype(np.int32)}))
            ins.execute("INSERT INTO brk SELECT * FROM _brk")
            ins.unregister("_brk")
            pts = np.flatnonzero(~br)
            if len(pts):
                # for each point: position of the last bracket / the last open
                pos = np.arange(n, dtype=np.int64)
                lb = np.maximum.accumulate(np.where(br, pos, -1))[pts]
                lo = np.maximum.accumulate(np.where(d > 0, pos, -1))[pts]
                here = lb >= 0
                top_open = np.where(here, lb == lo, last is not None and last[0])
                if not (top_open & (depth[pts] > 0)).all():
                    return None, True  # outside every slice, or needs the ASOF join
                k = np.maximum(lb, 0)
                if last is None:
                    last = (False, 0, 0, 0, 0)
                s_t = np.where(here, t[k], last[2])
                s_e = np.where(here, se[k], last[3])
                s_info = np.where(here, info[k], last[4]).astype(np.int64)
                top = np.where(here, idx[k], last[1])
                pt_t = t[pts]
                p_info = info[pts].astype(np.int64)
                is_x = (s_info & 16) != 0
                scat = s_info & 15
                is_f = (p_info & 16) != 0
                fcat = p_info & 15
                at_start = (s_t == pt_t) & (s_e - pt_t > 1)
                targeted = fcat > 0
                kind_s = targeted & ~is_f & ~np.isin(fcat * 16 + scat, source_ok)
                kind_f = targeted & is_f & ~np.isin(fcat * 16 + scat, kind_ok)
                if (~is_x | at_start | kind_s | kind_f).any():
                    return None, True
                recv = targeted & is_f
                if recv.any():
                    ins.register("_recv", pa.table({"encl": top[recv],
                                                    "fcat": fcat[recv].astype(np.int8)}))
                    ins.execute("INSERT INTO frecv SELECT * FROM _recv")
                    ins.unregister("_recv")
            brs = np.flatnonzero(br)
            if len(brs):
                j = brs[-1]
                last = (bool(d[j] > 0), int(idx[j]), int(t[j]), int(se[j]), int(info[j]))
        overlaps = _one(con, "SELECT count(*) FROM (SELECT idx FROM brk GROUP BY idx "
                             "HAVING min(lvl) <> max(lvl))")[0]
        twice = _one(con, "SELECT count(*) FROM (SELECT 1 FROM frecv GROUP BY encl, fcat "
                          "HAVING count(*) > 1)")[0]
        return overlaps, bool(twice)
    finally:
        if batches is not None:
            batches.close()  # stops and joins the fetch thread before its cursor goes
        cur.close()
        ins.execute("DROP TABLE IF EXISTS brkt")
        ins.close()


_OVERLAP_COUNT = """
SELECT count(*) FROM (
    SELECT idx FROM seq WHERE cls <> 3 GROUP BY idx HAVING min(lvl) <> max(lvl))
"""


def _check_overlap(con, col: _Collector) -> None:
    """Slices whose open and close are on different levels (see above)."""
    bad = _one(con, _OVERLAP_COUNT)[0]
    if not bad:
        return
    examples = con.execute(f"""
        WITH bad AS (SELECT idx FROM seq WHERE cls <> 3 GROUP BY idx
                     HAVING min(lvl) <> max(lvl) ORDER BY idx
                     LIMIT {2 * max(1, col.max_examples)})
        SELECT sl.pid, sl.tid, sl.s, sl.e, sl.idx, sl.is_x FROM sl JOIN bad USING (idx)
        ORDER BY sl.idx
    """).fetchall()
    seen: set[tuple[int, int]] = set()  # A-overlaps-B and B-overlaps-A: report once
    first = True
    for pid, tid, s, e, idx, is_x in examples:
        other = _one(con, """
            SELECT s, e, is_x, idx FROM sl
            WHERE pid = $1 AND tid = $2 AND e > s AND idx <> $5
              AND ((s < $3 AND $3 < e AND e < $4) OR ($3 < s AND s < $4 AND $4 < e))
            ORDER BY idx LIMIT 1
        """, [pid, tid, s, e, idx])
        me = f"{'X' if is_x else 'B/E'} [{_fmt_us(s)}, {_fmt_us(e)})"
        if other:
            pair = (min(idx, other[3]), max(idx, other[3]))
            if pair in seen:
                continue
            seen.add(pair)
            it = f"{'X' if other[2] else 'B/E'} [{_fmt_us(other[0])}, {_fmt_us(other[1])})"
            msg = f"on pid {pid} tid {tid}, {me} partially overlaps {it}"
        else:
            msg = f"on pid {pid} tid {tid}, {me} is not properly nested"
        if not col.want("overlap") and not first:
            break
        col.add("overlap", msg, idx=idx, n=bad if first else 0)
        first = False
    if first:
        col.bump("overlap", bad)


def _check_flows(con, col: _Collector, exact: bool, pair_problems: int) -> None:
    """``flow``: where each s/f sits (only when the sweep found trouble:
    exact tables, exact messages), then s/f pairing by id (messages only when
    the cheap pass counted ``pair_problems``)."""
    if exact:
        _check_flow_binding(con, col)
    _check_flow_pairs(con, col, pair_problems)


def _check_flow_binding(con, col: _Collector) -> None:
    con.execute("""
        CREATE TABLE fl AS
        SELECT ev.idx, ev.ph, ev.fid, ev.cat, ev.name, ev.ts, ev.pid, ev.tid,
               CASE WHEN sl.idx IS NULL THEN NULL WHEN sl.is_x THEN 'X' ELSE 'B/E' END
                   AS skind,
               sl.cat AS scat, sl.s AS ss, sl.e AS se, sl.idx AS sidx
        FROM oev AS ev
        LEFT JOIN bind ON bind.idx = ev.idx
        LEFT JOIN sl ON sl.idx = bind.encl
        WHERE ev.ph IN ('s', 'f')
    """)
    # enclosing slice of each s / f
    sql = """
        SELECT idx, ph, cat, ts, pid, tid, skind, scat, ss, se FROM fl
        WHERE pid IS NOT NULL AND tid IS NOT NULL AND ts IS NOT NULL AND (
            skind IS NULL OR skind <> 'X'
            OR NOT (ss <= ts AND (ts < se OR ts = ss))
            OR (se - ss > 1 AND ts = ss))
        ORDER BY idx
    """
    for idx, ph, cat, ts, pid, tid, skind, scat, ss, se in _batches(con, sql):
        if not col.want("flow"):
            col.bump("flow")
            continue
        where = f"{ph} (cat {cat!r}) at {_fmt_us(ts)} on pid {pid} tid {tid}"
        if skind is None:
            msg = f"{where} is not inside any slice of its track"
        elif skind != "X":
            msg = (f"{where}: innermost enclosing slice is a B/E slice "
                   f"[{_fmt_us(ss)}, {_fmt_us(se)}), not an X")
        elif ts == ss:
            msg = (f"{where} sits exactly at the start of its X [{_fmt_us(ss)}, {_fmt_us(se)}) "
                   "(contract: after the start when the slice is longer than 1 ns)")
        else:
            msg = f"{where} is outside its X [{_fmt_us(ss)}, {_fmt_us(se)})"
        col.add("flow", msg, idx=idx)


# s/f pairing, the cheap way: per id, counts and min = max of cat and name.
# Only when some id fails does the full query (below) run, for the messages.
_PAIRS_SQL = """
SELECT count(*) FILTER (WHERE ns = 1 AND nf = 1),
       count(*) FILTER (WHERE ns <> 1 OR nf <> 1 OR nc = 1 OR nn = 1
                              OR c1 IS DISTINCT FROM c2 OR n1 IS DISTINCT FROM n2
                              OR coalesce(s_ts > f_ts, false))
FROM (
    SELECT fid, count(*) FILTER (WHERE ph = 's') AS ns, count(*) FILTER (WHERE ph = 'f') AS nf,
        count(cat) AS nc, min(cat) AS c1, max(cat) AS c2,
        count(name) AS nn, min(name) AS n1, max(name) AS n2,
        max(ts) FILTER (WHERE ph = 's') AS s_ts, min(ts) FILTER (WHERE ph = 'f') AS f_ts
    FROM oev WHERE ph IN ('s', 'f') AND fid IS NOT NULL GROUP BY fid)
"""


def _check_flow_pairs(con, col: _Collector, problems: int) -> None:
    if not problems:
        return
    sql = """
        WITH g AS (
            SELECT fid,
                count(*) FILTER (WHERE ph = 's') AS ns,
                count(*) FILTER (WHERE ph = 'f') AS nf,
                min(idx) FILTER (WHERE ph = 's') AS s_idx,
                max(idx) FILTER (WHERE ph = 's') AS s_idx2,
                min(idx) FILTER (WHERE ph = 'f') AS f_idx,
                max(idx) FILTER (WHERE ph = 'f') AS f_idx2,
                any_value(ts) FILTER (WHERE ph = 's') AS s_ts,
                any_value(ts) FILTER (WHERE ph = 'f') AS f_ts,
                any_value(cat) FILTER (WHERE ph = 's') AS s_cat,
                any_value(cat) FILTER (WHERE ph = 'f') AS f_cat,
                any_value(name) FILTER (WHERE ph = 's') AS s_name,
                any_value(name) FILTER (WHERE ph = 'f') AS f_name
            FROM oev WHERE ph IN ('s', 'f') AND fid IS NOT NULL GROUP BY fid
        )
        SELECT fid, ns, nf, s_idx, s_idx2, f_idx, f_idx2, s_ts, f_ts,
               s_cat, f_cat, s_name, f_name
        FROM g
        WHERE ns <> 1 OR nf <> 1 OR s_cat IS DISTINCT FROM f_cat
           OR s_name IS DISTINCT FROM f_name OR s_ts > f_ts
        ORDER BY coalesce(s_idx, f_idx)
    """
    for (fid, ns, nf, s_idx, s_idx2, f_idx, f_idx2, s_ts, f_ts,
         s_cat, f_cat, s_name, f_name) in _batches(con, sql):
        if not col.want("flow"):  # count as below, without messages
            col.bump("flow", (ns != 1) + (nf > 1 or (nf == 0 and ns >= 1)) + (
                ns == 1 and nf == 1 and (s_cat != f_cat or s_name != f_name))
                + (ns == 1 and nf == 1 and s_ts is not None and f_ts is not None
                   and s_ts > f_ts))
            continue
        if ns > 1:
            col.add("flow", f"flow id {fid} is used by {ns} s events (ids must be unique)",
                    idx=s_idx2)
        elif ns == 0:
            col.add("flow", f"f with id {fid} has no s", idx=f_idx)
        if nf > 1:
            col.add("flow", f"flow id {fid} has {nf} f events", idx=f_idx2)
        elif nf == 0 and ns >= 1:
            col.add("flow", f"s with id {fid} has no f", idx=s_idx)
        if ns == 1 and nf == 1:
            if s_cat != f_cat or s_name != f_name:
                col.add("flow", f"flow id {fid}: s is ({s_cat!r}, {s_name!r}) but f is "
                        f"({f_cat!r}, {f_name!r}); cat and name must match", idx=f_idx)
            if s_ts is not None and f_ts is not None and s_ts > f_ts:
                col.add("flow", f"flow id {fid}: s at {_fmt_us(s_ts)} is after f at "
                        f"{_fmt_us(f_ts)}", idx=s_idx)


def _check_flow_kind(con, col: _Collector, exact: bool) -> None:
    """``flow_kind``: which slice each flow ends in (only when the sweep
    found trouble: exact tables), then the launch / launch_core balance."""
    if exact:
        _check_flow_ends(con, col)
    n_launch, n_core = _one(
        con,
        "SELECT coalesce(sum(n) FILTER (WHERE cat = 'launch'), 0), "
        "coalesce(sum(n) FILTER (WHERE cat = 'launch_core'), 0) FROM tstat WHERE ph = 's'",
    )
    if n_launch != n_core:
        col.add("flow_kind", f"{n_launch} launch flows but {n_core} launch_core flows "
                "(must be equal)")


def _check_flow_ends(con, col: _Collector) -> None:
    targets = ", ".join(f"('{fc}', '{xc}')" for fc, xcs in FLOW_TARGET.items() for xc in xcs)
    con.execute(f"CREATE TABLE flow_target AS FROM (VALUES {targets}) AS t(fcat, xcat)")
    sources = ", ".join(f"('{fc}', '{xc}')" for fc, xcs in FLOW_SOURCE.items() for xc in xcs)
    con.execute(f"CREATE TABLE flow_source AS FROM (VALUES {sources}) AS t(fcat, xcat)")
    sql = """
        SELECT fl.idx, fl.ph, fl.cat, fl.scat, fl.ts, fl.pid, fl.tid FROM fl
        WHERE fl.cat IN (SELECT fcat FROM flow_target) AND fl.skind = 'X' AND (
            (fl.ph = 's' AND NOT EXISTS (
                SELECT 1 FROM flow_source t WHERE t.fcat = fl.cat AND t.xcat = fl.scat))
            OR (fl.ph = 'f' AND NOT EXISTS (
                SELECT 1 FROM flow_target t WHERE t.fcat = fl.cat AND t.xcat = fl.scat)))
        ORDER BY fl.idx
    """
    for idx, ph, cat, scat, ts, pid, tid in _batches(con, sql):
        if not col.want("flow_kind"):
            col.bump("flow_kind")
            continue
        want = " or ".join(FLOW_SOURCE[cat] if ph == "s" else FLOW_TARGET[cat])
        col.add("flow_kind", f"{cat} flow {ph} at {_fmt_us(ts)} on pid {pid} tid {tid} lies in "
                f"an X of cat {scat!r}, expected {want}", idx=idx)
    sql = """
        SELECT pid, tid, sidx, cat, count(*) AS n, max(idx) AS idx, any_value(scat)
        FROM fl
        WHERE ph = 'f' AND skind = 'X' AND cat IN (SELECT fcat FROM flow_target)
        GROUP BY pid, tid, sidx, cat HAVING count(*) > 1
        ORDER BY idx
    """
    for pid, tid, sidx, cat, n, idx, scat in _batches(con, sql):
        if not col.want("flow_kind"):
            col.bump("flow_kind")
            continue
        col.add("flow_kind", f"one {scat!r} X on pid {pid} tid {tid} receives {n} {cat!r} "
                "flows (at most one)", idx=idx)


def _counts(con, m_count: int, flows: int) -> dict[str, int]:
    """``ph:*`` / ``cat:*`` event counts and a few totals (``m_count``: M
    events; ``flows``: ids with exactly one s and one f)."""
    counts: dict[str, int] = {}
    rows = con.execute("""
        SELECT 'ph:' || ph, sum(n) FROM tstat GROUP BY ph
        UNION ALL
        SELECT 'cat:' || cat, sum(n) FROM tstat WHERE cat IS NOT NULL GROUP BY cat
        UNION ALL
        SELECT 'slices', count(*) FROM sl
        UNION ALL
        SELECT 'processes', count(DISTINCT pid) FROM tstat
        UNION ALL
        SELECT 'threads', count(DISTINCT (pid, tid)) FROM tstat
        WHERE pid IS NOT NULL AND tid IS NOT NULL
    """).fetchall()
    rows = [(k, int(n)) for k, n in rows]
    rows.append(("flows", flows))
    if m_count:
        rows.append(("ph:M", m_count))
    order = ("flows", "slices", "processes", "threads")
    head = sorted((k, n) for k, n in rows if k and k.startswith(("ph:", "cat:")))
    counts.update(head)
    counts.update(sorted(((k, n) for k, n in rows if k in order), key=lambda kv: order.index(kv[0])))
    return counts


class _Side(threading.Thread):
    """SQL run on a cursor of its own beside the main thread's work (DuckDB
    runs the two queries at once); ``result()`` returns or re-raises."""

    def __init__(self, con, fn):
        super().__init__(daemon=True, name="nsys-duck-validate-side")
        self.cur = con.cursor()
        self.fn = fn
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()  # waited on instead of join (see _execute)

    def run(self) -> None:
        try:
            self.value = self.fn(self.cur)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()

    def result(self) -> Any:
        while not self.done.wait(0.05):
            pass
        self.cur.close()
        if self.error is not None:
            raise self.error
        return self.value

    def cancel(self) -> None:
        try:
            self.cur.interrupt()
        except Exception:
            pass
        self.done.wait()
        try:
            self.cur.close()
        except Exception:
            pass


def _side_queries(cur) -> tuple[int, int]:
    """tstat and the cheap pairing pass: (flows, pairing problems)."""
    cur.execute(_TSTAT_SQL)
    return tuple(cur.execute(_PAIRS_SQL).fetchall()[0])


def _structure(con, col: _Collector, m_count: int) -> dict[str, int]:
    """Stage 3: the structural checks, on tables/views xev, oev, ev, meta, be.
    Returns the report's counts."""
    side = _Side(con, _side_queries)  # track stats and pairing, meanwhile
    side.start()
    try:
        _check_be(con, col)
        _check_async(con, col)
        con.execute(_SL_SQL)
        overlaps, trouble = _sweep(con)
        flows, pair_problems = side.result()
    except BaseException:
        side.cancel()
        raise
    _check_tracks(con, col)
    if overlaps or trouble:  # exact tables for exact reports
        _execute(con, _SEQ_SQL)
        _check_overlap(con, col)
    _check_flows(con, col, trouble, pair_problems)
    _check_flow_kind(con, col, exact=trouble)
    return _counts(con, m_count, flows)


def _resolve_texts(path: str, col: _Collector) -> None:
    """Second pass: fill in the event text of examples that only have an index."""
    want = {idx for _, _, text, idx in col.examples if text is None and idx is not None}
    if not want:
        return
    found: dict[int, str] = {}
    last = max(want)
    q: queue.Queue = queue.Queue(maxsize=8)
    prod = _Producer(path, None, q)
    prod.start()
    reader = _QueueReader(q)
    try:
        for i, ev in enumerate(_ijson.items(reader, "item", use_float=False, buf_size=FEED)):
            if i in want:
                found[i] = _text(ev)
            if i >= last:
                break
    except Exception:
        pass
    finally:
        prod.stop.set()
        reader.drain()
        prod.join()
    col.examples = [
        (r, m, t if t is not None or i is None else found.get(i), i)
        for r, m, t, i in col.examples
    ]


# --------------------------------------------------------------------------
# fast path: byte checks beside DuckDB's own JSON reader


class _Fallback(Exception):
    """The fast path cannot vouch for its answer: the exact path runs instead."""


# Byte patterns of the fast path. A match of _FAST_BAD is something DuckDB's
# reader accepts although the rules reject it (NaN/Infinity, trailing commas),
# or a value whose JSON type the typed columns of _FAST_SQL would hide (a
# non-plain ts/dur, a non-integer pid/tid, a non-string ph/cat/name/bp), or a
# raw control byte, or text whose matches could outgrow FAST_CARRY (long runs
# of blanks or digits): the trace then goes to the exact path. _FAST_ESC finds
# the escapes the exact path reports as ``string`` (reported the same way) and
# escaped printable ASCII (it could spell a key: exact path).
_B = r"[ \t\n\r]"
_FAST_BAD = (
    r"[\x00-\x08\x0b\x0c\x0e-\x1f]"
    rf'|"(?:ts|dur)"{_B}*:{_B}*(?:[^0-9 \t\n\r]|[0-9]+(?:\.[0-9]*)?[eE]|[0-9]*\.[0-9]{{4}})'
    rf'|"(?:pid|tid)"{_B}*:{_B}*(?:[^0-9 \t\n\r]|[0-9]+[.eE])'
    rf'|"(?:ph|cat|name|bp)"{_B}*:{_B}*[^" \t\n\r]'
    rf"|[:,\[]{_B}*[-+]?(?i:nan|inf(?:inity)?){_B}*[,}}\]]"
    rf"|,{_B}*[}}\]]"
    rf"|{_B}{{200}}|[0-9]{{100}}"
)
_FAST_ESC = r"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000|00[2-7][0-9a-fA-F])"
_FAST_PREFILTER = _FAST_BAD + "|" + _FAST_ESC
_RE_FAST_BAD = re.compile(_FAST_BAD.encode())
_RE_FAST_ESC = re.compile(_FAST_ESC.encode())
FAST_CARRY = 1024  # > the longest possible match (blank and digit runs are bounded)


class _ScanSink:
    """What the fast scan may report: findings the exact path's reader makes
    the same way (json head/tail, escapes, a plain JSON file). Anything else
    sends the trace to the exact path."""

    def __init__(self, col: _Collector, scan: "_FastScan"):
        self.col = col
        self.scan = scan

    def add(self, rule: str, message: str, event: Any = None,
            idx: int | None = None, n: int = 1) -> None:
        keep = (rule == "string"  # only _FastScan._slow's escapes come here
                or (rule == "json" and not message.startswith("empty trace")
                    and "BOM" not in message)
                or (rule == "gzip" and message.startswith("not a gzip file")))
        if keep:
            self.col.add(rule, message, event, idx, n)
        else:
            self.scan.trigger(f"[{rule}] {message}")


class _FastScan(_Producer):
    """The fast path's byte pass: reads and decompresses the file in a thread
    beside DuckDB's reader and runs the byte-level checks. On anything the
    fast path cannot vouch for it records why in ``fallback`` and calls
    ``on_fallback`` (which interrupts DuckDB)."""

    def __init__(self, path: str, col: _Collector, on_fallback):
        super().__init__(path, None, None)
        self.name = "nsys-duck-validate-scan"
        self.col = _ScanSink(col, self)
        self.on_fallback = on_fallback
        self.fallback: str | None = None
        self._lock = threading.Lock()

    def trigger(self, reason: str) -> None:
        with self._lock:
            if self.fallback is not None:
                return
            self.fallback = reason
        self.stop.set()
        try:
            self.on_fallback()
        except Exception:
            pass

    def run(self) -> None:
        try:
            self._read()
            if not self.stop.is_set():
                self._finish()
        except BaseException as exc:  # unreadable file or a bug: exact path decides
            self.trigger(f"byte scan failed: {type(exc).__name__}: {exc}")

    def _emit(self, chunk: bytes) -> None:
        if chunk and not self.stop.is_set():
            self._check(chunk)

    def _check(self, chunk: bytes) -> bytes:
        base = self._track(chunk)
        if not chunk.isascii() or self.utf8.getstate()[0]:
            try:
                self.utf8.decode(chunk)
            except UnicodeDecodeError as exc:
                self.trigger(f"invalid UTF-8 near byte offset {base + len(self.carry) + exc.start}")
                return chunk
        buf = self.carry + chunk
        if pc.match_substring_regex(pa.array([buf], pa.binary()), _FAST_PREFILTER)[0].as_py():
            self._slow(buf, len(self.carry), base, final=False)
        self._keep_carry(buf, max(CARRY, FAST_CARRY))
        return chunk

    def _slow(self, buf: bytes, lo: int, base: int, final: bool) -> None:
        hi = len(buf) + (1 if final else 0)
        for m in _RE_FAST_BAD.finditer(buf):
            if lo <= m.end() < hi:
                self.trigger(f"{m.group()[:60]!r} at byte offset {base + m.start()}")
                return
        for m in _RE_FAST_ESC.finditer(buf):
            if not lo <= m.end() < hi:
                continue
            if _escaped(buf, m.start()):
                continue
            esc = m.group().decode()
            if esc == "\\u0000":
                msg = "\\u0000 escape (Perfetto cuts the string there)"
            elif esc[2] in "dD":
                msg = f"surrogate escape {esc} (Perfetto rejects the whole file)"
            else:
                self.trigger(f"escaped printable ASCII {esc} at byte offset {base + m.start()}")
                return
            self.col.add("string", f"{msg} at byte offset {base + m.start()}",
                         _snippet(buf, m.start()))

    def _finish_bytes(self) -> None:
        if self.carry:
            self._slow(self.carry, len(self.carry), self.total - len(self.carry), final=True)
        try:
            self.utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            self.trigger("invalid UTF-8: stream ends inside a multi-byte character")


# DuckDB reads the array itself (one pass, one parse per event): the columns
# are typed, and the byte scan vouches that each typed value was written as
# that type (else: exact path). ts/dur arrive as DOUBLE µs, and
# round(x * 1000) is their exact ns value: the scan guarantees a plain literal
# with at most 3 decimals; below 2^42 µs the parsed double is within 2^-12 µs
# of it and the product within 0.25 ns of the double's, so the total error is
# < 0.5 ns (and x < 2^42 exactly when the literal is). Values >= 2^42 µs are
# violations and go to the exact per-event check. ``ok`` is false for every
# event the exact per-event checks could object to or would store
# differently; those events are re-read as text and checked by _Loader.
_FAST_COLUMNS = (
    "{ph: 'VARCHAR', cat: 'VARCHAR', name: 'VARCHAR', pid: 'INTEGER', tid: 'INTEGER', "
    "ts: 'DOUBLE', dur: 'DOUBLE', id: 'JSON', bp: 'VARCHAR', id2: 'JSON', "
    "args: 'STRUCT(name JSON, sort_index JSON, epoch_ns JSON)'}"
)
_FAST_SQL = f"""
CREATE TYPE ph_t AS ENUM ({", ".join(repr(p) for p in sorted(VALID_PH))});
CREATE TABLE evs AS
WITH src AS (
    SELECT o - 1 AS idx, ph, cat, name, pid, tid, ts, dur, id::VARCHAR AS f_id, bp,
        id2::VARCHAR AS f_id2, args.name::VARCHAR AS a_name,
        args.sort_index::VARCHAR AS a_sort, args.epoch_ns::VARCHAR AS a_epoch
    FROM read_json({{src}}, format = 'array', records = 'true', compression = '{{comp}}',
                   columns = {_FAST_COLUMNS})
        WITH ORDINALITY AS r(ph, cat, name, pid, tid, ts, dur, id, bp, id2, args, o)
), ids AS (
    SELECT *,
        CASE WHEN ph IN ('s', 'f') THEN TRY_CAST(f_id AS BIGINT) END AS fid,
        CASE WHEN ph IN ('b', 'e', 'n') THEN json_extract(f_id2, '$.local') END AS a_local,
        CASE WHEN ph IN ('b', 'e', 'n')
             THEN coalesce(a_local, json_extract(f_id2, '$.global'), f_id)::VARCHAR END AS a_val
    FROM src
), chk AS (
    SELECT *,
        CASE WHEN regexp_full_match(a_val, '-?[0-9]+') THEN ':i:' || a_val
             WHEN a_val[1] = '"' AND NOT contains(a_val, '\\') THEN ':s:' || a_val[2:-2]
        END AS a_key
    FROM ids
)
SELECT idx, TRY_CAST(ph AS ph_t) AS ph, cat, CASE WHEN ph <> 'X' THEN name END AS name,
    round(ts * 1000)::BIGINT AS ts, round(dur * 1000)::BIGINT AS dur,
    pid, tid, fid,
    -- b/e/n: the async id key; M process_name: epoch_ns (text)
    CASE WHEN a_key IS NOT NULL
         THEN CASE WHEN a_local IS NOT NULL THEN 'L' ELSE 'G' END || a_key
         WHEN ph = 'M' AND name = 'process_name' THEN a_epoch END AS akey,
    coalesce(pid >= 1 AND CASE
        WHEN ph = 'M' THEN
            (tid >= 1 OR (tid IS NULL AND (name IS NULL
                                           OR name NOT IN ('thread_name', 'thread_sort_index'))))
            AND (ts IS NULL OR (ts >= 0 AND ts < {TS_LIMIT_US}))
            AND CASE name
                WHEN 'process_name' THEN a_name[1] = '"' AND a_name <> '""'
                                         AND regexp_full_match(a_epoch, '-?[0-9]+')
                WHEN 'thread_name' THEN a_name[1] = '"' AND a_name <> '""'
                WHEN 'process_sort_index' THEN regexp_full_match(a_sort, '-?[0-9]+')
                WHEN 'thread_sort_index' THEN regexp_full_match(a_sort, '-?[0-9]+')
                ELSE true END
        WHEN ph IN ('X', 'B', 'E', 'i', 'I', 's', 'f', 'b', 'e', 'C', 'n') THEN
            (tid >= 1 OR (tid IS NULL AND ph IN ('b', 'e', 'n')))
            AND ts >= 0 AND ts < {TS_LIMIT_US}
            AND CASE WHEN dur IS NULL THEN ph <> 'X'
                     ELSE dur >= 0 AND ts + dur < {TS_LIMIT_US} END
            AND CASE ph
                WHEN 's' THEN fid > {INT64_MIN} AND fid::VARCHAR = f_id
                WHEN 'f' THEN fid > {INT64_MIN} AND fid::VARCHAR = f_id AND bp = 'e'
                WHEN 'b' THEN a_key IS NOT NULL AND cat <> ''
                WHEN 'e' THEN a_key IS NOT NULL AND cat <> ''
                WHEN 'n' THEN a_key IS NOT NULL AND cat <> ''
                ELSE true END
        END, false) AS ok
FROM chk
"""
# The tables/views the structural checks read, over ``evs`` plus the rows
# _Loader made from the events that are not ``ok``.
_FAST_VIEWS = _XO_DDL.format(x="xev_py", o="oev_py") + """
CREATE VIEW xev AS
    SELECT idx, cat, ts, dur, pid::BIGINT AS pid, tid::BIGINT AS tid
    FROM evs WHERE ok AND ph = 'X'
    UNION ALL SELECT * FROM xev_py;
CREATE VIEW oev AS
    SELECT idx, ph::VARCHAR AS ph, cat, name, ts, dur, pid::BIGINT AS pid, tid::BIGINT AS tid,
           fid, akey AS aid, CASE WHEN ph = 'f' THEN true END AS bp_e
    FROM evs WHERE ok AND ph NOT IN ('X', 'M')
    UNION ALL SELECT * FROM oev_py;
""" + _REST_DDL + """
INSERT INTO meta SELECT idx, name, pid, tid FROM evs WHERE ok AND ph = 'M' AND name IS NOT NULL;
"""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    """One event's text parsed as the exact path's ijson would (ints, Decimals)."""
    return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _fast_source(path: str, work: str) -> tuple[str, str]:
    """(SQL string literal naming the file for DuckDB, compression). DuckDB
    expands glob characters in file names: read through a symlink in the
    private work directory instead."""
    with open(path, "rb") as f:
        comp = "gzip" if f.read(2) == b"\x1f\x8b" else "none"
    target = os.path.abspath(path)
    link = os.path.join(work, "trace.json.gz" if comp == "gzip" else "trace.json")
    try:
        if not os.path.islink(link):
            os.symlink(target, link)
        target = link
    except OSError:
        pass
    if any(c in target for c in "*?[]{}"):
        raise _Fallback(f"file name {target!r} has glob characters")
    return _sql_str(target), comp


def _is_sigint(exc: BaseException) -> bool:
    """DuckDB's answer to Ctrl-C during a query."""
    return isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _execute(con, sql: str) -> None:
    """``con.execute(sql)`` in a helper thread. Python handles Ctrl-C only in
    the main thread between bytecodes, and DuckDB notices it only between
    its tasks (a single-file JSON scan is one long task), so the main thread
    waits in short slices instead and interrupts DuckDB itself."""
    box: list[BaseException] = []
    done = threading.Event()

    def work() -> None:
        try:
            con.execute(sql)
        except BaseException as exc:
            box.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name="nsys-duck-validate-query").start()
    # Event.wait, not Thread.join: a join interrupted by Ctrl-C can mark a
    # running thread as finished (CPython 3.11), and the connection would
    # then be closed under the running query.
    try:
        while not done.wait(0.05):
            pass
    except BaseException:  # Ctrl-C: stop the query, then let it propagate
        con.interrupt()
        done.wait()
        raise
    if box:
        raise box[0]


def _setup(con, memory_limit: str, work: str) -> None:
    con.execute(f"SET memory_limit = '{memory_limit.replace(chr(39), '')}'")
    con.execute(f"SET temp_directory = '{work.replace(chr(39), chr(39) * 2)}'")
    con.execute("SET preserve_insertion_order = false")


def _validate_fast(path: str, con, col: _Collector, report: ValidationReport,
                   memory_limit: str, work: str) -> dict[int, str]:
    """The fast path. Raises _Fallback when the exact path must decide.
    Returns the text of the events it re-read (index -> JSON text)."""
    _setup(con, memory_limit, work)
    src, comp = _fast_source(path, work)
    scan = _FastScan(path, col, con.interrupt)
    scan.start()
    try:
        _execute(con, _FAST_SQL.replace("{src}", src).replace("{comp}", comp))
    except Exception as exc:
        scan.stop.set()
        scan.join()
        if scan.fallback is None and _is_sigint(exc):
            raise KeyboardInterrupt from None
        raise _Fallback(scan.fallback or f"DuckDB's reader: {_first_line(exc)}") from None
    except BaseException:  # Ctrl-C
        scan.stop.set()
        scan.join()
        raise
    scan.join()  # the byte checks must be complete before the answer counts
    if scan.fallback is not None:
        raise _Fallback(scan.fallback)

    n_events, n_bad, m_ok = _one(con, """
        SELECT count(*), count(*) FILTER (WHERE NOT ok), count(*) FILTER (WHERE ok AND ph = 'M')
        FROM evs""")
    report.events = n_events
    if n_events == 0 and scan.total:
        col.add("json", "the top-level array is empty (or the top level is not an array)")
    con.execute(_FAST_VIEWS)

    # events the SQL checks cannot vouch for: the exact per-event checks
    texts: dict[int, str] = {}
    loader = _Loader(con, col, tables=("xev_py", "oev_py"))
    try:
        if n_bad:
            loader.run(_reread(con, src, comp, texts))
        loader.finish(check_epochs=False)
    finally:
        loader.writer.close_quietly()
    epochs = dict(loader.epochs)
    rows = con.execute("SELECT akey, min(idx) FROM evs WHERE ok AND ph = 'M' AND akey IS NOT NULL "
                       "GROUP BY akey ORDER BY 2 LIMIT 100").fetchall()
    for text, idx in rows:
        v = int(text)
        epochs[v] = min(idx, epochs.get(v, idx))
    if len(epochs) > 100:  # the exact path keeps the first 100 values
        epochs = dict(sorted(epochs.items(), key=lambda kv: kv[1])[:100])
    _check_epochs(col, epochs)

    report.counts = _structure(con, col, m_ok + loader.m_count)
    return texts


def _reread(con, src: str, comp: str, texts: dict[int, str]) -> Iterable[tuple[int, Any]]:
    """(index, parsed event) of the events that are not ``ok``, in file order,
    read again as text; the first ones' texts are kept for examples."""
    cur = con.cursor()
    try:
        res = cur.execute(f"""
            SELECT r.o - 1, r.j::VARCHAR
            FROM read_json_objects({src}, format = 'array', compression = '{comp}')
                WITH ORDINALITY AS r(j, o)
            SEMI JOIN (SELECT idx FROM evs WHERE NOT ok) AS b ON r.o - 1 = b.idx
            ORDER BY 1""")
        while rows := res.fetchmany(4096):
            for idx, text in rows:
                try:
                    ev = _loads(text)
                except ValueError as exc:
                    raise _Fallback(f"event {idx} does not parse as JSON: {exc}") from None
                if len(texts) < 10_000:
                    texts[idx] = text
                yield idx, ev
    finally:
        cur.close()


def _resolve_texts_fast(path: str, work: str, col: _Collector, texts: dict[int, str]) -> None:
    """Fill in example event texts from DuckDB's reader (one scan, stopped
    after the last wanted event); same text as the exact path's."""
    want = {idx for _, _, text, idx in col.examples if text is None and idx is not None}
    if not want:
        return
    found = {i: texts[i] for i in want if i in texts}
    rest = sorted(want - found.keys())
    if rest:
        src, comp = _fast_source(path, work)
        con = duckdb.connect(":memory:")
        try:
            found.update(con.execute(f"""
                SELECT o - 1, j::VARCHAR
                FROM read_json_objects({src}, format = 'array', compression = '{comp}')
                    WITH ORDINALITY AS r(j, o)
                WHERE o <= {rest[-1] + 1} AND o - 1 IN (SELECT unnest($1::BIGINT[]))
                LIMIT {len(rest)}""", [rest]).fetchall())
        finally:
            con.close()
    out: dict[int, str] = {}
    for i, text in found.items():
        try:
            out[i] = _text(_loads(text))
        except ValueError:
            out[i] = text[:TEXT_LIMIT]
    col.examples = [
        (r, m, t if t is not None or i is None else out.get(i), i)
        for r, m, t, i in col.examples
    ]


# --------------------------------------------------------------------------
# public API


def validate_trace(path, *, max_examples: int = 5, memory_limit: str = "1GB",
                   temp_dir=None) -> ValidationReport:
    """Validate an nsys-duck Chrome-Trace JSON file (normally ``.perfetto.json.gz``).

    Streams the file (bounded memory even for multi-GB traces), checks every
    rule and returns a :class:`ValidationReport`. Times in the input are µs
    (JSON numbers with at most 3 decimals); all checks use their exact
    integer ns and half-open intervals ``[ts, ts+dur)``. DuckDB's own JSON
    reader does the parsing when it can vouch for the result; otherwise
    (malformed JSON, NaN, bad bytes, ...) the exact ijson path runs, with the
    same rules and messages (module docstring, "How it works").

    Rules (details in the module docstring): ``gzip`` one valid member;
    ``json`` one non-empty array of objects, ``[{"`` start, nothing after
    ``]``; ``number`` plain ts/dur, <= 3 decimals, 0 <= ts < 2^42 µs,
    dur >= 0; ``string`` no surrogate or NUL escapes, no raw control bytes,
    valid UTF-8; ``ph`` known phases; ``pid_tid`` integers in 1..2^31-1;
    ``track_named`` process/thread names and sort indexes; ``be_balance``
    B/E stacks (E sorts first at equal ts); ``overlap`` slices per thread
    nest or are disjoint; ``b_e_async`` b/e pairing; ``flow`` v1 s/f pairs
    inside X slices; ``flow_kind`` which flow ends in which slice cat;
    ``metadata`` one integer ``epoch_ns``; ``internal`` validator failure.

    ``max_examples`` caps the examples kept per rule (totals are always
    exact). ``memory_limit`` and ``temp_dir`` configure DuckDB, which spills
    to a private directory created under ``temp_dir`` (default: the system
    temp dir) and removed afterwards.

    Never raises for a bad trace; raises ``FileNotFoundError`` if ``path``
    does not exist.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    if temp_dir is not None:
        os.makedirs(temp_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="nsys-duck-validate-", dir=temp_dir)
    try:
        col, report = _run(path, max_examples, memory_limit, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    order = {r: i for i, r in enumerate(RULES)}
    ex = sorted(col.examples, key=lambda e: order.get(e[0], len(order)))
    report.violations = [Violation(r, m, t) for r, m, t, _ in ex]
    report.violation_counts = {
        r: col.counts[r] for r in sorted(col.counts, key=lambda r: order.get(r, len(order)))
        if col.counts[r]
    }
    return report


#: Why the last :func:`validate_trace` call in this process took the exact
#: path (``None``: the fast path answered). For tests and diagnostics.
last_fallback: str | None = None


def _run(path: str, max_examples: int, memory_limit: str,
         work: str) -> tuple[_Collector, ValidationReport]:
    """The fast path, or the exact path when the fast one cannot vouch for
    its answer. KeyboardInterrupt (Ctrl-C) stops both."""
    global last_fallback
    col = _Collector(max_examples)
    report = ValidationReport(path=path)
    con = duckdb.connect(":memory:")
    texts: dict[int, str] | None = None
    try:
        texts = _validate_fast(path, con, col, report, memory_limit, work)
        last_fallback = None
    except _Fallback as exc:
        last_fallback = str(exc)
    except Exception as exc:
        if _is_sigint(exc):  # Ctrl-C inside a DuckDB query
            raise KeyboardInterrupt from None
        # a fast-path bug or limit: let the exact path answer
        last_fallback = f"fast path failed: {type(exc).__name__}: {exc}"
    finally:
        con.close()
    if texts is not None:
        try:
            _resolve_texts_fast(path, work, col, texts)
        except KeyboardInterrupt:
            raise
        except Exception:
            try:
                _resolve_texts(path, col)
            except Exception:  # examples keep event=None
                pass
        return col, report

    col = _Collector(max_examples)
    report = ValidationReport(path=path)
    con = duckdb.connect(":memory:")
    try:
        _validate(path, con, col, report, memory_limit, work)
    except Exception as exc:  # a validator bug must not look like a clean trace
        col.add("internal", f"validator could not finish: {type(exc).__name__}: {exc}")
    finally:
        con.close()
    try:
        _resolve_texts(path, col)
    except Exception:  # examples keep event=None
        pass
    return col, report


def _validate(path: str, con, col: _Collector, report: ValidationReport,
              memory_limit: str, work: str) -> None:
    """The exact path: ijson parses every event; per-event checks in Python."""
    _setup(con, memory_limit, work)
    con.execute(_EV_DDL)

    # stage 1 + 2: stream, byte checks (thread), parse + per-event checks
    q: queue.Queue = queue.Queue(maxsize=16)
    prod = _Producer(path, col, q)
    loader = _Loader(con, col)
    prod.start()
    reader = _QueueReader(q)
    parse_error = None
    aborted = False
    try:
        loader.run(enumerate(_ijson.items(reader, "item", use_float=False, buf_size=FEED)))
    except (ijson.JSONError, UnicodeDecodeError, decimal.InvalidOperation) as exc:
        parse_error = exc
    except BaseException:  # Ctrl-C or a bug: stop reading, do not finish
        aborted = True
        prod.stop.set()
        raise
    finally:
        reader.drain()  # the rest of the file still gets its byte checks
        prod.join()
        try:
            if not aborted:
                loader.finish()
        finally:
            loader.writer.close_quietly()
    report.events = loader.events
    if parse_error is not None:
        arg = parse_error.args[0] if parse_error.args else ""
        msg = (arg.decode("utf-8", "backslashreplace") if isinstance(arg, bytes)
               else str(arg)).strip()
        first = msg.splitlines()[0] if msg else type(parse_error).__name__
        col.add("json", f"JSON parse error after {loader.events} events: {first}",
                msg[:TEXT_LIMIT])
        if "inside string" in msg:  # other control bytes were replaced (and reported)
            col.add("string", "raw tab, newline or CR inside a string (must be escaped)",
                    msg[:TEXT_LIMIT])
    elif loader.events == 0 and prod.total:
        col.add("json", "the top-level array is empty (or the top level is not an array)")

    # stage 3: structure
    report.counts = _structure(con, col, loader.m_count)


def main(argv: list[str] | None = None) -> int:
    """``python -m nsys_duck.validate FILE [--max-examples N] [--json]``.

    Prints counts and violations; returns 0 when clean, 1 on violations,
    2 when the file is missing.
    """
    ap = argparse.ArgumentParser(
        prog="python -m nsys_duck.validate",
        description="Validate an nsys-duck .perfetto.json.gz trace (Perfetto JSON rules and "
                    "the nsys-duck output contract).",
    )
    ap.add_argument("file")
    ap.add_argument("--max-examples", type=int, default=5, metavar="N",
                    help="examples kept per rule (default 5)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--memory-limit", default="1GB", help="DuckDB memory limit (default 1GB)")
    args = ap.parse_args(argv)
    try:
        rep = validate_trace(args.file, max_examples=args.max_examples,
                             memory_limit=args.memory_limit)
    except FileNotFoundError:
        print(f"error: no such file: {args.file}", file=sys.stderr)
        return 2
    if args.json:
        out = asdict(rep)
        out["ok"] = rep.ok
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(f"{rep.path}: {rep.events} events")
        for k, v in rep.counts.items():
            print(f"  {k:<24} {v}")
        if rep.ok:
            print("OK: no violations")
        else:
            total = sum(rep.violation_counts.values())
            print(f"FAILED: {total} violation(s)")
            for rule, n in rep.violation_counts.items():
                print(f"  {rule:<12} {n}")
            for v in rep.violations:
                print(f"[{v.rule}] {v.message}")
                if v.event:
                    print(f"    {v.event}")
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())
