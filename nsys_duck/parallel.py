"""Many conversions at once: :func:`convert_many`, one Dask task per report.

Orchestration only: every task is one :func:`convert.convert` (the same
code, files and messages as a sequential run) in a worker process of a
Dask cluster: a local one (``--jobs N``: N processes of one thread each)
or one already running (``--scheduler ADDRESS|FILE``, e.g. started by
dask-jobqueue on SLURM). Workers read the inputs and write the workspaces
at the paths this process gives them, so a remote worker must see the
same file system paths (a shared file system).

A report whose workspace already holds its conversion with the same
options (:func:`convert.up_to_date`) is skipped; a failure is one
:class:`Outcome` and never stops the other reports. Dask
(``distributed``) is imported only when a cluster is used: ``jobs=1``
without a scheduler converts here, one report after the other.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import convert as convert_mod
from .convert import Options
from .errors import NsysDuckError
from .formats import opened_trace
from .workspace import Workspace, classify_input, workspace_for, workspace_root

CONVERTED, UP_TO_DATE, FAILED = "converted", "up to date", "failed"
CONNECT_TIMEOUT_S = 30  # connecting to --scheduler
CLOSE_TIMEOUT_S = 20  # closing the client and the local cluster
WORKERS_TIMEOUT_S = 120  # a local cluster's workers starting
# What one conversion needs besides DuckDB's --memory-limit (Python, Arrow
# batches, the worker itself): the README's 2GB run peaks near 2.5 GB.
DUCKDB_PEAK_FACTOR = 1.25
WORKER_OVERHEAD_BYTES = 768 * 2**20


@dataclass
class Outcome:
    """What became of one input of :func:`convert_many` (picklable: it is
    the result a Dask task sends back).

    ``status``: ``'converted'``, ``'up to date'`` (skipped: the workspace
    holds this conversion already) or ``'failed'``. ``message``: the
    one-line reason of a failure (empty otherwise). ``summary``: the
    (metric, value) rows of :attr:`convert.Result.summary` (empty unless
    converted); ``base_ns``: the trace's time base, epoch ns (0 unless
    converted); ``seconds``: wall time of the task (checking and
    converting), s. ``workspace``: the workspace folder (None when failed);
    ``name``: its NAME; ``trace``: the JSON trace to open
    (``NAME.perfetto.json.gz``, or the first part of a split trace).
    """

    path: str  # as given
    status: str
    workspace: Path | None = None
    message: str = ""
    summary: list[tuple[str, object]] = field(default_factory=list)
    base_ns: int = 0
    seconds: float = 0.0
    name: str = ""
    trace: Path | None = None


# on_update(done, failed, running, outcome): after each outcome; done counts
# every finished input (failed ones too), running those not finished yet
# (converting or waiting for a worker)
OnUpdate = Callable[[int, int, int, Outcome], None]


def convert_many(
    paths: Sequence[str | os.PathLike],
    opts: Options | None = None,
    *,
    jobs: int = 1,
    scheduler: str | os.PathLike | None = None,
    root: Path | None = None,
    skip_up_to_date: bool = True,
    on_update: OnUpdate | None = None,
    client=None,
    output_dirs: Sequence[str | os.PathLike | None] | None = None,
) -> list[Outcome]:
    """Convert every input of ``paths`` (reports, SQLite exports, export
    folders), up to ``jobs`` at once.

    Where: ``client`` (a ``distributed.Client``, used and left open), else
    the Dask scheduler ``scheduler`` (an address ``tcp://HOST:PORT`` or the
    path of its scheduler JSON file; ``jobs`` is then ignored: its workers
    decide), else with ``jobs > 1`` a local cluster of ``jobs`` worker
    processes (fewer when fewer inputs need converting) of one thread
    each, bound to 127.0.0.1, no dashboard, each with memory limit total
    memory / workers; else (``jobs == 1``) in this process, one input after
    the other, without Dask. A cluster or client this function made is
    closed on return, on error and on Ctrl-C. (A local cluster's workers
    are spawned processes: a script calling this needs the ``if __name__
    == "__main__":`` guard.)

    On a cluster each conversion gets DuckDB threads so that the tasks on
    one host use about its cores and no more (cores // tasks at once on
    that host; at least 1), unless ``opts.threads`` is set. Inputs and
    ``root`` (default ``$NSYS_WORKSPACE_ROOT`` as seen here) are made
    absolute here, so a worker starting elsewhere writes where this
    process expects.

    ``output_dirs``: per input (same length as ``paths``), the workspace
    folder to convert it into (``convert -o``), or None for
    ``root/NAME``; overrides ``opts.output_dir``.

    ``skip_up_to_date``: an input whose workspace already holds its
    conversion with these options (:func:`convert.up_to_date`) is an
    ``'up to date'`` outcome and is not converted; decided here and again
    in its task (a remote worker judges with its own view of the files).
    Inputs that go to the same workspace (the same report twice, or two
    reports of the same NAME) run one after the other in the order given,
    as without Dask, so the second meets the first one's workspace (reused,
    or refused as another report's), never its lock.

    Returns:
        one :class:`Outcome` per input, in the order of ``paths``.
        ``on_update(done, failed, running, outcome)`` is called after each
        one, in the order they finish: ``done`` counts the finished inputs
        (failed ones too), ``failed`` those failed, ``running`` those not
        finished yet (converting or waiting for a worker).

    Raises:
        NsysDuckError: Dask is not installed (``pip install
            'nsys-duck[dask]'``), the scheduler cannot be reached, or
            ``jobs`` workers would leave less memory each than a
            conversion with ``opts.memory_limit`` needs. A failing input
            is a ``'failed'`` outcome, not an exception.
        ValueError: ``jobs`` < 1.
        KeyboardInterrupt: Ctrl-C; tasks not started are cancelled and a
            local cluster is stopped (its conversions publish nothing).
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    opts = _absolute_options(opts or Options())
    given = [os.fspath(p) for p in paths]
    absolute = [os.path.abspath(os.path.expanduser(p)) for p in given]
    if output_dirs is None:
        per_input = [opts] * len(given)
    else:
        if len(output_dirs) != len(given):
            raise ValueError("output_dirs must have one entry per path")
        per_input = [
            opts if d is None else _absolute_options(dataclasses.replace(opts, output_dir=Path(d)))
            for d in output_dirs
        ]
    root = Path(root).expanduser().resolve() if root is not None else workspace_root()
    tally = _Tally(len(given), on_update)
    if client is None and scheduler is None and jobs == 1:
        for g, a, o in zip(given, absolute, per_input, strict=True):
            tally.add(_convert_one(g, a, o, root, skip_up_to_date, None))
        return tally.ordered(given)
    todo = []
    for g, a, o in zip(given, absolute, per_input, strict=True):
        ws = convert_mod.up_to_date(a, o, root) if skip_up_to_date else None
        if ws is not None:
            tally.add(_up_to_date_outcome(g, ws, 0.0))
        else:
            todo.append((g, a, o))
    if todo:
        _run_on_dask(todo, opts, root, skip_up_to_date, tally, jobs, scheduler, client)
    return tally.ordered(given)


