"""The policy: observation -> structured action distribution (one environment; vmap it).

Architecture (small enough to train on two CPU cores):

* an in-context cell predictor (:mod:`jaxarc.agents.model.incontext`): attention from every input
  cell to the demonstration cells with similar 3x3 neighbourhoods gives what each cell
  becomes; a cell is *wrong* while the working grid disagrees with that prediction;
* task context from the in-context demonstration pairs (masked mean over pairs): a colour
  transition matrix (which input colour becomes which output colour), per-colour roles,
  symmetry scores (output vs mirrored/transposed input), the mean object displacement and
  a convolutional pair encoder (3x3 then 1x1);
* per-cell features of the working grid and the episode's input: colours, their difference,
  position and border indicators, the colour roles of each cell's colour, whether each
  cell equals the mirrored input (LR, TB, 180 degrees, transpose), the predicted colours
  and wrongness;
* a convolutional trunk (3x3 then 1x1 convolutions, context added as a bias), an operation head
  (global pooling + context, plus a colour-equivariant score shared by all FILL_c/FLOOD_c
  operations, plus a learned linear read of how much of the grid is wrong), and
  per-operation selection heads (1x1 convolutions, one map per operation; the FILL_c and
  FLOOD_c maps add learned multiples of colour-equivariant evidence for painting ``c``).

Everything the predictor computes is fixed (no parameters): what the agent learns is how to
act on it. ``PolicyConfig(in_context_prediction=False)`` removes it (an ablation).
"""

from __future__ import annotations

import abc
import copy
import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float32, Int8, Int32, PRNGKeyArray

from jaxarc.agents.model.cell_features import (
    CELL_FEATURES,
    STEP_CHANNELS,
    TASK_CHANNELS,
    step_cells,
    task_cells,
)
from jaxarc.agents.model.distributions import (
    MASKED_LOGIT,
    ActionDistribution,
    BboxDistribution,
    MaskDistribution,
    PointDistribution,
)
from jaxarc.agents.model.features import (
    NUM_COLOURS,
    NUM_ROLES,
    NUM_SYMMETRIES,
    colour_roles,
    count,
    masked_mean,
    one_hot_padded,
    pair_statistics,
)
from jaxarc.agents.model.incontext import CellPredictionConfig, predict_cells
from jaxarc.agents.model.layers import ConvHWC
from jaxarc.agents.model.learned_incontext import (
    LearnedCellPredictor,
    LearnedPredictionConfig,
    leave_one_out_loss,
    usable_pairs,
)
from jaxarc.agents.model.pair_transforms import (
    TRANSFORM_FEATURES,
    demo_transform_matches,
    transform_matches,
)
from jaxarc.envs.config import JaxArcConfig
from jaxarc.envs.episode import area_mask
from jaxarc.envs.types import ArcObservation
from jaxarc.grid import operation_ids as ops

STEP_FEATURES = 16
WRONGNESS_FEATURES = 2  # largest and mean wrongness of the working grid's cells
EVIDENCE_FLOOR = 1e-3  # log(floor + evidence) keeps "no evidence" finite
# The scalar gates on hand-made evidence (paint, wrongness) are multiplied by this gain: with
# Adam every parameter moves ~lr per update, and a gate must reach ~1 to matter, so without
# the gain it would take ~1/lr updates whatever the gradient says.
GATE_GAIN = 10.0
PAIR_FEATURES = 11 + 11 + 1


