"""What the commands print besides their results: the one-line failures and
the progress line on stderr, and the quiet end of a closed pipe.

Every expected failure is one line, ``nsys-duck: PATH: message``
(:func:`fail`); the progress line (:func:`progress_bar`) shows only when
stderr is a terminal.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

err = Console(stderr=True)


def shown(path: str) -> str:
    """``path`` as typed, with control characters made visible (one line)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


def fail(path: str | None, message: str) -> None:
    """The one stderr line of a failure: ``nsys-duck: PATH: message``
    (``nsys-duck: message`` when ``path`` is None)."""
    line = " ".join(message.split())
    prefix = f"nsys-duck: {shown(path)}: " if path is not None else "nsys-duck: "
    err.print(prefix + line, markup=False, highlight=False, soft_wrap=True)


def progress_bar(**extra) -> Progress:
    """The progress line on stderr (a spinner, the stage, a bar, the time);
    nothing when stderr is not a terminal. ``extra``: more of rich's
    Progress options."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
        **extra,
    )


def silence_stdout() -> None:
    """After the reader of standard output left (``| head``): send the rest
    to /dev/null, so nothing more is written and Python's exit raises no
    BrokenPipeError."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
