"""In-context cell prediction: what each cell of the episode's input becomes, read from the
demonstration pairs by attention over their cells (one environment; vmap it).

Every cell of the input grid (a *query*) is compared with every cell of every demonstration
input (a *key*) by its 3x3 neighbourhood: the score is a weighted count of equal colours
(beyond the canvas counts as a colour of its own), with the centre weighted above all eight
neighbours together, so a cell first attends to demonstration cells of its own colour and
the neighbourhood breaks ties (a hole inside a frame vs open background). The value of a
key is the colour its cell has in the demonstration output, so the result is a colour
distribution per cell: the demonstrations' answer to "what does a cell like this become?".
Distributions are then averaged within each 4-connected same-colour region of the input,
because flood-style edits act on whole regions and single cells can be ambiguous.

Only pairs whose input and output shapes agree take part (cell correspondence is
meaningless otherwise); with none, every cell predicts its own colour.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32

from jaxarc.agents.features import NUM_COLOURS

NEIGHBOURHOOD = 9  # 3x3
CODES = 12  # -2 (beyond the canvas), -1 (padding), colours 0..9
BEYOND_CANVAS = -2
UNUSABLE_SCORE = -1e9  # finite: a softmax over only unusable keys stays finite


@dataclasses.dataclass(frozen=True)
class CellPredictionConfig:
    """Fixed (not learned) settings of the cell predictor.

    ``centre_weight`` above 8 makes the cell's own colour dominate its eight neighbours;
    ``sharpness`` multiplies the scores before the softmax over demonstration cells;
    ``region_iterations`` rounds of averaging with same-colour 4-neighbours.
    """

    centre_weight: float = 9.0
    sharpness: float = 1.0
    region_iterations: int = 8


def neighbourhood_codes(grid: Int8[Array, "H W"]) -> Int32[Array, "H W 9"]:
    """The 3x3 neighbourhood of every cell, row-major (cells beyond the canvas are ``-2``)."""
    height, width = grid.shape
    padded = jnp.pad(grid.astype(jnp.int32), 1, constant_values=BEYOND_CANVAS)
    return jnp.stack(
        [padded[dy : dy + height, dx : dx + width] for dy in range(3) for dx in range(3)],
        axis=-1,
    )


def _weighted_one_hot(codes: Int32[Array, "N 9"], weights: Float32[Array, " 9"]):
    """``[N, 9 * 12]``: one-hot neighbourhoods, each position scaled by its weight."""
    hot = jax.nn.one_hot(codes - BEYOND_CANVAS, CODES, dtype=jnp.float32)
    return (hot * weights[None, :, None]).reshape(codes.shape[0], NEIGHBOURHOOD * CODES)


def attend_to_demonstrations(
    input_grid: Int8[Array, "H W"],
    demo_inputs: Int8[Array, "P H W"],
    demo_outputs: Int8[Array, "P H W"],
    usable_pairs: Bool[Array, " P"],
    config: CellPredictionConfig,
) -> tuple[Float32[Array, "H W 10"], Bool[Array, ""]]:
    """Per input cell, the demonstration outputs' colour distribution (attention over the
    demonstration cells by neighbourhood similarity) and whether any key was usable."""
    height, width = input_grid.shape
    weights = (
        jnp.ones((NEIGHBOURHOOD,), jnp.float32).at[NEIGHBOURHOOD // 2].set(config.centre_weight)
    )
    queries = neighbourhood_codes(input_grid).reshape(-1, NEIGHBOURHOOD)
    keys = jax.vmap(neighbourhood_codes)(demo_inputs).reshape(-1, NEIGHBOURHOOD)
    # equal codes at a position contribute its weight: a dot of (weighted) one-hots
    scores = _weighted_one_hot(queries, weights) @ _weighted_one_hot(keys, jnp.ones_like(weights)).T
    key_cells = demo_inputs.shape[1] * demo_inputs.shape[2]
    usable = jnp.repeat(usable_pairs, key_cells) & (demo_inputs.reshape(-1) >= 0)
    usable = usable & (demo_outputs.reshape(-1) >= 0)
    scores = jnp.where(usable[None, :], config.sharpness * scores, UNUSABLE_SCORE)
    any_usable = jnp.any(usable)
    attention = jax.nn.softmax(jnp.where(any_usable, scores, 0.0), axis=-1)
    values = jax.nn.one_hot(demo_outputs.reshape(-1), NUM_COLOURS, dtype=jnp.float32)
    return (attention @ values).reshape(height, width, NUM_COLOURS), any_usable


def _neighbours(x: Array, fill) -> tuple[Array, Array, Array, Array]:
    """The up, down, left and right neighbour of every cell (``fill`` beyond the edge)."""
    row_edge = jnp.full_like(x[:1], fill)
    col_edge = jnp.full_like(x[:, :1], fill)
    return (
        jnp.concatenate([row_edge, x[:-1]], axis=0),
        jnp.concatenate([x[1:], row_edge], axis=0),
        jnp.concatenate([col_edge, x[:, :-1]], axis=1),
        jnp.concatenate([x[:, 1:], col_edge], axis=1),
    )


def average_over_regions(
    values: Float32[Array, "H W C"], grid: Int8[Array, "H W"], iterations: int
) -> Float32[Array, "H W C"]:
    """``iterations`` rounds of replacing each cell's values by the mean over itself and its
    same-colour 4-neighbours (a diffusion that stays inside 4-connected regions)."""
    colours = grid.astype(jnp.int32)
    same = [neighbour == colours for neighbour in _neighbours(colours, BEYOND_CANVAS - 1)]
    count = 1.0 + sum(s.astype(jnp.float32) for s in same)
    for _ in range(iterations):
        total = values + sum(
            jnp.where(s[..., None], n, 0.0)
            for s, n in zip(same, _neighbours(values, 0.0), strict=True)
        )
        values = total / count[..., None]
    return values


def predict_cells(
    input_grid: Int8[Array, "H W"],
    demo_inputs: Int8[Array, "P H W"],
    demo_outputs: Int8[Array, "P H W"],
    demo_input_shapes: Int32[Array, "P 2"],
    demo_output_shapes: Int32[Array, "P 2"],
    demo_mask: Bool[Array, " P"],
    config: CellPredictionConfig,
) -> Float32[Array, "H W 10"]:
    """The predicted colour distribution of every input cell (see the module docstring);
    padding cells get zeros."""
    same_shape = jnp.all(demo_input_shapes == demo_output_shapes, axis=-1)
    predicted, any_usable = attend_to_demonstrations(
        input_grid, demo_inputs, demo_outputs, demo_mask & same_shape, config
    )
    own_colour = jax.nn.one_hot(input_grid, NUM_COLOURS, dtype=jnp.float32)
    predicted = jnp.where(any_usable, predicted, own_colour)
    predicted = average_over_regions(predicted, input_grid, config.region_iterations)
    return jnp.where((input_grid >= 0)[..., None], predicted, 0.0)
