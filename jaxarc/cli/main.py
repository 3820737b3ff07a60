"""The ``jaxarc`` command line: one sub-command module per topic.

Each module in :data:`SUBCOMMANDS` defines ``register(subparsers)``, which adds one or more
sub-parsers and sets ``func`` (``args -> exit code``) on each. Modules import heavy
libraries (jax, ...) inside their functions so that ``jaxarc --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# module path of every sub-command group, in help order
SUBCOMMANDS: tuple[str, ...] = (
    "jaxarc.cli.data",
    "jaxarc.cli.bench",
    "jaxarc.cli.render",
    "jaxarc.cli.train",
)


class CLIError(Exception):
    """A user error: printed as ``jaxarc: error: ...`` with exit code 2, no traceback."""


def _version() -> str:
    from jaxarc import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxarc", description="JAX-native ARC environments and GRPO training."
    )
    parser.add_argument("--version", action="version", version=f"jaxarc {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_path in SUBCOMMANDS:
        try:
            module = importlib.import_module(module_path)
        except ModuleNotFoundError as err:
            if err.name != module_path:
                raise
            continue  # a sub-command group not written yet
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CLIError as err:
        print(f"jaxarc: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxarc: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
