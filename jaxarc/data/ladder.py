"""The difficulty ladder: task sources ordered from "a generic PPO learns it in minutes" to ARC.

CartPole tells a control researcher whether their agent works before they try a hard task;
the ladder plays that role here. Its first rungs are generated sources (``gen/ladder-1`` ...,
made inside ``jit`` like every ``gen/...`` source); the higher rungs are existing names.
Each :class:`Rung` also fixes what a generic agent (an MLP over the flat observation, a flat
``Discrete`` action) should be given: the operations, the observation fields and the episode
length, the options of ``jaxarc.make_flat(rung.name, **rung.make_options())``.

=================  ======  =========================================================  ======
rung               canvas  task                                                       optimum
=================  ======  =========================================================  ======
``gen/ladder-1``   4x4     one cell (colour 2..9) becomes colour 1 (fixed rule)        2
``gen/ladder-2``   4x4     one cell becomes colour 1 or 2, as the demos show           2
``gen/ladder-3``   4x4     one cell becomes the task's colour (1..9), as the demos     2
``gen/ladder-4``   5x5     ``recolour``: two objects a -> b, a distractor stays        3
``gen/recolour``   8x8     the same family on the usual canvas, grids 5..8 a side     3
``gen/easy``       8x8     four flood families mixed (recolour, erase, fills)         3
``gen/medium``     8x8     gen/easy and four geometric families (bbox actions)        2-3
``ARC-AGI-1``      30x30   the ARC-AGI-1 training tasks                                -
=================  ======  =========================================================  ======

The rungs are described in docs/ladder.md. Baselines per rung (uniform random,
``examples/purejaxrl_ppo.py``, the GRPO agent) are in docs/results.md ("Learning on the
ladder"), from the report ``benchmarks/ladder.py`` writes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from jaxarc.grid.operation_ids import operation_id

FLOODS = tuple(f"FLOOD_{c}" for c in range(10))
FILLS = tuple(f"FILL_{c}" for c in range(10))
FLOAT_FIELDS = ("grid", "input_grid")
WITH_DEMOS = ("grid", "input_grid", "demo_inputs", "demo_outputs")


@dataclasses.dataclass(frozen=True)
class Rung:
    """One rung: a registered name and what a generic agent is given on it.

    Attributes:
        name: a ``jaxarc.make`` name (``gen/ladder-1``, ..., ``ARC-AGI-1``).
        operations: the allowed operations (names); the flat action is ``Discrete(K*H*W)``.
        fields: the observation fields a flat agent sees.
        max_episode_steps: the episode length (at least the optimum plus slack).
        selection_format: what the rung needs; the flat point action of generic agents
            cannot express the rectangles of ``bbox`` rungs (gen/medium's geometric half).
        summary: one line for tables.
    """

    name: str
    operations: tuple[str, ...]
    fields: tuple[str, ...]
    max_episode_steps: int
    selection_format: Literal["point", "bbox"] = "point"
    summary: str = ""

    def __post_init__(self) -> None:
        for op in self.operations:
            operation_id(op)  # an unknown name is an error here, not at make time

    def make_options(self, **overrides: Any) -> dict[str, Any]:
        """``jaxarc.make_flat`` options of this rung (point actions; ``overrides`` on top)."""
        options = {
            "allowed_operations": list(self.operations),
            "fields": self.fields,
            "max_episode_steps": self.max_episode_steps,
        }
        return {**options, **overrides}


LADDER: tuple[Rung, ...] = (
    Rung(
        "gen/ladder-1",
        ("FILL_1", "SUBMIT"),
        FLOAT_FIELDS,
        4,
        summary="4x4, one cell becomes colour 1 (fixed rule)",
    ),
    Rung(
        "gen/ladder-2",
        ("FILL_1", "FILL_2", "SUBMIT"),
        WITH_DEMOS,
        4,
        summary="4x4, one cell becomes colour 1 or 2, as the demonstrations show",
    ),
    Rung(
        "gen/ladder-3",
        (*FILLS[1:], "SUBMIT"),
        WITH_DEMOS,
        4,
        summary="4x4, one cell becomes the colour (1..9) the demonstrations show",
    ),
    Rung(
        "gen/ladder-4",
        (*FLOODS[1:], "SUBMIT"),
        WITH_DEMOS,
        6,
        summary="5x5 recolour: two objects a -> b (from the demos), a distractor stays",
    ),
    Rung(
        "gen/recolour",
        (*FLOODS[1:], "SUBMIT"),
        WITH_DEMOS,
        6,
        summary="8x8 recolour (grids 5..8 a side)",
    ),
    Rung(
        "gen/easy",
        (*FLOODS, "SUBMIT"),
        WITH_DEMOS,
        6,
        summary="8x8, four flood families (recolour, erase, fill background, fill holes)",
    ),
    Rung(
        "gen/medium",
        (*FLOODS, "FLIP_LR", "FLIP_TB", "ROTATE_CW", "ROTATE_CCW", "MOVE_UP", "MOVE_DOWN")
        + ("MOVE_LEFT", "MOVE_RIGHT", "SUBMIT"),
        WITH_DEMOS,
        6,
        selection_format="bbox",
        summary="8x8, gen/easy and rot180/move/flip/rotate (these need bbox actions)",
    ),
    Rung(
        "ARC-AGI-1",
        (*FLOODS, "SUBMIT"),
        FLOAT_FIELDS,
        10,
        selection_format="bbox",
        summary="the 400 ARC-AGI-1 training tasks, 30x30 canvas",
    ),
)
"""The rungs, easiest first."""

RUNGS: dict[str, Rung] = {r.name: r for r in LADDER}


def rung(name: str) -> Rung:
    """The rung called ``name`` (a ``jaxarc.make`` name listed in :data:`LADDER`)."""
    if name not in RUNGS:
        raise ValueError(f"{name!r} is not a ladder rung; rungs: {', '.join(RUNGS)}")
    return RUNGS[name]