@dataclasses.dataclass(frozen=True)
class PolicyConfig:
    """Sizes of the policy network."""

    channels: int = 32  # trunk width
    trunk_layers: int = 3  # convolutions in the trunk
    spatial_layers: int = 1  # how many of them (the first) are 3x3; the rest are 1x1
    pair_channels: int = 16  # width of the demonstration-pair encoder
    context_size: int = 64  # task/state context vector
    head_hidden: int = 64  # hidden units of the operation heads
    in_context_prediction: bool = True  # the cell predictor of jaxarc.agents.model.incontext
    prediction: CellPredictionConfig = dataclasses.field(default_factory=CellPredictionConfig)
    # the learned predictor of jaxarc.agents.learned_incontext (instead of the hand-made one)
    learned_prediction: bool = False
    learned: LearnedPredictionConfig = dataclasses.field(default_factory=LearnedPredictionConfig)
    # given whole-grid transform features (jaxarc.agents.model.pair_transforms): whether each
    # dihedral transform or shift maps the demo inputs to their outputs, and the episode's
    # input to the working grid; added to the context vector
    pair_transforms: bool = False
    # bbox actions: a learned logit per operation, added to the first corner at the grid's
    # top-left cell and to the second at its bottom-right, starting at this value (0: no such
    # weights). A whole-grid box (every whole-grid transform) is otherwise a rare draw: about
    # one in (H*W)^2 of the corner pairs.
    whole_grid_prior: float = 0.0

    def __post_init__(self) -> None:
        if self.learned_prediction and self.in_context_prediction:
            raise ValueError(
                "PolicyConfig: learned_prediction and in_context_prediction (the hand-made "
                "predictor) are alternatives; switch one off"
            )
        for name in ("channels", "trunk_layers", "pair_channels", "context_size", "head_hidden"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"PolicyConfig.{name} must be a positive int, got {value!r}")
        if not math.isfinite(self.whole_grid_prior):
            raise ValueError(
                "PolicyConfig.whole_grid_prior must be a finite number, "
                f"got {self.whole_grid_prior!r}"
            )
        if not 0 <= self.spatial_layers <= self.trunk_layers:
            raise ValueError(
                f"PolicyConfig.spatial_layers must be in 0..trunk_layers, got {self.spatial_layers}"
            )


# ---------------------------------------------------------------- the policy


class TaskEncoding(eqx.Module):
    """What a policy extracts from the demonstration pairs (constant within an episode)."""

    features: Float32[Array, " D"]
    roles: Float32[Array, "10 4"]
    colour_map: Float32[Array, "10 10"]  # P(output colour j | input colour i) in the demos
    cell_prediction: Float32[Array, "H W 10"]  # what each input cell becomes (incontext)
    # ConvPolicy: its trunk's first layer on the per-episode cell channels (no bias); None:
    # computed in act
    trunk_input: Float32[Array, "H W C"] | None = None


class AbstractPolicy(eqx.Module):
    """A policy maps one observation to an :class:`ActionDistribution`.

    Policies split the work in two so that callers can reuse the per-episode part:
    ``encode_task(obs)`` (the demonstration pairs; constant over an episode) and
    ``act(obs, encoding)``; ``policy(obs)`` does both.
    """

    def with_canvas(self, canvas: tuple[int, int]) -> AbstractPolicy:
        """This policy set to read a ``canvas``-sized grid. The default is the policy itself
        (it reads the canvas from the observation); :class:`AbstractCanvasPolicy` records it."""
        del canvas
        return self

    def __call__(self, obs: ArcObservation) -> ActionDistribution:
        return self.act(obs, self.encode_task(obs))

    def encode_task(self, obs: ArcObservation) -> TaskEncoding:
        """Per-episode features; the default encodes nothing."""
        return TaskEncoding(
            jnp.zeros((0,), jnp.float32),
            jnp.zeros((NUM_COLOURS, NUM_ROLES), jnp.float32),
            jnp.zeros((NUM_COLOURS, NUM_COLOURS), jnp.float32),
            jnp.zeros((*obs.grid.shape, NUM_COLOURS), jnp.float32),
        )

    @abc.abstractmethod
    def act(self, obs: ArcObservation, task: TaskEncoding) -> ActionDistribution: ...

    def in_context_loss(self, obs: ArcObservation) -> Float32[Array, ""]:
        """A self-supervised loss on the demonstration pairs alone (no target needed);
        the default has nothing to learn there."""
        del obs
        return jnp.float32(0.0)


class AbstractCanvasPolicy(AbstractPolicy):
    """A policy that records the ``(H, W)`` canvas it reads in a static ``canvas`` field
    while none of its weights depends on it (convolutions, attention, pooling), so
    :meth:`with_canvas` gives the same weights reading another canvas. Subclasses declare
    ``canvas: tuple[int, int] = eqx.field(static=True)`` (a field of their own, so their
    positional arguments keep their order)."""

    def with_canvas(self, canvas: tuple[int, int]) -> AbstractCanvasPolicy:
        canvas = (int(canvas[0]), int(canvas[1]))
        if tuple(self.canvas) == canvas:
            return self
        adapted = copy.copy(self)
        object.__setattr__(adapted, "canvas", canvas)  # static metadata of a frozen module
        return adapted


