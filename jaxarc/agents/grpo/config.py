"""Training configuration: frozen, typed dataclasses (hashable; the CLI makes flags of them).

``TrainConfig`` holds the whole run: the environment (task source, action format, allowed
operations, reward weights), the batch shape (``batch_tasks`` B tasks x ``group_size`` G
rollouts x ``max_episode_steps`` T steps), the optimiser, the GRPO objective
(:class:`GRPOConfig`) and the network (:class:`~jaxarc.agents.model.policy.PolicyConfig`).
``TrainConfig.preset("quick" | "medium" | "default")`` gives the tuned presets.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

from jaxarc.agents.model.policy import PolicyConfig
from jaxarc.data.generators import generator_canvas, generator_families
from jaxarc.data.shape_families import SHAPE_FAMILIES
from jaxarc.envs.config import (
    REWARD_DEFAULTS,
    JaxArcConfig,
    RewardParams,
    UnifiedActionConfig,
    config_from_options,
    static_config_from_options,
)
from jaxarc.grid import operation_ids as ops

AdvantageMode = Literal["group", "none", "rloo", "process"]
ADVANTAGE_MODES = ("group", "none", "rloo", "process")
Schedule = Literal["constant", "cosine", "linear"]

# Editing operations without clipboard, resize or whole-grid resets: FILL_c, FLOOD_c, the
# four moves, rotations, flips and SUBMIT (29 of the 35 operations).
EDITING_OPERATIONS: tuple[int, ...] = (
    *range(ops.FILL_0, ops.FILL_0 + 10),
    *range(ops.FLOOD_0, ops.FLOOD_0 + 10),
    ops.MOVE_UP,
    ops.MOVE_DOWN,
    ops.MOVE_LEFT,
    ops.MOVE_RIGHT,
    ops.ROTATE_CW,
    ops.ROTATE_CCW,
    ops.FLIP_LR,
    ops.FLIP_TB,
    ops.SUBMIT,
)


# What gen/easy needs: the ten FLOOD_c and SUBMIT (11 operations). The agent still has to
# infer from the demonstrations which cells to flood and with which of the ten colours.
FLOOD_AND_SUBMIT: tuple[int, ...] = (*range(ops.FLOOD_0, ops.FLOOD_0 + 10), ops.SUBMIT)


def _families_without_expert(source: str) -> tuple[str, ...]:
    """The families of a ``gen/...`` source that the BC expert cannot solve (``()`` for
    anything else; an unknown name is reported where the source is loaded)."""
    try:
        families = generator_families(source) if source.startswith("gen/") else ()
    except ValueError:
        return ()
    return tuple(f for f in families if f in SHAPE_FAMILIES)


def _positive(owner: str, **values: float) -> None:
    _finite(owner, **values)
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{owner}.{name} must be positive, got {value!r}")


def _finite(owner: str, **values: float) -> None:
    """Every value is a finite number (``inf``/``nan`` would silently poison the training)."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{owner}.{name} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{owner}.{name} must be finite, got {value!r}")


def _integers(config: object) -> None:
    """Every ``int`` field of a config dataclass holds an int (not a bool, float or str)."""
    for field in dataclasses.fields(config):  # type: ignore[arg-type]
        value = getattr(config, field.name)
        if field.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{type(config).__name__}.{field.name} must be an int, got {value!r}")


def _non_negative(owner: str, **values: int) -> None:
    _finite(owner, **values)
    for name, value in values.items():
        if value < 0:
            raise ValueError(f"{owner}.{name} must be >= 0, got {value!r}")


