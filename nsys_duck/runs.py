"""A run on a workspace (a conversion or a merge): its lock, and how Ctrl-C,
SIGTERM and SIGHUP end it.

One run at a time holds a workspace (``.nsys-duck.lock``, a filelock); a
Ctrl-C during the SQL ends the run as interrupted (exit 130) even when
DuckDB reported it as its own error; publishing (a few renames) defers the
signals so the outputs appear whole or not at all.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from filelock import FileLock, Timeout

from .errors import WorkspaceError
from .workspace import Workspace


class InterruptWatch:
    """Remember a Ctrl-C (SIGINT) that arrived during a run.

    DuckDB answers SIGINT by cancelling the running query and raising its
    own error ("Query interrupted"), and the validator reports such errors
    as findings; this records that the user asked to stop, so the run ends
    as interrupted (exit 130), not as a failure. Only installed in the main
    thread and only over Python's default SIGINT handler.
    """

    def __init__(self) -> None:
        self.hit = False
        self._old = None

    def __enter__(self) -> InterruptWatch:
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum, frame) -> None:
        self.hit = True
        raise KeyboardInterrupt

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def stop_if_hit(self) -> None:
        """Raise KeyboardInterrupt when a Ctrl-C arrived (a step that ran to
        its end without noticing it, e.g. the validator)."""
        if self.hit:
            raise KeyboardInterrupt


@contextmanager
def locked_run(ws: Workspace, busy: str) -> Iterator[InterruptWatch]:
    """Hold the workspace's lock and watch for Ctrl-C while the body runs.

    ``busy``: the sentence's middle when another run holds the lock, e.g.
    "conversion of NAME is running" ("another nsys-duck {busy} (lock PATH);
    wait for it to finish"). Any exception of the body after a Ctrl-C is
    raised as KeyboardInterrupt (DuckDB turns Ctrl-C into its own errors).

    Raises:
        WorkspaceError: the lock is held by another run, or cannot be taken.
    """
    lock = FileLock(str(ws.lock), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise WorkspaceError(
            f"another nsys-duck {busy} (lock {ws.lock}); wait for it to finish"
        ) from None
    except OSError as exc:
        raise WorkspaceError(
            f"cannot lock the workspace folder {ws.dir}: {exc.strerror or exc}"
        ) from None
    try:
        with InterruptWatch() as watch:
            try:
                yield watch
            except Exception:
                if watch.hit:
                    raise KeyboardInterrupt from None
                raise
    finally:
        lock.release()


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Publishing (a few renames): Ctrl-C, SIGTERM and SIGHUP wait until it
    is done, so the outputs are published whole or not at all; one that
    arrived meanwhile is then taken as arriving after the run finished (it
    is published, and the run ends as it would have). The handlers in place
    before are restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []
    wanted = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = {sig: signal.signal(sig, lambda signum, frame: seen.append(signum)) for sig in wanted}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
