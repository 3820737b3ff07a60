"""Structured action distributions: an operation, then a selection conditioned on it.

Every distribution is an equinox module for **one** environment (vmap for batches). The
operation is categorical over the 35 operations (disallowed ones masked). The selection
depends on the action format and is read from per-operation logits (``O`` = operations):

* point: one categorical over the canvas cells ``[O, H*W]``;
* bbox: two independent corner categoricals ``[O, H*W]`` each;
* mask: one Bernoulli per cell ``[O, H, W]``.

Cells outside the active area are masked out. Operations that ignore the selection
(SUBMIT, CLEAR, COPY_INPUT) sample no selection: their coordinates are fixed to 0 and the
action's log-probability is the operation's alone. Otherwise ``log_prob`` is the sum of
the parts (operation + selection).
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Float32, Int32, PRNGKeyArray

from jaxarc.envs.structured_actions import AbstractAction, BboxAction, MaskAction, PointAction
from jaxarc.grid import operation_ids as ops

MASKED_LOGIT = -1e9  # finite, so that 0 * logit stays 0 in entropies

SELECTION_FREE_OPERATIONS = (ops.SUBMIT, ops.CLEAR, ops.COPY_INPUT)
USES_SELECTION = np.array(
    [op not in SELECTION_FREE_OPERATIONS for op in range(ops.NUM_OPERATIONS)], dtype=bool
)


def _entropy(log_probs: Float[Array, "... K"]) -> Float[Array, "..."]:
    return -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)


def _uses_selection(operation: Int32[Array, ""]) -> Bool[Array, ""]:
    return jnp.asarray(USES_SELECTION)[operation]


class ActionDistribution(eqx.Module):
    """Operation categorical plus a format-specific selection (one environment)."""

    operation_logits: Float32[Array, " O"]  # already masked

    @abc.abstractmethod
    def sample(self, key: PRNGKeyArray) -> AbstractAction:
        """A random action (int32 scalar fields)."""

    @abc.abstractmethod
    def log_prob(self, action: AbstractAction) -> Float32[Array, ""]:
        """Log-probability of ``action``: operation part + selection part."""

    @abc.abstractmethod
    def selection_entropy(self) -> Float32[Array, " O"]:
        """Entropy of the selection given each operation."""

    @abc.abstractmethod
    def mode(self) -> AbstractAction:
        """The most likely operation and, given it, the most likely selection."""

    def operation_log_probs(self) -> Float32[Array, " O"]:
        return jax.nn.log_softmax(self.operation_logits)

    def row(self, index: Int32[Array, ""]) -> ActionDistribution:
        """Distribution ``index`` of a batched one (array leaves with a leading axis)."""
        return jax.tree.map(lambda x: x[index], self)

    def entropy(self) -> Float32[Array, ""]:
        """Exact entropy: ``H(op) + sum_o p(o) * uses_selection(o) * H(selection | o)``."""
        log_p = self.operation_log_probs()
        weights = jnp.exp(log_p) * jnp.asarray(USES_SELECTION, jnp.float32)
        return _entropy(log_p) + jnp.sum(weights * self.selection_entropy())


def _cell_log_probs(logits: Float32[Array, "O HW"]) -> Float32[Array, "O HW"]:
    return jax.nn.log_softmax(logits, axis=-1)


def _cell(index: Int32[Array, ""], width: int) -> tuple[Int32[Array, ""], Int32[Array, ""]]:
    return (index // width).astype(jnp.int32), (index % width).astype(jnp.int32)


class PointDistribution(ActionDistribution):
    cell_logits: Float32[Array, "O HW"]
    width: int = eqx.field(static=True)

    def sample(self, key: PRNGKeyArray) -> PointAction:
        op_key, cell_key = jax.random.split(key)
        operation = jax.random.categorical(op_key, self.operation_logits).astype(jnp.int32)
        cell = jax.random.categorical(cell_key, self.cell_logits[operation])
        row, col = _cell(jnp.where(_uses_selection(operation), cell, 0), self.width)
        return PointAction(operation, row, col)

    def log_prob(self, action: PointAction) -> Float32[Array, ""]:
        op_part = self.operation_log_probs()[action.operation]
        cell = action.row * self.width + action.col
        cell_part = _cell_log_probs(self.cell_logits)[action.operation, cell]
        return op_part + jnp.where(_uses_selection(action.operation), cell_part, 0.0)

    def selection_entropy(self) -> Float32[Array, " O"]:
        return _entropy(_cell_log_probs(self.cell_logits))

    def mode(self) -> PointAction:
        operation = jnp.argmax(self.operation_logits).astype(jnp.int32)
        cell = jnp.argmax(self.cell_logits[operation])
        row, col = _cell(jnp.where(_uses_selection(operation), cell, 0), self.width)
        return PointAction(operation, row, col)


class BboxDistribution(ActionDistribution):
    first_corner_logits: Float32[Array, "O HW"]
    second_corner_logits: Float32[Array, "O HW"]
    width: int = eqx.field(static=True)

    def sample(self, key: PRNGKeyArray) -> BboxAction:
        op_key, first_key, second_key = jax.random.split(key, 3)
        operation = jax.random.categorical(op_key, self.operation_logits).astype(jnp.int32)
        uses = _uses_selection(operation)
        first = jnp.where(
            uses, jax.random.categorical(first_key, self.first_corner_logits[operation]), 0
        )
        second = jnp.where(
            uses, jax.random.categorical(second_key, self.second_corner_logits[operation]), 0
        )
        return BboxAction(operation, *_cell(first, self.width), *_cell(second, self.width))

    def log_prob(self, action: BboxAction) -> Float32[Array, ""]:
        op_part = self.operation_log_probs()[action.operation]
        first = action.r1 * self.width + action.c1
        second = action.r2 * self.width + action.c2
        corner_part = (
            _cell_log_probs(self.first_corner_logits)[action.operation, first]
            + _cell_log_probs(self.second_corner_logits)[action.operation, second]
        )
        return op_part + jnp.where(_uses_selection(action.operation), corner_part, 0.0)

    def selection_entropy(self) -> Float32[Array, " O"]:
        return _entropy(_cell_log_probs(self.first_corner_logits)) + _entropy(
            _cell_log_probs(self.second_corner_logits)
        )

    def mode(self) -> BboxAction:
        operation = jnp.argmax(self.operation_logits).astype(jnp.int32)
        uses = _uses_selection(operation)
        first = jnp.where(uses, jnp.argmax(self.first_corner_logits[operation]), 0)
        second = jnp.where(uses, jnp.argmax(self.second_corner_logits[operation]), 0)
        return BboxAction(operation, *_cell(first, self.width), *_cell(second, self.width))


class MaskDistribution(ActionDistribution):
    cell_logits: Float32[Array, "O H W"]  # Bernoulli logits per cell
    active: Bool[Array, "H W"]  # cells that can be selected (the rest are never selected)

    def _selection_log_prob(self, operation, selection) -> Float32[Array, ""]:
        logits = self.cell_logits[operation]
        per_cell = jnp.where(selection, jax.nn.log_sigmoid(logits), jax.nn.log_sigmoid(-logits))
        return jnp.sum(jnp.where(self.active, per_cell, 0.0))

    def sample(self, key: PRNGKeyArray) -> MaskAction:
        op_key, cell_key = jax.random.split(key)
        operation = jax.random.categorical(op_key, self.operation_logits).astype(jnp.int32)
        chosen = jax.random.bernoulli(cell_key, jax.nn.sigmoid(self.cell_logits[operation]))
        return MaskAction(operation, chosen & self.active & _uses_selection(operation))

    def log_prob(self, action: MaskAction) -> Float32[Array, ""]:
        op_part = self.operation_log_probs()[action.operation]
        selection_part = self._selection_log_prob(action.operation, action.selection)
        return op_part + jnp.where(_uses_selection(action.operation), selection_part, 0.0)

    def selection_entropy(self) -> Float32[Array, " O"]:
        p = jax.nn.sigmoid(self.cell_logits)
        per_cell = -(
            p * jax.nn.log_sigmoid(self.cell_logits)
            + (1 - p) * jax.nn.log_sigmoid(-self.cell_logits)
        )
        return jnp.sum(jnp.where(self.active[None], per_cell, 0.0), axis=(1, 2))

    def mode(self) -> MaskAction:
        operation = jnp.argmax(self.operation_logits).astype(jnp.int32)
        chosen = self.cell_logits[operation] > 0
        return MaskAction(operation, chosen & self.active & _uses_selection(operation))
