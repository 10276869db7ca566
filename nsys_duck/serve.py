"""``nsys-duck open NAME``: show a converted trace in ui.perfetto.dev.

Two ways, both on this machine only (127.0.0.1):

* **serve the file** (default): a small HTTP server answers with the one
  trace file and nothing else (no directory listing, no other workspace
  file), with ``Access-Control-Allow-Origin: https://ui.perfetto.dev``, and
  the command prints the deep link ``https://ui.perfetto.dev/#!/?url=
  http://127.0.0.1:9001/NAME.perfetto.json.gz`` (Perfetto's "Deep linking to
  the Perfetto UI"). The UI fetches the file and parses it in the browser;
  it recognises the gzip stream by its magic bytes, so the Content-Type is
  just ``application/gzip``. Port 9001 is the one port the UI's Content
  Security Policy lets it fetch from on 127.0.0.1 (it is trace_processor's
  RPC port); any other port needs the UI flag "Relax Content Security Policy
  for 127.0.0.1:*" and ``rpc_port=PORT`` in the link, which the link then
  carries. Serving goes on until Ctrl-C, so reloads and new tabs work and a
  re-converted trace is served fresh; ``once=True`` stops after one complete
  fetch, as Perfetto's own ``tools/open_trace_in_ui`` does.
* **native accelerator** (``accelerate``): runs ``trace_processor_shell
  --httpd --http-port PORT TRACE`` for traces too big for the browser's
  memory; ui.perfetto.dev probes 127.0.0.1:9001 when it starts and offers the
  loaded trace in its "Use trace processor native acceleration?" dialog
  ("YES, use loaded trace").

:func:`run_open` is the whole command (``nsys-duck open`` in :mod:`cli`
calls it); :class:`TraceServer` and :class:`TraceProcessorServer` are the
two servers, usable from Python (tests drive them). ``python -m
nsys_duck.cli open NAME`` runs ``nsys-duck open NAME``.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import webbrowser
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import click

from .console import shown
from .errors import InputError, NsysDuckError
from .formats import format_of, kineto_only, opened_trace
from .workspace import JSON_PART, Workspace, locate
from .writers import human_size

PERFETTO_UI = "https://ui.perfetto.dev"
HOST = "127.0.0.1"
DEFAULT_PORT = 9001  # the port ui.perfetto.dev's CSP allows on 127.0.0.1
ENV_TRACE_PROCESSOR = "NSYS_DUCK_TRACE_PROCESSOR"
TRACE_PROCESSOR_NAMES = ("trace_processor_shell", "trace_processor")
RELAX_CSP_FLAG = "Relax Content Security Policy for 127.0.0.1:*"
USE_LOADED_TRACE = "YES, use loaded trace"
BIG_TRACE_BYTES = 200 << 20  # above this, suggest the native accelerator

Echo = Callable[[str], None]


class NotConvertedError(InputError):
    """The report (or workspace) has no trace yet."""


class PortInUseError(NsysDuckError):
    """Something else already listens on 127.0.0.1:PORT."""


class TraceProcessorError(NsysDuckError):
    """trace_processor_shell is missing, unusable, or stopped on its own."""


# --- which trace ------------------------------------------------------------


def _not_converted(report: str = "REPORT") -> NotConvertedError:
    return NotConvertedError(f"not converted yet (run nsys-duck convert {report} first)")


def resolve_trace(name: str, root: Path | None = None, part: int | None = None) -> Path:
    """The trace file ``name`` stands for (absolute): a ``.json.gz``/``.json``
    or ``.pftrace`` trace file itself, else the trace of the workspace
    :func:`workspace.locate` finds for it (a workspace name or folder, its
    ``NAME.duckdb``, or the report / export it was converted from): its
    ``NAME.pftrace`` when it has one (the whole trace in one file, Perfetto's
    own format) and no ``part`` is asked for, else ``NAME.perfetto.json.gz``;
    of a split trace (``NAME.part-NNN.perfetto.json.gz``), part ``part``
    (default 1).

    Raises:
        NotConvertedError: the workspace has no Perfetto trace (yet), or
            only a Kineto one (``--format kineto``).
        InputError: nothing of that name or path; ``part`` is not one of the
            trace's parts, or the trace is not split.
    """
    path = Path(name).expanduser()
    if path.is_file() and format_of(path) is not None:
        if part is not None:
            raise InputError(f"--part {part} picks a part of a workspace's split trace")
        return path.resolve()
    ws, source = locate(name, root)
    preferred = opened_trace(ws)
    if part is None and preferred is not None and preferred not in ws.json_parts:
        return preferred.resolve()
    parts = ws.json_parts
    if ws.json_gz.is_file() and not parts:
        if part is not None:
            raise InputError(f"--part {part}: the trace is not split (one file, {ws.json_gz.name})")
        return ws.json_gz.resolve()
    if part is not None and preferred is not None and not parts:
        raise InputError(f"--part {part}: the trace is not split (one file, {preferred.name})")
    if parts:
        chosen = ws.json_part(part or 1)
        if chosen not in parts:
            raise InputError(f"--part {part}: the trace has parts 1 to {len(parts)}")
        return chosen.resolve()
    if kineto_only(ws):
        raise NotConvertedError(
            f"{ws.name} holds a Kineto trace only (converted with --format kineto), no Perfetto "
            f"trace: open one of its files (nsys-duck open {ws.kineto_dir / 'rank0.json.gz'}) "
            f"or convert again with --format both"
        )
    raise _not_converted(name if source is not None else "REPORT")


def split_parts(trace: Path) -> list[Path]:
    """All the parts of the split trace ``trace`` is a part of, in order
    (empty: ``trace`` is not a part)."""
    m = JSON_PART.fullmatch(trace.name)
    return Workspace(trace.parent, m.group(1)).json_parts if m else []


# --- links ------------------------------------------------------------------


def deep_link(file_url: str, port: int = DEFAULT_PORT) -> str:
    """The ui.perfetto.dev link that loads ``file_url``.

    The UI reads the route's arguments with a query-string parser that
    percent-decodes them, so the URL is percent-encoded, except ``:`` and
    ``/`` (a plain name stays readable; '&', '#', '+', '%' and spaces in a
    name are escaped). A port other than 9001 adds ``rpc_port=PORT``: with
    the UI's flag "Relax Content Security Policy for 127.0.0.1:*" on, that
    is what lets it fetch from that port (without it the UI says so).
    """
    args = f"url={quote(file_url, safe=':/')}"
    if port != DEFAULT_PORT:
        args = f"rpc_port={port}&{args}"
    return f"{PERFETTO_UI}/#!/?{args}"


def ui_link(port: int = DEFAULT_PORT) -> str:
    """The ui.perfetto.dev link for a trace_processor_shell --httpd on ``port``."""
    return PERFETTO_UI if port == DEFAULT_PORT else f"{PERFETTO_UI}/#!/?rpc_port={port}"


def _port_in_use(port: int) -> PortInUseError:
    return PortInUseError(
        f"port {port} on {HOST} is already in use (another nsys-duck open or "
        f"trace_processor_shell --httpd?); stop that program or choose another "
        f"port with --port"
    )


def _listen_error(port: int, exc: OSError) -> NsysDuckError:
    if exc.errno == errno.EADDRINUSE:
        return _port_in_use(port)
    return NsysDuckError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}")


# --- serving the file -----------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    """GET/HEAD of the one trace path; 404 for every other path or method."""

    server: _HTTPServer

    def version_string(self) -> str:
        return "nsys-duck"

    def log_message(self, format, *args):  # no per-request noise on stderr
        pass

    def _host_ok(self) -> bool:
        # Only names of this machine: a page whose own host name was made to
        # resolve to 127.0.0.1 (DNS rebinding) must not read the trace.
        host = self.headers.get("Host")
        port = self.server.server_address[1]
        return host is None or host in (f"{HOST}:{port}", f"localhost:{port}")

    def _is_trace_path(self) -> bool:
        return unquote(urlsplit(self.path).path) == "/" + self.server.owner.trace.name

    def _refuse(self, code: int, message: str) -> None:
        try:
            self.send_error(code, message)
        except OSError:
            pass

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", PERFETTO_UI)

    def do_OPTIONS(self):  # a CORS preflight (plain GETs need none)
        if not self._host_ok():
            return self._refuse(403, "Forbidden host")
        if not self._is_trace_path():
            return self._refuse(404, "Not found")
        self.send_response(204)
        self._cors()
        self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "*")
        if self.headers.get("Access-Control-Request-Private-Network") == "true":
            self.send_header("Access-Control-Allow-Private-Network", "true")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self._send_trace(body=True)

    def do_HEAD(self):
        self._send_trace(body=False)

    def do_POST(self):  # ui.perfetto.dev probes POST /status for trace_processor
        self._refuse(404, "Not found")

    do_PUT = do_DELETE = do_PATCH = do_POST

    def _send_trace(self, body: bool) -> None:
        if not self._host_ok():
            return self._refuse(403, "Forbidden host")
        if not self._is_trace_path():
            return self._refuse(404, "Not found")
        owner = self.server.owner
        try:
            f = open(owner.trace, "rb")  # opened per request: a re-conversion is served
        except OSError:
            return self._refuse(404, "The trace file is gone")
        sent = 0
        with f:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            self._cors()
            fmt = format_of(owner.trace)
            kind = fmt.content_type if fmt is not None else "application/octet-stream"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(size))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            if not body:
                return
            try:
                while chunk := f.read(1 << 20):
                    self.wfile.write(chunk)
                    sent += len(chunk)
                self.wfile.flush()
            except OSError:  # the tab was closed mid-transfer
                return
        if sent == size:
            owner._fetched(size)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: TraceServer

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # a client hung up: nothing to report
            return
        super().handle_error(request, client_address)


class TraceServer:
    """Serves one trace file on http://127.0.0.1:PORT/NAME, nothing else.

    The socket is bound in the constructor (so a port in use is known at
    once; ``port=0`` picks a free one, see :attr:`port`); :meth:`start` serves
    in a background thread, :meth:`stop` (or leaving the ``with`` block) shuts
    the server down and closes the socket. :attr:`fetched` is set after each
    complete GET of the file; :attr:`fetches` counts them.
    """

    def __init__(
        self,
        trace: str | os.PathLike,
        port: int = DEFAULT_PORT,
        on_fetch: Callable[[int], None] | None = None,
    ):
        self.trace = Path(trace).resolve()
        if not self.trace.is_file():
            raise InputError(f"{self.trace}: no such file")
        try:
            self._httpd = _HTTPServer((HOST, port), _Handler)
        except OSError as exc:
            raise _listen_error(port, exc) from None
        self._httpd.owner = self
        self.port: int = self._httpd.server_address[1]
        self.fetches = 0
        self.fetched = threading.Event()
        self._on_fetch = on_fetch
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The file's own URL, http://127.0.0.1:PORT/NAME.perfetto.json.gz."""
        return f"http://{HOST}:{self.port}/{quote(self.trace.name)}"

    @property
    def deep_link(self) -> str:
        return deep_link(self.url, self.port)

    def _fetched(self, size: int) -> None:
        with self._lock:
            self.fetches += 1
        if self._on_fetch is not None:
            self._on_fetch(size)
        self.fetched.set()

    def start(self) -> TraceServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.1},
                name="nsys-duck-open",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> TraceServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- trace_processor_shell --httpd ------------------------------------------


