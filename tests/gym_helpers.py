"""A small registered environment shared by the Gymnasium adapter tests (fast to compile),
and the registered ids the ecosystem tests check."""

from __future__ import annotations

import functools

import gymnasium
import pytest

import jaxarc
from jaxarc.data import bank_from_tasks
from jaxarc.gym import gymnasium_id, register_gymnasium_envs
from jaxarc.gymnax import build_environment

SMALL_NAME = "test-gym-small"
SMALL_ID = gymnasium_id(SMALL_NAME)
CANVAS = (5, 5)
TASKS = {
    "recolour": {
        "train": [
            {"input": [[1, 0], [0, 1]], "output": [[2, 0], [0, 2]]},
            {"input": [[1, 1, 0]], "output": [[2, 2, 0]]},
            {"input": [[0], [1]], "output": [[0], [2]]},
        ],
        "test": [{"input": [[1]], "output": [[2]]}],
    },
    "grow": {
        "train": [
            {"input": [[3]], "output": [[3, 3], [3, 3]]},
            {"input": [[4]], "output": [[4, 4], [4, 4]]},
        ],
        "test": [{"input": [[5]], "output": [[5, 5], [5, 5]]}],
    },
}


@functools.cache
def small_bank():
    return bank_from_tasks(TASKS, canvas_shape=CANVAS, name=SMALL_NAME)


def _factory(**options):
    return build_environment(small_bank(), name=SMALL_NAME, **options)


jaxarc.register(SMALL_NAME, _factory, overwrite=True)
register_gymnasium_envs([SMALL_NAME])


OPERATIONS = ["FLOOD_1", "SUBMIT"]
# every registered name but the small test one, and the fixtures of the fetched sets
NAMES = [n for n in jaxarc.registered_names() if n != SMALL_NAME]
DATA_DIRS = {"MiniARC": "miniarc_dir", "ConceptARC": "conceptarc_dir"}


def make_registered(name: str, request: pytest.FixtureRequest) -> gymnasium.Env:
    """``gymnasium.make`` of ``name``'s id with 3-step episodes (a fetched set's tasks from
    its fixture's folder: skipped when absent)."""
    options = {}
    base = name.removesuffix("-eval")
    if base in DATA_DIRS:
        options["data_dir"] = str(request.getfixturevalue(DATA_DIRS[base]))
    return gymnasium.make(gymnasium_id(name), max_episode_steps=3, **options)
