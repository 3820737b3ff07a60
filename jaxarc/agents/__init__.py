"""GRPO agents, in three layers: ``model`` (the policy and its action distributions),
``grpo`` (rollouts, advantages, loss, train step, ``make_train``) and ``run`` (the training
program: loop, checkpoints, evaluation, distributed set-up)."""

from jaxarc.agents.grpo.advantages import compute_advantages, compute_process_advantages
from jaxarc.agents.grpo.config import PRESETS, GRPOConfig, TrainConfig
from jaxarc.agents.grpo.loss import TrainingBatchJAX, grpo_loss, k3_kl
from jaxarc.agents.grpo.rollout import Trajectories, evaluate_success, group_rollout
from jaxarc.agents.grpo.train import make_evaluator, make_train
from jaxarc.agents.grpo.train_state import TrainState
from jaxarc.agents.grpo.train_step import (
    create_adaptive_train_step,
    create_jax_surrogate_train_step,
    make_optimizer,
    surrogate_step,
)
from jaxarc.agents.model.distributions import (
    ActionDistribution,
    BboxDistribution,
    MaskDistribution,
    PointDistribution,
)
from jaxarc.agents.model.policy import (
    AbstractPolicy,
    ConvPolicy,
    PolicyConfig,
    UniformPolicy,
    make_policy,
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
