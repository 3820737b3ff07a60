"""Command-line interface (``jaxarc``)."""

from jaxarc.cli.main import CLIError, main

__all__ = ["CLIError", "main"]
