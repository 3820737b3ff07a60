"""argparse value types shared by the sub-commands: each turns a flag's text into a value or
raises ``argparse.ArgumentTypeError`` with a one-line message that names what was wrong."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def _integer(text: str, at_least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < at_least:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    return _integer(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    return _integer(text, 0, "a non-negative integer")


def positive_int_list(what: str) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: comma-separated positive integers (``"1,8"`` -> ``(1, 8)``); its
    errors name ``what`` the list holds."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            values = tuple(int(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated integers, got {text!r}"
            ) from None
        if not values or min(values) < 1:
            raise argparse.ArgumentTypeError(f"{what} must be positive, got {text!r}")
        return values

    return parse
