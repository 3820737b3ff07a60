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

from jaxarc.envs.config import JaxArcConfig

ACTION_FORMATS: tuple[str, ...] = ("dict", "discrete", "multi_discrete")
FLAT_FIELDS: tuple[str, ...] = ("grid", "input_grid")  # the default of ``flat=True``


def flat_options(
    flat: bool, action_format: str | None, fields: Sequence[str] | None
) -> tuple[str, tuple[str, ...] | None]:
    """``(action_format, fields)`` of the adapters' options (``flat=True``: discrete + grids)."""
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
        if fields is not None and not fields:
            raise ValueError("fields must name at least one observation field")
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

    def to_structured(self, action):
        """A flat action (or batch) as the structured action dict the adapters take."""
        if self.action_format == "dict":
            return action
        height, width = self.canvas_shape
        action = np.asarray(action, dtype=np.int64)
        if self.action_format == "discrete":
            slot, cell = np.divmod(action, height * width)
            row, col = np.divmod(cell, width)
        else:
            if action.shape[-1:] != (3,):
                raise ValueError(f"a multi_discrete action has 3 parts, got shape {action.shape}")
            slot, row, col = action[..., 0], action[..., 1], action[..., 2]
        bad = (slot < 0) | (slot >= len(self.operations))
        if np.any(bad):
            raise ValueError(f"action outside the flat action space: {np.asarray(action)[bad]}")
        table = np.asarray(self.operations, dtype=np.int64)
        return {"operation": table[slot], "row": row, "col": col}

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


def _bounds(space: spaces.Space) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(space, spaces.Box):
        return space.low.astype(np.float32), space.high.astype(np.float32)
    if isinstance(space, spaces.MultiBinary):
        shape = tuple(np.atleast_1d(space.n))
        return np.zeros(shape, np.float32), np.ones(shape, np.float32)
    raise TypeError(f"cannot flatten a {type(space).__name__} observation field")
