"""ARC environments: configuration, the functional core, actions and the gymnax class."""

from jaxarc.envs import operation_ids
from jaxarc.envs.config import (
    EnvironmentConfig,
    JaxArcConfig,
    RewardParams,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
)
from jaxarc.envs.errors import JAXErrorHandler
from jaxarc.envs.functional import arc_reset, arc_step, batch_reset, batch_step
from jaxarc.envs.registry import build_environment, make, register, registered_names
from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction
from jaxarc.envs.types import ArcObservation, ArcState


def __getattr__(name: str):
    # The gymnax class is imported on first use: importing gymnax takes seconds.
    if name in ("ArcEnvironment", "ArcEnvParams"):
        from jaxarc.envs import environment

        return getattr(environment, name)
    raise AttributeError(f"module 'jaxarc.envs' has no attribute {name!r}")


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
