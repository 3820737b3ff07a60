"""Gymnasium spaces for ARC observations and actions, and NumPy <-> JAX conversions.

Observations become a ``Dict`` of ``Box`` (grids, shapes, step count) and ``MultiBinary``
(boolean masks, delivered as ``int8`` 0/1 arrays). Actions are a ``Dict`` with an
``operation`` (``Discrete(35)``) and, per selection format, ``row``/``col`` (point),
``r1``/``c1``/``r2``/``c2`` (bbox; corners in any order, inclusive) as ``Discrete`` or a
``selection`` (mask) as ``MultiBinary([H, W])``.
"""

from __future__ import annotations

from collections.abc import Mapping

import jax.numpy as jnp
import numpy as np
from gymnasium import spaces

from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.integers import check_integers, check_mask
from jaxarc.envs.structured_actions import AbstractAction, BboxAction, MaskAction, PointAction
from jaxarc.envs.types import CONTEXT_FIELDS, OBSERVATION_FIELDS
from jaxarc.grid.operation_ids import NUM_OPERATIONS

# ArcObservation fields that are boolean masks (delivered as int8 0/1)
MASK_FIELDS: tuple[str, ...] = ("demo_mask", "clipboard_mask", "allowed_operations")
ACTION_KEYS: dict[str, tuple[str, ...]] = {
    "point": ("operation", "row", "col"),
    "bbox": ("operation", "r1", "c1", "r2", "c2"),
    "mask": ("operation", "selection"),
}


def observation_space(config: JaxArcConfig, max_demos: int) -> spaces.Dict:
    """The observation space of one environment (``max_demos`` = the source's ``P``)."""
    height, width = config.dataset.canvas_shape
    side = max(height, width)

    def grid(*lead: int) -> spaces.Box:
        return spaces.Box(-1, 9, (*lead, height, width), np.int8)

    def shape(*lead: int) -> spaces.Box:
        return spaces.Box(0, side, (*lead, 2), np.int32)

    parts = {
        "grid": grid(),
        "grid_shape": shape(),
        "input_grid": grid(),
        "input_shape": shape(),
        "demo_inputs": grid(max_demos),
        "demo_outputs": grid(max_demos),
        "demo_input_shapes": shape(max_demos),
        "demo_output_shapes": shape(max_demos),
        "demo_mask": spaces.MultiBinary(max_demos),
        "clipboard": grid(),
        "clipboard_mask": spaces.MultiBinary([height, width]),
        "allowed_operations": spaces.MultiBinary(NUM_OPERATIONS),
        # shape (1,), not (): SB3's check_env cannot take a 0-d Box
        "step_count": spaces.Box(0, config.environment.max_episode_steps, (1,), np.int32),
    }
    if config.environment.episode_context == "at_reset":  # constants come in info instead
        parts = {k: v for k, v in parts.items() if k not in CONTEXT_FIELDS}
    return spaces.Dict(parts)


def context_to_numpy(context) -> dict[str, np.ndarray]:
    """An :class:`~jaxarc.envs.types.EpisodeContext` (host arrays) as a dict of NumPy arrays
    (``demo_mask`` as ``int8``, as in observations)."""
    out = {}
    for name in CONTEXT_FIELDS:
        value = np.asarray(getattr(context, name))
        out[name] = value.astype(np.int8) if name in MASK_FIELDS else value
    return out


def action_space(config: JaxArcConfig) -> spaces.Dict:
    """The action space of one environment for the config's selection format."""
    height, width = config.dataset.canvas_shape
    fmt = config.action.selection_format
    parts: dict[str, spaces.Space] = {"operation": spaces.Discrete(NUM_OPERATIONS)}
    if fmt == "point":
        parts |= {"row": spaces.Discrete(height), "col": spaces.Discrete(width)}
    elif fmt == "bbox":
        parts |= {
            k: spaces.Discrete(height if k[0] == "r" else width) for k in ("r1", "c1", "r2", "c2")
        }
    else:
        parts["selection"] = spaces.MultiBinary([height, width])
    return spaces.Dict(parts)


def observation_to_numpy(obs) -> dict[str, np.ndarray]:
    """An :class:`~jaxarc.envs.types.ArcObservation` (one or batched) as a dict of NumPy arrays.

    Masks become ``int8``; everything else keeps its dtype. Call on host arrays (after
    ``jax.device_get``) to avoid one transfer per field.
    """
    out = {}
    for name in OBSERVATION_FIELDS:
        value = getattr(obs, name)
        if value is None:  # an episode constant left out (episode_context="at_reset")
            continue
        value = np.asarray(value)
        if name == "step_count":  # [] or [B] -> [1] or [B, 1], as in the space
            value = value[..., None]
        out[name] = value.astype(np.int8) if name in MASK_FIELDS else value
    return out


def action_from_gymnasium(action: Mapping, config: JaxArcConfig) -> AbstractAction:
    """A Gymnasium action dict (one or batched) as the config's structured action.

    ``ValueError`` names missing keys or a selection of the wrong shape; values follow the
    rule for integers and masks of docs/environment.md.
    """
    fmt = config.action.selection_format
    if not isinstance(action, Mapping):
        raise ValueError(
            f"a {fmt} action must be a dict with keys {ACTION_KEYS[fmt]}, "
            f"got {type(action).__name__}"
        )
    missing = [k for k in ACTION_KEYS[fmt] if k not in action]
    if missing:
        raise ValueError(f"{fmt} action is missing key(s) {missing}; expected {ACTION_KEYS[fmt]}")

    def ints(key: str):
        return jnp.asarray(check_integers(action[key], f"action[{key!r}]"), dtype=jnp.int32)

    if fmt == "point":
        return PointAction(ints("operation"), ints("row"), ints("col"))
    if fmt == "bbox":
        return BboxAction(ints("operation"), ints("r1"), ints("c1"), ints("r2"), ints("c2"))
    selection = check_mask(action["selection"], "action['selection']")
    canvas = config.dataset.canvas_shape
    if tuple(selection.shape[-2:]) != tuple(canvas):
        raise ValueError(
            f"mask action selection has shape {selection.shape}, expected (..., {canvas[0]}, "
            f"{canvas[1]}) for this canvas"
        )
    return MaskAction(ints("operation"), selection)
