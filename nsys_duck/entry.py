"""The ``nsys-duck`` command's entry point (pyproject.toml, project.scripts).

Loading the CLI imports click, rich, DuckDB, pyarrow and Jinja, about half a
second; a Ctrl-C in that time used to end in a Python traceback. Here it
ends as every interrupted command does: one line, ``nsys-duck:
interrupted``, exit status 130 (the CLI's handlers are not loaded yet, so
the line is written directly: :func:`console.fail` is among what is still
loading).
"""

from __future__ import annotations

import sys

INTERRUPTED = 130  # the exit status of a command ended by Ctrl-C (SIGINT)


def main() -> None:
    """Run the CLI (:func:`cli.main`); Ctrl-C while it loads exits 130."""
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("nsys-duck: interrupted\n")
        raise SystemExit(INTERRUPTED) from None
    cli_main()
