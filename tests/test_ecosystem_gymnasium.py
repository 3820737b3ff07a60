"""Off-the-shelf Gymnasium code on jaxarc: ids Gymnasium parses, Gymnasium's and SB3's
``check_env`` on every registered id, flat spaces (single and vector), gymnax's Gym bridge,
and Stable-Baselines3 / SBX PPO learning with no glue. SB3 and SBX need PyTorch (the ``sb3``
and ``sbx`` extras): without them their tests skip. (Each id's environment is built once per
test process, so the SB3 check of an id reuses the compiled environment of its Gymnasium
check: the two stay in one module.)"""

from __future__ import annotations

import warnings

import gymnasium
import jax
import numpy as np
import pytest
from gym_helpers import CANVAS, NAMES, OPERATIONS, SMALL_ID, SMALL_NAME, make_registered
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

import jaxarc
from jaxarc.grid import operation_ids as ops
from jaxarc.gym import FlatArcGymnasiumVectorEnv, gymnasium_id, register_gymnasium_envs


def test_generator_ids_are_ids_gymnasium_can_parse():
    assert gymnasium_id("gen/easy") == "jaxarc/Gen-Easy-v0"
    assert gymnasium_id("gen/fill_holes") == "jaxarc/Gen-FillHoles-v0"
    ids = register_gymnasium_envs()  # every jaxarc name, those other tests added included
    assert list(ids) == [gymnasium_id(n) for n in jaxarc.registered_names()]
    assert len(set(ids)) == len(ids)
    for env_id in ids:
        assert ":" not in env_id and env_id in gymnasium.registry
        assert gymnasium.envs.registration.parse_env_id(env_id)[0] == "jaxarc"
    # a name that would take another's id is refused (nothing is registered for it)
    with pytest.raises(ValueError, match="already the id of 'gen/easy'"):
        register_gymnasium_envs(["Gen/Easy"])
    assert gymnasium.spec("jaxarc/Gen-Easy-v0").kwargs["env_name"] == "gen/easy"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_registered_id_makes_and_passes_gymnasium_check_env(name, request):
    """``gen:...`` ids made ``gymnasium.make`` fail."""
    env = make_registered(name, request)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gymnasium_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("action_format", ["discrete", "multi_discrete"])