class ConvPolicy(AbstractCanvasPolicy):
    """The convolutional in-context policy described in the module docstring."""

    pair_conv1: ConvHWC
    pair_conv2: ConvHWC
    context_mlp: eqx.nn.MLP
    context_to_trunk: eqx.nn.Linear
    trunk: tuple[ConvHWC, ...]
    operation_mlp: eqx.nn.MLP
    colour_mlp: eqx.nn.MLP
    selection_heads: ConvHWC
    paint_colour_weights: Float32[Array, "2 3"]  # gates (x GATE_GAIN), per paint family
    paint_op_weights: Float32[Array, "2 2"]  # gates (x GATE_GAIN), per paint family
    wrongness_op_weights: Float32[Array, "35 2"]  # gates (x GATE_GAIN), per operation
    # bbox: the whole-grid corners' logits (x GATE_GAIN) per operation; None when not used
    whole_grid_corner_weights: Float32[Array, "2 35"] | None
    learned_predictor: LearnedCellPredictor | None
    selection_format: str = eqx.field(static=True)
    pair_transforms: bool = eqx.field(static=True)
    prediction: CellPredictionConfig | None = eqx.field(static=True)
    canvas: tuple[int, int] = eqx.field(static=True)

    def __init__(self, key: PRNGKeyArray, config: PolicyConfig, env_config: JaxArcConfig):
        keys = jax.random.split(key, 8 + config.trunk_layers)
        c, pc = config.channels, config.pair_channels
        self.selection_format = env_config.action.selection_format
        self.canvas = env_config.dataset.canvas_shape
        self.pair_transforms = config.pair_transforms
        self.prediction = config.prediction if config.in_context_prediction else None
        self.learned_predictor = (
            LearnedCellPredictor(config.learned, key=jax.random.fold_in(key, 1))
            if config.learned_prediction
            else None
        )
        self.pair_conv1 = ConvHWC(PAIR_FEATURES, pc, 3, key=keys[0])
        self.pair_conv2 = ConvHWC(pc, pc, 1, key=keys[1])
        context_in = (
            NUM_COLOURS * NUM_COLOURS
            + NUM_COLOURS * NUM_ROLES
            + NUM_SYMMETRIES
            + 2
            + 2 * pc
            + NUM_SYMMETRIES
            + 2
            + 1
            + STEP_FEATURES
            + WRONGNESS_FEATURES
            + (2 * TRANSFORM_FEATURES if config.pair_transforms else 0)
        )
        self.context_mlp = eqx.nn.MLP(
            context_in, config.context_size, config.head_hidden, 1, key=keys[2]
        )
        self.context_to_trunk = eqx.nn.Linear(config.context_size, c, key=keys[3])
        self.trunk = tuple(
            ConvHWC(
                CELL_FEATURES if i == 0 else c,
                c,
                3 if i < config.spatial_layers else 1,
                key=keys[8 + i],
            )
            for i in range(config.trunk_layers)
        )
        self.operation_mlp = eqx.nn.MLP(
            2 * c + config.context_size, ops.NUM_OPERATIONS, config.head_hidden, 1, key=keys[4]
        )
        self.colour_mlp = eqx.nn.MLP(
            NUM_ROLES + 3 + 2 + config.context_size, 2, config.head_hidden, 1, key=keys[5]
        )
        heads = {"point": 1, "bbox": 2, "mask": 1}[self.selection_format]
        self.selection_heads = ConvHWC(c, heads * ops.NUM_OPERATIONS, 1, key=keys[6])
        self.paint_colour_weights = jnp.zeros((2, 3), jnp.float32)
        self.paint_op_weights = jnp.zeros((2, 2), jnp.float32)
        self.wrongness_op_weights = jnp.zeros((ops.NUM_OPERATIONS, WRONGNESS_FEATURES), jnp.float32)
        self.whole_grid_corner_weights = (
            jnp.full((2, ops.NUM_OPERATIONS), config.whole_grid_prior / GATE_GAIN, jnp.float32)
            if self.selection_format == "bbox" and config.whole_grid_prior != 0.0
            else None
        )

    # -- what the demonstration pairs say (constant over an episode: computed once)
    def encode_task(self, obs: ArcObservation) -> TaskEncoding:
        """Features of the in-context pairs: reuse them for every step of the episode."""
        stats = jax.vmap(pair_statistics)(
            obs.demo_inputs, obs.demo_outputs, obs.demo_input_shapes, obs.demo_output_shapes
        )
        transitions, symmetry, shift = (masked_mean(s, obs.demo_mask) for s in stats)
        roles = colour_roles(transitions)

        def encode_pair(inp, out):
            x = jnp.concatenate(
                [one_hot_padded(inp), one_hot_padded(out), (inp != out)[None].astype(jnp.float32)]
            )
            x = jnp.moveaxis(x, 0, -1)  # channels last
            x = jax.nn.relu(self.pair_conv2(jax.nn.relu(self.pair_conv1(x))))
            return jnp.concatenate([jnp.mean(x, axis=(0, 1)), jnp.max(x, axis=(0, 1))])

        pair_codes = jax.vmap(encode_pair)(obs.demo_inputs, obs.demo_outputs)
        pair_code = masked_mean(pair_codes, obs.demo_mask)
        features = jnp.concatenate(
            [transitions.reshape(-1), roles.reshape(-1), symmetry, shift, pair_code]
        )
        if self.pair_transforms:
            demo_matches = demo_transform_matches(
                obs.demo_inputs,
                obs.demo_outputs,
                obs.demo_input_shapes,
                obs.demo_output_shapes,
                obs.demo_mask,
            )
            features = jnp.concatenate([features, demo_matches])
        colour_map = transitions / jnp.maximum(jnp.sum(transitions, axis=1, keepdims=True), 1e-6)
        if self.learned_predictor is not None:
            cell_prediction = self.learned_predictor(
                obs.input_grid,
                obs.demo_inputs,
                obs.demo_outputs,
                usable_pairs(obs.demo_input_shapes, obs.demo_output_shapes, obs.demo_mask),
            )
        elif self.prediction is None:
            cell_prediction = jnp.zeros((*self.canvas, NUM_COLOURS), jnp.float32)
        else:
            cell_prediction = predict_cells(
                obs.input_grid,
                obs.demo_inputs,
                obs.demo_outputs,
                obs.demo_input_shapes,
                obs.demo_output_shapes,
                obs.demo_mask,
                self.prediction,
            )
        trunk_input = self.trunk[0].partial(
            task_cells(obs.input_grid, roles, cell_prediction), TASK_CHANNELS
        )
        return TaskEncoding(features, roles, colour_map, cell_prediction, trunk_input)

    def in_context_loss(self, obs: ArcObservation) -> Float32[Array, ""]:
        """The learned predictor's leave-one-out loss on the shown pairs (0 without it)."""
        if self.learned_predictor is None:
            return jnp.float32(0.0)
        return leave_one_out_loss(
            self.learned_predictor,
            obs.demo_inputs,
            obs.demo_outputs,
            obs.demo_input_shapes,
            obs.demo_output_shapes,
            obs.demo_mask,
        )

    def _wrongness(
        self, obs: ArcObservation, task: TaskEncoding, area: Bool[Array, "H W"]
    ) -> Float32[Array, "H W"]:
        """``1 - P(predicted colour == the working grid's colour)`` inside the grid's ``area``
        (zeros without a predictor)."""
        if self.prediction is None and self.learned_predictor is None:
            return jnp.zeros(self.canvas, jnp.float32)
        current = jax.nn.one_hot(obs.grid, NUM_COLOURS, dtype=jnp.float32)
        agreement = jnp.sum(current * task.cell_prediction, axis=-1)
        return jnp.where(area, 1.0 - agreement, 0.0)

    # -- context: the task encoding and the episode so far
    def _context(
        self, obs: ArcObservation, task: TaskEncoding, wrongness: Float32[Array, " 2"]
    ) -> Float32[Array, " C"]:
        _, grid_symmetry, grid_shift = pair_statistics(
            obs.input_grid, obs.grid, obs.input_shape, obs.grid_shape
        )
        area = area_mask(obs.grid_shape, self.canvas)
        changed = count((obs.grid != obs.input_grid) & area) / jnp.maximum(count(area), 1.0)
        step = jax.nn.one_hot(jnp.minimum(obs.step_count, STEP_FEATURES - 1), STEP_FEATURES)
        parts = [task.features, grid_symmetry, grid_shift, changed[None], step, wrongness]
        if self.pair_transforms:  # how far the episode is: T(input) vs the working grid
            parts.append(
                transform_matches(obs.input_grid, obs.input_shape, obs.grid, obs.grid_shape)
            )
        features = jnp.concatenate(parts)
        return jax.nn.relu(self.context_mlp(features))

    def __call__(self, obs: ArcObservation) -> ActionDistribution:
        return self.act(obs, self.encode_task(obs))

    def act(self, obs: ArcObservation, task: TaskEncoding) -> ActionDistribution:
        """The distribution for ``obs`` given its episode's :meth:`encode_task`."""
        area = area_mask(obs.grid_shape, self.canvas)
        cells = jnp.maximum(count(area), 1.0)
        wrong = self._wrongness(obs, task, area)
        wrongness = jnp.stack([jnp.max(wrong), jnp.sum(wrong) / cells])
        # evidence for painting colour c at a cell: the cell is wrong and should become c
        paint_evidence = wrong[..., None] * task.cell_prediction  # [H, W, 10]
        best_evidence = jnp.max(paint_evidence, axis=(0, 1))  # [10]
        mean_evidence = jnp.sum(paint_evidence, axis=(0, 1)) / cells  # [10]
        context = self._context(obs, task, wrongness)
        roles = task.roles
        # the first layer: per-step channels now, per-episode ones from encode_task
        # (jaxarc.agents.model.cell_features: the same convolution, split by channels)
        trunk_input = task.trunk_input
        if trunk_input is None:
            trunk_input = self.trunk[0].partial(
                task_cells(obs.input_grid, roles, task.cell_prediction), TASK_CHANNELS
            )
        x = self.trunk[0].partial(step_cells(obs, roles, wrong, self.canvas), STEP_CHANNELS)
        bias = self.trunk[0].bias + self.context_to_trunk(context)
        x = x + trunk_input + bias[None, None, :]
        x = jax.nn.relu(x)
        for conv in self.trunk[1:]:
            x = jax.nn.relu(conv(x))
        pooled_mean = jnp.sum(jnp.where(area[..., None], x, 0.0), axis=(0, 1)) / cells
        pooled_max = jnp.max(jnp.where(area[..., None], x, -1e9), axis=(0, 1))
        op_logits = self.operation_mlp(jnp.concatenate([pooled_mean, pooled_max, context]))
        op_logits = op_logits + GATE_GAIN * (self.wrongness_op_weights @ wrongness)

        # colour-equivariant scores for FILL_c (0..9) and FLOOD_c (10..19)
        grid_counts = jnp.sum(jax.nn.one_hot(jnp.where(area, obs.grid, -1), NUM_COLOURS), (0, 1))
        input_area = area_mask(obs.input_shape, self.canvas)
        input_counts = jnp.sum(
            jax.nn.one_hot(jnp.where(input_area, obs.input_grid, -1), NUM_COLOURS), (0, 1)
        )
        colour_features = jnp.concatenate(
            [
                roles,
                (grid_counts / cells)[:, None],
                (input_counts / cells)[:, None],
                (grid_counts > 0)[:, None].astype(jnp.float32),
                best_evidence[:, None],
                mean_evidence[:, None],
                jnp.broadcast_to(context[None], (NUM_COLOURS, context.shape[0])),
            ],
            axis=1,
        )
        colour_scores = jax.vmap(self.colour_mlp)(colour_features)  # [10, 2]
        # the best cell's evidence for painting each colour, gated per paint family
        evidence = jnp.stack(
            [jnp.log(EVIDENCE_FLOOR + best_evidence), mean_evidence], axis=1
        )  # [10, 2]
        colour_scores = colour_scores + GATE_GAIN * (evidence @ self.paint_op_weights.T)
        colour_part = jnp.concatenate(
            [colour_scores.T.reshape(-1), jnp.zeros(ops.NUM_OPERATIONS - 2 * NUM_COLOURS)]
        )
        op_logits = jnp.where(obs.allowed_operations, op_logits + colour_part, MASKED_LOGIT)

        # channels last until the end: [H, W, heads, O], one transpose to [heads, O, H*W]
        maps = self.selection_heads(x).reshape(*self.canvas, -1, ops.NUM_OPERATIONS)
        maps = self._colour_equivariant_paint_maps(maps, obs.grid, task.colour_map, paint_evidence)
        if self.whole_grid_corner_weights is not None:
            maps = maps + self._whole_grid_corner_bias(obs.grid_shape)
        maps = jnp.where(area[..., None, None], maps, MASKED_LOGIT)
        maps = jnp.transpose(maps, (2, 3, 0, 1))  # [heads, O, H, W]
        num_ops = ops.NUM_OPERATIONS
        if self.selection_format == "point":
            return PointDistribution(op_logits, maps.reshape(num_ops, -1), self.canvas[1])
        if self.selection_format == "bbox":
            flat = maps.reshape(2, num_ops, -1)
            return BboxDistribution(op_logits, flat[0], flat[1], self.canvas[1])
        return MaskDistribution(op_logits, maps[0], area)

    def _whole_grid_corner_bias(self, grid_shape: Int32[Array, "2"]) -> Float32[Array, "H W 2 O"]:
        """The learned whole-grid logits at the grid's top-left cell (first corner head) and
        its bottom-right cell (second corner head); zero elsewhere."""
        rows = jnp.arange(self.canvas[0])[:, None]
        cols = jnp.arange(self.canvas[1])[None, :]
        top_left = (rows == 0) & (cols == 0)
        bottom_right = (rows == grid_shape[0] - 1) & (cols == grid_shape[1] - 1)
        corners = jnp.stack([top_left, bottom_right], axis=-1).astype(jnp.float32)  # [H, W, 2]
        return GATE_GAIN * corners[..., None] * self.whole_grid_corner_weights[None, None]

    def _colour_equivariant_paint_maps(
        self,
        maps: Float32[Array, "H W K O"],
        grid: Int8[Array, "H W"],
        colour_map: Float32[Array, "10 10"],
        paint_evidence: Float32[Array, "H W 10"],
    ) -> Float32[Array, "H W K O"]:
        """FILL_c / FLOOD_c selection maps shared by the ten colours ``c`` (``K`` heads of
        ``O`` operation maps, channels last).

        The map of ``FILL_0`` (``FLOOD_0``) is the shared one; the colour ``c`` adds a learned
        mix of "the demonstrations turn this cell's colour into ``c``", "this cell is
        already ``c``" and the log of the in-context evidence that this wrong cell should
        become ``c``. A rule learned for one colour then holds for all ten.
        """
        colour = jnp.maximum(grid, 0).astype(jnp.int32)
        turns_into = colour_map[colour]  # [H, W, 10]
        already = jax.nn.one_hot(colour, NUM_COLOURS, dtype=jnp.float32)
        log_evidence = jnp.log(EVIDENCE_FLOOR + paint_evidence)
        painted = []
        for family, first in enumerate((ops.FILL_0, ops.FLOOD_0)):
            weights = GATE_GAIN * self.paint_colour_weights[family]
            bonus = weights[0] * turns_into + weights[1] * already + weights[2] * log_evidence
            painted.append(maps[..., first : first + 1] + bonus[:, :, None, :])
        return jnp.concatenate([*painted, maps[..., 2 * NUM_COLOURS :]], axis=-1)