@dataclasses.dataclass(frozen=True)
class GRPOConfig:
    """The clipped-surrogate objective and its inner optimisation loop.

    Attributes:
        advantage: ``"group"`` ((R - mean) / (std + eps)), ``"none"`` (R - mean, Dr. GRPO)
            or ``"rloo"`` (R minus the mean of the other rollouts of the group).
        eps_low, eps_high: the ratio is clipped to ``[1 - eps_low, 1 + eps_high]``.
        beta: weight of the k3 KL estimate to the reference policy.
        ref_refresh_every: the reference becomes the current policy every K updates.
        entropy_coef: entropy bonus weight.
        in_context_coef: weight of the policy's self-supervised in-context loss (the learned
            predictor's leave-one-out loss on the demonstration pairs; 0 for other policies).
        hindsight_fraction: the share of each update's groups also trained on as hindsight
            groups (:mod:`jaxarc.agents.grpo.hindsight`: relabelled with the task one of
            their rollouts solved), in ``[0, 1]``; 0: off, 1: every group.
        hindsight_failed_only: relabel only groups none of whose rollouts solved their
            task (a group that has a success learns from its own reward).
        hindsight_in_context: whether the in-context loss also reads the hindsight
            groups' relabelled demonstrations (False: the environment's tasks only).
        epochs: inner epochs (mu) over the rollout batch per update.
        minibatches: minibatches per epoch (must divide ``batch_tasks * group_size``).
    """

    advantage: AdvantageMode = "group"
    eps_low: float = 0.2
    eps_high: float = 0.28
    beta: float = 0.01
    ref_refresh_every: int = 20
    entropy_coef: float = 0.0
    in_context_coef: float = 0.0
    hindsight_fraction: float = 0.0
    hindsight_failed_only: bool = False
    hindsight_in_context: bool = True
    epochs: int = 2
    minibatches: int = 2

    def __post_init__(self) -> None:
        if self.advantage not in ADVANTAGE_MODES:
            raise ValueError(f"advantage must be one of {ADVANTAGE_MODES}, got {self.advantage!r}")
        _positive("GRPOConfig", eps_low=self.eps_low, eps_high=self.eps_high)
        _positive("GRPOConfig", epochs=self.epochs, minibatches=self.minibatches)
        _positive("GRPOConfig", ref_refresh_every=self.ref_refresh_every)
        _non_negative(
            "GRPOConfig",
            beta=self.beta,
            entropy_coef=self.entropy_coef,
            in_context_coef=self.in_context_coef,
            hindsight_fraction=self.hindsight_fraction,
        )
        if self.hindsight_fraction > 1:
            raise ValueError(
                f"GRPOConfig.hindsight_fraction must be in [0, 1], got {self.hindsight_fraction!r}"
            )
        _integers(self)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything a training run depends on (saved with every checkpoint)."""

    # environment
    source: str = "gen/easy"
    selection_format: Literal["point", "bbox", "mask"] = "bbox"
    canvas: int = 8  # square canvas side (generators use 8)
    allowed_operations: tuple[int, ...] | None = EDITING_OPERATIONS
    episode_mode: Literal["train", "eval"] = "train"
    # reward weights: the environment's defaults (jaxarc.envs.config.REWARD_DEFAULTS)
    success_bonus: float = REWARD_DEFAULTS["success_bonus"]
    failed_submit_penalty: float = REWARD_DEFAULTS["failed_submit_penalty"]
    step_penalty: float = REWARD_DEFAULTS["step_penalty"]
    similarity_weight: float = REWARD_DEFAULTS["similarity_weight"]
    # batch shape: B tasks x G rollouts x T steps (T is the environment's episode length)
    batch_tasks: int = 32
    group_size: int = 8
    max_episode_steps: int = 5
    # optimisation
    num_updates: int = 500  # the run's total; with --resume it counts the updates done too
    lr: float = 1e-3
    lr_schedule: Schedule = "constant"
    warmup_updates: int = 0
    max_grad_norm: float = 1.0
    seed: int = 0
    eval_tasks: int = 256  # held-out tasks for the success-rate evaluation
    # behaviour cloning warm start (jaxarc.agents.grpo.behaviour_cloning): the first bc_updates
    # of the num_updates updates clone the paint expert instead of running GRPO
    bc_updates: int = 0
    bc_aux_coef: float = 1.0  # weight of the per-cell target-colour loss during BC
    # the policy's starting weights: None draws them from the seed; a run or checkpoint
    # directory starts from its policy (same policy config and action format; another
    # source or canvas is fine). The optimiser starts afresh.
    init_from: str | None = None
    grpo: GRPOConfig = dataclasses.field(default_factory=GRPOConfig)
    policy: PolicyConfig = dataclasses.field(default_factory=PolicyConfig)

    def __post_init__(self) -> None:
        _positive(
            "TrainConfig",
            batch_tasks=self.batch_tasks,
            group_size=self.group_size,
            max_episode_steps=self.max_episode_steps,
            num_updates=self.num_updates,
            lr=self.lr,
            max_grad_norm=self.max_grad_norm,
            eval_tasks=self.eval_tasks,
        )
        _non_negative(
            "TrainConfig",
            warmup_updates=self.warmup_updates,
            bc_updates=self.bc_updates,
            bc_aux_coef=self.bc_aux_coef,
        )
        _finite(
            "TrainConfig",
            success_bonus=self.success_bonus,
            failed_submit_penalty=self.failed_submit_penalty,
            step_penalty=self.step_penalty,
            similarity_weight=self.similarity_weight,
        )
        if self.group_size < 2:
            raise ValueError(
                f"group_size must be at least 2 (GRPO compares rollouts), got {self.group_size}"
            )
        episodes = (self.batch_tasks + self.hindsight_groups) * self.group_size
        if episodes % self.grpo.minibatches:
            raise ValueError(
                f"grpo.minibatches={self.grpo.minibatches} must divide the update's episodes, "
                f"(batch_tasks + hindsight groups) * group_size = {episodes}"
            )
        _integers(self)
        if self.allowed_operations is not None:  # ids or names -> sorted ids, as the env does
            try:
                ids = UnifiedActionConfig(allowed_operations=self.allowed_operations)
            except ValueError as err:
                raise ValueError(f"TrainConfig.{err}") from None
            object.__setattr__(self, "allowed_operations", ids.allowed_operations)
        try:  # canvas, selection format, operations: what the environment will accept
            self.env_config()
        except ValueError as err:
            raise ValueError(f"TrainConfig environment (canvas={self.canvas!r}): {err}") from None
        unplayed = _families_without_expert(self.source) if self.bc_updates else ()
        if unplayed:
            raise ValueError(
                f"TrainConfig.bc_updates={self.bc_updates}: the behaviour-cloning expert does not "
                f"play {', '.join(unplayed)} (outputs of another shape) in {self.source}; "
                "set bc_updates=0 to learn them from reward"
            )

    @property
    def hindsight_groups(self) -> int:
        """How many of the ``batch_tasks`` groups are relabelled each update
        (``grpo.hindsight_fraction`` of them, rounded)."""
        return round(self.grpo.hindsight_fraction * self.batch_tasks)

    def env_options(self) -> dict[str, object]:
        """This run's environment as flat ``jaxarc.make`` options (the same names)."""
        names = (
            "max_episode_steps",
            "episode_mode",
            "selection_format",
            "allowed_operations",
            *REWARD_DEFAULTS,
        )
        return {name: getattr(self, name) for name in names}

    def env_config(self, episode_mode: str | None = None) -> JaxArcConfig:
        """The environment configuration of this run (``episode_mode`` overrides)."""
        options = self.env_options()
        if episode_mode is not None:
            options["episode_mode"] = episode_mode
        canvas = (self.canvas, self.canvas)
        return static_config_from_options(canvas, owner="TrainConfig", **options)

    def reward_params(self) -> RewardParams:
        """The reward weights of this run."""
        return config_from_options((self.canvas, self.canvas), **self.env_options())[1]

    def replace(self, **changes: object) -> TrainConfig:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def preset(cls, name: str, source: str | None = None) -> TrainConfig:
        """``"quick"`` (gen/easy in minutes on two CPU cores: behaviour cloning, then GRPO),
        ``"medium"`` (gen/medium: the eight colour and geometric families, bbox actions, all
        35 operations, behaviour cloning, then GRPO), ``"rl"`` (reward only: no expert, no
        behaviour cloning, no given features; GRPO with hindsight groups) or ``"default"``.

        ``source`` (``"rl"`` only) plays another source with the action format it needs:
        see :func:`rl_preset`. The other presets keep their own source.
        """
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
        if name == "rl" and source is not None:
            return rl_preset(source)
        return PRESETS[name]