class _Tally:
    """The outcomes so far, in finishing order, and the ``on_update`` calls."""

    def __init__(self, total: int, on_update: OnUpdate | None) -> None:
        self.total = total
        self.on_update = on_update
        self.outcomes: list[Outcome] = []

    def add(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)
        if self.on_update is not None:
            done = len(self.outcomes)
            failed = sum(o.status == FAILED for o in self.outcomes)
            self.on_update(done, failed, self.total - done, outcome)

    def ordered(self, given: list[str]) -> list[Outcome]:
        """The outcomes in the order of ``given`` (a path given twice has two)."""
        pending: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            pending.setdefault(o.path, []).append(o)
        return [pending[g].pop(0) for g in given]


def _absolute_options(opts: Options) -> Options:
    """``opts`` with its folders (and an ``--nsys`` path) absolute, for a
    worker whose working directory is another."""

    def absolute(p):
        return Path(os.path.abspath(os.path.expanduser(p))) if p is not None else None

    nsys = opts.nsys
    if nsys and os.sep in nsys:
        nsys = os.path.abspath(os.path.expanduser(nsys))
    return dataclasses.replace(
        opts, output_dir=absolute(opts.output_dir), sql_dir=absolute(opts.sql_dir), nsys=nsys
    )


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _trace_of(ws: Workspace, files: list[Path] | None = None) -> Path | None:
    """The trace ``open`` serves (:func:`formats.opened_trace`; of a split
    JSON trace, part 1), among ``files`` when given; None: none."""
    return opened_trace(ws, files)


def _up_to_date_outcome(given: str, ws: Workspace, seconds: float) -> Outcome:
    return Outcome(given, UP_TO_DATE, ws.dir, seconds=seconds, name=ws.name, trace=_trace_of(ws))


