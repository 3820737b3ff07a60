"""GRPO agents: policy, structured action distributions, group rollouts and the trainer."""

from jaxarc.agents.advantages import compute_advantages, compute_process_advantages
from jaxarc.agents.config import PRESETS, GRPOConfig, TrainConfig
from jaxarc.agents.distributions import (
    ActionDistribution,
    BboxDistribution,
    MaskDistribution,
    PointDistribution,
)
from jaxarc.agents.loss import TrainingBatchJAX, grpo_loss, k3_kl
from jaxarc.agents.policy import (
    AbstractPolicy,
    ConvPolicy,
    PolicyConfig,
    UniformPolicy,
    make_policy,
)
from jaxarc.agents.rollout import Trajectories, evaluate_success, group_rollout
from jaxarc.agents.train import TrainState, make_evaluator, make_train
from jaxarc.agents.train_step import (
    create_adaptive_train_step,
    create_jax_surrogate_train_step,
    make_optimizer,
    surrogate_step,
)

__all__ = [
    "PRESETS",
    "AbstractPolicy",
    "ActionDistribution",
    "BboxDistribution",
    "ConvPolicy",
    "GRPOConfig",
    "MaskDistribution",
    "PointDistribution",
    "PolicyConfig",
    "TrainConfig",
    "TrainState",
    "Trajectories",
    "TrainingBatchJAX",
    "UniformPolicy",
    "compute_advantages",
    "compute_process_advantages",
    "create_adaptive_train_step",
    "create_jax_surrogate_train_step",
    "evaluate_success",
    "group_rollout",
    "grpo_loss",
    "k3_kl",
    "make_evaluator",
    "make_optimizer",
    "make_policy",
    "make_train",
    "surrogate_step",
]