# The policy of the quick and medium presets: the learned in-context predictor, the hand-made
# one off (an ablation: --no-policy-learned-prediction --policy-in-context-prediction).
LEARNED_POLICY = PolicyConfig(
    channels=24,
    trunk_layers=2,
    pair_channels=8,
    context_size=48,
    head_hidden=48,
    in_context_prediction=False,
    learned_prediction=True,
)

# The medium preset's policy: LEARNED_POLICY plus the given whole-grid transform features
# (jaxarc.agents.model.pair_transforms), which the geometric families need to choose among the
# 35 operations from the demonstrations.
MEDIUM_POLICY = dataclasses.replace(LEARNED_POLICY, pair_transforms=True)

PRESETS: dict[str, TrainConfig] = {
    "quick": TrainConfig(
        # gen/easy is four flood families: point actions, FLOOD_c and SUBMIT suffice
        selection_format="point",
        batch_tasks=16,
        group_size=8,
        max_episode_steps=4,
        allowed_operations=FLOOD_AND_SUBMIT,
        failed_submit_penalty=0.0,  # a penalty teaches "never submit" (truncation is free)
        similarity_weight=1.0,
        # 80 behaviour-cloning updates (the paint expert; per-cell target loss trains the
        # learned predictor), then GRPO
        num_updates=130,
        bc_updates=80,
        lr=1e-3,
        # process supervision: each step is credited with its own (normalised) reward and
        # what follows, so one destructive flood does not condemn the good steps before it;
        # a small entropy bonus (a large one holds the evidence gates of the policy at 0);
        # no KL term (beta=0, as in DAPO): the reference policy's forward pass costs 10-25%
        # of an update, and with and without it three seeds each ended at 100% held-out
        # (docs/training.md, "The KL term")
        grpo=GRPOConfig(advantage="process", entropy_coef=0.01, epochs=1, minibatches=1, beta=0.0),
        # the learned in-context predictor; the hand-made one is off (an ablation:
        # --no-policy-learned-prediction --policy-in-context-prediction)
        policy=LEARNED_POLICY,
    ),
    # gen/medium: the four flood families of gen/easy and rot180/move/flip/rotate, played with
    # bbox actions and every operation allowed (no restriction hints which ones matter); the
    # hand-made cell predictor is off, so whatever the policy infers it learned. BC clones the
    # state expert (jaxarc.agents.grpo.state_expert: whole-grid flips/rotations/moves when they
    # reach the target, else floods), then GRPO.
    "medium": TrainConfig(
        source="gen/medium",
        selection_format="bbox",
        allowed_operations=None,
        batch_tasks=16,
        group_size=8,
        max_episode_steps=4,  # every family's oracle needs 2-3 actions (SUBMIT included)
        failed_submit_penalty=0.0,
        similarity_weight=1.0,
        num_updates=2000,
        bc_updates=400,
        lr=1e-3,
        eval_tasks=512,
        grpo=GRPOConfig(advantage="process", entropy_coef=0.01, epochs=1, minibatches=1),
        policy=MEDIUM_POLICY,
    ),
    # reward only: no expert, no behaviour cloning, no given task features. What the agent
    # learns from is the environment's reward (the similarity gain of each step, the success
    # of SUBMIT) and the demonstration pairs (the learned predictor's leave-one-out loss).
    # Hindsight groups (jaxarc.agents.grpo.hindsight): half of the groups, those none of
    # whose rollouts succeeded, relabelled with the task one of their rollouts solved.
    # Without them the policy settles on doing nothing on the ladder's rungs; relabelling
    # every group held gen/easy's fill_holes family at 0% and collapsed the policy on
    # gen/medium; a quarter left gen/ladder-1 stuck on doing nothing on one seed of three
    # (docs/training.md, "Learning from reward").
    "rl": TrainConfig(
        selection_format="point",
        batch_tasks=16,
        group_size=8,
        max_episode_steps=4,
        allowed_operations=FLOOD_AND_SUBMIT,
        failed_submit_penalty=0.0,
        similarity_weight=1.0,
        num_updates=600,
        lr=1e-3,
        eval_tasks=512,
        grpo=GRPOConfig(
            advantage="process",
            entropy_coef=0.01,
            epochs=1,
            minibatches=1,
            beta=0.0,
            in_context_coef=1.0,
            hindsight_fraction=0.5,
            hindsight_failed_only=True,
        ),
        policy=LEARNED_POLICY,
    ),
    "default": TrainConfig(
        similarity_weight=0.5,  # dense shaping (the environment's own default is 0.0)
        batch_tasks=64,
        group_size=8,
        num_updates=3000,
        lr=5e-4,
        lr_schedule="cosine",
        warmup_updates=50,
        eval_tasks=1024,
        policy=PolicyConfig(channels=48, context_size=96, head_hidden=96),
    ),
}


