"""Every example shipped in examples/ converts as README's `make demo` runs
it (the CLI, on the Parquet export or the SQLite export itself)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO, register_trace

EXAMPLES = REPO / "examples"
INPUTS = sorted(
    [p for p in EXAMPLES.glob("*/parquet") if p.is_dir()] + list(EXAMPLES.glob("*/*.sqlite"))
)


def test_examples_exist():
    assert any(p.suffix == ".sqlite" for p in INPUTS), "an SQLite example is shipped"
    assert len(INPUTS) >= 4


@pytest.mark.parametrize(
    "path", INPUTS, ids=[p.parent.name if p.name == "parquet" else p.stem for p in INPUTS]
)
def test_example_converts(tmp_path, path):
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "convert", str(path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "validated: no violations" in out.stdout
    last = out.stdout.strip().splitlines()[-1]
    assert last.endswith(".perfetto.json.gz") and os.path.isabs(last)
    register_trace(last)
