"""The ``jaxarc`` command line: one sub-command module per topic.

Each module in :data:`SUBCOMMANDS` defines ``register(subparsers)``, which adds one or more
sub-parsers and sets ``func`` (``args -> exit code``) on each. Modules import heavy
libraries (jax, ...) inside their functions so that ``jaxarc --help`` stays fast.

Errors are one line on stderr and a non-zero exit code, never a traceback:

* a bad argument (argparse): ``jaxarc train: error: <what> (see `jaxarc train --help`)``,
  exit code 2 (raised as ``SystemExit(2)``, as argparse does; no usage lines);
* a user error found while running (:class:`CLIError`, a bad task file, a missing file):
  ``jaxarc: error: <what>``, exit code 2;
* anything else (a bug): ``jaxarc: internal error: <type>: <message>``, exit code 1; set
  ``JAXARC_TRACEBACK=1`` to see the traceback instead.

Warnings are one line too (``jaxarc: warning: <what>``), and output piped into a program
that stops reading (``jaxarc render ... --format ansi | head``) ends the command quietly,
as Unix tools do (exit code 141, 128 + SIGPIPE, with nothing on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings

# module path of every sub-command group, in help order
SUBCOMMANDS: tuple[str, ...] = (
    "jaxarc.cli.data",
    "jaxarc.cli.bench",
    "jaxarc.cli.render",
    "jaxarc.cli.train",
    "jaxarc.cli.evaluate",
    "jaxarc.cli.solve",
    "jaxarc.cli.pretrain",
)


class CLIError(Exception):
    """A user error: printed as ``jaxarc: error: ...`` with exit code 2, no traceback."""


def _version() -> str:
    from jaxarc import __version__

    return __version__


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block) ending in a --help hint."""

    def error(self, message: str) -> None:  # type: ignore[override]
        message = " ".join(message.split())  # argparse messages may hold newlines
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


# errors that mean "the input is wrong", reported as user errors when a command raises them
_USER_ERRORS = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def _one_line(err: BaseException) -> str:
    text = str(err).strip()
    lines = text.splitlines()
    return lines[0] + (f" (and {len(lines) - 1} more lines)" if len(lines) > 1 else "")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` for the command line: one line, no source line."""
    print(f"jaxarc: warning: {_one_line(message)}", file=sys.stderr if file is None else file)


def _quiet_broken_pipe() -> int:
    """Exit code 141 after the reader of stdout went away, with nothing more written (the
    interpreter's final flush of stdout would raise again: stdout now goes nowhere)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 141


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="jaxarc", description="JAX-native ARC environments and GRPO training."
    )
    parser.add_argument("--version", action="version", version=f"jaxarc {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_path in SUBCOMMANDS:
        importlib.import_module(module_path).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from jaxarc.data.errors import TaskFormatError

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # (a reader that went away shows here, not at interpreter exit)
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except (CLIError, TaskFormatError, *_USER_ERRORS) as err:
        print(f"jaxarc: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxarc: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if os.environ.get("JAXARC_TRACEBACK"):
            raise
        print(
            f"jaxarc: internal error: {type(err).__name__}: {_one_line(err)} "
            "(set JAXARC_TRACEBACK=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
