"""gymnax's own registry knows every jaxarc name: ``gymnax.make("ARC-AGI-1")`` works after
``import jaxarc``, in either import order, and ``import jaxarc`` installs no import hook."""

from __future__ import annotations

import json

import gymnax
import jax
import pytest
from limits import run_python_script

import jaxarc
from jaxarc.gymnax import ArcEnvironment
from jaxarc.gymnax.registration import register_with_gymnax

# Run in a fresh interpreter: imports gymnax before or after jaxarc, records the import
# finders that `import jaxarc` adds, then builds a generated family through gymnax.make.
_FRESH_IMPORTS = """
import json, sys
{gymnax_before}
finders = list(sys.meta_path)
import jaxarc
added = [type(f).__module__ + "." + type(f).__name__ for f in sys.meta_path if f not in finders]
{gymnax_after}
env, params = gymnax.make("gen/ladder-1", max_episode_steps=3)
steps = env.config.environment.max_episode_steps
print(json.dumps({{"added": added, "env": type(env).__name__, "steps": steps}}))
"""


@pytest.mark.parametrize("gymnax_first", [True, False], ids=["gymnax-first", "jaxarc-first"])
def test_import_jaxarc_registers_with_gymnax_without_an_import_hook(gymnax_first):
    """gymnax.make knows jaxarc's names in either import order (old: through an import
    finder jaxarc put on sys.meta_path, which hooked gymnax's registry module)."""
    before, after = ("import gymnax", "") if gymnax_first else ("", "import gymnax")
    result = run_python_script(_FRESH_IMPORTS.format(gymnax_before=before, gymnax_after=after))
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.splitlines()[-1])
    assert (report["env"], report["steps"]) == ("ArcEnvironment", 3)
    added = report["added"]  # "module.Class" of each finder that `import jaxarc` added
    assert not [finder for finder in added if finder.startswith("jaxarc")], added
    if gymnax_first:  # gymnax's own imports (six, absl) are done: jaxarc adds nothing
        assert added == [], added


def test_every_registered_name_is_a_gymnax_id():
    # `import jaxarc` registered every name known then (other tests may add names later)
    builtin = {"ARC-AGI-1", "ARC-AGI-2-eval", "MiniARC", "ConceptARC-eval", "gen/flip"}
    assert builtin <= set(gymnax.registered_envs)
    names = register_with_gymnax()  # again: harmless, and adds any new name
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
