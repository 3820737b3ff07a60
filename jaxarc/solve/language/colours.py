"""Colour rules: the colour a paint writes, named so that it means the same on every grid.

A colour rule gives one grid one colour. Constant rules (``colour 0`` ... ``colour 9``)
serve colour maps and fixed recolourings; the rules below read the grid, so a task whose
paint colour changes from demonstration to demonstration is still one program:

* ``most frequent content`` / ``least frequent content``: the most / least frequent colour
  other than the background (ties: the lowest colour).

Besides these, a **self** paint writes every colour ``c`` on its rule's colour-``c`` mask
("extend each colour's rays in its own colour"): see :mod:`jaxarc.solve.language.paint`.
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int8

CONSTANT_RULES: tuple[str, ...] = tuple(f"colour {c}" for c in range(10))
GRID_RULES: tuple[str, ...] = ("most frequent content", "least frequent content")
COLOUR_RULES: tuple[str, ...] = (*CONSTANT_RULES, *GRID_RULES)
GRID_RULE_TASKS: dict[str, tuple[str, ...]] = {
    # rule -> ARC-AGI-1 training tasks whose simplest program fills with its colour
    "most frequent content": ("2204b7a8", "445eab21", "5582e5ca"),
    "least frequent content": ("776ffc46", "85c4e7cd", "fcb5c309"),
}


def grid_colours(grid: Int8[np.ndarray, "H W"], bg: int) -> np.ndarray:
    """The colour each rule of :data:`COLOUR_RULES` gives ``grid`` on the background
    ``bg``, ``[len(COLOUR_RULES)]`` int32; ``-1`` where a rule gives none (no content)."""
    grid = np.asarray(grid, np.int8)
    counts = np.bincount(grid.reshape(-1).astype(np.int64), minlength=10)
    content = [c for c in range(10) if counts[c] and c != bg]
    most = max(content, key=lambda c: (counts[c], -c)) if content else -1
    least = min(content, key=lambda c: (counts[c], c)) if content else -1
    return np.asarray([*range(10), most, least], np.int32)
