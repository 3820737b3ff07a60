"""Restrict an environment to a subset of the 35 operations, without rebuilding it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import PRNGKeyArray

from jaxarc.envs.config import JaxArcConfig, UnifiedActionConfig, UnifiedDatasetConfig
from jaxarc.grid.operation_ids import NUM_OPERATIONS, operation_id
from jaxarc.gymnax.spaces import StructuredActionSpace
from jaxarc.wrappers.base import AbstractEnvWrapper


def operation_ids(operations: Sequence[int | str]) -> tuple[int, ...]:
    """Sorted unique ids from ids or names (``"FILL_3"``, ``"submit"``); ``ValueError`` if bad."""
    ids = []
    for op in operations:
        op_id = operation_id(op) if isinstance(op, str) else int(op)
        if not 0 <= op_id < NUM_OPERATIONS:
            raise ValueError(f"operation id {op_id} is outside 0..{NUM_OPERATIONS - 1}")
        ids.append(op_id)
    if not ids:
        raise ValueError("allowed_operations must name at least one operation")
    return tuple(sorted(set(ids)))


def _restrict_obs(obs: Any, allowed: jnp.ndarray) -> Any:
    return eqx.tree_at(lambda o: o.allowed_operations, obs, obs.allowed_operations & allowed)


class RestrictOperationsWrapper(AbstractEnvWrapper):
    """Only ``allowed_operations`` act; any other operation is a no-op step.

    Operation ids keep their meaning (no renumbering). A disallowed operation is sent to the
    environment as the unknown operation ``-1``, which the core treats as a no-op that still
    counts as a step. The observation's ``allowed_operations`` mask and the action space's
    ``sample`` reflect the restriction (intersected with what the wrapped env allows).
    Apply it below observation-flattening wrappers (it edits the structured observation).
    """

    allowed_operations: tuple[int, ...] = eqx.field(static=True)

    def __init__(self, env: Any, allowed_operations: Sequence[int | str]):
        self.env = env
        inner = env.action_space(env.default_params)
        requested = operation_ids(allowed_operations)
        if not isinstance(inner, StructuredActionSpace):
            raise TypeError(
                "RestrictOperationsWrapper goes below the flat-action wrappers: it needs the "
                f"structured action space, got {type(inner).__name__}"
            )
        inner_allowed = set(inner.allowed_operations)
        kept = tuple(op for op in requested if op in inner_allowed)
        if not kept:
            raise ValueError(
                f"none of the operations {requested} is allowed by the wrapped environment"
            )
        self.allowed_operations = kept

    @property
    def allowed_mask(self) -> jnp.ndarray:
        return (
            jnp.zeros(NUM_OPERATIONS, jnp.bool_).at[jnp.asarray(self.allowed_operations)].set(True)
        )

    def reset(self, key: PRNGKeyArray, params: Any = None):
        obs, state = self.env.reset(key, params)
        return _restrict_obs(obs, self.allowed_mask), state

    def step(self, key: PRNGKeyArray, state: Any, action: Any, params: Any = None):
        op = jnp.asarray(action.operation, dtype=jnp.int32)
        known = (op >= 0) & (op < NUM_OPERATIONS)
        allowed = known & self.allowed_mask[jnp.clip(op, 0, NUM_OPERATIONS - 1)]
        action = eqx.tree_at(lambda a: a.operation, action, jnp.where(allowed, op, jnp.int32(-1)))
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action, params)
        mask = self.allowed_mask
        info = {**info}
        if "final_observation" in info:
            info["final_observation"] = _restrict_obs(info["final_observation"], mask)
        return _restrict_obs(obs, mask), state, reward, terminated, truncated, info

    def action_space(self, params: Any = None) -> StructuredActionSpace:
        inner = self.env.action_space(params)
        height, width = inner.canvas_shape
        config = JaxArcConfig(
            dataset=UnifiedDatasetConfig(max_grid_height=height, max_grid_width=width),
            action=UnifiedActionConfig(inner.selection_format, self.allowed_operations),
        )
        return StructuredActionSpace(config)
