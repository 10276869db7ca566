"""Every example shipped in examples/ converts as README's `make demo` runs
it (the CLI, on the Parquet export or the SQLite export itself)."""

from __future__ import annotations

import os
import re
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


# --- README's first steps, as a user types them --------------------------------

README = (REPO / "README.md").read_text(encoding="utf-8")
STREAMS = EXAMPLES / "testcuda_streams_events_2026_1" / "testcuda_streams_events_2026_1.sqlite"


def sh_blocks(text: str) -> list[tuple[int, list[str]]]:
    """README's ```sh blocks: (line number of the fence, its lines)."""
    blocks, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line == "```sh":
            end = lines.index("```", i + 1)
            blocks.append((i + 1, lines[i + 1 : end]))
    return blocks


def test_readme_opens_with_a_three_line_quick_start():
    """The first screen of README (before ## Install, within 25 lines) has
    install, convert, open: three commands, in that order."""
    line, block = sh_blocks(README)[0]
    assert line < 25 and line < README.splitlines().index("## Install")
    commands = [c.split("#")[0].strip() for c in block]
    assert len(commands) == 3
    assert "pip install" in commands[0] and ". .venv/bin/activate" in commands[0]
    assert commands[1].startswith("nsys-duck convert ")
    assert commands[2].startswith("nsys-duck open ")


def test_readme_install_puts_nsys_duck_on_path():
    """The install snippet activates the venv it installs into: the later
    examples run a bare `nsys-duck`, which `.venv/bin/pip install .` alone
    leaves off PATH."""
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    (_, block), *_ = sh_blocks(install)
    pip = next(i for i, c in enumerate(block) if ".venv/bin/pip install" in c)
    assert any(c.startswith(". .venv/bin/activate") for c in block[pip + 1 :]), block
    later = [c for _, b in sh_blocks(README.split("## Install", 1)[1]) for c in b]
    assert any(c.startswith("nsys-duck ") for c in later)


def test_readme_not_drawn_example_is_what_a_conversion_prints(tmp_path):
    """README's example of the summary's `table with rows, not drawn:` line
    is one the shipped example's conversion prints (OS runtime calls are
    drawn now: OSRT_API is never in that list)."""
    example = re.search(r"`table with rows, not drawn:\s+(\w+)\s+([\d,]+)`", README)
    assert example is not None
    env = dict(os.environ, NSYS_WORKSPACE_ROOT=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "nsys_duck.cli", "convert", "--no-database", str(STREAMS)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    register_trace(out.stdout.strip().splitlines()[-1])
    listed = dict(re.findall(r"table with rows, not drawn: (\w+)\s+([\d,]+)", out.stdout))
    assert listed.get(example.group(1)) == example.group(2), listed
    assert "OSRT_API" not in listed and "OS runtime calls" in out.stdout
