"""Environment configuration: frozen, hashable dataclasses that fix shapes and code paths.

Static/traced split: everything here is static (it decides array shapes or which code is
compiled) and is hashed into the compilation cache. Numeric knobs that should not trigger
recompilation (reward weights, penalties) live in :class:`RewardParams`, an equinox module of
traced float32 scalars carried in the environment state.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxarc.envs.arguments import check_number
from jaxarc.grid.operation_ids import NUM_OPERATIONS, operation_id

SelectionFormat = Literal["point", "bbox", "mask"]
EpisodeMode = Literal["train", "eval"]
EpisodeContextMode = Literal["every_step", "at_reset"]
EPISODE_CONTEXT_MODES: tuple[str, ...] = ("every_step", "at_reset")
SELECTION_FORMATS: tuple[str, ...] = ("point", "bbox", "mask")
EPISODE_MODES: tuple[str, ...] = ("train", "eval")


def _is_int(value: object) -> bool:
    """A Python or NumPy integer (not a bool, not a float like 2.5 or a string like "3")."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclasses.dataclass(frozen=True)
class EnvironmentConfig:
    """Episode rules.

    Attributes:
        max_episode_steps: steps before truncation (also the action-history length).
        episode_mode: ``"train"`` plays a demonstration pair (target = its output);
            ``"eval"`` plays a test pair (target = the stored test output).
        start_from_empty: start from an all-0 grid of the input's shape instead of the input.
        similarity_shaping: add ``similarity_weight * (sim_after - sim_before)`` in train mode.
        validate: check actions and state with ``eqx.error_if`` (honours ``EQX_ON_ERROR``);
            off by default so the fast path pays nothing.
        episode_context: ``"every_step"`` puts the episode's constants (input grid,
            demonstration pairs) in every observation; ``"at_reset"`` leaves them out
            (``None``), so a step returns only what changes, and the constants are read
            once per episode (``episode_context(state, config)``, or ``info`` of the vector
            env). The demonstration pairs are most of an observation (~20 KB at 30x30).
    """

    max_episode_steps: int = 100
    episode_mode: EpisodeMode = "train"
    start_from_empty: bool = False
    similarity_shaping: bool = True
    validate: bool = False
    episode_context: EpisodeContextMode = "every_step"

    def __post_init__(self) -> None:
        _require(
            self.episode_context in EPISODE_CONTEXT_MODES,
            f"episode_context must be one of {EPISODE_CONTEXT_MODES}, got {self.episode_context!r}",
        )
        _require(
            _is_int(self.max_episode_steps) and self.max_episode_steps >= 1,
            f"max_episode_steps must be a positive int, got {self.max_episode_steps!r}",
        )
        _require(
            self.episode_mode in EPISODE_MODES,
            f"episode_mode must be one of {EPISODE_MODES}, got {self.episode_mode!r}",
        )
        for name in ("start_from_empty", "similarity_shaping", "validate"):
            value = getattr(self, name)  # (truthiness would take "no" for True)
            _require(
                isinstance(value, bool | np.bool_), f"{name} must be True or False, got {value!r}"
            )
            object.__setattr__(self, name, bool(value))


@dataclasses.dataclass(frozen=True)
class UnifiedDatasetConfig:
    """Canvas size every grid is padded to; must match the task source's canvas."""

    max_grid_height: int = 30
    max_grid_width: int = 30

    def __post_init__(self) -> None:
        for name in ("max_grid_height", "max_grid_width"):
            value = getattr(self, name)
            _require(
                _is_int(value) and 1 <= value <= 32,
                f"{name} must be an int in 1..32 (rows are bit-packed in 32-bit words), "
                f"got {value!r}",
            )

    @property
    def canvas_shape(self) -> tuple[int, int]:
        return (self.max_grid_height, self.max_grid_width)