# Families played with point actions (one FLOOD_c per changing region); the others act on
# rectangles (whole-grid flips, rotations and moves) and need bbox actions.
POINT_FAMILIES = frozenset(
    ("recolour", "erase", "fill_background", "fill_holes", "mark_one", "recolour_cell_two")
    + ("recolour_cell",)
)
TASK_BANK_CANVAS = 30  # ARC grids are at most 30x30


BBOX_HINDSIGHT_FRACTION = 0.25  # the rl preset's share of relabelled groups with bbox actions
BBOX_WHOLE_GRID_PRIOR = 3.0  # the rl preset's whole-grid corners with bbox actions


def rl_preset(source: str) -> TrainConfig:
    """The ``rl`` preset on ``source``, with the action format the source needs.

    * a generator whose families all take point actions (the ladder's rungs, ``gen/easy``,
      its four families): point actions, ``FLOOD_0..9`` and SUBMIT, the generator's canvas;
    * any other generator (``gen/medium``, the geometric families): bbox actions and all 35
      operations, the generator's canvas;
    * a task bank (``arc-agi-1/training``, a directory): bbox actions, all 35 operations, a
      30x30 canvas.

    With bbox actions a quarter of the groups are relabelled instead of half: on
    ``gen/medium`` half (and all) of the failed groups drove the policy's entropy to 0 within
    300 updates and held it at 0%, a quarter learned the flood families. With bbox actions
    the reward is also success only (``similarity_weight=0``) and the policy has whole-grid
    corners (``policy.whole_grid_prior``): with the similarity shaping and no corners,
    ``gen/medium`` reached 50.8% on one seed of three and 10.5% on the other two after 600
    updates; without the shaping and with the corners, 47-51% on all three, and the single
    geometric families (``gen/flip``) are learned only with the corners (docs/training.md).
    """
    base = PRESETS["rl"]
    bbox = dict(
        selection_format="bbox",
        allowed_operations=None,
        similarity_weight=0.0,
        grpo=dataclasses.replace(base.grpo, hindsight_fraction=BBOX_HINDSIGHT_FRACTION),
        policy=dataclasses.replace(base.policy, whole_grid_prior=BBOX_WHOLE_GRID_PRIOR),
    )
    if not source.startswith("gen/"):
        return base.replace(source=source, canvas=TASK_BANK_CANVAS, **bbox)
    canvas = generator_canvas(source)[0]
    if set(generator_families(source)) <= POINT_FAMILIES:
        return base.replace(source=source, canvas=canvas)
    return base.replace(source=source, canvas=canvas, **bbox)
