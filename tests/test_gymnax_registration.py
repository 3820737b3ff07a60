"""gymnax's own registry knows every jaxarc name: ``gymnax.make("ARC-AGI-1")`` works after
``import gymnax; import jaxarc``, or after ``register_with_gymnax()``; ``import jaxarc``
installs no import hook and never imports gymnax (whose import starts JAX's backends)."""

from __future__ import annotations

import json

import gymnax
import jax
import pytest
from limits import run_python_script

import jaxarc
from jaxarc.gymnax import ArcEnvironment
from jaxarc.gymnax.registration import register_with_gymnax

# other test modules of this process may have imported jaxarc before gymnax
register_with_gymnax()

# Run in a fresh interpreter: imports gymnax before jaxarc or not, records what `import
# jaxarc` changed, then (registering first where jaxarc came first) builds through gymnax.make.
_FRESH_IMPORTS = """
import json, sys
{gymnax_before}
finders = list(sys.meta_path)
import jaxarc
from jax._src import xla_bridge
report = {{
    "added_finders": [repr(f) for f in sys.meta_path if f not in finders],
    "gymnax_imported": "gymnax" in sys.modules,
    "jax_backends_started": xla_bridge.backends_are_initialized(),
}}
{register}
import gymnax
env, params = gymnax.make("gen/ladder-1", max_episode_steps=3)
report.update(env=type(env).__name__, steps=env.config.environment.max_episode_steps)
print(json.dumps(report))
"""


def _fresh_imports(gymnax_first: bool) -> dict:
    code = _FRESH_IMPORTS.format(
        gymnax_before="import gymnax" if gymnax_first else "",
        register=""
        if gymnax_first
        else "from jaxarc.gymnax.registration import register_with_gymnax\nregister_with_gymnax()",
    )
    result = run_python_script(code)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_import_jaxarc_after_gymnax_registers_without_an_import_hook():
    """old: an import finder that jaxarc put on sys.meta_path hooked gymnax's registry."""
    report = _fresh_imports(gymnax_first=True)
    assert report["added_finders"] == []  # sys.meta_path as gymnax's own imports left it
    assert (report["env"], report["steps"]) == ("ArcEnvironment", 3)


def test_import_jaxarc_alone_leaves_gymnax_and_jax_untouched_until_registering():
    """``import jaxarc`` first: no finder, gymnax not imported and JAX's backends not
    started (``jax.distributed.initialize`` is still allowed); one call registers."""
    report = _fresh_imports(gymnax_first=False)
    assert report["added_finders"] == []
    assert report["gymnax_imported"] is False and report["jax_backends_started"] is False
    assert (report["env"], report["steps"]) == ("ArcEnvironment", 3)


def test_every_registered_name_is_a_gymnax_id():
    builtin = {"ARC-AGI-1", "ARC-AGI-2-eval", "MiniARC", "ConceptARC-eval", "gen/flip"}
    names = register_with_gymnax()  # again: harmless, and adds any new name
    assert builtin <= set(names)
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
