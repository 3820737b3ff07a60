"""A learned in-context cell predictor: what each cell of the episode's input becomes, read
from the demonstration pairs by *learned* attention (one environment; vmap it).

The hand-made predictor (:mod:`jaxarc.agents.model.incontext`) compares 3x3 neighbourhoods by a
fixed weighted count of equal colours. Here the comparison is learned:

* **colour-equivariant cell embeddings.** A grid is split into ten colour planes (``is
  colour c``) plus shared planes (padding, any non-background colour). Two small 3x3
  convolutions (5x5 receptive field) embed every cell *per colour plane*: colour 0 (the
  background in the generators) has its own weights, colours 1..9 share one set, so a rule
  learned for one colour holds for all nine. A cell's embedding is ``[10, D]``.
* **cross-attention.** Every cell of the episode's input (a query) attends to every cell
  of every usable demonstration input (the keys); the score is the sum over colour planes
  of the dot products of learned query and key projections of the embeddings, scaled by a
  learned temperature. Scores are invariant to a joint permutation of colours 1..9.
* **values.** The colour a key cell has in its demonstration output (one-hot, no
  parameters), so the result is a colour distribution per cell that permutes with the
  colours of the task: "what does a cell like this become?".

Training signal: :func:`leave_one_out_loss` predicts each visible demonstration output
from its input and the *other* demonstration pairs (self-supervised: it needs no target,
so it can be used during behaviour cloning and during GRPO), and the policy's action
losses flow into it through the evidence it gives the action heads.

Sizes (``embed=16``, ``key_size=8``): 6,161 parameters; on the 8x8 canvas with four
demonstration pairs 19.8 MFLOP per episode (XLA's cost analysis; computed once per episode
in ``encode_task``, not per step).
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32, PRNGKeyArray

from jaxarc.agents.model.features import NUM_COLOURS
from jaxarc.agents.model.layers import ConvHWC

PLANES = 4  # per colour: is this colour, padding, any non-background colour, background
UNUSABLE_SCORE = -1e9
LOG_FLOOR = 1e-6


@dataclasses.dataclass(frozen=True)
class LearnedPredictionConfig:
    """Sizes of the learned cell predictor."""

    embed: int = 16  # per-colour-plane embedding width
    key_size: int = 8  # per-colour-plane query/key width

    def __post_init__(self) -> None:
        for name in ("embed", "key_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"LearnedPredictionConfig.{name} must be a positive int")


def colour_planes(grid: Int8[Array, "H W"]) -> Float32[Array, "10 H W 4"]:
    """Per colour ``c``: ``[grid == c, padding, any colour > 0, colour 0]`` (channels last)."""
    grid = grid.astype(jnp.int32)
    is_colour = grid[None] == jnp.arange(NUM_COLOURS, dtype=jnp.int32)[:, None, None]
    shared = jnp.stack([grid < 0, grid > 0, grid == 0], axis=-1)
    shared = jnp.broadcast_to(shared[None], (NUM_COLOURS, *grid.shape, 3))
    return jnp.concatenate([is_colour[..., None], shared], axis=-1).astype(jnp.float32)


class LearnedCellPredictor(eqx.Module):
    """Colour-equivariant learned cross-attention from input cells to demonstration cells."""

    background_convs: tuple[ConvHWC, ConvHWC]  # colour 0's plane
    colour_convs: tuple[ConvHWC, ConvHWC]  # shared by colours 1..9
    query: eqx.nn.Linear
    key: eqx.nn.Linear
    log_temperature: Float32[Array, ""]

    def __init__(self, config: LearnedPredictionConfig, *, key: PRNGKeyArray):
        keys = jax.random.split(key, 6)
        d = config.embed
        self.background_convs = (
            ConvHWC(PLANES, d, 3, key=keys[0]),
            ConvHWC(d, d, 3, key=keys[1]),
        )
        self.colour_convs = (ConvHWC(PLANES, d, 3, key=keys[2]), ConvHWC(d, d, 3, key=keys[3]))
        self.query = eqx.nn.Linear(d + PLANES, config.key_size, key=keys[4])
        self.key = eqx.nn.Linear(d + PLANES, config.key_size, key=keys[5])
        self.log_temperature = jnp.float32(0.0)

    def embed(self, grid: Int8[Array, "H W"]) -> Float32[Array, "10 H W E"]:
        """Per colour plane, every cell's embedding (its own planes appended)."""
        planes = colour_planes(grid)

        def run(convs, x):
            return jax.nn.relu(convs[1](jax.nn.relu(convs[0](x))))

        background = run(self.background_convs, planes[0])[None]
        colours = jax.vmap(lambda x: run(self.colour_convs, x))(planes[1:])
        return jnp.concatenate([jnp.concatenate([background, colours]), planes], axis=-1)

    def _project(self, layer: eqx.nn.Linear, embedding: Float32[Array, "10 H W E"]):
        """``[H*W, 10 * K]``: the per-plane projections of every cell, planes side by side."""
        projected = jnp.einsum("chwe,ke->hwck", embedding, layer.weight)
        projected = projected + layer.bias[None, None, None, :]
        height, width = embedding.shape[1:3]
        return projected.reshape(height * width, -1)

    def __call__(
        self,
        input_grid: Int8[Array, "H W"],
        demo_inputs: Int8[Array, "P H W"],
        demo_outputs: Int8[Array, "P H W"],
        usable_pairs: Bool[Array, " P"],
    ) -> Float32[Array, "H W 10"]:
        """Per input cell, the demonstration outputs' colour distribution under the learned
        attention; with no usable key every cell predicts its own colour; padding cells
        get zeros."""
        height, width = input_grid.shape
        cells = height * width
        queries = self._project(self.query, self.embed(input_grid))  # [N, 10K]
        keys = jax.vmap(lambda g: self._project(self.key, self.embed(g)))(demo_inputs)
        scale = jnp.exp(self.log_temperature) / jnp.sqrt(jnp.float32(queries.shape[-1]))
        scores = jnp.einsum("nk,pmk->npm", queries, keys) * scale  # [N, P, M]
        usable = (
            usable_pairs[:, None]
            & (demo_inputs.reshape(-1, cells) >= 0)
            & (demo_outputs.reshape(-1, cells) >= 0)
        )  # [P, M]
        scores = jnp.where(usable[None], scores, UNUSABLE_SCORE).reshape(cells, -1)
        attention = jax.nn.softmax(scores, axis=-1)
        values = jax.nn.one_hot(demo_outputs.reshape(-1), NUM_COLOURS, dtype=jnp.float32)
        predicted = (attention @ values).reshape(height, width, NUM_COLOURS)
        own = jax.nn.one_hot(input_grid, NUM_COLOURS, dtype=jnp.float32)
        predicted = jnp.where(jnp.any(usable), predicted, own)
        return jnp.where((input_grid >= 0)[..., None], predicted, 0.0)


