"""The tags of a SQL file's header that Python reads, each pattern written
once (docs/sql.md, "Header tags: what Python reads of the SQL").

``contract`` reads the tags that say what a view is to Python (``Role``,
``Columns``, ``Python reads``, ``Merge``, ``Merge runs``); ``pipeline``
the ones that change how a file runs (``hook: NAME registers RELATION``,
``Column comments from: REL, ...``); ``checks`` the checks a conversion
leaves out (``In convert: no``). This module imports nothing of the
package, so each of them can read it.
"""

from __future__ import annotations

import re

# -- Role: / Columns: / Python reads: / Merge runs: / Merge: VALUE
CONTRACT_TAG = re.compile(
    r"^--\s*(Role|Columns|Python reads|Merge runs|Merge):\s*(.*?)\s*$", re.IGNORECASE
)
# -- hook: NAME registers RELATION: run the hook NAME right before the
# file's first statement that reads RELATION, which it creates
HOOK = re.compile(r"^--\s*hook:\s*(\w+)(?:\s+registers\s+(\w+))?\s*$", re.MULTILINE)
# -- Column comments from: REL, ...: a column of what the file creates that
# has no COMMENT ON of its own takes the comment of the same-named column of
# the first relation listed that has one (a passed-through column is
# documented once, where it is made)
COLUMN_COMMENTS_FROM = re.compile(r"^--\s*Column comments from:\s*([\w, ]+?)\.?\s*$", re.MULTILINE)
# -- In convert: no: a check view nsys-duck convert does not run (validate does)
NOT_IN_CONVERT = re.compile(r"^--\s*In convert:\s*no\b", re.MULTILINE | re.IGNORECASE)


def hooks(text: str) -> list[tuple[str, str]]:
    """(hook name, relation it registers; '' when the tag names none) of
    every ``-- hook:`` line of ``text``."""
    return HOOK.findall(text)


def comment_sources(text: str) -> list[str]:
    """The relations of the ``-- Column comments from:`` line ([] without one)."""
    m = COLUMN_COMMENTS_FROM.search(text)
    return [s.strip() for s in m.group(1).split(",") if s.strip()] if m else []


def not_in_convert(text: str) -> bool:
    """The file says ``-- In convert: no``."""
    return NOT_IN_CONVERT.search(text) is not None
