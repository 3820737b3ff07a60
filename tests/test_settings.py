"""One spelling per setting, one place for the defaults, the mapping written once.

The episode length is ``max_episode_steps`` in the environment config, ``jaxarc.make``, the
Gymnasium adapters, ``TrainConfig`` and every CLI flag; reward defaults come from
``REWARD_DEFAULTS``; flat options become the nested config only in ``config_from_options``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stdout

import jax
import pytest

import jaxarc
from jaxarc.agents.grpo.config import PRESETS, TrainConfig
from jaxarc.agents.run.checkpoint import config_from_dict, config_to_dict
from jaxarc.cli.main import build_parser
from jaxarc.envs import CONFIG_OPTIONS, REWARD_DEFAULTS, RewardParams, config_from_options

OLD_NAMES = ("rollout_steps", "episode_steps", "max_steps")
OLD_FLAGS = ("--rollout-steps", "--episode-steps", "--max-steps")


def _help(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return out.getvalue()


@pytest.mark.parametrize("argv", [("train",), ("eval",), ("bench", "env"), ("bench", "train")])
def test_every_command_spells_the_episode_length_one_way(argv):
    text = _help(*argv)
    flags = set(re.findall(r"--[a-z][a-z0-9-]*", text))
    assert not flags & set(OLD_FLAGS), sorted(flags & set(OLD_FLAGS))
    if argv != ("bench", "train"):  # (bench train takes the preset's length)
        assert "--max-episode-steps" in flags


def test_train_config_uses_the_environment_names_and_defaults():
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    assert not fields & set(OLD_NAMES)
    env_options = TrainConfig().env_options()
    assert set(env_options) <= set(CONFIG_OPTIONS)
    for name, default in REWARD_DEFAULTS.items():
        assert getattr(TrainConfig(), name) == default
        assert float(getattr(RewardParams(), name)) == pytest.approx(default)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_train_config_maps_to_the_environment_as_jaxarc_make_does(name):
    """``TrainConfig.env_config`` and ``jaxarc.make`` build the same config from the same
    flat options (one mapping)."""
    config = PRESETS[name]
    env, params = jaxarc.make(config.source, **config.env_options())
    assert env.config == config.env_config()
    assert jax.tree.map(float, params.reward) == jax.tree.map(float, config.reward_params())


def test_unknown_option_names_the_accepted_ones():
    with pytest.raises(TypeError, match=r"unknown option\(s\) for 'gen/easy': \['episode_steps'\]"):
        jaxarc.make("gen/easy", episode_steps=4)
    with pytest.raises(TypeError, match="max_episode_steps"):
        config_from_options((5, 5), rollout_steps=3)


def test_gymnax_params_mirror_the_episode_length():
    env, params = jaxarc.make("gen/easy", max_episode_steps=7)
    assert params.max_steps_in_episode == 7  # gymnax's name, read by rejax's evaluation
    wrong = dataclasses.replace(params, max_steps_in_episode=3)
    with pytest.raises(ValueError, match="max_episode_steps=7"):
        env.reset(jax.random.key(0), wrong)


def test_checkpoint_configs_saved_under_old_names_still_load():
    saved = config_to_dict(TrainConfig(max_episode_steps=3))
    saved["rollout_steps"] = saved.pop("max_episode_steps")
    with pytest.warns(DeprecationWarning, match="rollout_steps"):
        loaded = config_from_dict(TrainConfig, json.loads(json.dumps(saved)))
    assert loaded.max_episode_steps == 3


def test_configs_and_the_cli_parser_leave_jax_uninitialised():
    """``jaxarc train`` must join ``jax.distributed`` before any JAX computation: building
    ``TrainConfig`` (its checks), the presets' environment configs and the CLI parser must
    not start the XLA backend (building the reward weights would)."""
    code = (
        "from jaxarc.agents.grpo.config import PRESETS, TrainConfig\n"
        "from jaxarc.cli.main import build_parser\n"
        "TrainConfig(); [p.env_config() for p in PRESETS.values()]; build_parser()\n"
        "from jax._src import xla_bridge\n"
        "print(xla_bridge.backends_are_initialized())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr[-2000:]
