"""`nsys-duck open` (nsys_duck/serve.py): the trace served to ui.perfetto.dev.

Real servers on free ports of 127.0.0.1, real HTTP requests, the command run
as a subprocess (``python -m nsys_duck.cli open``, which is ``nsys-duck
open``) and stopped with Ctrl-C (SIGINT), and Perfetto's real
trace_processor_shell for --accelerate (its /status part is skipped, with
the reason, when the binary was built without its HTTP server, as the one
in shared/tools/perfetto is).
"""

from __future__ import annotations

import gzip
import http.client
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

import perfetto_import
from conftest import REPO, Options, convert
from nsys_duck import serve
from nsys_duck.errors import InputError

EXAMPLE = REPO / "examples" / "raiderstream_tiny"
NOT_CONVERTED = REPO / "examples" / "rodinia_gaussian_8k_kernels"
UI = "https://ui.perfetto.dev"


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """raiderstream_tiny converted into a fresh workspace root: (root, trace)."""
    root = tmp_path_factory.mktemp("open-ws")
    res = convert(EXAMPLE / "parquet", Options(), root=root)
    assert res.workspace.json_gz.is_file()
    return root, res.workspace.json_gz.resolve()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request(port: int, path: str, method: str = "GET", host: str | None = None):
    """A raw request (the path is sent exactly as given): (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Host": host} if host else {}
        conn.putrequest(method, path, skip_host=bool(host), skip_accept_encoding=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


# --- which trace -------------------------------------------------------------


def test_every_form_of_name_finds_the_trace(ws, monkeypatch):
    root, trace = ws
    forms = [
        "raiderstream_tiny",  # workspace NAME
        str(trace.parent),  # workspace folder
        str(trace),  # the trace itself
        str(EXAMPLE / "parquet"),  # its export folder
        str(trace.parent / "parquet"),  # the workspace's export
        str(trace.parent / "raiderstream_tiny.duckdb"),
    ]  # its database
    for form in forms:
        assert serve.resolve_trace(form, root) == trace, form
    monkeypatch.setenv("NSYS_WORKSPACE_ROOT", str(root))
    assert serve.resolve_trace("raiderstream_tiny") == trace  # default root: the env
    monkeypatch.chdir(trace.parent)
    assert serve.resolve_trace(trace.name, root) == trace  # a bare file name


def test_a_freely_named_folder_with_one_trace(ws, tmp_path):
    """A `convert -o OUT` folder: named freely, its files after the report."""
    root, trace = ws
    out = tmp_path / "out"
    out.mkdir()
    os.link(trace, out / trace.name)
    assert serve.resolve_trace(str(out), root) == out / trace.name
    os.link(trace, out / "other.perfetto.json.gz")
    with pytest.raises(InputError):  # which one? not a guess
        serve.resolve_trace(str(out), root)


def test_no_trace_is_one_sentence(ws, tmp_path):
    root, _ = ws
    report = str(NOT_CONVERTED / "rodinia_gaussian_8k_kernels.nsys-rep")
    with pytest.raises(serve.NotConvertedError) as exc:
        serve.resolve_trace(report, root)
    assert str(exc.value) == f"not converted yet (run nsys-duck convert {report} first)"
    (root / "half_done").mkdir()
    with pytest.raises(serve.NotConvertedError) as exc:
        serve.resolve_trace("half_done", root)
    assert str(exc.value) == "not converted yet (run nsys-duck convert REPORT first)"
    with pytest.raises(InputError) as exc:
        serve.resolve_trace("no_such_report", root)
    assert not isinstance(exc.value, serve.NotConvertedError)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError):
        serve.resolve_trace(str(tmp_path / "notes.txt"), root)


# --- the link -----------------------------------------------------------------


@pytest.fixture(scope="module")
def split_and_kineto(tmp_path_factory):
    """raiderstream_tiny converted twice under one root: ``split`` with its
    JSON in parts (--max-json-size 100KB), ``kineto`` with --format kineto
    only: (root, parts of the split trace, the Kineto workspace)."""
    root = tmp_path_factory.mktemp("open-split")
    split = convert(
        EXAMPLE / "parquet", Options(max_json_bytes=100_000, output_dir=root / "split")
    ).workspace
    kineto = convert(
        EXAMPLE / "parquet", Options(trace_format="kineto", output_dir=root / "kineto")
    ).workspace
    assert len(split.json_parts) > 2 and not split.json_gz.exists()
    assert not kineto.json_gz.exists() and not kineto.json_parts
    return root, [p.resolve() for p in split.json_parts], kineto


def test_a_split_trace_opens_one_part_at_a_time(split_and_kineto):
    """A split workspace (NAME.part-NNN.perfetto.json.gz, no NAME.perfetto.json.gz)
    is not "not converted": open serves part 1, --part K another, and says
    which of how many; a part that is not there is one sentence."""
    root, parts, _ = split_and_kineto
    folder = str(parts[0].parent)
    assert serve.resolve_trace(folder, root) == parts[0]
    assert serve.resolve_trace(folder, root, part=3) == parts[2]
    with pytest.raises(InputError, match=rf"--part 99: the trace has parts 1 to {len(parts)}$"):
        serve.resolve_trace(folder, root, part=99)
    port = free_port()
    cmd = Command([folder, "--part", "2", "--once", "--no-browser", "--port", str(port)], root)
    try:
        cmd.wait_line("open in Perfetto: ")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{parts[1].name}", timeout=10) as r:
            assert r.read() == parts[1].read_bytes()
        code, lines, err = cmd.finish()
    finally:
        cmd.kill()
    assert code == 0, err
    assert lines[0] == (
        f"the trace is in {len(parts)} parts (over --max-json-size), each a complete trace "
        f"with the same tracks and time base: opening part 2 of {len(parts)}; "
        "--part K opens another"
    )
    assert lines[1].startswith(f"serving {parts[1]} ")


def test_a_kineto_only_workspace_is_one_clear_sentence(split_and_kineto, ws):
    """--format kineto wrote no Perfetto JSON: open says so and what to do,
    not "not converted yet"; --part on a whole trace is refused."""
    root, _, kineto = split_and_kineto
    code, lines, err = Command([str(kineto.dir), "--once", "--no-browser"], root).finish()
    assert code == 1 and not lines
    assert err == (
        f"nsys-duck: {kineto.dir}: raiderstream_tiny holds a Kineto trace only (converted "
        "with --format kineto), no Perfetto trace: open one of its files (nsys-duck open "
        f"{kineto.kineto_dir / 'rank0.json.gz'}) or convert again with --format both\n"
    )
    with pytest.raises(InputError, match="--part 2: the trace is not split"):
        serve.resolve_trace("raiderstream_tiny", ws[0], part=2)


def _ui_reads_url_arg(link: str) -> str:
    """What ui.perfetto.dev takes as `url` from the link: the route after
    '#!', its query string with '+' as space, percent-decoded (core/router.ts)."""
    query = link.split("#!", 1)[1].split("?", 1)[1]
    args = dict(part.split("=", 1) for part in query.split("&"))
    return unquote(args["url"].replace("+", " "))


def test_deep_link_is_perfettos_documented_form():
    url = "http://127.0.0.1:9001/model.perfetto.json.gz"
    assert serve.deep_link(url) == f"{UI}/#!/?url={url}"  # plain names stay readable
    odd = "http://127.0.0.1:9001/" + quote("my run+1 & #2%.perfetto.json.gz")
    assert _ui_reads_url_arg(serve.deep_link(odd)) == odd
    assert serve.deep_link(odd).count("#") == 1 and serve.deep_link(odd).count("&") == 0
    other = "http://127.0.0.1:8123/model.perfetto.json.gz"
    assert serve.deep_link(other, 8123) == f"{UI}/#!/?rpc_port=8123&url={other}"
    assert serve.ui_link() == UI
    assert serve.ui_link(8123) == f"{UI}/#!/?rpc_port=8123"


# --- the file server ----------------------------------------------------------


def test_serves_the_trace_and_nothing_else(ws):
    _, trace = ws
    data = trace.read_bytes()
    with serve.TraceServer(trace, port=0) as server:
        port = server.port
        assert server.url == f"http://127.0.0.1:{port}/{trace.name}"
        assert server.deep_link == f"{UI}/#!/?rpc_port={port}&url={server.url}"
        with urllib.request.urlopen(server.url, timeout=10) as resp:
            body = resp.read()
            assert resp.status == 200
            assert resp.headers["Access-Control-Allow-Origin"] == UI
            assert resp.headers["Content-Type"] == "application/gzip"
            assert resp.headers.get("Content-Encoding") is None  # the .gz itself
            assert int(resp.headers["Content-Length"]) == len(data)
        assert body == data and body[:2] == b"\x1f\x8b"
        assert gzip.decompress(body).lstrip()[:1] in (b"[", b"{")
        assert server.fetched.wait(5) and server.fetches == 1

        status, headers, body = request(port, "/" + trace.name, "HEAD")
        assert status == 200 and body == b"" and headers["Access-Control-Allow-Origin"] == UI
        status, headers, _ = request(port, "/" + trace.name, "OPTIONS")
        assert status == 204 and headers["Access-Control-Allow-Origin"] == UI

        ws_dir = trace.parent
        others = [
            "/",
            "/..",
            "/../" + trace.name,
            f"/../{ws_dir.name}/{trace.name}",
            "/raiderstream_tiny.duckdb",
            "/../raiderstream_tiny.duckdb",
            "/%2e%2e/raiderstream_tiny.duckdb",
            "/..%2fraiderstream_tiny.duckdb",
            "/parquet/",
            "/parquet/StringIds.parquet",
            "/raiderstream_tiny.perfetto.parquet",
            f"/{trace.name}/",
            "/status",
            "/index.html",
        ]
        for path in others:
            status, _, body = request(port, path)
            assert status in (403, 404), path
            assert data not in body
        # ui.perfetto.dev probes POST /status for trace_processor: not us
        assert request(port, "/status", "POST")[0] == 404
        assert request(port, "/" + trace.name, "POST")[0] == 404
        # a page whose host name resolves to 127.0.0.1 (DNS rebinding) gets nothing
        status, _, body = request(port, "/" + trace.name, host=f"evil.example:{port}")
        assert status == 403 and data not in body
        server.fetched.clear()
        assert request(port, "/" + trace.name, host=f"localhost:{port}")[0] == 200
        assert server.fetched.wait(5) and server.fetches == 2  # HEAD, 403s: not fetches
    with pytest.raises(OSError):  # stopped: the port is closed
        request(port, "/" + trace.name)


def test_port_in_use_is_one_sentence(ws):
    _, trace = ws
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(serve.PortInUseError) as exc:
            serve.TraceServer(trace, port=port)
    assert str(exc.value).startswith(f"port {port} on 127.0.0.1 is already in use")
    assert "--port" in str(exc.value) and "\n" not in str(exc.value)


# --- the command, as a subprocess -------------------------------------------------


class Command:
    """``python -m nsys_duck.cli open ARGS`` with its stdout read line by line."""

    def __init__(self, args: list[str], root: Path, **env):
        full_env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(root), PYTHONUNBUFFERED="1", **env)
        for var in ("DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_CLIENT"):
            full_env.pop(var, None)  # never a browser from the tests
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nsys_duck.cli", "open", *args],
            cwd=REPO,
            env=full_env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._eof = False
        self._stderr: str | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_line(self, prefix: str, timeout: float = 60) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                self._eof = True
                break
            self.lines.append(line)
            if line.startswith(prefix):
                return line
        raise AssertionError(f"no line starting {prefix!r}; stdout so far: {self.lines}")

    def finish(self, timeout: float = 10) -> tuple[int, list[str], str]:
        """Wait for the exit (kill after ``timeout``): (status, stdout lines, stderr)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"still running {timeout} s later; stdout: {self.lines}") from None
        while not self._eof:
            line = self._queue.get(timeout=5)
            if line is None:
                self._eof = True
            else:
                self.lines.append(line)
        return self.proc.returncode, self.lines, self.stderr()

    def stderr(self) -> str:
        if self._stderr is None:
            self._stderr = self.proc.stderr.read()
        return self._stderr

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.mark.parametrize(
    ("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_serves_until_stopped(ws, sig, status):
    root, trace = ws
    port = free_port()
    cmd = Command(["raiderstream_tiny", "--port", str(port)], root)
    try:
        link = cmd.wait_line("open in Perfetto: ").split(": ", 1)[1]
        url = f"http://127.0.0.1:{port}/{trace.name}"
        assert link == f"{UI}/#!/?rpc_port={port}&url={url}"
        cmd.wait_line("serving until Ctrl-C")
        for _ in range(2):  # a reload fetches it again
            with urllib.request.urlopen(url, timeout=10) as resp:
                assert resp.read() == trace.read_bytes()
            cmd.wait_line("sent ")
        if Path(f"/proc/{cmd.proc.pid}/stat").exists():  # idle while it waits
            before = cpu_seconds(cmd.proc.pid)
            time.sleep(1.0)
            assert cpu_seconds(cmd.proc.pid) - before < 0.3
        t0 = time.monotonic()
        cmd.proc.send_signal(sig)
        code, lines, err = cmd.finish()
        assert time.monotonic() - t0 < 5
    finally:
        cmd.kill()
    assert code == status
    assert lines[-1] == "stopped"
    assert "Traceback" not in err and err == ""
    assert any(line.startswith(f"serving {trace} ") for line in lines)
    assert "no display here: open the link in your browser" in lines


def test_once_stops_after_one_fetch(ws):
    root, trace = ws
    port = free_port()
    cmd = Command([str(trace), "--port", str(port), "--once", "--no-browser"], root)
    try:
        cmd.wait_line("open in Perfetto: ")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{trace.name}", timeout=10) as r:
            assert r.read() == trace.read_bytes()
        code, lines, err = cmd.finish()
    finally:
        cmd.kill()
    assert code == 0, err
    assert lines[-1] == "stopped (the trace was fetched once)"
    # --no-browser: not even the no-display note
    assert not any("open the link" in line for line in lines)


def test_command_errors_are_one_sentence(ws):
    root, _trace = ws
    report = str(NOT_CONVERTED / "rodinia_gaussian_8k_kernels.nsys-rep")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cases = [
            (
                [report],
                f"nsys-duck: {report}: not converted yet (run nsys-duck convert {report} first)",
            ),
            (
                ["raiderstream_tiny", "--port", str(port)],
                f"nsys-duck: raiderstream_tiny: port {port} on 127.0.0.1 is already in use",
            ),
            (
                ["raiderstream_tiny", "--accelerate", "--once"],
                "nsys-duck: raiderstream_tiny: --once serves the file once",
            ),
            (
                ["raiderstream_tiny", "--port", "70000"],
                "nsys-duck: raiderstream_tiny: --port 70000: not a TCP port",
            ),
        ]
        for args, start in cases:
            code, lines, err = Command(args, root).finish()
            assert code in (1, 2), (args, err)
            assert err.startswith(start), (args, err)
            assert err.count("\n") == 1 and "Traceback" not in err
            assert not any(line.startswith("serving") for line in lines)
    # --accelerate with no trace_processor_shell anywhere
    code, _, err = Command(
        ["raiderstream_tiny", "--accelerate"],
        root,
        PATH="/nonexistent",
        **{serve.ENV_TRACE_PROCESSOR: ""},
    ).finish()
    assert code == 1
    assert err == (
        "nsys-duck: raiderstream_tiny: no trace_processor_shell found for "
        "--accelerate (give --trace-processor FILE, set "
        "$NSYS_DUCK_TRACE_PROCESSOR, or put trace_processor_shell on PATH)\n"
    )


def test_open_is_a_command_of_nsys_duck(monkeypatch):
    """`nsys-duck open` is a command of nsys_duck/cli.py like the others, and
    `python -m nsys_duck.cli open ARGS` (what these tests run) is that command."""
    from click.testing import CliRunner

    from nsys_duck import cli

    assert cli.main.commands.get("open") is cli.open_cmd
    monkeypatch.setenv("COLUMNS", "80")  # click's help: 78 columns wide
    via_cli = CliRunner().invoke(
        cli.main, ["open", "--help"], prog_name="nsys-duck", terminal_width=78
    )
    via_serve = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "open", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert via_cli.exit_code == 0 and via_serve.returncode == 0, via_serve.stderr
    assert via_serve.stdout == via_cli.output
    assert via_serve.stdout.startswith("Usage: nsys-duck open [OPTIONS] NAME")


# --- trace_processor_shell --httpd --------------------------------------------------


def test_find_trace_processor(monkeypatch, tmp_path):
    monkeypatch.delenv(serve.ENV_TRACE_PROCESSOR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert serve.find_trace_processor() is None
    with pytest.raises(serve.TraceProcessorError, match="no such file"):
        serve.find_trace_processor(tmp_path / "missing")
    tool = tmp_path / "trace_processor_shell"
    tool.write_text("")
    with pytest.raises(serve.TraceProcessorError, match="not executable"):
        serve.find_trace_processor(tool)
    tool.chmod(0o755)
    assert serve.find_trace_processor() == tool.resolve()  # on PATH
    real = perfetto_import.find_binary()
    if real is not None:
        monkeypatch.setenv(serve.ENV_TRACE_PROCESSOR, str(real))
        assert serve.find_trace_processor() == real.resolve()  # the variable first
        assert serve.find_trace_processor(tool) == tool.resolve()  # the option before it


def _binary() -> Path:
    binary = perfetto_import.find_binary()
    if binary is None:
        pytest.skip(perfetto_import.missing_message())
    return binary


def test_trace_processor_httpd_serves_the_trace(ws):
    """trace_processor_shell --httpd on the trace answers /status naming it,
    and stops on request."""
    _, trace = ws
    tp = serve.TraceProcessorServer(_binary(), trace, free_port())
    try:
        try:
            seconds = tp.start(timeout=120)
        except serve.TraceProcessorError as exc:
            if "built without its HTTP server" in str(exc):
                pytest.skip(f"{tp.binary} has no --httpd: {exc}")
            raise
        assert seconds < 120 and tp.alive()
        # the StatusResult protobuf carries the loaded trace's name as text
        assert trace.name.encode() in tp.status()
        # as the UI probes it (POST, from its origin): allowed for ui.perfetto.dev
        req = urllib.request.Request(tp.status_url, method="POST", data=b"", headers={"Origin": UI})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200
            assert resp.headers.get("Access-Control-Allow-Origin") == UI
    finally:
        t0 = time.monotonic()
        tp.stop()
        assert time.monotonic() - t0 < 10
    assert not tp.alive()
    with pytest.raises(OSError):
        tp.status(timeout=2)


def test_accelerate_command(ws):
    """`open --trace-processor FILE`: with an --httpd build, prints what to do
    and stops on Ctrl-C; without, says so in one sentence."""
    root, trace = ws
    binary = _binary()
    port = free_port()
    cmd = Command(
        ["raiderstream_tiny", "--port", str(port), "--trace-processor", str(binary)], root
    )
    try:
        cmd.wait_line("loading ")
        try:
            cmd.wait_line("open ", timeout=120)
        except AssertionError:
            code, _, err = cmd.finish()
            assert code == 1
            assert err.startswith(
                f"nsys-duck: raiderstream_tiny: {binary} was built "
                "without its HTTP server (HTTP RPC module not supported "
                "in this build)"
            )
            assert err.count("\n") == 1 and "Traceback" not in err
            return
        assert cmd.lines[-1] == (
            f'open {UI}/#!/?rpc_port={port} and click "YES, use '
            'loaded trace" in its dialog "Use trace processor '
            'native acceleration?"'
        )
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=10) as r:
            assert trace.name.encode() in r.read()
        cmd.proc.send_signal(signal.SIGINT)
        code, lines, err = cmd.finish(timeout=15)
    finally:
        cmd.kill()
    assert code == 130 and lines[-1] == "stopped" and "Traceback" not in err
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=2)
