"""The per-cell input of the policy's trunk (one environment), split by how often it changes.

The trunk's first convolution reads ``CELL_FEATURES`` channels per cell (channels last):

| channels | feature | changes |
|---|---|---|
| 0-10 | working grid, one-hot over padding and the ten colours | every step |
| 11-21 | the episode's input grid, one-hot | per episode |
| 22 | working grid differs from the input | every step |
| 23 | clipboard mask | every step |
| 24-30 | row, column, first row/column, last row/column of the grid, inside the grid | every step |
| 31-34 | the colour roles of the working grid's colours | every step |
| 35-38 | the colour roles of the input's colours | per episode |
| 39-42 | the working grid equals the mirrored input (LR, TB, 180 degrees, transpose) | every step |
| 43-52 | the predicted colour distribution of every input cell | per episode |
| 53 | wrongness of the working grid's cell | every step |

A convolution is linear in its input, so the convolution of all channels is the sum of the
convolutions of the two groups (same weights, zero padding on both sides). The policy
convolves the 25 per-episode channels (:data:`TASK_CHANNELS`) once per episode in
``encode_task`` and the 29 per-step channels (:data:`STEP_CHANNELS`) at every step: the
same function with about half the per-step work of the trunk's first layer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float32, Int8

from jaxarc.agents.model.features import NUM_COLOURS, NUM_ROLES, NUM_SYMMETRIES, symmetric_views
from jaxarc.envs.episode import area_mask
from jaxarc.envs.types import ArcObservation

CELL_FEATURES = 11 + 11 + 2 + 7 + 2 * NUM_ROLES + NUM_SYMMETRIES + NUM_COLOURS + 1
# the per-episode channels, in the order task_cells stacks them
TASK_CHANNELS = np.concatenate([np.arange(11, 22), np.arange(35, 39), np.arange(43, 53)])
# the per-step channels, in the order step_cells stacks them
STEP_CHANNELS = np.setdiff1d(np.arange(CELL_FEATURES), TASK_CHANNELS)


def one_hot_last(grid: Int8[Array, "H W"]) -> Float32[Array, "H W 11"]:
    """One-hot over ``-1`` (padding) and the ten colours, channels last."""
    return jax.nn.one_hot(grid.astype(jnp.int32) + 1, 11, dtype=jnp.float32)


def colour_roles_of(
    grid: Int8[Array, "H W"], roles: Float32[Array, "10 R"]
) -> Float32[Array, "H W R"]:
    """The roles of every cell's colour (zeros on padding)."""
    return jnp.where((grid >= 0)[..., None], roles[jnp.maximum(grid, 0)], 0.0)


def task_cells(
    input_grid: Int8[Array, "H W"],
    roles: Float32[Array, "10 4"],
    prediction: Float32[Array, "H W 10"],
) -> Float32[Array, "H W 25"]:
    """The per-episode channels (:data:`TASK_CHANNELS`)."""
    return jnp.concatenate(
        [one_hot_last(input_grid), colour_roles_of(input_grid, roles), prediction], axis=-1
    )


def step_cells(
    obs: ArcObservation,
    roles: Float32[Array, "10 4"],
    wrong: Float32[Array, "H W"],
    canvas: tuple[int, int],
) -> Float32[Array, "H W 29"]:
    """The per-step channels (:data:`STEP_CHANNELS`)."""
    height, width = canvas
    rows = jnp.broadcast_to(jnp.arange(height, dtype=jnp.int32)[:, None], canvas)
    cols = jnp.broadcast_to(jnp.arange(width, dtype=jnp.int32)[None, :], canvas)
    last_row, last_col = obs.grid_shape[0] - 1, obs.grid_shape[1] - 1
    area = area_mask(obs.grid_shape, canvas)
    position = jnp.stack(
        [
            rows.astype(jnp.float32) / height,
            cols.astype(jnp.float32) / width,
            (rows == 0).astype(jnp.float32),
            (cols == 0).astype(jnp.float32),
            (rows == last_row).astype(jnp.float32),
            (cols == last_col).astype(jnp.float32),
            area.astype(jnp.float32),
        ],
        axis=-1,
    )
    mirrored = symmetric_views(obs.input_grid, obs.input_shape)
    mirror_matches = (mirrored == obs.grid[None]) & area[None]
    return jnp.concatenate(
        [
            one_hot_last(obs.grid),
            (obs.grid != obs.input_grid)[..., None].astype(jnp.float32),
            obs.clipboard_mask[..., None].astype(jnp.float32),
            position,
            colour_roles_of(obs.grid, roles),
            jnp.moveaxis(mirror_matches, 0, -1).astype(jnp.float32),
            wrong[..., None],
        ],
        axis=-1,
    )


def cell_features(
    obs: ArcObservation,
    roles: Float32[Array, "10 4"],
    prediction: Float32[Array, "H W 10"],
    wrong: Float32[Array, "H W"],
    canvas: tuple[int, int],
) -> Float32[Array, "H W F"]:
    """All ``CELL_FEATURES`` channels in the table's order (the reference layout)."""
    cells = jnp.zeros((*canvas, CELL_FEATURES), jnp.float32)
    cells = cells.at[..., TASK_CHANNELS].set(task_cells(obs.input_grid, roles, prediction))
    return cells.at[..., STEP_CHANNELS].set(step_cells(obs, roles, wrong, canvas))
