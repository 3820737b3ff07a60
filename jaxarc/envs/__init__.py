"""The environment API: configuration, the pure-functional core, actions, state and
observation types, validation and state serialisation.

It stands on the grid kernel (:mod:`jaxarc.grid`) and the task data (:mod:`jaxarc.data`);
the faces (:mod:`jaxarc.gymnax`, :mod:`jaxarc.gym`, :mod:`jaxarc.wrappers`) stand on it.
Named environments (``make``, ``ArcEnvironment``, ...) are the gymnax face's:
:mod:`jaxarc.gymnax` (``jaxarc.make`` for short).
"""

from jaxarc.envs.config import (
    CONFIG_OPTIONS,
    REWARD_DEFAULTS,
    REWARD_PRESETS,
    EnvironmentConfig,
    JaxArcConfig,
    RewardParams,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    config_from_options,
)
from jaxarc.envs.errors import JAXErrorHandler
from jaxarc.envs.functional import (
    arc_reset,
    arc_step,
    batch_reset,
    batch_step,
    episode_context,
    observe,
)
from jaxarc.envs.keys import random_words, split_key
from jaxarc.envs.rollout import Steps, play
from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction
from jaxarc.envs.types import CONTEXT_FIELDS, ArcObservation, ArcState, EpisodeContext

__all__ = [
    "ArcObservation",
    "ArcState",
    "BboxAction",
    "CONFIG_OPTIONS",
    "CONTEXT_FIELDS",
    "EnvironmentConfig",
    "EpisodeContext",
    "JAXErrorHandler",
    "JaxArcConfig",
    "MaskAction",
    "PointAction",
    "REWARD_DEFAULTS",
    "REWARD_PRESETS",
    "RewardParams",
    "Steps",
    "UnifiedActionConfig",
    "UnifiedDatasetConfig",
    "arc_reset",
    "arc_step",
    "batch_reset",
    "batch_step",
    "config_from_options",
    "episode_context",
    "observe",
    "play",
    "random_words",
    "split_key",
]
