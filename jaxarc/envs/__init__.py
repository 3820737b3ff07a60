"""ARC environments: configuration, the functional core, actions and the gymnax class."""

from jaxarc.envs import operation_ids
from jaxarc.envs.config import (
    EnvironmentConfig,
    JaxArcConfig,
    RewardParams,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
)
from jaxarc.envs.environment import ArcEnvironment, ArcEnvParams
from jaxarc.envs.errors import JAXErrorHandler
from jaxarc.envs.functional import arc_reset, arc_step, batch_reset, batch_step
from jaxarc.envs.registry import build_environment, make, register, registered_names
from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction
from jaxarc.envs.types import ArcObservation, ArcState

__all__ = [
    "ArcEnvParams",
    "ArcEnvironment",
    "ArcObservation",
    "ArcState",
    "BboxAction",
    "EnvironmentConfig",
    "JAXErrorHandler",
    "JaxArcConfig",
    "MaskAction",
    "PointAction",
    "RewardParams",
    "UnifiedActionConfig",
    "UnifiedDatasetConfig",
    "arc_reset",
    "arc_step",
    "batch_reset",
    "batch_step",
    "build_environment",
    "make",
    "operation_ids",
    "register",
    "registered_names",
]
