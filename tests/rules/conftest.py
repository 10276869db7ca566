"""The rule tier (``make test-fast``): every test under tests/rules/ is marked
``rules``; they run single views on a few given rows (sql_rules.py) and need
neither the dev reports, nsys nor Perfetto."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.rules)
