"""The static sizes a task is padded to before it is compiled, shared by the search
(:mod:`jaxarc.solve.search`) and the program learner (:mod:`jaxarc.solve.program_rl`).

A compiled program has static shapes, so a task's canvas side, its number of grids and its
vocabulary are rounded up to one of a few **buckets**: tasks of one bucket share one compiled
program. :func:`bucket` is the one rounding rule: the smallest bucket that holds the value,
and past the last bucket the next power of two (at most twice the value, and few distinct
sizes however large the values get).
"""

from __future__ import annotations

from jaxarc.solve.problem import MAX_SIDE

CANVAS_SIDES = (10, 20, 30)  # a task plays on the smallest that holds its grids


def bucket(value: int, buckets: tuple[int, ...]) -> int:
    """The smallest of ``buckets`` (ascending) that is at least ``value``; past the last, the
    smallest power of two that is at least ``value``."""
    if value < 1:
        raise ValueError(f"bucket: value {value}; expected at least 1")
    found = next((b for b in buckets if b >= value), None)
    return found if found is not None else 1 << (value - 1).bit_length()


def canvas_side(largest: int) -> int:
    """The side of :data:`CANVAS_SIDES` a task whose largest grid (or made grid) has side
    ``largest`` plays on (ARC grids are at most :data:`~jaxarc.solve.problem.MAX_SIDE`)."""
    return bucket(min(largest, MAX_SIDE), CANVAS_SIDES)