def _convert_one(
    given: str,
    path: str,
    opts: Options,
    root: Path,
    skip_up_to_date: bool,
    slots_by_host: dict[str, int] | None,
) -> Outcome:
    """One input, as a task (on a worker) or here: check, convert, report.

    ``slots_by_host`` (on a cluster): tasks that may run at once per host,
    to choose DuckDB's threads (None: leave ``opts.threads``). Never raises
    an Exception: a failure is a ``'failed'`` Outcome (an unexpected error
    too, with its type); KeyboardInterrupt passes.
    """
    t0 = time.perf_counter()
    try:
        if slots_by_host is not None and opts.threads is None:
            opts = dataclasses.replace(opts, threads=_task_threads(slots_by_host))
        if skip_up_to_date:
            ws = convert_mod.up_to_date(path, opts, root)
            if ws is not None:
                return _up_to_date_outcome(given, ws, time.perf_counter() - t0)
        res = convert_mod.convert(path, opts, root=root)
        return Outcome(
            given,
            CONVERTED,
            res.workspace.dir,
            summary=[(str(m), v) for m, v in res.summary],
            base_ns=int(res.base_ns),
            seconds=time.perf_counter() - t0,
            name=res.workspace.name,
            trace=_trace_of(res.workspace, res.files),
        )
    except NsysDuckError as exc:
        message = _one_line(str(exc))
    except Exception as exc:  # a bug: still one outcome; the other inputs go on
        message = _one_line(f"unexpected error: {type(exc).__name__}: {exc}")
    return Outcome(given, FAILED, message=message, seconds=time.perf_counter() - t0)


def _cpus() -> int:
    """Cores this process may use (affinity, and cgroup quotas when Dask knows them)."""
    try:
        from distributed.system import CPU_COUNT

        return max(1, int(CPU_COUNT))
    except ImportError:
        pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def _task_threads(slots_by_host: dict[str, int]) -> int:
    """DuckDB threads for a task on this worker: its host's cores divided by
    the tasks that may run there at once (the host's worker threads, or
    this worker's own when the host joined after submission); at least 1."""
    from distributed import get_worker
    from distributed.comm import get_address_host

    try:
        worker = get_worker()
    except ValueError:  # not in a worker
        return _cpus()
    slots = slots_by_host.get(get_address_host(worker.address)) or getattr(worker, "nthreads", 1)
    return max(1, _cpus() // max(1, int(slots)))


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise NsysDuckError(
            "converting on Dask (--jobs N or --scheduler) needs dask.distributed, "
            "which is not installed: pip install 'nsys-duck[dask]'"
        ) from None
    return distributed


def _run_on_dask(todo, opts, root, skip_up_to_date, tally, jobs, scheduler, client) -> None:
    """Submit one task per (given, absolute, options) input of ``todo`` and collect
    the outcomes into ``tally`` as they finish (see :func:`convert_many`)."""
    distributed = _import_distributed()
    cluster = None
    own = client is None
    futures: dict = {}
    try:
        if client is None and scheduler is not None:
            client = _connect(distributed, scheduler)
        elif client is None:
            # no more workers than inputs to convert (each costs a process start)
            cluster, client = _local_cluster(distributed, min(jobs, len(todo)), opts)
        slots = _slots_by_host(client)
        last: dict[str, object] = {}  # workspace folder -> its latest task
        for given, path, one_opts in todo:
            args = (given, path, one_opts, root, skip_up_to_date, slots)
            folder = _workspace_key(path, one_opts, root)
            if folder in last:  # after the task before it on that workspace
                fut = client.submit(
                    _convert_after, last[folder], *args, key=_task_key(path), pure=False
                )
            else:
                fut = client.submit(_convert_one, *args, key=_task_key(path), pure=False)
            if folder is not None:
                last[folder] = fut
            futures[fut] = given
        for fut in distributed.as_completed(list(futures)):
            try:
                outcome = fut.result()
            except Exception as exc:  # the worker died (KilledWorker), cancelled, ...
                outcome = Outcome(
                    futures[fut],
                    FAILED,
                    message=_one_line(f"the Dask task failed: {type(exc).__name__}: {exc}"),
                )
            tally.add(outcome)
    except BaseException:
        if futures and client is not None:
            try:
                client.cancel(list(futures))  # not started: never starts
            except Exception:
                pass
        raise
    finally:
        if own and client is not None:
            try:
                client.close(timeout=CLOSE_TIMEOUT_S)
            except Exception:
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=CLOSE_TIMEOUT_S)
            except Exception:
                pass


def _convert_after(previous: Outcome, *args) -> Outcome:
    """:func:`_convert_one` once ``previous`` (the task before it on the same
    workspace) has finished: Dask runs it only when that result exists."""
    return _convert_one(*args)


