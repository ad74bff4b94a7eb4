"""The one error a stage raises for bad input: the CLI prints its message and exits 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input (an option, a path, a database, a judge): said plainly, exit status 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
