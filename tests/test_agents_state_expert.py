"""The state-based bbox expert: every gen/medium family solved in the oracle's steps."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.agents import TrainConfig
from jaxarc.agents.grpo.behaviour_cloning import expert_rollout
from jaxarc.agents.grpo.state_expert import state_expert_action
from jaxarc.agents.model.pair_transforms import TRANSFORMS, transform_matches
from jaxarc.data.generator_families import MEDIUM_FAMILIES
from jaxarc.data.generators import make_generator, oracle_actions
from jaxarc.grid import operation_ids as ops

MEDIUM = TrainConfig.preset("medium")
EPISODES = 128


@pytest.fixture(scope="module")
def rollout():
    """One expert rollout on gen/medium, the family returned as the task index."""
    source = make_generator("gen/medium", family_as_index=True)
    return expert_rollout(jax.random.key(5), MEDIUM.env_config(), source, EPISODES, 4)


def test_state_expert_plays_the_oracle_sequence(rollout):
    """From reset the expert (which never sees the family) solves every episode of every
    gen/medium family in at most ``oracle_actions``' number of steps, with the oracle's
    actions (operation and box) whenever it takes as many. (It can be shorter: a moved object
    at the grid's edge is sometimes also one whole-grid flip away.)"""
    batch = rollout
    assert bool(jnp.all(batch.success))
    seen, shorter = set(), 0
    for n in range(EPISODES):
        family = MEDIUM_FAMILIES[int(batch.task_index[n])]
        seen.add(family)
        h, w = (int(v) for v in batch.obs.input_shape[n, 0])
        inp = np.asarray(batch.obs.input_grid[n, 0])[:h, :w]
        out = np.asarray(batch.targets[n])[:h, :w]
        expected = oracle_actions(family, inp, out)
        steps = int(np.asarray(batch.valid[n]).sum())
        a = batch.actions
        got = [
            tuple(int(x[n, t]) for x in (a.operation, a.r1, a.c1, a.r2, a.c2)) for t in range(steps)
        ]
        assert got[-1][0] == ops.SUBMIT
        assert len(got) <= len(expected), (family, n)
        if len(got) < len(expected):
            shorter += 1
            continue
        # SUBMIT's box is irrelevant; compare it by operation only
        assert got[:-1] == expected[:-1], (family, n)
        paint_only = family in ("recolour", "erase", "fill_background", "fill_holes")
        assert bool(batch.painted[n]) == paint_only
    assert seen == set(MEDIUM_FAMILIES)
    assert shorter <= EPISODES // 16


def _canvas(area: np.ndarray) -> jnp.ndarray:
    grid = np.full((8, 8), -1, np.int8)
    grid[: area.shape[0], : area.shape[1]] = area
    return jnp.asarray(grid)


def test_state_expert_labels_states_off_the_oracle_path():
    """From a grid flipped the wrong way the expert still finds a shortest fix: after FLIP_TB
    on a flip-LR task it takes two steps, FLIP_LR first; the expert is jit and vmap clean."""
    area = np.array([[1, 2, 0], [0, 3, 0]], np.int8)
    grid, target, flipped_tb = _canvas(area), _canvas(area[:, ::-1]), _canvas(area[::-1])
    shape = jnp.array([2, 3], jnp.int32)
    expert = jax.jit(jax.vmap(state_expert_action))
    actions = expert(
        jnp.stack([grid, flipped_tb, target]),
        jnp.stack([shape] * 3),
        jnp.stack([target] * 3),
        jnp.stack([shape] * 3),
    )
    assert [int(o) for o in actions.operation] == [ops.FLIP_LR, ops.FLIP_LR, ops.SUBMIT]
    box = [int(v[0]) for v in (actions.r1, actions.c1, actions.r2, actions.c2)]
    assert box == [0, 0, 1, 2]


def test_transform_matches_agree_with_numpy():
    """Each given transform feature is exact for the NumPy transform it names."""
    rng = np.random.default_rng(0)
    inp = rng.integers(0, 10, (3, 5)).astype(np.int8)
    numpy_views = {
        "identity": inp,
        "flip_lr": inp[:, ::-1],
        "flip_tb": inp[::-1],
        "rot180": inp[::-1, ::-1],
        "transpose": inp.T,
        "anti_transpose": inp[::-1, ::-1].T,
        "rot_cw": np.rot90(inp, -1),
        "rot_ccw": np.rot90(inp, 1),
    }
    shifted = np.zeros_like(inp)
    shifted[2:] = inp[:-2]
    numpy_views["shift_down_2"] = shifted

    a, a_shape = _canvas(inp), jnp.asarray(inp.shape, jnp.int32)
    for name, view in numpy_views.items():
        b, b_shape = _canvas(np.ascontiguousarray(view)), jnp.asarray(view.shape, jnp.int32)
        exact = np.asarray(transform_matches(a, a_shape, b, b_shape))[: len(TRANSFORMS)]
        assert exact[TRANSFORMS.index(name)] == 1.0, name
        assert exact.sum() == 1.0, (name, exact)
