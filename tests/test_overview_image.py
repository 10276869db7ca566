"""The README's overview image: docs/render_overview.py still draws it from a
shipped example (when matplotlib is installed), and the committed
docs/overview.png is a PNG of the size the script makes, small enough to commit."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from conftest import REPO, register_trace

SCRIPT = REPO / "docs" / "render_overview.py"
EXAMPLE = "testcuda_streams_events_2026_1"  # the script's default input
SIZE = (1000, 560)  # width, height in pixels (the script's)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk (the first chunk)."""
    assert data[:8] == PNG_MAGIC, "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_render_overview_script(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.image
    import numpy as np

    out = tmp_path / "x.png"
    ws = tmp_path / "workspace"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "--workspace", str(ws)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    register_trace(ws / EXAMPLE / f"{EXAMPLE}.perfetto.json.gz")

    data = out.read_bytes()
    assert png_size(data) == SIZE
    pixels = matplotlib.image.imread(out)
    assert pixels.shape[:2] == (SIZE[1], SIZE[0])
    rgb = pixels[..., :3]
    assert (rgb < 0.9).any(axis=-1).mean() > 0.05, "the timeline was drawn (not a blank image)"
    # memcpy slices (green, #2c9c3c) are drawn
    assert (np.abs(rgb - np.array([0x2C, 0x9C, 0x3C]) / 255).max(axis=-1) < 0.02).sum() > 500


def test_committed_overview_image():
    data = (REPO / "docs" / "overview.png").read_bytes()
    assert png_size(data) == SIZE
    assert len(data) < 300_000, "commit-sized"


def test_readme_caption_says_how_the_figure_was_converted():
    """The caption under the image says what the figure leaves out: the
    script converts without the CPU-side tracks (its CPU_SIDE_OFF flags), so
    the picture is not everything Perfetto shows for a default conversion."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_overview", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    caption = readme.split("](docs/overview.png)", 1)[1].split("\n\n", 2)[1]
    assert caption.startswith(f"*`examples/{EXAMPLE}`")
    assert f"(`{' '.join(module.CPU_SIDE_OFF)}`)" in " ".join(caption.split())
