"""gymnax spaces for ARC observations and structured actions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
from gymnax.environments import spaces
from jaxtyping import Array, Bool, Int32, PRNGKeyArray, UInt32

from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.keys import random_words
from jaxarc.envs.structured_actions import (
    ACTION_CLASSES,
    AbstractAction,
    BboxAction,
    MaskAction,
    PointAction,
)
from jaxarc.envs.types import CONTEXT_FIELDS
from jaxarc.grid.fusion_barrier import materialize
from jaxarc.grid.operation_ids import NUM_OPERATIONS

# the keys of an action given as a dict (gymnax's Gym bridge, Gymnasium's Dict space)
ACTION_KEYS: dict[str, tuple[str, ...]] = {
    "point": ("operation", "row", "col"),
    "bbox": ("operation", "r1", "c1", "r2", "c2"),
    "mask": ("operation", "selection"),
}


def _digit(word: UInt32[Array, ""], radix: int) -> tuple[Int32[Array, ""], UInt32[Array, ""]]:
    """The lowest base-``radix`` digit of ``word`` and the rest of the word."""
    return (word % jnp.uint32(radix)).astype(jnp.int32), word // jnp.uint32(radix)


def structured_action(action: Any, selection_format: str) -> AbstractAction:
    """``action`` as a structured action: itself, or built from a dict of its parts.

    Dicts come from spaces converted to Gymnasium (``gymnax.wrappers.GymnaxToGymWrapper``
    samples ``{"operation": ..., "row": ..., "col": ...}``); a missing key is an error, and
    the parts follow the actions' rule for integers and masks (docs/environment.md).
    """
    if not isinstance(action, Mapping):
        if not isinstance(action, ACTION_CLASSES[selection_format]):
            raise TypeError(
                f"a {selection_format} action is a {ACTION_CLASSES[selection_format].__name__} "
                f"or a dict with keys {ACTION_KEYS[selection_format]}, got "
                f"{type(action).__name__}"
            )
        return action
    keys = ACTION_KEYS[selection_format]
    missing = [k for k in keys if k not in action]
    if missing:
        raise ValueError(f"{selection_format} action is missing key(s) {missing}; expected {keys}")
    return ACTION_CLASSES[selection_format](*(action[k] for k in keys))


class StructuredActionSpace(spaces.Dict):
    """Actions of one selection format; ``sample`` draws a valid action uniformly.

    The operation is uniform over the allowed operations, coordinates uniform over the
    canvas (a mask selects each cell with probability 1/2). Works under ``vmap``.

    It is also a gymnax ``Dict`` of the action's parts (``operation`` ``Discrete(35)``,
    coordinates ``Discrete``, a mask ``Box``), so gymnax's ``gymnax_space_to_gym_space``
    and its ``GymnaxToGymWrapper`` convert it; the environment's ``step`` takes such dicts.
    """

    def __init__(self, config: JaxArcConfig):
        self.selection_format = config.action.selection_format
        self.canvas_shape = config.dataset.canvas_shape
        self.allowed_operations = config.action.allowed_ids
        height, width = self.canvas_shape
        parts: dict[str, spaces.Space] = {"operation": spaces.Discrete(NUM_OPERATIONS)}
        if self.selection_format == "mask":
            parts["selection"] = spaces.Box(0, 1, (height, width), jnp.int8)
        else:
            for key in ACTION_KEYS[self.selection_format][1:]:
                parts[key] = spaces.Discrete(height if key[0] == "r" else width)
        super().__init__(parts)

    def __repr__(self) -> str:
        return (
            f"StructuredActionSpace({self.selection_format}, canvas={self.canvas_shape}, "
            f"{len(self.allowed_operations)} operations)"
        )

    def sample(self, key: PRNGKeyArray) -> AbstractAction:
        """A uniformly random valid action from one PRNG call.

        The operation and coordinates are mixed-radix digits of two random 32-bit words
        (bias below ``35 * 32 * 32 / 2**32``, under 1e-5); a mask takes one word per 32
        cells. One ``bits`` draw costs far less than a ``choice`` plus two ``randint`` (each a
        split and draws), which matters under ``vmap`` at every step; it is drawn by
        :func:`~jaxarc.envs.keys.random_words` (``jax.random.bits``'s words, without the XLA
        loop JAX's threefry is on CPU).
        """
        height, width = self.canvas_shape
        words_needed = 2 if self.selection_format != "mask" else 1 + -(-height * width // 32)
        words = random_words(key, words_needed)
        num_ops = len(self.allowed_operations)
        digit, rest = _digit(words[0], num_ops)
        choices = jnp.asarray(self.allowed_operations, dtype=jnp.int32)
        operation = choices[digit] if num_ops > 1 else jnp.full((), choices[0], jnp.int32)
        if self.selection_format == "mask":  # cell c is bit c % 32 of word 1 + c // 32
            # (each word feeds 32 cells: hashed once, not fused into every cell's kernel)
            words = materialize(words)
            shifts = jnp.arange(32, dtype=jnp.uint32)
            bits = ((words[1:, None] >> shifts[None, :]) & jnp.uint32(1)).reshape(-1)
            mask = bits[: height * width].astype(jnp.bool_).reshape(height, width)
            return MaskAction(operation, mask)
        row, rest = _digit(rest, height)
        col, _ = _digit(rest, width)
        if self.selection_format == "point":
            return PointAction(operation, row, col)
        row2, rest = _digit(words[1], height)
        col2, _ = _digit(rest, width)
        return BboxAction(operation, row, col, row2, col2)

    def contains(self, action: AbstractAction) -> Bool[Array, ""]:
        action = structured_action(action, self.selection_format)
        op = jnp.asarray(action.operation, jnp.int32)
        allowed = jnp.zeros(NUM_OPERATIONS, jnp.bool_).at[jnp.asarray(self.allowed_operations)]
        allowed = allowed.set(True)
        op_ok = (op >= 0) & (op < NUM_OPERATIONS) & allowed[jnp.clip(op, 0, NUM_OPERATIONS - 1)]
        ok = op_ok & action.in_bounds(self.canvas_shape)
        return ok & action.values_ok() if isinstance(action, MaskAction) else ok


class BinaryBox(spaces.Box):
    """A ``Box`` of booleans (``contains`` checks the shape; every bool is in range)."""

    def __init__(self, shape: tuple[int, ...]):
        super().__init__(0, 1, shape, jnp.bool_)

    def sample(self, key: PRNGKeyArray) -> Bool[Array, "..."]:
        return jax.random.bernoulli(key, 0.5, self.shape)

    def contains(self, x: Array) -> Bool[Array, ""]:
        return jnp.asarray(jnp.shape(x) == tuple(self.shape) and x.dtype == jnp.bool_)


def observation_space(config: JaxArcConfig, max_demos: int) -> spaces.Dict:
    """A ``Dict`` of ``Box`` spaces matching :class:`~jaxarc.envs.types.ArcObservation`."""
    height, width = config.dataset.canvas_shape
    grid = spaces.Box(-1, 9, (height, width), jnp.int8)
    shape = spaces.Box(0, max(height, width), (2,), jnp.int32)
    demos = spaces.Box(-1, 9, (max_demos, height, width), jnp.int8)
    demo_shapes = spaces.Box(0, max(height, width), (max_demos, 2), jnp.int32)
    parts = {
        "grid": grid,
        "grid_shape": shape,
        "input_grid": grid,
        "input_shape": shape,
        "demo_inputs": demos,
        "demo_outputs": demos,
        "demo_input_shapes": demo_shapes,
        "demo_output_shapes": demo_shapes,
        "demo_mask": BinaryBox((max_demos,)),
        "clipboard": grid,
        "clipboard_mask": BinaryBox((height, width)),
        "allowed_operations": BinaryBox((NUM_OPERATIONS,)),
        "step_count": spaces.Box(0, config.environment.max_episode_steps, (), jnp.int32),
    }
    if config.environment.episode_context == "at_reset":  # read with env.episode_context
        parts = {k: v for k, v in parts.items() if k not in CONTEXT_FIELDS}
    return spaces.Dict(parts)