def find_trace_processor(explicit: str | os.PathLike | None = None) -> Path | None:
    """``explicit``, else ``$NSYS_DUCK_TRACE_PROCESSOR``, else
    ``trace_processor_shell`` or ``trace_processor`` on PATH; None if none.

    Raises:
        TraceProcessorError: ``explicit`` (or the variable) names no
            executable file.
    """
    for given, what in (
        (explicit, "--trace-processor"),
        (os.environ.get(ENV_TRACE_PROCESSOR), f"${ENV_TRACE_PROCESSOR}"),
    ):
        if given:
            path = Path(given).expanduser()
            if not path.is_file():
                raise TraceProcessorError(f"{what} {path}: no such file")
            if not os.access(path, os.X_OK):
                raise TraceProcessorError(f"{what} {path}: not executable")
            return path.resolve()
    for name in TRACE_PROCESSOR_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found).resolve()
    return None


def _check_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise _listen_error(port, exc) from None


_LOG_PREFIX = re.compile(r"^\[[\d.]+\]\s+\S+:\d+\s+")


def _tool_said(lines: list[str]) -> str:
    """The last meaningful line trace_processor_shell printed, cleaned."""
    for line in reversed(lines):
        line = line.strip()
        if not line or line.startswith("-----"):
            continue
        line = _LOG_PREFIX.sub("", line)
        return re.sub(r"\s*\(errno: 0, Success\)$", "", line)
    return ""