def make_policy(
    key: PRNGKeyArray, policy_config: PolicyConfig, env_config: JaxArcConfig, max_demos: int = 4
) -> ConvPolicy:
    """A freshly initialised policy for the environment ``env_config``.

    ``max_demos`` is accepted for the agents API; the pair encoder works for any ``P``.
    """
    del max_demos
    return ConvPolicy(key, policy_config, env_config)


class UniformPolicy(AbstractCanvasPolicy):
    """The uniformly random policy: every allowed operation and every selection equally likely
    (the baseline a trained policy is compared with)."""

    selection_format: str = eqx.field(static=True)
    canvas: tuple[int, int] = eqx.field(static=True)

    def act(self, obs: ArcObservation, task: TaskEncoding) -> ActionDistribution:
        del task
        area = area_mask(obs.grid_shape, self.canvas)
        op_logits = jnp.where(obs.allowed_operations, 0.0, MASKED_LOGIT).astype(jnp.float32)
        maps = jnp.where(area, 0.0, MASKED_LOGIT).astype(jnp.float32)
        num_ops, cells = ops.NUM_OPERATIONS, self.canvas[0] * self.canvas[1]
        per_op = jnp.broadcast_to(maps.reshape(1, cells), (num_ops, cells))
        if self.selection_format == "point":
            return PointDistribution(op_logits, per_op, self.canvas[1])
        if self.selection_format == "bbox":
            return BboxDistribution(op_logits, per_op, per_op, self.canvas[1])
        mask_logits = jnp.broadcast_to(
            jnp.where(area, 0.0, MASKED_LOGIT)[None], (num_ops, *self.canvas)
        )
        return MaskDistribution(op_logits, mask_logits.astype(jnp.float32), area)
