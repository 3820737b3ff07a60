"""Checks on where a command will write, run before its first piece of work: a path that
cannot be written fails at once, in one line (a :class:`~jaxarc.cli.main.CLIError`, exit
code 2), not after an hour of solving.

A file to write must have a name, must not be a directory, and must be writable where it
is (its own permission if it exists; else the nearest existing directory above it, which
must be a directory and not a file). A directory to write into must be a directory if it
exists. Writability is checked with ``os.access`` and then proven with a real probe: a
temporary file made and removed in the directory that will hold the output (so a read-only
mount or a full quota shows too; as root, permission bits alone stop nothing).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from jaxarc.cli.main import CLIError


def _nearest_existing(path: Path) -> Path:
    """``path`` itself or its nearest ancestor that exists (the current directory at
    worst)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _probe(directory: Path, flag: str, shown: str) -> None:
    """A :class:`CLIError` unless a file can be made (and removed) in ``directory``."""
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CLIError(f"{flag} {shown}: {directory} is not writable")
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".jaxarc-write-probe.")
    except OSError as err:
        raise CLIError(f"{flag} {shown}: cannot write in {directory} ({err.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def _writable_place(directory: Path, flag: str, shown: str) -> None:
    """A :class:`CLIError` unless ``directory`` exists as a writable directory or can be
    made under its nearest existing ancestor."""
    existing = _nearest_existing(directory)
    if not existing.is_dir():
        raise CLIError(f"{flag} {shown}: {existing} is a file, not a directory")
    _probe(existing, flag, shown)


def check_output_file(path: str | os.PathLike, flag: str) -> Path:
    """``path`` as a file to write (see the module docstring); a :class:`CLIError` naming
    ``flag`` when it cannot be."""
    text = os.fspath(path)
    shown = repr(text) if not text.strip() else text
    if not text.strip() or text.endswith(os.sep) or Path(text).name in ("", ".", ".."):
        raise CLIError(f"{flag} {shown}: not a file name")
    file = Path(text)
    if file.is_dir():
        raise CLIError(f"{flag} {shown}: a directory; give a file name")
    if file.exists():
        if not os.access(file, os.W_OK):
            raise CLIError(f"{flag} {shown}: the file is not writable")
        _probe(file.absolute().parent, flag, shown)
    else:
        _writable_place(file.absolute().parent, flag, shown)
    return file


def check_output_dir(path: str | os.PathLike, flag: str) -> Path:
    """``path`` as a directory to write into, made if missing; a :class:`CLIError` naming
    ``flag`` when it is a file or not writable."""
    directory = Path(path)
    shown = os.fspath(path) or "''"
    if directory.exists() and not directory.is_dir():
        raise CLIError(f"{flag} {shown}: a file, not a directory")
    _writable_place(directory, flag, shown)
    return directory