def usable_pairs(
    demo_input_shapes: Int32[Array, "P 2"],
    demo_output_shapes: Int32[Array, "P 2"],
    demo_mask: Bool[Array, " P"],
) -> Bool[Array, " P"]:
    """Pairs that take part: shown and with equal input/output shapes (cell correspondence)."""
    return demo_mask & jnp.all(demo_input_shapes == demo_output_shapes, axis=-1)


def cell_cross_entropy(
    predicted: Float32[Array, "H W 10"], target: Int8[Array, "H W"]
) -> tuple[Float32[Array, ""], Float32[Array, ""]]:
    """Mean ``-log P(target colour)`` over the target's cells, and how many cells count."""
    valid = target >= 0
    hot = jax.nn.one_hot(jnp.maximum(target, 0), NUM_COLOURS, dtype=jnp.float32)
    nll = -jnp.log(LOG_FLOOR + jnp.sum(predicted * hot, axis=-1))
    cells = jnp.sum(valid, dtype=jnp.float32)
    return jnp.sum(jnp.where(valid, nll, 0.0)) / jnp.maximum(cells, 1.0), cells


def leave_one_out_loss(
    predictor: LearnedCellPredictor,
    demo_inputs: Int8[Array, "P H W"],
    demo_outputs: Int8[Array, "P H W"],
    demo_input_shapes: Int32[Array, "P 2"],
    demo_output_shapes: Int32[Array, "P 2"],
    demo_mask: Bool[Array, " P"],
) -> Float32[Array, ""]:
    """Self-supervised loss: each usable pair's output predicted from its input and the
    other usable pairs (mean per-cell cross-entropy over the pairs that have others)."""
    usable = usable_pairs(demo_input_shapes, demo_output_shapes, demo_mask)
    slots = jnp.arange(demo_inputs.shape[0])

    def one(index):
        others = usable & (slots != index)
        predicted = predictor(demo_inputs[index], demo_inputs, demo_outputs, others)
        loss, _ = cell_cross_entropy(predicted, demo_outputs[index])
        return loss, usable[index] & jnp.any(others)

    losses, counted = jax.vmap(one)(slots)
    weights = counted.astype(jnp.float32)
    return jnp.sum(losses * weights) / jnp.maximum(jnp.sum(weights), 1.0)
