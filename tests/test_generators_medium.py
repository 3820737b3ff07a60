"""gen/medium (the four flood families and the four geometric ones, mixed): every instance is
solved by its oracle through the real environment with bbox actions, the family never
reaches the observation, tasks are a function of the key, and larger canvases with a
minimum grid side give grid sizes never seen on the 8x8 training canvas."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from env_helpers import crop, play_bbox_plans

from jaxarc.data.generator_families import EASY_FAMILIES, GEOMETRIC_FAMILIES, MEDIUM_FAMILIES
from jaxarc.data.generators import (
    GeneratorSource,
    generator_families,
    generator_names,
    make_generator,
    oracle_actions,
)
from jaxarc.envs import EnvironmentConfig, JaxArcConfig, UnifiedActionConfig
from jaxarc.envs import UnifiedDatasetConfig as DatasetConfig
from jaxarc.envs.functional import batch_reset

CANVAS = (8, 8)
NUM_TASKS = 48
MEDIUM = make_generator("gen/medium", canvas=CANVAS, family_as_index=True)
EVAL_CONFIG = JaxArcConfig(  # bbox actions, every operation allowed (the medium preset's)
    environment=EnvironmentConfig(max_episode_steps=4, episode_mode="eval"),
    dataset=DatasetConfig(*CANVAS),
    action=UnifiedActionConfig(selection_format="bbox", allowed_operations=None),
)


@pytest.fixture(scope="module")
def medium_episodes():
    """48 eval-mode episodes of gen/medium: their states (family in ``task_index``) and
    observations."""
    keys = jax.random.split(jax.random.key(7), NUM_TASKS)
    return keys, *batch_reset(keys, EVAL_CONFIG, MEDIUM)


def test_names_mix_all_eight_families_and_each_family_stands_alone():
    assert "gen/medium" in generator_names()
    assert generator_families("gen/medium") == MEDIUM_FAMILIES
    assert set(MEDIUM_FAMILIES) == set(EASY_FAMILIES) | set(GEOMETRIC_FAMILIES)
    assert len(set(MEDIUM_FAMILIES)) == 8
    for family in MEDIUM_FAMILIES:
        assert make_generator(f"gen/{family}").families == (family,)
    with pytest.raises(ValueError, match="min_side"):
        make_generator("gen/medium", canvas=(8, 8), min_side=9)


def test_gen_geometric_mixes_the_four_rectangle_families_and_no_other():
    assert "gen/geometric" in generator_names()
    assert generator_families("gen/geometric") == GEOMETRIC_FAMILIES
    source = make_generator("gen/geometric", family_as_index=True)
    assert source.canvas == CANVAS
    keys = jax.random.split(jax.random.key(3), 32)
    states, obs = batch_reset(keys, EVAL_CONFIG, source)
    families = np.asarray(states.task_index)
    assert set(families.tolist()) == set(range(len(GEOMETRIC_FAMILIES)))
    task = jax.device_get(states.episode_store)
    plans = []  # each a task of its family: its family's oracle solves it in the environment
    for i in range(len(keys)):
        inp = crop(obs.input_grid[i], obs.input_shape[i])
        out = crop(task.test_outputs[i, 0], task.test_output_shapes[i, 0])
        plans.append(oracle_actions(GEOMETRIC_FAMILIES[families[i]], inp, out))
    states, info = play_bbox_plans(states, plans, EVAL_CONFIG)
    assert np.asarray(info["success"]).all()


def test_oracle_solves_every_medium_instance_with_bbox_actions(medium_episodes):
    keys, states, obs = medium_episodes
    families = np.asarray(states.task_index)
    assert set(families.tolist()) == set(range(8))  # every family is drawn
    task = jax.device_get(states.episode_store)  # a generator's state keeps its task
    plans = []
    for i in range(NUM_TASKS):
        inp = crop(obs.input_grid[i], obs.input_shape[i])
        np.testing.assert_array_equal(
            crop(task.test_inputs[i, 0], task.test_input_shapes[i, 0]), inp
        )
        # the target of an eval episode is the task's test output (never observed)
        out = crop(task.test_outputs[i, 0], task.test_output_shapes[i, 0])
        plans.append(oracle_actions(MEDIUM_FAMILIES[families[i]], inp, out))
    assert max(len(p) for p in plans) <= EVAL_CONFIG.environment.max_episode_steps
    states, info = play_bbox_plans(states, plans, EVAL_CONFIG)
    assert np.asarray(info["success"]).all()
    np.testing.assert_array_equal(np.asarray(states.step_count), [len(p) for p in plans])


def test_the_family_never_reaches_the_observation(medium_episodes):
    keys, states, obs = medium_episodes
    plain = make_generator("gen/medium", canvas=CANVAS)  # the source training uses
    plain_states, plain_obs = batch_reset(keys, EVAL_CONFIG, plain)
    assert (np.asarray(plain_states.task_index) == -1).all()  # no family in the state either
    # reporting the family (for evaluation) changes the state's index and nothing the agent sees
    for a, b in zip(jax.tree.leaves(obs), jax.tree.leaves(plain_obs), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert len(set(np.asarray(states.task_index).tolist())) == 8


def test_tasks_are_a_function_of_the_key(medium_episodes):
    keys, states, _ = medium_episodes  # (reset again: the same compiled function)
    again, _ = batch_reset(keys, EVAL_CONFIG, MEDIUM)
    same = ((states.episode_store, states.task_index), (again.episode_store, again.task_index))
    for a, b in zip(*(jax.tree.leaves(s) for s in same), strict=True):  # the tasks, families
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    other, _ = batch_reset(jax.random.split(jax.random.key(8), NUM_TASKS), EVAL_CONFIG, MEDIUM)
    inputs = np.asarray(states.episode_store.test_inputs)
    other_inputs = np.asarray(other.episode_store.test_inputs)
    assert not any(np.array_equal(a, b) for a, b in zip(inputs, other_inputs, strict=True))


def test_min_side_draws_grid_sizes_unseen_on_the_training_canvas():
    # one family per way of drawing a size (square, rectangle from 3, 5 and 7 cells)
    families = ("rotate", "flip", "move", "fill_holes")
    source = GeneratorSource(families=families, canvas=(12, 12), name="gen/x", min_side=10)
    tasks, drawn = jax.jit(jax.vmap(source.sample_task_and_family))(
        jax.random.split(jax.random.key(5), 32)
    )
    shapes = np.concatenate(
        [np.asarray(tasks.demo_input_shapes), np.asarray(tasks.test_input_shapes)], axis=1
    )
    assert shapes.min() >= 10 and shapes.max() <= 12
    assert set(np.asarray(drawn).tolist()) == set(range(len(families)))
