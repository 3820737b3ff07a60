"""Stable-Baselines3 and SBX on jaxarc: SB3's ``check_env`` on every registered id and on
the flat spaces, and PPO learning (SB3 on a flat id, SBX on :class:`ArcSB3VecEnv`) with no
glue. Both need PyTorch (the ``sb3`` and ``sbx`` extras); without them these tests skip."""

from __future__ import annotations

import warnings

import gymnasium
import jax
import numpy as np
import pytest
from gym_helpers import CANVAS, NAMES, OPERATIONS, SMALL_ID, SMALL_NAME, make_registered

from jaxarc.grid import operation_ids as ops

pytest.importorskip("stable_baselines3", reason="needs the sb3 extra (Stable-Baselines3, PyTorch)")
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_registered_id_passes_sb3_check_env(name, request):
    """The 0-d ``step_count`` Box made SB3's checker crash on every id."""
    env = make_registered(name, request)
    with warnings.catch_warnings():
        # advisory only: SB3 names the Dict action space and the non-image grids
        warnings.simplefilter("ignore", UserWarning)
        sb3_check_env(env.unwrapped, warn=True)


@pytest.mark.parametrize("action_format", ["discrete", "multi_discrete"])
def test_flat_spaces_pass_sb3_check_env_without_a_warning(action_format):
    env = gymnasium.make(
        SMALL_ID,
        action_format=action_format,
        fields=("grid", "input_grid", "step_count"),
        allowed_operations=OPERATIONS,
        max_episode_steps=3,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(env.unwrapped, warn=True)


def test_stable_baselines3_ppo_learns_on_a_flat_id():
    """SB3's PPO with nothing but ``gymnasium.make(id, flat=True)``."""
    from stable_baselines3 import PPO

    env = gymnasium.make(SMALL_ID, flat=True, allowed_operations=OPERATIONS, max_episode_steps=4)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    assert len(model.ep_info_buffer) > 0  # SB3's Monitor saw whole episodes
    assert any((a != b).any() for a, b in zip(before, model.policy.parameters(), strict=True))


def test_sbx_ppo_learns_on_the_sb3_vec_env():
    """SBX (SB3 in JAX) on :class:`ArcSB3VecEnv` (all environments in one jitted call)."""
    PPO = pytest.importorskip("sbx", reason="needs the sbx extra").PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from jaxarc.gym.sb3 import ArcSB3VecEnv

    venv = ArcSB3VecEnv(SMALL_NAME, num_envs=4, max_episode_steps=4, allowed_operations=OPERATIONS)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (4, 2 * CANVAS[0] * CANVAS[1])
    submit = venv.codec.index(ops.SUBMIT, 0, 0)
    next_obs, rewards, dones, infos = venv.step(np.array([0, submit, 0, submit]))
    np.testing.assert_array_equal(dones, [False, True, False, True])
    np.testing.assert_array_equal(infos[1]["terminal_observation"][:25], obs[1, :25])
    assert infos[1]["step_count"] == 1 and infos[1]["TimeLimit.truncated"] is False
    assert next_obs[1] in venv.observation_space and rewards.dtype == np.float32
    # SBX's own arithmetic mixes dtypes and ranks: the suite's strict JAX is for our code
    with jax.numpy_dtype_promotion("standard"), jax.numpy_rank_promotion("allow"):
        model = PPO("MlpPolicy", VecMonitor(venv), n_steps=32, batch_size=64, n_epochs=1, seed=0)
        model.learn(total_timesteps=256)
    assert model.num_timesteps == 256 and len(model.ep_info_buffer) > 0
