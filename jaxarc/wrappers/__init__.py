"""Jittable, vmappable, composable wrappers for the gymnax-style ARC environment.

``make_flat(name, fields=..., action_format=...)`` builds the flat environment in one call
(``gymnax_v0=True`` adds the five-value step of gymnax 0.x for purejaxrl and rejax).

A typical stack for a flat-vector, categorical-action agent (innermost first)::

    env, params = jaxarc.make("ARC-AGI-1", selection_format="point")
    env = RestrictOperationsWrapper(env, ["FILL_1", "FILL_2", "SUBMIT"])  # optional
    env = FlatPointActionWrapper(env)      # int actions
    env = FlattenObservationWrapper(env)   # float32 vector observations
    env = AutoResetWrapper(env, "next_step")
    env = EpisodeMetricsWrapper(env)       # episode_return/length/success/best_similarity

gymnax's own wrappers (``gymnax.wrappers.LogWrapper`` ...) stack on top of these.
"""

from jaxarc.wrappers.auto_reset import AutoResetMode, AutoResetState, AutoResetWrapper
from jaxarc.wrappers.base import AbstractEnvWrapper
from jaxarc.wrappers.flat_action import (
    FlatPointActionWrapper,
    MultiDiscrete,
    MultiDiscretePointActionWrapper,
)
from jaxarc.wrappers.flat_env import (
    DEFAULT_FLAT_FIELDS,
    FLAT_ACTION_FORMATS,
    flatten_env,
    make_flat,
)
from jaxarc.wrappers.flatten_observation import DEFAULT_FIELDS, FlattenObservationWrapper
from jaxarc.wrappers.gymnax_v0 import GymnaxV0Wrapper
from jaxarc.wrappers.hindsight import HindsightState, HindsightTaskWrapper
from jaxarc.wrappers.metrics import METRIC_KEYS, EpisodeMetricsState, EpisodeMetricsWrapper
from jaxarc.wrappers.restrict_operations import RestrictOperationsWrapper, operation_ids

__all__ = [
    "DEFAULT_FIELDS",
    "DEFAULT_FLAT_FIELDS",
    "FLAT_ACTION_FORMATS",
    "METRIC_KEYS",
    "AbstractEnvWrapper",
    "AutoResetMode",
    "AutoResetState",
    "AutoResetWrapper",
    "EpisodeMetricsState",
    "EpisodeMetricsWrapper",
    "FlatPointActionWrapper",
    "FlattenObservationWrapper",
    "GymnaxV0Wrapper",
    "HindsightState",
    "HindsightTaskWrapper",
    "MultiDiscrete",
    "MultiDiscretePointActionWrapper",
    "RestrictOperationsWrapper",
    "flatten_env",
    "make_flat",
    "operation_ids",
]