def test_flat_spaces_pass_gymnasium_check_env_without_a_warning(action_format):
    env = gymnasium.make(
        SMALL_ID,
        action_format=action_format,
        fields=("grid", "input_grid", "step_count"),
        allowed_operations=OPERATIONS,
        max_episode_steps=3,
    )
    height, width = CANVAS
    if action_format == "discrete":
        assert env.action_space == gymnasium.spaces.Discrete(2 * height * width)
        submit = env.unwrapped.codec.index(ops.SUBMIT, 1, 2)
        assert submit == height * width + 1 * width + 2
    else:
        assert env.action_space == gymnasium.spaces.MultiDiscrete([2, height, width])
        submit = np.array([1, 1, 2])
    assert env.observation_space.shape == (2 * height * width + 1,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gymnasium_check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and obs[-1] == 0.0  # step_count
    obs, _, terminated, _, _ = env.step(submit)
    assert terminated and obs[-1] == 1.0


def test_flat_vector_env_from_make_vec_matches_the_structured_one():
    structured = gymnasium.make_vec(SMALL_ID, num_envs=3, allowed_operations=OPERATIONS)
    flat = gymnasium.make_vec(SMALL_ID, num_envs=3, flat=True, allowed_operations=OPERATIONS)
    assert isinstance(flat, FlatArcGymnasiumVectorEnv)
    assert flat.single_action_space == gymnasium.spaces.Discrete(2 * CANVAS[0] * CANVAS[1])
    obs_s, _ = structured.reset(seed=4)
    obs_f, _ = flat.reset(seed=4)
    expected = np.concatenate([obs_s["grid"].reshape(3, -1), obs_s["input_grid"].reshape(3, -1)], 1)
    np.testing.assert_array_equal(obs_f, expected.astype(np.float32))
    assert obs_f in flat.observation_space
    submit = flat.codec.index(ops.SUBMIT, 0, 0)
    _, _, terminated, _, _ = flat.step(np.array([0, submit, 0]))
    np.testing.assert_array_equal(terminated, [False, True, False])
    _, _, terminated_s, _, _ = structured.step(
        {"operation": np.array([11, 34, 11]), "row": np.zeros(3, int), "col": np.zeros(3, int)}
    )
    np.testing.assert_array_equal(terminated, terminated_s)


@pytest.mark.parametrize("selection_format", ["point", "mask"])
def test_gymnax_gym_bridge_runs_an_episode(selection_format):
    """gymnax's own ``GymnaxToGymWrapper`` over the structured env (it raised
    ``NotImplementedError: Conversion of StructuredActionSpace``)."""
    from gymnax.wrappers.gym import GymnaxToGymWrapper

    env, params = jaxarc.make(SMALL_NAME, selection_format=selection_format, max_episode_steps=3)
    bridge = GymnaxToGymWrapper(env, params, seed=0)
    assert isinstance(bridge.action_space, gymnasium.spaces.Dict)
    assert bridge.action_space["operation"] == gymnasium.spaces.Discrete(ops.NUM_OPERATIONS)
    bridge.action_space.seed(1)
    obs, _ = bridge.reset(seed=1)
    assert obs.grid.shape == CANVAS
    ended, steps = False, 0
    while not ended:
        action = bridge.action_space.sample()
        assert bool(env.action_space(params).contains(action))
        _, reward, terminated, truncated, info = bridge.step(action)
        ended, steps = bool(terminated | truncated), steps + 1
        assert np.isfinite(float(reward)) and "final_observation" in info
    assert steps <= 3


def _import_or_skip(module: str, extra: str):
    return pytest.importorskip(module, reason=f"needs the {extra} extra (PyTorch)")


@pytest.fixture
def sb3_check_env():
    """Stable-Baselines3's ``check_env``; the test skips where SB3 (the ``sb3`` extra, which
    pulls PyTorch) is not installed."""
    return _import_or_skip("stable_baselines3.common.env_checker", "sb3").check_env


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_registered_id_passes_sb3_check_env(name, request, sb3_check_env):
    """The 0-d ``step_count`` Box made SB3's checker crash on every id."""
    env = make_registered(name, request)
    with warnings.catch_warnings():
        # advisory only: SB3 names the Dict action space and the non-image grids
        warnings.simplefilter("ignore", UserWarning)
        sb3_check_env(env.unwrapped, warn=True)


@pytest.mark.parametrize("action_format", ["discrete", "multi_discrete"])
def test_flat_spaces_pass_sb3_check_env_without_a_warning(action_format, sb3_check_env):
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
    PPO = _import_or_skip("stable_baselines3", "sb3").PPO

    env = gymnasium.make(SMALL_ID, flat=True, allowed_operations=OPERATIONS, max_episode_steps=4)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    assert len(model.ep_info_buffer) > 0  # SB3's Monitor saw whole episodes
    assert any((a != b).any() for a, b in zip(before, model.policy.parameters(), strict=True))


def test_sbx_ppo_learns_on_the_sb3_vec_env():
    """SBX (SB3 in JAX) on :class:`ArcSB3VecEnv` (all environments in one jitted call)."""
    PPO = _import_or_skip("sbx", "sbx").PPO
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


def test_separate_gymnasium_envs_of_one_id_compile_once(count_compilations):
    """SB3's ``DummyVecEnv`` / ``make_vec_env`` make N envs: they share one backend (one
    task source), so the reset compiled for the first serves the others."""
    first = gymnasium.make(SMALL_ID, flat=True, max_episode_steps=5, allowed_operations=OPERATIONS)
    first.reset(seed=0)
    first.step(0)
    with count_compilations() as counter:
        others = [
            gymnasium.make(SMALL_ID, flat=True, max_episode_steps=5, allowed_operations=OPERATIONS)
            for _ in range(3)
        ]
        for env in others:
            env.reset(seed=1)
            env.step(0)
    assert counter.programs == 0
    assert all(env.unwrapped.backend is first.unwrapped.backend for env in others)
    different = gymnasium.make(SMALL_ID, flat=True, max_episode_steps=6)
    assert different.unwrapped.backend is not first.unwrapped.backend