def _workspace_key(path: str, opts: Options, root: Path) -> str | None:
    """The workspace folder ``path`` converts into, as seen here; None when
    this process cannot tell (the task then runs on its own)."""
    try:
        return str(workspace_for(classify_input(path), root, opts.output_dir).dir)
    except (NsysDuckError, OSError):
        return None


def _task_key(path: str) -> str:
    """A unique Dask key naming the report (``convert-NAME-1a2b3c4d``)."""
    name = re.sub(r"[^\w.+-]", "_", Path(path).name)[:80] or "input"
    if name == "parquet":  # an export folder .../NAME/parquet
        name = re.sub(r"[^\w.+-]", "_", Path(path).parent.name)[:80] or name
    return f"convert-{name}-{uuid.uuid4().hex[:8]}"


def _connect(distributed, scheduler):
    """A Client of the running scheduler ``scheduler`` (address or scheduler file)."""
    target = os.fspath(scheduler)
    try:
        if "://" in target or (
            re.fullmatch(r"[\w.\-\[\]:]+:\d+", target) and not os.path.exists(target)
        ):
            return distributed.Client(target, timeout=CONNECT_TIMEOUT_S)
        file = Path(target).expanduser()
        if not file.is_file():
            raise NsysDuckError(
                f"--scheduler {target}: no such scheduler file (give tcp://HOST:PORT "
                "or the JSON file dask scheduler --scheduler-file wrote)"
            )
        return distributed.Client(scheduler_file=str(file), timeout=CONNECT_TIMEOUT_S)
    except NsysDuckError:
        raise
    except Exception as exc:  # OSError, TimeoutError, a malformed scheduler file ...
        reason = _one_line(str(exc))[:300] or type(exc).__name__
        if "://" not in target and Path(target).expanduser().is_file():
            reason = (
                "the file is not a scheduler file (the JSON that dask scheduler "
                f"--scheduler-file writes): {reason}"
            )
        raise NsysDuckError(f"cannot connect to the Dask scheduler {target}: {reason}") from None


def _local_cluster(distributed, jobs: int, opts: Options):
    """A LocalCluster of ``jobs`` one-thread worker processes on 127.0.0.1
    (no dashboard), each allowed total memory / ``jobs``, and its Client."""
    from dask.utils import format_bytes, parse_bytes
    from distributed.system import MEMORY_LIMIT

    per_worker = int(MEMORY_LIMIT // jobs)
    try:
        duckdb_limit = parse_bytes(opts.memory_limit)
    except (ValueError, TypeError):
        duckdb_limit = None  # DuckDB's own syntax (e.g. a percentage): not judged here
    if duckdb_limit:
        need = int(duckdb_limit * DUCKDB_PEAK_FACTOR + WORKER_OVERHEAD_BYTES)
        if per_worker < need:
            raise NsysDuckError(
                f"--jobs {jobs} leaves {format_bytes(per_worker)} of memory per worker, less "
                f"than one conversion with --memory-limit {opts.memory_limit} needs (about "
                f"{format_bytes(need)}); lower --jobs or --memory-limit"
            )
    cluster = distributed.LocalCluster(
        n_workers=jobs,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=None,
        # no dashboard; the HTTP server every scheduler runs (health,
        # metrics) on a free port of 127.0.0.1, not 8787
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        memory_limit=per_worker,
        silence_logs=logging.CRITICAL,  # e.g. a worker's heartbeat as the cluster closes
        preload=[__name__],  # dask_setup: the workers leave Ctrl-C to this process
    )
    client = None
    try:
        client = distributed.Client(cluster)
        client.wait_for_workers(jobs, timeout=WORKERS_TIMEOUT_S)
    except BaseException:
        if client is not None:
            client.close(timeout=CLOSE_TIMEOUT_S)
        cluster.close(timeout=CLOSE_TIMEOUT_S)
        raise
    return cluster, client


def dask_setup(worker) -> None:
    """Dask preload of the local cluster's worker processes: they ignore
    SIGINT, so a Ctrl-C in the terminal (sent to every process of the
    foreground group) reaches only the process that made the cluster,
    which closes it, instead of ending each worker with a traceback."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _slots_by_host(client) -> dict[str, int]:
    """Worker threads per host (tasks that may run there at once), from the
    scheduler; {} when it cannot say (each task then uses its worker's)."""
    from distributed.comm import get_address_host

    try:
        workers = client.scheduler_info()["workers"]
    except Exception:
        return {}
    slots: dict[str, int] = {}
    for address, info in workers.items():
        host = get_address_host(address)
        slots[host] = slots.get(host, 0) + int(info.get("nthreads") or 1)
    return slots
