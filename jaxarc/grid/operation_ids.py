"""Ids and names of the 35 grid operations (see ``docs/operations.md``)."""

from __future__ import annotations

NUM_COLORS = 10
NUM_OPERATIONS = 35

FILL_0 = 0  # 0..9: FILL colour c
FLOOD_0 = 10  # 10..19: FLOOD colour c
MOVE_UP, MOVE_DOWN, MOVE_LEFT, MOVE_RIGHT = 20, 21, 22, 23
ROTATE_CW, ROTATE_CCW = 24, 25
FLIP_LR, FLIP_TB = 26, 27
COPY, PASTE, CUT = 28, 29, 30
CLEAR, COPY_INPUT = 31, 32
RESIZE = 33
SUBMIT = 34

OPERATION_NAMES: tuple[str, ...] = (
    *(f"FILL_{c}" for c in range(NUM_COLORS)),
    *(f"FLOOD_{c}" for c in range(NUM_COLORS)),
    "MOVE_UP",
    "MOVE_DOWN",
    "MOVE_LEFT",
    "MOVE_RIGHT",
    "ROTATE_CW",
    "ROTATE_CCW",
    "FLIP_LR",
    "FLIP_TB",
    "COPY",
    "PASTE",
    "CUT",
    "CLEAR",
    "COPY_INPUT",
    "RESIZE",
    "SUBMIT",
)
assert len(OPERATION_NAMES) == NUM_OPERATIONS


def operation_id(name: str) -> int:
    """Id of an operation from its name (case-insensitive), e.g. ``"flood_3" -> 13``."""
    try:
        return OPERATION_NAMES.index(name.upper())
    except ValueError:
        raise ValueError(
            f"unknown operation {name!r}; known: {', '.join(OPERATION_NAMES)}"
        ) from None
