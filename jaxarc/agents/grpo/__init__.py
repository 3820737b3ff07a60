"""GRPO: configuration, group rollouts, advantages, the clipped-surrogate loss and train
step, and ``make_train(config) -> train`` that compiles whole."""

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

__all__ = [
    "PRESETS",
    "GRPOConfig",
    "TrainConfig",
    "TrainState",
    "Trajectories",
    "TrainingBatchJAX",
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
    "make_train",
    "surrogate_step",
]
