"""The environment API: configuration, the pure-functional core, actions, state and
observation types, validation and state serialisation.

It stands on the grid kernel (:mod:`jaxarc.grid`) and the task data (:mod:`jaxarc.data`);
the faces (:mod:`jaxarc.gymnax`, :mod:`jaxarc.gym`, :mod:`jaxarc.wrappers`) stand on it.
The gymnax-face names that this package exported before the re-layering (``make``,
``ArcEnvironment``, ...) are still reachable here, imported from :mod:`jaxarc.gymnax` on
first use.
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
from jaxarc.grid import operation_ids

_GYMNAX_FACE = (
    "ArcEnvParams",
    "ArcEnvironment",
    "build_environment",
    "config_from_options",
    "episode_context",
    "make",
    "observe",
    "register",
    "registered_names",
)


def __getattr__(name: str):
    # Compatibility re-exports of the gymnax face (a layer above this one).
    if name in _GYMNAX_FACE:
        import jaxarc.gymnax

        return getattr(jaxarc.gymnax, name)
    raise AttributeError(f"module 'jaxarc.envs' has no attribute {name!r}")


__all__ = [
    "ArcEnvParams",
    "ArcEnvironment",
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
    "build_environment",
    "config_from_options",
    "episode_context",
    "make",
    "observe",
    "operation_ids",
    "play",
    "random_words",
    "register",
    "registered_names",
    "split_key",
]
