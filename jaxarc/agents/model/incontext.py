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

from jaxarc.agents.model.features import NUM_COLOURS

NEIGHBOURHOOD = 9  # 3x3
CODES = 12  # -2 (beyond the canvas), -1 (padding), colours 0..9
BEYOND_CANVAS = -2
UNUSABLE_SCORE = -1e9  # finite: a softmax over only unusable keys stays finite
DIRECT_SCORES_LIMIT = 1 << 20  # floats of attention scores per episode computed in one block


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
    streaming: bool | None = None,
) -> tuple[Float32[Array, "H W 10"], Bool[Array, ""]]:
    """Per input cell, the demonstration outputs' colour distribution (attention over the
    demonstration cells by neighbourhood similarity) and whether any key was usable.

    ``streaming`` (default: only when the ``[H*W, P*H*W]`` scores would exceed
    :data:`DIRECT_SCORES_LIMIT` floats, a static choice by shape) accumulates the softmax one
    pair at a time (a running maximum, normaliser and weighted sum, as in streaming
    attention), so memory holds one pair's scores: 3 MB instead of 32 MB per episode for
    ten pairs on the 30x30 ARC canvas. On the 8x8 generator canvas the direct form is ~10%
    faster per training update.
    """
    height, width = input_grid.shape
    cells = height * width
    if streaming is None:
        streaming = cells * demo_inputs.shape[0] * cells > DIRECT_SCORES_LIMIT
    weights = (
        jnp.ones((NEIGHBOURHOOD,), jnp.float32).at[NEIGHBOURHOOD // 2].set(config.centre_weight)
    )
    # equal codes at a position contribute its weight: a dot of (weighted) one-hots
    queries = _weighted_one_hot(neighbourhood_codes(input_grid).reshape(-1, NEIGHBOURHOOD), weights)
    unit = jnp.ones_like(weights)

    def block(demo_in, demo_out, pair_usable):
        """Scores ``[H*W, K]`` (unusable keys at UNUSABLE_SCORE), values ``[K, 10]``, usable."""
        keys = _weighted_one_hot(neighbourhood_codes(demo_in).reshape(-1, NEIGHBOURHOOD), unit)
        usable = pair_usable & (demo_in.reshape(-1) >= 0) & (demo_out.reshape(-1) >= 0)
        scores = jnp.where(usable[None, :], config.sharpness * (queries @ keys.T), UNUSABLE_SCORE)
        values = jax.nn.one_hot(demo_out.reshape(-1), NUM_COLOURS, dtype=jnp.float32)
        return scores, values, jnp.any(usable)

    if not streaming:
        scores, values, has_keys = jax.vmap(block, in_axes=(0, 0, 0), out_axes=(1, 0, 0))(
            demo_inputs, demo_outputs, usable_pairs
        )
        attention = jax.nn.softmax(scores.reshape(cells, -1), axis=-1)
        predicted = attention @ values.reshape(-1, NUM_COLOURS)
        return predicted.reshape(height, width, NUM_COLOURS), jnp.any(has_keys)

    def one_pair(carry, pair):
        running_max, normaliser, weighted = carry
        scores, values, has_keys = block(*pair)
        new_max = jnp.maximum(running_max, jnp.max(scores, axis=1))
        rescale = jnp.exp(running_max - new_max)
        attention = jnp.exp(scores - new_max[:, None])  # unnormalised
        normaliser = normaliser * rescale + jnp.sum(attention, axis=1)
        weighted = weighted * rescale[:, None] + attention @ values
        return (new_max, normaliser, weighted), has_keys

    start = (
        jnp.full((cells,), 2 * UNUSABLE_SCORE, jnp.float32),
        jnp.zeros((cells,), jnp.float32),
        jnp.zeros((cells, NUM_COLOURS), jnp.float32),
    )
    (_, normaliser, weighted), has_keys = jax.lax.scan(
        one_pair, start, (demo_inputs, demo_outputs, usable_pairs)
    )
    predicted = weighted / jnp.maximum(normaliser, 1e-30)[:, None]
    return predicted.reshape(height, width, NUM_COLOURS), jnp.any(has_keys)


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
