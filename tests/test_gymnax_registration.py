"""gymnax's own registry knows every jaxarc name: ``gymnax.make("ARC-AGI-1")`` works."""

from __future__ import annotations

import gymnax
import jax
import pytest

import jaxarc
import jaxarc.gymnax.registration as registration
from jaxarc.gymnax import ArcEnvironment
from jaxarc.gymnax.registry import register_gymnax_envs


def test_every_registered_name_is_a_gymnax_id():
    # importing the module registered every name known then (other tests may add names later)
    builtin = {"ARC-AGI-1", "ARC-AGI-2-eval", "MiniARC", "ConceptARC-eval", "gen/flip"}
    assert builtin <= set(registration.GYMNAX_IDS) <= set(gymnax.registered_envs)
    names = register_gymnax_envs()  # again: harmless, and adds any new name
    assert names == jaxarc.registered_names() and set(names) <= set(gymnax.registered_envs)


def test_gymnax_make_builds_the_environment_with_its_options():
    env, params = gymnax.make("ARC-AGI-1", selection_format="bbox", success_bonus=3.0)
    assert isinstance(env, ArcEnvironment) and env.name == "ARC-AGI-1"
    assert env.config.action.selection_format == "bbox"
    assert params.reward.success_bonus == 3.0  # the reward options reach gymnax's params
    assert env.task_source.num_tasks == jaxarc.make("ARC-AGI-1")[0].task_source.num_tasks


def test_gymnax_make_plays_a_generated_family():
    env, params = gymnax.make("gen/flip", max_episode_steps=4)
    obs, state = env.reset(jax.random.key(0), params)
    action = env.action_space(params).sample(jax.random.key(1))
    obs, state, reward, terminated, truncated, _ = env.step(
        jax.random.key(2), state, action, params
    )
    assert env.observation_space(params).contains(obs)
    assert obs.grid.shape == (8, 8) and int(state.step_count) in (0, 1)


def test_directory_sets_pass_their_options_through_gymnax(miniarc_dir):
    env, _ = gymnax.make("MiniARC", data_dir=str(miniarc_dir))
    assert env.config.dataset.canvas_shape == (5, 5)
    with pytest.raises(TypeError, match="data_dir"):
        gymnax.make("MiniARC")


def test_building_an_environment_registers_later_names_with_gymnax(monkeypatch):
    import gymnax.registration as gymnax_registration

    from jaxarc.gymnax import registry

    # gymnax's and jaxarc's registries as they are now, restored after the test
    monkeypatch.setattr(gymnax_registration, "_registry", dict(gymnax_registration._registry))
    monkeypatch.setattr(gymnax_registration, "registered_envs", [*gymnax.registered_envs])
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    name = "ARC-AGI-1-registered-late"
    jaxarc.register(name, lambda **options: jaxarc.make("ARC-AGI-1", **options))
    assert name not in gymnax_registration.registered_envs
    jaxarc.make("ARC-AGI-1")  # building any environment registers every name with gymnax
    assert name in gymnax_registration.registered_envs
    env, params = gymnax_registration.make(name, max_episode_steps=3)
    assert isinstance(env, ArcEnvironment) and env.config.environment.max_episode_steps == 3
