"""Flat Gymnasium spaces for off-the-shelf agents (Stable-Baselines3, SBX, CleanRL).

SB3 and SBX refuse ``Dict`` action spaces and want one observation array for an MLP. A
:class:`FlatCodec` turns the structured spaces into

* actions: ``Discrete(K*H*W)`` (``"discrete"``: index ``a`` is operation
  ``operations[a // (H*W)]`` at cell ``(a % (H*W)) // W, a % W``) or
  ``MultiDiscrete([K, H, W])`` (``"multi_discrete"``), over the ``K`` *allowed* operations
  only (point selections);
* observations: one ``float32`` ``Box`` vector, the chosen fields raveled and concatenated,
  with per-element bounds.

It works on NumPy arrays with or without a leading batch axis, so the single and the vector
environments share it. The layout matches :func:`jaxarc.make_flat`'s on the gymnax face.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from gymnasium import spaces

from jaxarc.envs.arguments import check_flag, check_names
from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.integers import check_integers

ACTION_FORMATS: tuple[str, ...] = ("dict", "discrete", "multi_discrete")
FLAT_FIELDS: tuple[str, ...] = ("grid", "input_grid")  # the default of ``flat=True``


def flat_options(
    flat: bool, action_format: str | None, fields: Sequence[str] | None
) -> tuple[str, tuple[str, ...] | None]:
    """``(action_format, fields)`` of the adapters' options (``flat=True``: discrete + grids).

    ``flat`` must be a bool; ``fields`` one field name or a list of distinct names."""
    flat = check_flag(flat, "flat")
    if fields is not None:
        fields = check_names(fields, "fields")
    if action_format is None:
        action_format = "discrete" if flat else "dict"
    if fields is None and flat:
        fields = FLAT_FIELDS
    if action_format not in ACTION_FORMATS:
        raise ValueError(f"action_format must be one of {ACTION_FORMATS}, got {action_format!r}")
    return action_format, None if fields is None else tuple(fields)


@dataclasses.dataclass(frozen=True)
class FlatCodec:
    """Converts between the structured Gymnasium spaces and the flat ones."""

    action_format: str
    fields: tuple[str, ...] | None
    operations: tuple[int, ...]
    canvas_shape: tuple[int, int]

    @classmethod
    def create(
        cls, config: JaxArcConfig, action_format: str = "dict", fields: Sequence[str] | None = None
    ) -> FlatCodec:
        if action_format not in ACTION_FORMATS:
            raise ValueError(
                f"action_format must be one of {ACTION_FORMATS}, got {action_format!r}"
            )
        if action_format != "dict" and config.action.selection_format != "point":
            raise ValueError(
                f"action_format={action_format!r} uses point actions; the environment uses "
                f"selection_format={config.action.selection_format!r}"
            )
        if fields is not None:
            fields = check_names(fields, "fields")
        operations = config.action.allowed_ids
        fields = None if fields is None else tuple(fields)
        return cls(action_format, fields, operations, tuple(config.dataset.canvas_shape))

    # -- actions ---------------------------------------------------------------------------
    def action_space(self, structured: spaces.Dict) -> spaces.Space:
        height, width = self.canvas_shape
        if self.action_format == "discrete":
            return spaces.Discrete(len(self.operations) * height * width)
        if self.action_format == "multi_discrete":
            return spaces.MultiDiscrete([len(self.operations), height, width])
        return structured

    def to_structured(self, action, batch: int | None = None):
        """A flat action (or a batch of ``batch``) as the structured action dict the adapters
        take, by the rule of docs/environment.md: integers only (a ``TypeError`` names the
        action otherwise), the shape of the space (one action, or ``batch`` of them), and
        every part inside the space (a ``ValueError`` names the space otherwise)."""
        if self.action_format == "dict":
            return action
        height, width = self.canvas_shape
        action = np.asarray(check_integers(action, "action"), dtype=np.int64)
        lead = () if batch is None else (batch,)
        space = self.space_text()
        if self.action_format == "discrete":
            if action.shape != lead:
                raise ValueError(_shape_message(space, batch, lead, action.shape))
            outside = (action < 0) | (action >= len(self.operations) * height * width)
            slot, cell = np.divmod(action, height * width)
            row, col = np.divmod(cell, width)
        else:
            if action.shape != (*lead, 3):
                raise ValueError(_shape_message(space, batch, (*lead, 3), action.shape))
            slot, row, col = action[..., 0], action[..., 1], action[..., 2]
            outside = (action < 0).any(-1) | (action >= np.asarray(self.nvec)).any(-1)
        if np.any(outside):
            raise ValueError(f"action {action[outside][0].tolist()} is outside {space}")
        table = np.asarray(self.operations, dtype=np.int64)
        return {"operation": table[slot], "row": row, "col": col}

    @property
    def nvec(self) -> tuple[int, int, int]:
        """``(K, H, W)``: the sizes of a ``multi_discrete`` action's parts."""
        return (len(self.operations), *self.canvas_shape)

    def space_text(self) -> str:
        """The flat action space as Gymnasium prints it (for messages)."""
        if self.action_format == "discrete":
            return f"Discrete({int(np.prod(self.nvec))})"
        return f"MultiDiscrete({list(self.nvec)})"

    def index(self, operation: int, row: int, col: int) -> int:
        """The ``"discrete"`` index of an allowed operation at ``(row, col)``."""
        height, width = self.canvas_shape
        return (self.operations.index(operation) * height + row) * width + col

    # -- observations ----------------------------------------------------------------------
    def observation_space(self, structured: spaces.Dict) -> spaces.Space:
        if self.fields is None:
            return structured
        unknown = [f for f in self.fields if f not in structured.spaces]
        if unknown:
            raise ValueError(f"unknown observation field(s) {unknown}; known: {list(structured)}")
        lows, highs = [], []
        for name in self.fields:
            low, high = _bounds(structured[name])
            lows.append(low.ravel())
            highs.append(high.ravel())
        low, high = np.concatenate(lows), np.concatenate(highs)
        return spaces.Box(low, high, low.shape, np.float32)

    def observation(self, obs: dict[str, np.ndarray], batch: int | None = None):
        """The observation dict (of one env, or of ``batch`` envs) as the flat vector(s)."""
        if self.fields is None:
            return obs
        lead = () if batch is None else (batch,)
        parts = [np.asarray(obs[f], np.float32).reshape(*lead, -1) for f in self.fields]
        return np.concatenate(parts, axis=-1)


def _shape_message(space: str, batch: int | None, expected: tuple, got: tuple) -> str:
    if batch is None:
        return f"an action of {space} has shape {expected}, got shape {got}"
    return f"the actions of {batch} environments in {space} have shape {expected}, got {got}"


def _bounds(space: spaces.Space) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(space, spaces.Box):
        return space.low.astype(np.float32), space.high.astype(np.float32)
    if isinstance(space, spaces.MultiBinary):
        shape = tuple(np.atleast_1d(space.n))
        return np.zeros(shape, np.float32), np.ones(shape, np.float32)
    raise TypeError(f"cannot flatten a {type(space).__name__} observation field")
