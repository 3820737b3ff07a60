"""The faces' constructors and options take what they say and refuse the rest by name:
wrapped environments given to the Gymnasium adapters, contract runs that would check
nothing, one name where a list is expected, counts, flags and reward weights of the wrong
kind, and the registration and bridges of gymnax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gym_helpers import SMALL_NAME, small_bank

import jaxarc
from jaxarc.grid import operation_ids as ops
from jaxarc.gym.env import ArcGymnasiumEnv
from jaxarc.gym.flat_vector import make_gymnasium_vector_env
from jaxarc.gym.vector import ArcGymnasiumVectorEnv
from jaxarc.gymnax import build_environment
from jaxarc.wrappers import GymnaxV0Wrapper, RestrictOperationsWrapper, flatten_env


@pytest.fixture(scope="module")
def bare():
    return build_environment(small_bank(), name=SMALL_NAME, max_episode_steps=4)


def _wrapped(env):
    """Every kind of wrapper a user may hand an adapter, each of which it would drop."""
    return {
        "restrict": RestrictOperationsWrapper(env, ["FILL_1", "SUBMIT"]),
        "flat": flatten_env(env),
        "v0": GymnaxV0Wrapper(flatten_env(env)),
    }


def _adapters():
    from jaxarc.gym.sb3 import ArcSB3VecEnv

    return {
        "ArcGymnasiumEnv": lambda **kw: ArcGymnasiumEnv(**kw),
        "ArcGymnasiumVectorEnv": lambda **kw: ArcGymnasiumVectorEnv(num_envs=2, **kw),
        "ArcSB3VecEnv": lambda **kw: ArcSB3VecEnv(num_envs=2, **kw),
    }


@pytest.mark.parametrize("adapter", ["ArcGymnasiumEnv", "ArcGymnasiumVectorEnv", "ArcSB3VecEnv"])
def test_adapters_refuse_a_wrapped_environment_and_name_their_own_options(bare, adapter):
    pytest.importorskip("stable_baselines3")
    env, params = bare
    build = _adapters()[adapter]
    for wrapped in _wrapped(env).values():
        # old: the adapter ran the bare environment (FILL_3 painted under a FILL_1/SUBMIT
        # restriction, Dict spaces under a flat wrapper), without a word
        with pytest.raises(TypeError, match=rf"{adapter} takes a bare.*allowed_operations="):
            build(jax_env=wrapped, jax_params=params)
    build(jax_env=env, jax_params=params).close()  # a bare environment is fine


def test_the_adapters_own_options_restrict_and_flatten(bare):
    env = ArcGymnasiumEnv(
        SMALL_NAME, allowed_operations=["FILL_1", "SUBMIT"], flat=True, fields="grid"
    )
    assert str(env.action_space) == "Discrete(50)" and env.observation_space.shape == (25,)
    obs, _ = env.reset(seed=0, options={"task_index": 0, "pair": 0})
    before = obs.copy()
    structured = ArcGymnasiumEnv(SMALL_NAME, allowed_operations=["FILL_1", "SUBMIT"])
    structured.reset(seed=0, options={"task_index": 0, "pair": 0})
    after, *_ = structured.step({"operation": ops.FILL_0 + 3, "row": 0, "col": 0})
    assert after["grid"][0, 0] == before[0]  # FILL_3 is not allowed: a no-op step


def test_contract_checks_refuse_runs_that_check_nothing():
    from jaxarc.testing import check_environment

    for kwargs, what in [
        (dict(faces=()), "faces"),
        (dict(faces=["functional"], batch=0), "batch"),
        (dict(faces=["functional"], steps=-1), "steps"),  # old: an error deep inside JAX
        (dict(faces=["functional"], batch=True), "batch"),
        (dict(faces=["functional"], steps=2.0), "steps"),
    ]:
        with pytest.raises((TypeError, ValueError), match=what):
            check_environment(SMALL_NAME, **kwargs)
    # one face as a string is that face (old: "unknown face(s) ['a', 'g', 'm', 'n', 'x']")
    (report,) = check_environment(SMALL_NAME, faces="gymnax", batch=1, steps=2)
    assert report["face"] == "gymnax" and report["steps"] == 2


def test_one_name_where_a_list_is_expected_is_that_name(bare):
    env = ArcGymnasiumEnv(SMALL_NAME, flat=True, fields="grid")  # old: fields g, r, i, d
    assert env.codec.fields == ("grid",)
    flat, params = jaxarc.make_flat(SMALL_NAME, fields="input_grid")
    assert flat.fields == ("input_grid",) and flat.observation_space(params).shape == (25,)
    for fields in (("grid", "grid"), ["grid", "input_grid", "grid"]):
        with pytest.raises(ValueError, match="more than once"):
            ArcGymnasiumEnv(SMALL_NAME, flat=True, fields=fields)
        with pytest.raises(ValueError, match="more than once"):
            jaxarc.make_flat(SMALL_NAME, fields=fields)
    with pytest.raises(TypeError, match="name or a list of names"):
        ArcGymnasiumEnv(SMALL_NAME, flat=True, fields=3)


def test_counts_are_ints_and_numpy_ints_are_counts():
    pytest.importorskip("stable_baselines3")
    from jaxarc.gym.sb3 import ArcSB3VecEnv

    for bad in (True, 2.0, "2", 0, -1):
        with pytest.raises((TypeError, ValueError), match="num_envs of ArcSB3VecEnv"):
            ArcSB3VecEnv(SMALL_NAME, num_envs=bad)  # old: True -> "an integer is required"
        with pytest.raises((TypeError, ValueError), match="num_envs of ArcGymnasiumVectorEnv"):
            ArcGymnasiumVectorEnv(SMALL_NAME, num_envs=bad)
    venv = ArcSB3VecEnv(SMALL_NAME, num_envs=np.int64(2))  # old: refused
    assert venv.num_envs == 2 and venv.reset().shape == (2, 50)
    assert ArcGymnasiumVectorEnv(SMALL_NAME, num_envs=np.int32(3)).num_envs == 3


@pytest.mark.parametrize("value", ["big", float("nan"), float("inf"), True, None, [1.0]])
def test_reward_weights_must_be_finite_numbers_named_with_their_environment(value):
    with pytest.raises((TypeError, ValueError), match=f"success_bonus of '{SMALL_NAME}'"):
        jaxarc.make(SMALL_NAME, success_bonus=value)  # old: nan accepted, "big": numpy's words
    with pytest.raises((TypeError, ValueError), match="step_penalty"):
        ArcGymnasiumEnv(SMALL_NAME, step_penalty=value)
    if not isinstance(value, list):  # (RewardParams also takes per-environment arrays)
        with pytest.raises((TypeError, ValueError), match="RewardParams.similarity_weight"):
            jaxarc.envs.RewardParams(similarity_weight=value)
    # numbers of any kind are weights, also per environment
    env, params = jaxarc.make(SMALL_NAME, success_bonus=np.float32(2), step_penalty=0)
    assert float(params.reward.success_bonus) == 2.0
    assert jaxarc.envs.RewardParams(step_penalty=jnp.array([0.0, -1.0])).step_penalty.shape == (2,)


@pytest.mark.parametrize("value", ["no", "", 1, None, "False"])
def test_flags_are_true_or_false_never_truthy(value):
    with pytest.raises(TypeError, match="flat must be True or False"):
        ArcGymnasiumEnv(SMALL_NAME, flat=value)  # old: "no" was a flat env
    with pytest.raises(TypeError, match="gymnax_v0 of make_flat must be True or False"):
        jaxarc.make_flat(SMALL_NAME, gymnax_v0=value)  # old: "no" wrapped it
    with pytest.raises(TypeError, match="flat must be True or False"):
        make_gymnasium_vector_env(SMALL_NAME, 2, flat=value)
    with pytest.raises(ValueError, match="validate must be True or False"):
        jaxarc.make(SMALL_NAME, validate=value)


def test_gymnax_vector_bridge_runs_the_flat_env(bare):
    """gymnax's GymnaxToVectorGymWrapper, as over its own CartPole (old: FrozenInstanceError:
    cannot assign to field 'reset')."""
    from gymnax.wrappers.gym import GymnaxToVectorGymWrapper

    env, params = jaxarc.make_flat(SMALL_NAME, max_episode_steps=3)
    vector = GymnaxToVectorGymWrapper(env, num_envs=3, params=params, seed=0)
    obs, _ = vector.reset(seed=0)
    assert obs.shape == (3, 50)
    ended = []
    for t in range(4):
        obs, reward, terminated, truncated, _ = vector.step(np.array([t, 1, 2]))
        assert obs.shape == (3, 50) and np.shape(reward) == (3,)
        ended.append(np.asarray(terminated) | np.asarray(truncated))
    assert np.stack(ended).any(axis=0).all()  # every 3-step episode ended (reset by gymnax)
    assert env.step is not vector._env.step  # the user's env is left as it was
    jax.block_until_ready(env.reset(jax.random.key(0), params))
