"""Checks that run inside compiled code, through ``equinox.error_if``.

They are used by ``arc_step`` only when ``EnvironmentConfig.validate`` is on, so the fast
path compiles without them. How a failed check surfaces follows ``EQX_ON_ERROR``
(``raise`` by default, ``breakpoint`` or ``nan``).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.episode import area_mask
from jaxarc.envs.structured_actions import AbstractAction, MaskAction
from jaxarc.envs.types import ArcState
from jaxarc.grid.operation_ids import NUM_OPERATIONS


class JAXErrorHandler:
    """Validation of actions and states that works under ``jit``/``vmap``/``scan``."""

    @staticmethod
    def validate_action(action: AbstractAction, config: JaxArcConfig) -> AbstractAction:
        """``action`` unchanged, or an error naming what is wrong with it."""
        canvas = config.dataset.canvas_shape
        operation = action.operation
        operation = eqx.error_if(
            operation,
            (operation < 0) | (operation >= NUM_OPERATIONS),
            f"invalid action: operation id outside 0..{NUM_OPERATIONS - 1}",
        )
        allowed = jnp.asarray(config.action.allowed_mask)[
            jnp.clip(operation, 0, NUM_OPERATIONS - 1)
        ]
        operation = eqx.error_if(
            operation, ~allowed, "invalid action: operation not in allowed_operations"
        )
        operation = eqx.error_if(
            operation,
            ~action.in_bounds(canvas),
            f"invalid action: selection coordinates outside the {canvas[0]}x{canvas[1]} canvas",
        )
        if isinstance(action, MaskAction):  # (a boolean mask is always fine)
            operation = eqx.error_if(
                operation,
                ~action.values_ok(),
                "invalid action: mask selection holds a value other than 0 and 1",
            )
        return eqx.tree_at(lambda a: a.operation, action, operation)

    @staticmethod
    def validate_state_consistency(state: ArcState) -> ArcState:
        """``state`` unchanged, or an error naming the broken invariant."""
        canvas = state.grid.shape
        grid = state.grid
        inside = area_mask(state.grid_shape, canvas)
        shape_ok = jnp.all(state.grid_shape >= 1) & (state.grid_shape[0] <= canvas[0])
        shape_ok = shape_ok & (state.grid_shape[1] <= canvas[1])
        grid = eqx.error_if(grid, ~shape_ok, "inconsistent state: grid_shape outside the canvas")
        colours_ok = jnp.all(jnp.where(inside, (grid >= 0) & (grid <= 9), grid == -1))
        grid = eqx.error_if(
            grid, ~colours_ok, "inconsistent state: colours outside 0..9 inside, or not -1 outside"
        )
        both = state.terminated & state.truncated
        grid = eqx.error_if(grid, both, "inconsistent state: terminated and truncated together")
        return eqx.tree_at(lambda s: s.grid, state, grid)
