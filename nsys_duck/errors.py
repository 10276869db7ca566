"""Errors the CLI turns into one clear sentence (never a traceback)."""


class NsysDuckError(Exception):
    """A failure the user can act on; ``str(err)`` is the one-line message."""


class InputError(NsysDuckError):
    """The input path is missing, unreadable or not a report/export."""


class ExportDataError(InputError):
    """A table of the Parquet export is damaged or lacks a column the SQL needs."""


class NsysNotFoundError(NsysDuckError):
    """No nsys CLI could be found (message lists where we looked)."""


class ExportError(NsysDuckError):
    """``nsys export`` failed (message carries nsys's own reason)."""


class SqlStageError(NsysDuckError):
    """A SQL file failed: message names the file, the view and the problem."""


class NoEventsError(NsysDuckError):
    """No table of the export yields any trace event."""


class WorkspaceError(NsysDuckError):
    """The workspace folder cannot be created, locked or written (disk full...)."""


class ValidationFailed(NsysDuckError):
    """The written trace broke the contract validator; nothing was published."""
