"""Out-of-range actions and their history, the index rule, values
refused where Python values enter, and saved states tied to their source."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from env_helpers import make_bank, make_task, recolour_task

from jaxarc.envs import (
    BboxAction,
    EnvironmentConfig,
    JaxArcConfig,
    MaskAction,
    PointAction,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    arc_reset,
    arc_step,
)
from jaxarc.grid import operation_ids as ops

CANVAS = (6, 6)


def config(selection_format: str = "point", **env) -> JaxArcConfig:
    return JaxArcConfig(
        environment=EnvironmentConfig(**env),
        dataset=UnifiedDatasetConfig(*CANVAS),
        action=UnifiedActionConfig(selection_format=selection_format),
    )


@pytest.fixture(scope="module")
def task():
    return recolour_task(CANVAS)


@pytest.fixture(scope="module")
def bank(task):
    other = make_task([([[3]], [[4]]), ([[5, 5]], [[6, 6]])], [([[7]], [[8]])], CANVAS, 3)
    return make_bank([task, other])


# ------------------------------------------------------------------ 8: the action history

OUT_OF_RANGE = {
    "point": [
        PointAction(259, 0, 0),
        PointAction(ops.FILL_0 + 3, 256, 1),
        PointAction(300, -300, 2),
    ],
    "bbox": [
        BboxAction(ops.FILL_0 + 3, 0, 0, 200, 1),
        BboxAction(259, 0, 0, 1, 1),
        BboxAction(ops.FILL_0 + 2, -130, 1, 2, 300),
    ],
    "mask": [MaskAction(259, np.ones(CANVAS, bool)), MaskAction(-7, np.ones(CANVAS, bool))],
}


@pytest.mark.parametrize("selection_format", ["point", "bbox", "mask"])
def test_history_replays_exactly_the_actions_taken(task, selection_format: str) -> None:
    cfg = config(selection_format, max_episode_steps=8)
    cls = type(OUT_OF_RANGE[selection_format][0])
    state, _ = arc_reset(jax.random.key(0), cfg, task, pair_index=0)
    start = state
    for action in OUT_OF_RANGE[selection_format]:
        before = state
        state, *_ = arc_step(state, action, cfg)
        row = state.history[int(before.history_length)]
        decoded = cls.from_history(row, CANVAS)
        op = int(action.operation)
        if 0 <= op < ops.NUM_OPERATIONS:
            assert int(decoded.operation) == op
        else:  # never an operation that was not taken (259 must not come back as FILL_3)
            assert not 0 <= int(decoded.operation) < ops.NUM_OPERATIONS
        # the recorded row has the very effect of the action taken
        again, *_ = arc_step(before, decoded, cfg)
        np.testing.assert_array_equal(again.grid, state.grid)
        np.testing.assert_array_equal(again.selection, state.selection)
    # replaying the whole history from the start gives the final grid
    replayed = start
    for row in state.history[: int(state.history_length)]:
        replayed, *_ = arc_step(replayed, cls.from_history(row, CANVAS), cfg)
    np.testing.assert_array_equal(replayed.grid, state.grid)


# ------------------------------------------------------------------ 9: one rule for indices


def test_only_minus_one_samples_under_jit_with_validation(bank) -> None:
    strict = config(validate=True)
    reset = jax.jit(lambda t, p: arc_reset(jax.random.key(0), strict, bank, t, p)[0])
    with pytest.raises(Exception, match="task_index below -1"):
        reset(jnp.int32(-5), jnp.int32(0))
    with pytest.raises(Exception, match="pair_index below -1"):
        reset(jnp.int32(0), jnp.int32(-5))
    with pytest.raises(Exception, match="pair_index beyond"):
        reset(jnp.int32(1), jnp.int32(2))  # task 1 has two demonstration pairs
    state = reset(jnp.int32(-1), jnp.int32(-1))  # -1 samples
    assert 0 <= int(state.task_index) < bank.num_tasks
    # outside jit the same values are refused before anything is compiled
    for task_index, pair_index in [(-5, 0), (0, -5), (1, 2), (2, 0)]:
        with pytest.raises(ValueError, match="outside"):
            arc_reset(jax.random.key(0), config(), bank, task_index, pair_index)


def test_without_validation_indices_past_the_end_play_the_last_task_or_pair(bank) -> None:
    cfg = config()
    reset = jax.jit(lambda t, p: arc_reset(jax.random.key(0), cfg, bank, t, p)[0])
    state = reset(jnp.int32(400), jnp.int32(7))  # bank: 2 tasks; task 1: 2 demo pairs
    assert int(state.task_index) == 1 and int(state.pair_index) == 1
    np.testing.assert_array_equal(state.grid, bank.demo_inputs[1, 1])  # never a padding pair
    assert (np.asarray(state.grid_shape) > 0).all()


# ------------------------------------------------------------------ 10: no silent coercions

NOT_INTEGERS = [13.7, True, np.int64(2**32 + 3), "3", np.float32(2.5), [1.5], float("nan"), 2.0**40]


@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_actions_refuse_values_that_are_not_int32_integers(value) -> None:
    with pytest.raises((TypeError, ValueError), match="operation"):
        PointAction(value, 0, 0)
    with pytest.raises((TypeError, ValueError), match="r2"):
        BboxAction(0, 0, 0, value, 0)
    with pytest.raises((TypeError, ValueError), match="operation"):
        MaskAction(value, np.zeros(CANVAS, bool))
    with pytest.raises(TypeError, match="must hold integers"):
        jax.jit(lambda x: PointAction(x, 0, 0))(jnp.float32(3.0))  # traced: by dtype
    # integers of any integer dtype are fine, traced or not, and so are integral floats
    assert int(PointAction(np.int64(3), np.uint8(1), jnp.int8(2)).operation) == 3
    assert int(BboxAction(2.0, jnp.zeros(()), 0, 1, 1).operation) == 2


@pytest.mark.parametrize("value", [1.7, True, "1", np.int64(2**33)], ids=repr)
def test_reset_refuses_indices_that_are_not_int32_integers(bank, value) -> None:
    with pytest.raises((TypeError, ValueError), match="task_index"):
        arc_reset(jax.random.key(0), config(), bank, task_index=value)
    with pytest.raises((TypeError, ValueError), match="pair_index"):
        arc_reset(jax.random.key(0), config(), bank, task_index=0, pair_index=value)


def test_gymnasium_envs_refuse_coerced_actions_and_reset_options() -> None:
    import gymnasium
    from gym_helpers import SMALL_ID

    env = gymnasium.make(SMALL_ID)
    env.reset(seed=0)
    for bad in ("3", 3.5, True):
        with pytest.raises((TypeError, ValueError), match="operation"):
            env.step({"operation": bad, "row": 0, "col": 0})
    for options, name in [({"pair": 1.7}, "pair"), ({"task_index": "1"}, "task_index")]:
        with pytest.raises((TypeError, ValueError), match=name):
            env.reset(options=options)
    env.close()
    vector = gymnasium.make_vec(SMALL_ID, num_envs=2, vectorization_mode="vector_entry_point")
    vector.reset(seed=0)
    with pytest.raises((TypeError, ValueError), match="pair"):
        vector.reset(options={"pair": [0, 1.5]})
    vector.close()


# ------------------------------------------------------------------ 11: states know their source


def _bank_file(path, colour: int):
    import json

    tasks = {
        name: {
            "train": [{"input": [[k, 0]], "output": [[colour, 0]]} for k in range(1, 3)],
            "test": [{"input": [[1, 1]], "output": [[colour, colour]]}],
        }
        for name in ("aaa", "bbb")
    }
    path.write_text(json.dumps(tasks))
    return path


def test_a_state_loads_only_over_the_source_it_was_saved_on(tmp_path, capsys) -> None:
    from jaxarc.cli.main import main as cli_main
    from jaxarc.data import load_bank
    from jaxarc.envs.serialization import load_state, save_state

    training = _bank_file(tmp_path / "training.json", 2)
    evaluation = _bank_file(tmp_path / "evaluation.json", 3)  # same ids, count and canvas
    bank = load_bank(training, canvas_shape=CANVAS, use_cache=False)
    other = load_bank(evaluation, canvas_shape=CANVAS, use_cache=False)
    cfg = config(max_episode_steps=4)
    state, _ = arc_reset(jax.random.key(0), cfg, bank, 1, 0)
    state, *_ = arc_step(state, PointAction(ops.FILL_0 + 3, 0, 0), cfg)
    path = save_state(tmp_path / "state.npz", state, cfg)
    with pytest.raises(ValueError, match=f"belongs to the source {bank.name!r}"):
        load_state(path, cfg, other)
    # the same tasks under another name (a copy of the file) are the same source
    copy = load_bank(_bank_file(tmp_path / "copy.json", 2), canvas_shape=CANVAS, use_cache=False)
    loaded = load_state(path, cfg, copy)
    np.testing.assert_array_equal(loaded.grid, state.grid)
    argv = ["replay", str(path), "--out", str(tmp_path / "x.gif")]
    assert cli_main([*argv, "--source", str(evaluation)]) == 2
    err = capsys.readouterr().err
    assert "belongs to the source" in err and str(bank.name) in err
    assert cli_main([*argv, "--source", str(training)]) == 0


def test_configs_refuse_bools_floats_and_strings_for_integers() -> None:
    from jaxarc.agents import GRPOConfig, TrainConfig

    for bad in (
        lambda: EnvironmentConfig(max_episode_steps=True),
        lambda: UnifiedDatasetConfig(max_grid_height=True),
        lambda: UnifiedActionConfig(allowed_operations=(3.7,)),
        lambda: UnifiedActionConfig(allowed_operations=("3",)),
        lambda: TrainConfig(batch_tasks=2.5),
        lambda: TrainConfig(max_episode_steps=True),
        lambda: TrainConfig(allowed_operations=(3.7, 34)),
        lambda: GRPOConfig(epochs=1.5),
    ):
        with pytest.raises(ValueError, match="int|number|unknown operation '3'"):
            bad()
    assert UnifiedActionConfig(allowed_operations=(np.int64(3),)).allowed_operations == (3,)