class TraceProcessorServer:
    """``trace_processor_shell --httpd --http-port PORT TRACE``, run and watched.

    :meth:`start` launches it and waits until its ``/status`` endpoint
    answers (it answers once the trace is loaded); :meth:`status` returns
    that answer (a ``StatusResult`` protobuf: the loaded trace's name is in
    it as text); :meth:`stop` ends the process (SIGTERM, then SIGKILL).
    """

    def __init__(
        self, binary: str | os.PathLike, trace: str | os.PathLike, port: int = DEFAULT_PORT
    ):
        self.binary = Path(binary)
        self.trace = Path(trace).resolve()
        self.port = port
        self.proc: subprocess.Popen | None = None
        self._lines: deque[str] = deque(maxlen=40)
        self._reader: threading.Thread | None = None

    @property
    def status_url(self) -> str:
        return f"http://{HOST}:{self.port}/status"

    @property
    def command(self) -> list[str]:
        return [str(self.binary), "--httpd", "--http-port", str(self.port), str(self.trace)]

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def status(self, timeout: float = 2.0) -> bytes:
        """The body of ``/status`` (raises OSError/URLError if it does not answer)."""
        with urllib.request.urlopen(self.status_url, timeout=timeout) as resp:
            return resp.read()

    def start(self, timeout: float | None = None) -> float:
        """Launch it and wait until it serves; the seconds that took.

        Raises:
            PortInUseError: the port is taken before we start.
            TraceProcessorError: it exits first (e.g. a build without the
                HTTP server), or ``timeout`` seconds pass.
        """
        _check_port_free(self.port)
        t0 = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            raise TraceProcessorError(f"cannot run {self.binary}: {exc.strerror or exc}") from None
        self._reader = threading.Thread(
            target=self._drain, daemon=True, name="trace_processor_shell output"
        )
        self._reader.start()
        while True:
            if self.proc.poll() is not None:
                self._reader.join(2)
                raise self._exited_error()
            try:
                self.status(timeout=1.0)
                return time.monotonic() - t0
            except (OSError, urllib.error.URLError):
                pass
            if timeout is not None and time.monotonic() - t0 > timeout:
                self.stop()
                raise TraceProcessorError(
                    f"{self.binary.name} did not answer on {self.status_url} within {timeout:.0f} s"
                )
            time.sleep(0.2)

    def _exited_error(self) -> TraceProcessorError:
        code = self.proc.returncode if self.proc else None
        said = _tool_said(list(self._lines))
        if "not supported in this build" in said:
            return TraceProcessorError(
                f"{self.binary} was built without its HTTP server ({said}); use a "
                f"trace_processor_shell with it, e.g. the prebuilt one in Perfetto's "
                f"docs (https://perfetto.dev/docs/visualization/large-traces)"
            )
        how = f"signal {-code}" if code is not None and code < 0 else f"status {code}"
        return TraceProcessorError(
            f"{self.binary.name} stopped ({how})" + (f": {said}" if said else "")
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = 5.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._reader is not None:
            self._reader.join(2)

    def __enter__(self) -> TraceProcessorServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# --- the command ----------------------------------------------------------------


def can_open_browser() -> bool:
    """A graphical browser can be expected: macOS, Windows, or an X11/Wayland
    display. Without one, Python's webbrowser may start a text browser in
    this terminal, which must not happen."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _open_browser(link: str, wanted: bool, out: Echo) -> None:
    if not wanted:
        return
    if not can_open_browser():
        out("no display here: open the link in your browser")
        return
    try:
        opened = webbrowser.open_new_tab(link)
    except Exception:  # a broken $BROWSER and the like: the link is printed
        opened = False
    out(
        "asked your browser to open the link"
        if opened
        else "could not start a browser: open the link yourself"
    )


def _ssh_hint(port: int, out: Echo) -> None:
    if os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_CLIENT"):
        out(
            f"over SSH: first run on your own computer: ssh -N -L {port}:{HOST}:{port} "
            f"{socket.gethostname()}  (then open the link there)"
        )


class _Stop(Exception):
    def __init__(self, signum: int):
        self.signum = signum


def _raise_stop(signum, frame):
    for s in _Signals.SIGNALS:  # a second Ctrl-C must not break the clean-up
        signal.signal(s, signal.SIG_IGN)
    raise _Stop(signum)


class _Signals:
    """Ctrl-C (SIGINT) and SIGTERM/SIGHUP stop the server cleanly (main thread only)."""

    SIGNALS = tuple(
        s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
    )

    def __enter__(self):
        self.saved = {}
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self.saved[s] = signal.signal(s, _raise_stop)
        return self

    def __exit__(self, *exc):
        for s, handler in self.saved.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def _stopped(out: Echo, signum: int, what: str = "stopped") -> int:
    if sys.stdout.isatty():
        out("")  # past the terminal's ^C
    out(what)
    return 128 + signum


def run_open(
    name: str,
    *,
    port: int = DEFAULT_PORT,
    once: bool = False,
    browser: bool = True,
    trace_processor: str | os.PathLike | None = None,
    accelerate: bool = False,
    part: int | None = None,
    root: Path | None = None,
    out: Echo = click.echo,
    err: Echo | None = None,
) -> int:
    """``nsys-duck open``: the exit status (0; 1 on an error; 2 on bad options;
    130 after Ctrl-C, 143 after SIGTERM)."""
    err = err or (lambda s: click.echo(s, err=True))

    def fail(message: str, status: int = 1) -> int:
        err(f"nsys-duck: {shown(name)}: " + " ".join(message.split()))
        return status

    if not 0 < port < 65536:
        return fail(f"--port {port}: not a TCP port (1-65535)", 2)
    accelerate = accelerate or trace_processor is not None
    if accelerate and once:
        return fail("--once serves the file once; it has no meaning with --accelerate", 2)
    try:
        trace = resolve_trace(name, root, part)
        size = trace.stat().st_size
        _say_part(trace, out)
        with _Signals():
            if accelerate:
                return _run_accelerator(trace, size, port, browser, trace_processor, out)
            return _run_file_server(trace, size, port, once, browser, out)
    except NsysDuckError as exc:
        return fail(str(exc))
    except (_Stop, KeyboardInterrupt) as stop:  # before serving began
        return _stopped(out, getattr(stop, "signum", signal.SIGINT))


def _say_part(trace: Path, out: Echo) -> None:
    """Which part of a split trace is opened (nothing for a whole trace)."""
    parts = split_parts(trace)
    if parts:
        k = parts.index(trace) + 1 if trace in parts else 0
        out(
            f"the trace is in {len(parts)} parts (over --max-json-size), each a complete trace "
            f"with the same tracks and time base: opening part {k} of {len(parts)}; "
            f"--part K opens another"
        )


def _run_file_server(
    trace: Path, size: int, port: int, once: bool, browser: bool, out: Echo
) -> int:
    server = TraceServer(
        trace, port, on_fetch=lambda n: out(f"sent {trace.name} ({human_size(n)}) to the browser")
    )
    try:
        server.start()
        out(f"serving {trace} ({human_size(size)}) at {server.url}")
        if port != DEFAULT_PORT:
            out(
                f"note: ui.perfetto.dev fetches from {HOST}:{DEFAULT_PORT} only, unless "
                f'its flag "{RELAX_CSP_FLAG}" is on (the UI offers to turn it on)'
            )
        if size > BIG_TRACE_BYTES:
            out(
                "note: a big trace; if the browser runs out of memory, use "
                "--accelerate (trace_processor_shell --httpd)"
            )
        out(f"open in Perfetto: {server.deep_link}")
        _ssh_hint(server.port, out)
        _open_browser(server.deep_link, browser, out)
        if once:
            out("stops after the browser has fetched the trace once; Ctrl-C stops now")
        else:
            out("serving until Ctrl-C (reloads and new tabs fetch the trace again)")
        done = server.fetched if once else threading.Event()  # else: never set
        try:
            while not done.wait(0.5):
                pass
        except (_Stop, KeyboardInterrupt) as stop:
            return _stopped(out, getattr(stop, "signum", signal.SIGINT))
        out("stopped (the trace was fetched once)")
        return 0
    finally:
        server.stop()


def _run_accelerator(
    trace: Path, size: int, port: int, browser: bool, explicit: str | os.PathLike | None, out: Echo
) -> int:
    binary = find_trace_processor(explicit)
    if binary is None:
        raise TraceProcessorError(
            "no trace_processor_shell found for --accelerate (give --trace-processor "
            f"FILE, set ${ENV_TRACE_PROCESSOR}, or put trace_processor_shell on PATH)"
        )
    tp = TraceProcessorServer(binary, trace, port)
    try:
        out(
            f"loading {trace} ({human_size(size)}) into {binary} on {HOST}:{port}; "
            f"a big trace takes a while"
        )
        seconds = tp.start()
        link = ui_link(port)
        out(
            f"trace_processor_shell serves the trace on http://{HOST}:{port} "
            f"(loaded in {seconds:.1f} s)"
        )
        out(
            f'open {link} and click "{USE_LOADED_TRACE}" in its dialog '
            f'"Use trace processor native acceleration?"'
        )
        if port != DEFAULT_PORT:
            out(
                f"note: ui.perfetto.dev connects to {HOST}:{DEFAULT_PORT} only, unless "
                f'its flag "{RELAX_CSP_FLAG}" is on (the UI offers to turn it on)'
            )
        _ssh_hint(port, out)
        _open_browser(link, browser, out)
        out("serving until Ctrl-C")
        try:
            while tp.alive():
                try:
                    tp.proc.wait(0.5)
                except subprocess.TimeoutExpired:
                    pass
        except (_Stop, KeyboardInterrupt) as stop:
            tp.stop()
            return _stopped(out, getattr(stop, "signum", signal.SIGINT))
        raise tp._exited_error()
    finally:
        tp.stop()
