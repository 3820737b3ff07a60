"""The zero-learning baseline: act on the hand-made cell predictor's answer by a fixed rule.

:class:`PredictorRulePolicy` has no parameters. Per episode it asks the in-context cell
predictor (:func:`jaxarc.agents.model.incontext.predict_cells`) what each input cell becomes;
at every step, among the cells whose current colour differs from the predicted one (the
cells the predictor marks *wrong*), it floods the most confidently predicted one with its
predicted colour (``FLOOD_c`` on that cell: its 4-connected same-colour region becomes
``c``), and it submits once no cell is marked wrong. It is the baseline row of the
generalisation tables: what the predictor alone solves, with nothing learned.

Its distribution puts all mass on that one action, so sampling equals the greedy action
(pass@k equals pass@1). It needs ``FLOOD_c`` and ``SUBMIT`` allowed and point or bbox
actions (a 1x1 box is a point).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float32

from jaxarc.agents.model.distributions import MASKED_LOGIT, BboxDistribution, PointDistribution
from jaxarc.agents.model.features import NUM_COLOURS, NUM_ROLES
from jaxarc.agents.model.incontext import CellPredictionConfig, predict_cells
from jaxarc.agents.model.policy import AbstractCanvasPolicy, TaskEncoding
from jaxarc.envs.types import ArcObservation
from jaxarc.grid import operation_ids as ops

RULE_FORMATS = ("point", "bbox")


def wrong_cells(
    grid: Array, prediction: Float32[Array, "H W 10"]
) -> tuple[Array, Array, Float32[Array, "H W"]]:
    """``(wrong [H, W], predicted colour [H, W], confidence [H, W])``: cells of ``grid``
    whose colour is not the predicted (most probable) one; padding is never wrong."""
    predicted = jnp.argmax(prediction, axis=-1).astype(jnp.int32)
    confidence = jnp.max(prediction, axis=-1)
    wrong = (grid >= 0) & (confidence > 0) & (predicted != grid.astype(jnp.int32))
    return wrong, predicted, confidence


class PredictorRulePolicy(AbstractCanvasPolicy):
    """Flood the most confident wrong cell with its predicted colour; submit when none is
    wrong (see the module docstring)."""

    selection_format: str = eqx.field(static=True)
    canvas: tuple[int, int] = eqx.field(static=True)
    prediction: CellPredictionConfig = eqx.field(static=True, default=CellPredictionConfig())

    def __check_init__(self) -> None:
        if self.selection_format not in RULE_FORMATS:
            raise ValueError(
                f"the predictor rule plays {RULE_FORMATS} actions, not {self.selection_format!r}"
            )

    def encode_task(self, obs: ArcObservation) -> TaskEncoding:
        cells = predict_cells(
            obs.input_grid,
            obs.demo_inputs,
            obs.demo_outputs,
            obs.demo_input_shapes,
            obs.demo_output_shapes,
            obs.demo_mask,
            self.prediction,
        )
        return TaskEncoding(
            jnp.zeros((0,), jnp.float32),
            jnp.zeros((NUM_COLOURS, NUM_ROLES), jnp.float32),
            jnp.zeros((NUM_COLOURS, NUM_COLOURS), jnp.float32),
            cells,
        )

    def act(self, obs: ArcObservation, task: TaskEncoding) -> PointDistribution | BboxDistribution:
        wrong, predicted, confidence = wrong_cells(obs.grid, task.cell_prediction)
        flat = jnp.where(wrong, confidence, -1.0).reshape(-1)
        cell = jnp.argmax(flat)  # the most confident wrong cell (first on ties)
        any_wrong = jnp.any(wrong)
        operation = jnp.where(any_wrong, ops.FLOOD_0 + predicted.reshape(-1)[cell], ops.SUBMIT)
        op_logits = jnp.where(jnp.arange(ops.NUM_OPERATIONS) == operation, 0.0, MASKED_LOGIT)
        cells = self.canvas[0] * self.canvas[1]
        cell_logits = jnp.where(jnp.arange(cells) == cell, 0.0, MASKED_LOGIT)
        per_op = jnp.broadcast_to(cell_logits, (ops.NUM_OPERATIONS, cells))
        op_logits, per_op = op_logits.astype(jnp.float32), per_op.astype(jnp.float32)
        if self.selection_format == "point":
            return PointDistribution(op_logits, per_op, self.canvas[1])
        return BboxDistribution(op_logits, per_op, per_op, self.canvas[1])


def predictor_rule_policy(
    selection_format: str, canvas: tuple[int, int], prediction: CellPredictionConfig | None = None
) -> PredictorRulePolicy:
    """The baseline for ``selection_format`` actions on ``canvas``."""
    return PredictorRulePolicy(
        selection_format, tuple(canvas), prediction or CellPredictionConfig()
    )
