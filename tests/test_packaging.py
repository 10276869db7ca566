"""The built wheel carries every SQL stage (the installed package must find them)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_ships_every_sql_file(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        pytest.skip(f"could not build a wheel here: {out.stderr.strip()[-200:]}")
    wheel = next(tmp_path.glob("nsys_duck-*.whl"))
    shipped = {
        n.removeprefix("nsys_duck/sql/")
        for n in zipfile.ZipFile(wheel).namelist()
        if n.startswith("nsys_duck/sql/") and n.endswith(".sql")
    }
    in_repo = {p.relative_to(REPO / "sql").as_posix() for p in (REPO / "sql").rglob("*.sql")}
    assert shipped == in_repo and len(in_repo) >= 15
    # the licence pyproject.toml names ships with the wheel (issue 13)
    names = zipfile.ZipFile(wheel).namelist()
    licence = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert licence, names
    text = zipfile.ZipFile(wheel).read(licence[0]).decode()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert 'license = "Apache-2.0"' in (REPO / "pyproject.toml").read_text()
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    meta = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Requires-Dist: duckdb>=1.4" in meta and "Requires-Dist: duckdb-cli" in meta
