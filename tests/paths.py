"""Where the tests find the team's shared data and tools: one place.

``$NSYS_DUCK_SHARED`` (the team's ``shared/`` folder), else the folder two
levels above ``$NSYS_DUCK_REPORTS`` (``shared/data/reports``), else
``shared/`` beside the clone. The dev reports, the newer SQLite exports and
Perfetto's importer are then found inside it; ``$NSYS_DUCK_REPORTS``,
``$NSYS_DUCK_NEWER`` and ``$NSYS_DUCK_TRACE_PROCESSOR`` override each one.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _shared() -> Path:
    if os.environ.get("NSYS_DUCK_SHARED"):
        return Path(os.environ["NSYS_DUCK_SHARED"])
    if os.environ.get("NSYS_DUCK_REPORTS"):
        return Path(os.environ["NSYS_DUCK_REPORTS"]).parent.parent
    return REPO.parent / "shared"


SHARED = _shared()
REPORTS = Path(os.environ.get("NSYS_DUCK_REPORTS") or SHARED / "data" / "reports")
NEWER = Path(os.environ.get("NSYS_DUCK_NEWER") or SHARED / "data" / "newer")
TRACE_PROCESSOR = SHARED / "tools" / "perfetto" / "trace_processor_shell"
