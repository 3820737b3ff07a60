"""Out-of-range actions and their history, the index rule, values
refused where Python values enter, and saved states tied to their source."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from env_helpers import make_bank, make_task, recolour_task
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    batch_step,
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


# ------------------------------------------------------ integers and masks: one rule per face
# docs/environment.md, "Integers and masks": every face refuses what it cannot take as it is
# (floats, strings, bools, masks holding other values than 0/1, shapes and parts outside the
# space), and in compiled code an out-of-range value is an error with validation and
# otherwise selects nothing or is a no-op step, never another cell.


@functools.cache
def small_env(selection_format: str = "point", **options):
    """A gymnax env and params over the shared 5x5 bank (one per set of options)."""
    from gym_helpers import small_bank

    from jaxarc.gymnax import build_environment

    return build_environment(
        small_bank(), name="small", selection_format=selection_format, **options
    )


@functools.cache
def jumanji_env(selection_format: str = "point", validate: bool = False):
    pytest.importorskip("jumanji")
    from jaxarc.jumanji import ArcJumanjiEnv

    env, params = small_env(selection_format, validate=validate, max_episode_steps=4)
    return ArcJumanjiEnv(env.config, env.task_source, reward=params.reward)


@functools.cache
def flat_env(action_format: str = "discrete", validate: bool = False):
    from jaxarc.wrappers import flatten_env

    env, params = small_env("point", validate=validate, max_episode_steps=4)
    return flatten_env(env, action_format=action_format), params


def small_gym(**kwargs):
    from gym_helpers import SMALL_NAME

    from jaxarc.gym.env import ArcGymnasiumEnv

    env = ArcGymnasiumEnv(SMALL_NAME, **kwargs)
    env.reset(seed=0, options={"task_index": 0, "pair": 0})
    return env


def small_sb3(num_envs: int = 2, **kwargs):
    pytest.importorskip("stable_baselines3")
    from gym_helpers import SMALL_NAME

    from jaxarc.gym.sb3 import ArcSB3VecEnv

    venv = ArcSB3VecEnv(SMALL_NAME, num_envs=num_envs, **kwargs)
    venv.reset()
    return venv


PAINT = ops.FILL_0 + 3


def _mask(value, shape: tuple[int, int] = (5, 5)) -> np.ndarray:
    """A mask whose top-left cell holds ``value`` and the next one 1 (0 elsewhere), of the
    dtype ``value`` gives NumPy."""
    mask = np.zeros(shape, dtype=np.asarray(value).dtype)
    mask[0, 0], mask[0, 1] = value, 1
    return mask


@pytest.mark.parametrize("value", [2, 0.3, -1, "x"], ids=repr)
def test_mask_values_other_than_0_and_1_are_refused_where_they_enter(value) -> None:
    mask = _mask(value)
    with pytest.raises((TypeError, ValueError), match="booleans or 0/1 integers"):
        MaskAction(PAINT, mask)  # arc_step / batch_step take only what this builds
    env, params = small_env("mask")
    _, state = env.reset(jax.random.key(0), params)
    with pytest.raises((TypeError, ValueError), match="booleans or 0/1 integers"):
        env.step(jax.random.key(1), state, {"operation": PAINT, "selection": mask}, params)
    jumanji = jumanji_env("mask")
    jstate, _ = jumanji.reset(jax.random.key(0))
    vector = np.concatenate([np.array([PAINT], dtype=mask.dtype), mask.reshape(-1)])
    with pytest.raises((TypeError, ValueError), match="action|booleans or 0/1"):
        jumanji.step(jstate, vector)
    gym = small_gym(selection_format="mask")
    with pytest.raises((TypeError, ValueError), match="selection"):
        gym.step({"operation": PAINT, "selection": mask})


def _painted(grid, before) -> tuple[bool, bool]:
    """Whether the two top-left cells changed."""
    grid, before = np.asarray(grid), np.asarray(before)
    return bool(grid[0, 0] != before[0, 0]), bool(grid[0, 1] != before[0, 1])


def _reset_with_two_cells(reset):
    """The state of the first reset (seeds 0, 1, ...) whose grid covers the two top-left
    cells the masks select (the small bank also holds 1x1 grids)."""
    for seed in range(64):
        state = reset(jax.random.key(seed))
        if int(np.asarray(state.grid)[0, 1]) >= 0:
            return state
    raise AssertionError("no reset of the small bank covers two cells")


def test_traced_integer_masks_select_their_ones_and_fail_validation(task) -> None:
    mask = jnp.asarray(_mask(2, CANVAS), dtype=jnp.int32)  # (0, 0) holds 2, (0, 1) holds 1
    for validate in (False, True):
        cfg = config("mask", validate=validate)
        state, _ = arc_reset(jax.random.key(0), cfg, task, pair_index=0)
        step = jax.jit(lambda m, state=state, cfg=cfg: arc_step(state, MaskAction(PAINT, m), cfg))
        batched = jax.jit(
            lambda m, cfg=cfg, state=state: batch_step(
                jax.tree.map(lambda x: x[None], state), MaskAction(jnp.int32(PAINT)[None], m), cfg
            )
        )
        if validate:
            with pytest.raises(Exception, match="mask selection holds a value other than 0"):
                jax.block_until_ready(step(mask))
            with pytest.raises(Exception, match="mask selection holds a value other than 0"):
                jax.block_until_ready(batched(mask[None]))
        else:  # the cell holding 2 selects nothing (never True), the one holding 1 paints
            assert _painted(step(mask)[0].grid, state.grid) == (False, True)
            assert _painted(batched(mask[None])[0].grid[0], state.grid) == (False, True)
    # the gymnax face and the Jumanji face by the same rule (on the 5x5 canvas of their bank)
    mask = jnp.asarray(_mask(2), dtype=jnp.int32)
    for validate in (False, True):
        env, params = small_env("mask", validate=validate)
        state = _reset_with_two_cells(lambda k, env=env, params=params: env.reset(k, params)[1])
        action = {"operation": jnp.int32(PAINT), "selection": mask}
        gymnax_step = jax.jit(
            lambda s, a, env=env, params=params: env.step(jax.random.key(1), s, a, params)[1].grid
        )
        jumanji = jumanji_env("mask", validate)
        jstate = _reset_with_two_cells(lambda k, env=jumanji: env.reset(k)[0])
        vector = jnp.concatenate([jnp.array([PAINT], jnp.int32), mask.reshape(-1)])
        jumanji_step = jax.jit(lambda s, v, env=jumanji: env.step(s, v)[0].grid)
        if validate:
            with pytest.raises(Exception, match="mask selection holds a value other than 0"):
                jax.block_until_ready(gymnax_step(state, action))
            with pytest.raises(Exception, match="mask selection holds a value other than 0"):
                jax.block_until_ready(jumanji_step(jstate, vector))
        else:
            assert _painted(gymnax_step(state, action), state.grid) == (False, True)
            assert _painted(jumanji_step(jstate, vector), jstate.grid) == (False, True)


NOT_INTEGER_ACTIONS = [3.9, "3", True, np.float32(2.5), float("nan"), np.array([True])[0]]


@pytest.mark.parametrize("value", NOT_INTEGER_ACTIONS, ids=repr)
def test_flat_and_vector_actions_refuse_what_is_not_an_integer(value) -> None:
    gym = small_gym(flat=True)
    with pytest.raises(TypeError, match="action"):
        gym.step(value)  # old: "3" and 3.9 ran as action 3
    venv = small_sb3()
    with pytest.raises(TypeError, match="action"):
        venv.step(np.array([value, value]))
    env, params = flat_env()
    _, state = env.reset(jax.random.key(0), params)
    with pytest.raises(TypeError, match="action"):
        env.step(jax.random.key(1), state, value, params)
    if isinstance(value, float):  # a traced float is refused by its dtype
        with pytest.raises(TypeError, match="action"):
            jax.jit(lambda a: env.step(jax.random.key(1), state, a, params))(jnp.float32(value))
    jumanji = jumanji_env()
    jstate, _ = jumanji.reset(jax.random.key(0))
    with pytest.raises(TypeError, match="action"):
        jumanji.step(jstate, np.array([value, value, value]))
    with pytest.raises(TypeError, match="action"):  # old: [1.7, 0, 0] ran as FILL_1
        jumanji.step(jstate, jnp.array([1.7, 0.0, 0.0]))
    with pytest.raises(TypeError, match="action"):
        jax.jit(jumanji.step)(jstate, jnp.array([1.0, 0.0, 0.0]))


def test_actions_of_another_shape_name_the_expected_one() -> None:
    jumanji = jumanji_env()
    jstate, _ = jumanji.reset(jax.random.key(0))
    for vector in ([ops.FILL_0 + 1, 2], [ops.FILL_0 + 1, 2, 0, 0]):  # old: FILL_1 at (2, 2)
        with pytest.raises(ValueError, match=r"shape \(3,\).*action_spec"):
            jumanji.step(jstate, jnp.asarray(vector, jnp.int32))
        with pytest.raises(ValueError, match=r"shape \(3,\)"):
            jax.jit(jumanji.step)(jstate, jnp.asarray(vector, jnp.int32))
    with pytest.raises(ValueError, match=r"Discrete\(875\) has shape \(\)"):
        small_gym(flat=True).step(np.array([1, 2]))  # old: a raw broadcasting error
    with pytest.raises(ValueError, match=r"MultiDiscrete\(\[35, 5, 5\]\) has shape \(3,\)"):
        small_gym(flat=True, action_format="multi_discrete").step(np.array([1, 2]))
    with pytest.raises(ValueError, match=r"2 environments in Discrete\(875\) have shape \(2,\)"):
        small_sb3().step(np.array([1, 2, 3]))
    env, params = flat_env("multi_discrete")
    _, state = env.reset(jax.random.key(0), params)
    with pytest.raises(ValueError, match=r"shape \(3,\), got shape \(2,\)"):
        env.step(jax.random.key(1), state, jnp.array([1, 2]), params)


def test_out_of_range_flat_actions_are_refused_or_a_no_op_never_another_cell() -> None:
    with pytest.raises(ValueError, match=r"outside MultiDiscrete\(\[35, 5, 5\]\)"):
        small_gym(flat=True, action_format="multi_discrete").step(np.array([0, 7, 7]))
    with pytest.raises(ValueError, match=r"outside Discrete\(875\)"):
        small_gym(flat=True).step(875)
    with pytest.raises(ValueError, match=r"outside MultiDiscrete"):
        small_sb3(action_format="multi_discrete").step(np.array([[0, 0, 0], [0, 5, 0]]))
    for action_format, outside in [("multi_discrete", [PAINT, 7, 7]), ("discrete", -1)]:
        for validate in (False, True):
            env, params = flat_env(action_format, validate)
            _, state = env.reset(jax.random.key(0), params)
            with pytest.raises(ValueError, match="outside"):  # a value from Python
                env.step(jax.random.key(1), state, jnp.asarray(outside), params)
            step = jax.jit(
                lambda a, env=env, state=state, params=params: env.step(
                    jax.random.key(1), state, a, params
                )[1]
            )
            if validate:
                with pytest.raises(Exception, match="outside"):
                    jax.block_until_ready(step(jnp.asarray(outside)))
                continue
            after = step(jnp.asarray(outside))  # old: clipped to cell (4, 4) and painted
            np.testing.assert_array_equal(after.grid, state.grid)
            assert int(after.step_count) == 1  # a step all the same
            assert int(after.history[0, 0]) == -1  # recorded as the no-op it was


@functools.cache
def fuzzed_gym():
    """One flat Gymnasium env for every fuzzed example (its step compiles once)."""
    return small_gym(flat=True)


FUZZED = st.one_of(
    st.integers(-3, 900),  # around Discrete(875), the small env's flat space
    st.integers(2**31, 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
    st.lists(st.integers(-2, 40), max_size=5),  # vectors of any length
    st.lists(st.floats(-2, 40), min_size=3, max_size=3),
)


def _integer(value) -> int | None:
    """``value`` as the integer the rule takes it for, or ``None`` if it refuses it."""
    if isinstance(value, bool | np.bool_ | str) or value is None:
        return None
    integral = isinstance(value, float) and np.isfinite(value) and value == round(value)
    if not (isinstance(value, int | np.integer) or integral):
        return None
    number = int(value)
    return number if -(2**31) <= number < 2**31 else None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=FUZZED)
def test_fuzzed_actions_are_taken_when_the_rule_takes_them_and_refused_by_name_otherwise(value):
    """Flat actions (Gymnasium, gymnax) and Jumanji vectors: a value runs only if the rule of
    docs/environment.md takes it (never coerced), and is otherwise a TypeError or
    ValueError that names the action (never another error)."""
    env, params = flat_env()
    _, state = env.reset(jax.random.key(0), params)
    jumanji = jumanji_env()
    jstate, _ = jumanji.reset(jax.random.key(0))
    index = None if isinstance(value, list) else _integer(value)
    flat_ok = index is not None and 0 <= index < 875
    parts = [_integer(v) for v in value] if isinstance(value, list) else []
    vector_ok = len(parts) == 3 and None not in parts
    for run, ok in [
        (lambda: fuzzed_gym().step(value), flat_ok),
        (lambda: env.step(jax.random.key(1), state, value, params), flat_ok),
        (lambda: jumanji.step(jstate, value), vector_ok),
    ]:
        try:
            run()
        except (TypeError, ValueError) as err:
            assert not ok, f"{value!r} refused: {err}"
            assert "action" in str(err)
        else:
            assert ok, f"{value!r} was taken"
