"""gen/reshape (``crop`` and ``mirror_tile``, outputs of another shape than the input): each
pair follows its rule (NumPy references), every instance is solved by its oracle through the
real environment with bbox actions, ``min_side`` is honoured, and behaviour cloning (whose
expert does not play them) is refused on them."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from env_helpers import crop, play_bbox_plans

from jaxarc.agents.grpo.config import TrainConfig
from jaxarc.data.generators import (
    generator_families,
    generator_names,
    make_generator,
    oracle_actions,
)
from jaxarc.data.shape_families import SHAPE_FAMILIES
from jaxarc.envs import EnvironmentConfig, JaxArcConfig, UnifiedActionConfig
from jaxarc.envs import UnifiedDatasetConfig as DatasetConfig
from jaxarc.envs.functional import batch_reset

CANVAS = (8, 8)
NUM_TASKS = 64
RESHAPE = make_generator("gen/reshape", canvas=CANVAS, family_as_index=True)
EVAL_CONFIG = JaxArcConfig(
    environment=EnvironmentConfig(max_episode_steps=5, episode_mode="eval"),
    dataset=DatasetConfig(*CANVAS),
    action=UnifiedActionConfig(selection_format="bbox", allowed_operations=None),
)


def _content_box(grid: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(grid)
    return grid[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]


@pytest.fixture(scope="module")
def tasks():
    """64 tasks of gen/reshape and the index of the family that made each."""
    keys = jax.random.split(jax.random.key(11), NUM_TASKS)
    tasks, families = jax.jit(jax.vmap(RESHAPE.sample_task_and_family))(keys)
    return jax.device_get(tasks), np.asarray(families)


def _pairs(tasks, i: int):
    """Every (input, output) of task ``i``, cropped: demonstrations, then tests."""
    pairs = []
    for kind in ("demo", "test"):
        grids = [getattr(tasks, f"{kind}_{side}s")[i] for side in ("input", "output")]
        shapes = [getattr(tasks, f"{kind}_{side}_shapes")[i] for side in ("input", "output")]
        for inp, out, in_shape, out_shape in zip(*grids, *shapes, strict=True):
            pairs.append((crop(inp, in_shape), crop(out, out_shape)))
    return pairs


def test_names_register_both_families_and_their_mixture():
    assert generator_families("gen/reshape") == tuple(SHAPE_FAMILIES) == ("crop", "mirror_tile")
    for name in ("gen/reshape", "gen/crop", "gen/mirror_tile"):
        assert name in generator_names()
    assert make_generator("gen/crop").families == ("crop",)


def test_crop_outputs_the_box_of_the_inputs_one_object(tasks):
    task, families = tasks
    crops = np.flatnonzero(families == 0)
    assert len(crops) > 8
    for i in crops:
        for inp, out in _pairs(task, i):
            assert out.shape[0] < inp.shape[0] and out.shape[1] < inp.shape[1]
            np.testing.assert_array_equal(out, _content_box(inp))
            assert (out[[0, 0, -1, -1], [0, -1, 0, -1]] != 0).all()  # its corners are coloured
            assert len(np.unique(inp)) >= 5  # four corner colours and the background


def test_mirror_tile_outputs_the_input_then_its_mirror_in_the_tasks_direction(tasks):
    task, families = tasks
    tiles = np.flatnonzero(families == 1)
    assert len(tiles) > 8
    directions = set()
    for i in tiles:
        kinds = set()
        for inp, out in _pairs(task, i):
            beside = np.hstack([inp, inp[:, ::-1]])
            stacked = np.vstack([inp, inp[::-1]])
            if out.shape == beside.shape and np.array_equal(out, beside):
                kinds.add("beside")
            else:
                np.testing.assert_array_equal(out, stacked)
                kinds.add("stacked")
            # four coloured corners: neither mirror is a plain copy
            assert not np.array_equal(inp, inp[:, ::-1]) and not np.array_equal(inp, inp[::-1])
        assert len(kinds) == 1  # one rule per task: every pair has the task's direction
        directions |= kinds
    assert directions == {"beside", "stacked"}


def test_oracle_solves_every_reshape_instance_with_bbox_actions():
    keys = jax.random.split(jax.random.key(7), NUM_TASKS)
    states, obs = batch_reset(keys, EVAL_CONFIG, RESHAPE)
    families = np.asarray(states.task_index)
    assert set(families.tolist()) == {0, 1}
    task = jax.device_get(states.episode_store)
    plans = []
    for i in range(NUM_TASKS):
        inp = crop(obs.input_grid[i], obs.input_shape[i])
        out = crop(task.test_outputs[i, 0], task.test_output_shapes[i, 0])
        plans.append(oracle_actions(RESHAPE.families[families[i]], inp, out))
    assert {len(p) for p in plans} == {4, 5}  # crop: 4 actions, mirror_tile: 5, SUBMIT included
    states, info = play_bbox_plans(states, plans, EVAL_CONFIG)
    assert np.asarray(info["success"]).all()
    np.testing.assert_array_equal(np.asarray(states.step_count), [len(p) for p in plans])


def test_min_side_draws_larger_grids_on_a_larger_canvas():
    source = make_generator("gen/reshape", canvas=(12, 12), min_side=9)
    tasks = jax.jit(jax.vmap(source.sample_task_and_family))(
        jax.random.split(jax.random.key(5), 32)
    )[0]
    shapes = np.asarray(tasks.demo_input_shapes).reshape(-1, 2)
    # crop: both sides at least 9; mirror_tile: the side it does not double
    assert (shapes.max(axis=1) >= 9).all()
    assert (np.asarray(tasks.demo_output_shapes) <= 12).all()


def test_behaviour_cloning_is_refused_on_the_families_its_expert_cannot_play():
    with pytest.raises(ValueError, match="does not play crop, mirror_tile"):
        TrainConfig.preset("medium").replace(source="gen/reshape")
    with pytest.raises(ValueError, match="does not play crop "):
        TrainConfig.preset("medium").replace(source="gen/crop")
    # learning them from reward alone is allowed, and the check leaves other sources alone
    assert TrainConfig.preset("rl", source="gen/reshape").bc_updates == 0
    assert TrainConfig.preset("medium").replace(source="gen/reshape", bc_updates=0).bc_updates == 0
    assert TrainConfig.preset("medium").replace(source="gen/medium").bc_updates == 400