@dataclasses.dataclass(frozen=True)
class UnifiedActionConfig:
    """Action format and the operations an agent may use.

    Attributes:
        selection_format: ``"point"`` (one cell), ``"bbox"`` (a rectangle) or ``"mask"``.
        allowed_operations: ids or names (``"FLOOD_1"``) of the permitted operations
            (``None``: all 35), stored as sorted unique ids. A disallowed
            operation is a no-op, or an error when ``EnvironmentConfig.validate`` is on.
    """

    selection_format: SelectionFormat = "point"
    allowed_operations: tuple[int | str, ...] | None = None

    def __post_init__(self) -> None:
        _require(
            self.selection_format in SELECTION_FORMATS,
            f"selection_format must be one of {SELECTION_FORMATS}, got {self.selection_format!r}",
        )
        if isinstance(self.allowed_operations, str | int):  # one operation, not a sequence
            object.__setattr__(self, "allowed_operations", (self.allowed_operations,))
        if self.allowed_operations is not None:
            _require(
                all(isinstance(op, str) or _is_int(op) for op in self.allowed_operations),
                f"allowed_operations must hold integer operation ids or names, got "
                f"{self.allowed_operations!r}",
            )
            ops = tuple(
                operation_id(op) if isinstance(op, str) else int(op)
                for op in self.allowed_operations
            )
            bad = [op for op in ops if not 0 <= op < NUM_OPERATIONS]
            _require(not bad, f"allowed_operations has ids outside 0..{NUM_OPERATIONS - 1}: {bad}")
            _require(len(ops) > 0, "allowed_operations must not be empty")
            object.__setattr__(self, "allowed_operations", tuple(sorted(set(ops))))

    @property
    def allowed_ids(self) -> tuple[int, ...]:
        """The allowed operation ids, ascending (all 35 when ``allowed_operations`` is None)."""
        if self.allowed_operations is None:
            return tuple(range(NUM_OPERATIONS))
        return tuple(int(op) for op in self.allowed_operations)

    @property
    def allowed_mask(self) -> tuple[bool, ...]:
        """One bool per operation id (static)."""
        if self.allowed_operations is None:
            return (True,) * NUM_OPERATIONS
        allowed = set(self.allowed_operations)
        return tuple(op in allowed for op in range(NUM_OPERATIONS))


@dataclasses.dataclass(frozen=True)
class JaxArcConfig:
    """The whole static configuration of an ARC environment."""

    environment: EnvironmentConfig = dataclasses.field(default_factory=EnvironmentConfig)
    dataset: UnifiedDatasetConfig = dataclasses.field(default_factory=UnifiedDatasetConfig)
    action: UnifiedActionConfig = dataclasses.field(default_factory=UnifiedActionConfig)

    def replace(self, **changes: object) -> JaxArcConfig:
        """A copy with whole sub-configs replaced, e.g. ``config.replace(action=...)``."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


# The one place for the reward defaults: RewardParams, the TrainConfig fields and the
# ``jaxarc.make`` options all read them from here.
REWARD_DEFAULTS: dict[str, float] = {
    "success_bonus": 1.0,
    "failed_submit_penalty": -0.1,
    "step_penalty": -0.01,
    "similarity_weight": 0.0,
}


def _weight(name: str):
    """A reward weight field: a finite number (or an array of them: per-environment
    weights), float32; concrete values that are not are refused, naming the weight."""

    def convert(value: object) -> Float[Array, "..."]:
        return jnp.asarray(check_number(value, f"RewardParams.{name}"), dtype=jnp.float32)

    return eqx.field(converter=convert, default=REWARD_DEFAULTS[name])


class RewardParams(eqx.Module):
    """Reward weights (traced float32 scalars: changing them never recompiles).

    :meth:`preset` gives named sets of weights (:data:`REWARD_PRESETS`): ``"default"`` (the
    field defaults) and ``"generic"``, for agents that know nothing of ARC (an MLP over the
    flat observation, a flat action); docs/ladder.md explains the difference and measures it.
    """

    success_bonus: Float[Array, ""] = _weight("success_bonus")
    failed_submit_penalty: Float[Array, ""] = _weight("failed_submit_penalty")
    step_penalty: Float[Array, ""] = _weight("step_penalty")
    similarity_weight: Float[Array, ""] = _weight("similarity_weight")

    @classmethod
    def preset(cls, name: str, **overrides: float) -> RewardParams:
        """The weights of the preset ``name`` (:data:`REWARD_PRESETS`), ``overrides`` on top."""
        if name not in REWARD_PRESETS:
            raise ValueError(f"unknown reward preset {name!r}; known: {', '.join(REWARD_PRESETS)}")
        return cls(**{**REWARD_PRESETS[name], **overrides})


REWARD_PRESETS: dict[str, dict[str, float]] = {
    "default": dict(REWARD_DEFAULTS),
    # Generic agents (docs/ladder.md). With the defaults a failed SUBMIT costs 10 steps and
    # nothing rewards a correct edit before the final SUBMIT, so exploration finds success
    # too rarely and the policy settles in "SUBMIT at once" or "never submit". Here every
    # step is credited with its similarity gain (potential-based: an episode's shaping sums to
    # final minus initial similarity, so it cannot be farmed), a failed SUBMIT costs less than
    # one correct edit gains, and steps (and so truncation) are free: the discount alone
    # prefers short solutions. Measured: it is no cure by itself (docs/ladder.md: the PPO
    # example learns gen/ladder-1 with either preset and gen/ladder-2 with neither).
    "generic": {
        "success_bonus": 1.0,
        "failed_submit_penalty": -0.01,
        "step_penalty": 0.0,
        "similarity_weight": 1.0,
    },
}
"""Named reward weights for :meth:`RewardParams.preset` and ``jaxarc.make(reward_preset=)``."""


# ----------------------------------------------------------------- flat options -> config
# Every face spells a setting the same way: these flat option names are what
# ``jaxarc.make``, the Gymnasium adapters and ``TrainConfig`` use, and
# :func:`config_from_options` is the one mapping from them to the nested config.
ENVIRONMENT_OPTIONS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(EnvironmentConfig))
ACTION_OPTIONS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(UnifiedActionConfig))
REWARD_OPTIONS: tuple[str, ...] = tuple(REWARD_DEFAULTS)
CONFIG_OPTIONS: tuple[str, ...] = (*ENVIRONMENT_OPTIONS, *ACTION_OPTIONS, *REWARD_OPTIONS)


def config_from_options(
    canvas_shape: tuple[int, int],
    *,
    owner: str = "environment",
    also_accepted: tuple[str, ...] = (),
    reward_preset: str = "default",
    **options: object,
) -> tuple[JaxArcConfig, RewardParams]:
    """The nested ``(JaxArcConfig, RewardParams)`` of flat options on a canvas.

    ``options`` are any of :data:`CONFIG_OPTIONS` (e.g. ``max_episode_steps=8``,
    ``selection_format="bbox"``, ``similarity_weight=1.0``); missing ones take their
    defaults, the reward weights those of ``reward_preset`` (:data:`REWARD_PRESETS`). An
    unknown name is a ``TypeError`` that lists the accepted ones (``owner`` names the
    caller in it; ``also_accepted``: the caller's own options, for the message).
    """
    config = static_config_from_options(
        canvas_shape, owner=owner, also_accepted=(*also_accepted, "reward_preset"), **options
    )
    for name in REWARD_OPTIONS:  # (named with their owner, before RewardParams sees them)
        if name in options:
            check_number(options[name], name, owner)
            if np.ndim(options[name]) != 0:  # (per-environment weights go in RewardParams)
                raise TypeError(
                    f"{name} of {owner} must be one finite number, got {options[name]!r}"
                )
    reward = RewardParams.preset(
        reward_preset, **{k: options[k] for k in REWARD_OPTIONS if k in options}
    )
    return config, reward  # type: ignore[arg-type]


def static_config_from_options(
    canvas_shape: tuple[int, int],
    *,
    owner: str = "environment",
    also_accepted: tuple[str, ...] = (),
    **options: object,
) -> JaxArcConfig:
    """The static half of :func:`config_from_options` (the reward weights are checked by
    name but not built: building them runs JAX, which must not happen before
    ``jax.distributed.initialize`` in a multi-process run)."""
    unknown = sorted(set(options) - set(CONFIG_OPTIONS))
    if unknown:
        raise TypeError(
            f"unknown option(s) for {owner}: {unknown}; accepted: "
            f"{sorted((*CONFIG_OPTIONS, *also_accepted))}"
        )
    pick = lambda names: {k: options[k] for k in names if k in options}  # noqa: E731
    height, width = canvas_shape
    return JaxArcConfig(
        environment=EnvironmentConfig(**pick(ENVIRONMENT_OPTIONS)),  # type: ignore[arg-type]
        dataset=UnifiedDatasetConfig(max_grid_height=height, max_grid_width=width),
        action=UnifiedActionConfig(**pick(ACTION_OPTIONS)),  # type: ignore[arg-type]
    )
