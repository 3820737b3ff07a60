"""The functional core: reset/step semantics, rewards, termination, compiled paths."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from env_helpers import make_bank, make_task, recolour_task

from jaxarc.envs import (
    EnvironmentConfig,
    JaxArcConfig,
    PointAction,
    RewardParams,
    UnifiedActionConfig,
    UnifiedDatasetConfig,
    arc_reset,
    arc_step,
    batch_reset,
    batch_step,
)
from jaxarc.grid import operation_ids as ops

CANVAS = (6, 6)


def config(**env) -> JaxArcConfig:
    return JaxArcConfig(
        environment=EnvironmentConfig(**env),
        dataset=UnifiedDatasetConfig(*CANVAS),
    )


@pytest.fixture(scope="module")
def task():
    return recolour_task(CANVAS)


@pytest.fixture(scope="module")
def bank(task):
    other = make_task([([[3]], [[4]]), ([[5, 5]], [[6, 6]])], [([[7]], [[8]])], CANVAS, 3)
    return make_bank([task, other])


def test_configs_are_hashable_and_validated():
    assert hash(JaxArcConfig()) == hash(JaxArcConfig())
    with pytest.raises(ValueError, match="selection_format"):
        UnifiedActionConfig(selection_format="pixel")
    with pytest.raises(ValueError, match="max_episode_steps"):
        EnvironmentConfig(max_episode_steps=0)
    with pytest.raises(ValueError, match="allowed_operations"):
        UnifiedActionConfig(allowed_operations=(3, 40))


def test_train_reset_hides_the_target(task):
    cfg = config()
    for pair in range(3):
        state, obs = arc_reset(jax.random.key(0), cfg, task, pair_index=pair)
        target = np.asarray(task.demo_outputs[pair])
        np.testing.assert_array_equal(obs.grid, task.demo_inputs[pair])
        assert not bool(obs.demo_mask[pair])
        assert int(obs.demo_mask.sum()) == 2
        for leaf in jax.tree.leaves(obs):
            leaf = np.asarray(leaf)
            if leaf.shape[-2:] == CANVAS:
                flat = leaf.reshape(-1, *CANVAS)
                assert not any(np.array_equal(g, target) for g in flat)


def test_eval_reset_plays_test_pair_and_shows_all_demos(task):
    cfg = config(episode_mode="eval")
    state, obs = arc_reset(jax.random.key(1), cfg, task)
    np.testing.assert_array_equal(obs.input_grid, task.test_inputs[0])
    assert int(obs.demo_mask.sum()) == 3
    assert int(state.pair_index) == 0


def test_start_from_empty_keeps_shape(task):
    state, obs = arc_reset(jax.random.key(0), config(start_from_empty=True), task, pair_index=0)
    np.testing.assert_array_equal(obs.grid[:2, :2], 0)
    assert (np.asarray(obs.grid)[2:] == -1).all()


def _solve_recolour(state, cfg, cells):
    for r, c in cells:
        state, _, reward, done, info = arc_step(state, PointAction(ops.FILL_0 + 2, r, c), cfg)
    return arc_step(state, PointAction(ops.SUBMIT, 0, 0), cfg)


def test_correct_submit_in_eval_mode_succeeds_with_rewards(task):
    params = RewardParams(success_bonus=5.0, step_penalty=-0.5, failed_submit_penalty=-3.0)
    cfg = config(episode_mode="eval")
    state, _ = arc_reset(jax.random.key(0), cfg, task, reward_params=params)
    state, _, reward, done, info = _solve_recolour(state, cfg, [(0, 0), (0, 2), (1, 1)])
    assert bool(info["terminated"]) and bool(info["success"]) and not bool(info["truncated"])
    assert bool(done)
    assert float(reward) == pytest.approx(5.0 - 0.5)
    assert float(info["similarity"]) == 1.0


def test_wrong_submit_is_penalised_and_terminates(task):
    params = RewardParams(success_bonus=5.0, step_penalty=-0.5, failed_submit_penalty=-3.0)
    cfg = config(episode_mode="eval")
    state, _ = arc_reset(jax.random.key(0), cfg, task, reward_params=params)
    state, _, reward, done, info = arc_step(state, PointAction(ops.SUBMIT, 0, 0), cfg)
    assert bool(info["terminated"]) and not bool(info["success"])
    assert float(reward) == pytest.approx(-3.5)
    # a finished episode no longer changes and pays nothing
    after, _, reward2, done2, _ = arc_step(state, PointAction(ops.FILL_0 + 7, 0, 0), cfg)
    assert float(reward2) == 0.0 and bool(done2)
    np.testing.assert_array_equal(after.grid, state.grid)
    assert int(after.step_count) == int(state.step_count)


def test_truncation_is_not_termination(task):
    cfg = config(max_episode_steps=3)
    state, _ = arc_reset(jax.random.key(0), cfg, task)
    for k in range(3):
        state, _, _, done, info = arc_step(state, PointAction(ops.FILL_0, 0, 0), cfg)
        assert bool(done) == (k == 2)
    assert bool(info["truncated"]) and not bool(info["terminated"])
    assert not bool(info["success"])


def test_similarity_is_over_the_union_of_areas():
    # target 1x2, grid 2x2 with the same first row: 2 matches over a union of 4 cells
    task = make_task([([[1, 1], [0, 0]], [[1, 1]])], [([[0]], [[0]])], CANVAS)
    state, _ = arc_reset(jax.random.key(0), config(), task, pair_index=0)
    assert float(state.similarity) == pytest.approx(0.5)


def test_similarity_shaping_reward_is_traced(task, count_compilations):
    cfg = config()

    def reward_for(weight):
        params = RewardParams(similarity_weight=weight, step_penalty=0.0)
        state, _ = arc_reset(jax.random.key(0), cfg, task, pair_index=0, reward_params=params)
        _, _, reward, _, info = arc_step(state, PointAction(ops.FILL_0 + 2, 0, 0), cfg)
        return float(reward)

    rewards = [reward_for(0.0)]  # compiles reset, step and the eager helpers of this process
    with count_compilations() as counter:
        rewards += [reward_for(1.0), reward_for(2.0)]
    # gain: similarity 2/4 -> 3/4
    assert rewards == pytest.approx([0.0, 0.25, 0.5])
    assert counter.programs == 0  # a new weight is a new traced value, never a recompilation


def test_disallowed_operation_is_a_noop(task):
    cfg = JaxArcConfig(
        dataset=UnifiedDatasetConfig(*CANVAS),
        action=UnifiedActionConfig(allowed_operations=(ops.FILL_0 + 2, ops.SUBMIT)),
    )
    state, obs = arc_reset(jax.random.key(0), cfg, task, pair_index=0)
    assert int(obs.allowed_operations.sum()) == 2
    after, *_ = arc_step(state, PointAction(ops.FILL_0 + 5, 0, 0), cfg)
    np.testing.assert_array_equal(after.grid, state.grid)
    assert int(after.step_count) == 1
    after, *_ = arc_step(state, PointAction(ops.FILL_0 + 2, 0, 0), cfg)
    assert int(after.grid[0, 0]) == 2


def test_out_of_range_action_is_noop_or_error_in_validation_mode(task):
    state, _ = arc_reset(jax.random.key(0), config(), task, pair_index=0)
    after, *_ = arc_step(state, PointAction(99, 0, 0), config())
    np.testing.assert_array_equal(after.grid, state.grid)
    strict = config(validate=True)
    state, _ = arc_reset(jax.random.key(0), strict, task, pair_index=0)
    with pytest.raises(Exception, match="operation id outside"):
        arc_step(state, PointAction(99, 0, 0), strict)
    with pytest.raises(Exception, match="outside the 6x6 canvas"):
        arc_step(state, PointAction(0, 7, 0), strict)


def test_history_records_actions(task):
    cfg = config(max_episode_steps=4)
    state, _ = arc_reset(jax.random.key(0), cfg, task)
    actions = [(3, 0, 1), (12, 1, 0), (34, 0, 0)]
    for op, r, c in actions:
        state, *_ = arc_step(state, PointAction(op, r, c), cfg)
    assert int(state.history_length) == 3
    np.testing.assert_array_equal(state.history[:3], np.asarray(actions, np.int8))


def test_bank_sampling_and_explicit_indices(bank):
    cfg = config()
    keys = jax.random.split(jax.random.key(3), 64)
    states, obs = batch_reset(keys, cfg, bank)
    assert set(np.asarray(states.task_index).tolist()) == {0, 1}
    states, _ = batch_reset(
        keys[:2], cfg, bank, task_indices=jnp.array([1, 1]), pair_indices=jnp.array([0, 1])
    )
    np.testing.assert_array_equal(states.grid[0], bank.demo_inputs[1, 0])
    np.testing.assert_array_equal(states.grid[1], bank.demo_inputs[1, 1])


def test_reset_samples_with_one_prng_call(bank):
    # Each PRNG call site is ~10 XLA kernels to compile (a while loop on CPU); reset draws the
    # task and the pair from the data of one split-off key (jaxarc.envs.keys.split_key: its
    # words unwrapped, hashed in straight-line code, wrapped once), and still covers every
    # task and pair.
    cfg = config()
    keys = jax.random.split(jax.random.key(5), 256)
    jaxpr = jax.make_jaxpr(lambda k: batch_reset(k, cfg, bank))(keys)
    names = _primitive_names(jaxpr.jaxpr)
    prng = [name for name in names if name.startswith("random_") or "threefry" in name]
    assert sorted(prng) == ["random_unwrap", "random_unwrap", "random_wrap"]
    assert "while" not in names
    states, _ = batch_reset(keys, cfg, bank)
    played = set(zip(states.task_index.tolist(), states.pair_index.tolist(), strict=True))
    assert played == {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)}  # 3 + 2 demo pairs


def _primitive_names(jaxpr) -> list[str]:
    names = []
    for eqn in jaxpr.eqns:
        names.append(eqn.primitive.name)
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            names += _primitive_names(sub)
    return names


def test_canvas_mismatch_is_a_clear_error(task):
    with pytest.raises(ValueError, match="canvas"):
        arc_reset(jax.random.key(0), JaxArcConfig(), task)


def test_jit_nojit_vmap_scan_agree(bank):
    cfg = config()
    keys = jax.random.split(jax.random.key(5), 8)
    ops_ids = jnp.array([2, 12, 20, 24, 26, 28, 29, 33], jnp.int32)
    actions = PointAction(ops_ids, jnp.arange(8) % 3, jnp.arange(8) % 2)
    states, _ = batch_reset(keys, cfg, bank)
    batched = batch_step(states, actions, cfg)
    vmapped = jax.vmap(lambda s, a: arc_step(s, a, cfg))(states, actions)

    def take(tree, i):
        return jax.tree.map(lambda x: x[i], tree)

    eager_envs = (1, 3, 4, 7)  # flood, rotate, flip, resize (op-by-op execution is slow)
    with jax.disable_jit():
        eager = {i: arc_step(take(states, i), take(actions, i), cfg) for i in eager_envs}
    for i in range(8):
        for a, b in zip(
            jax.tree.leaves(take(batched[:4], i)),
            jax.tree.leaves(take(vmapped[:4], i)),
            strict=True,
        ):
            if jnp.issubdtype(a.dtype, jax.dtypes.prng_key):
                a, b = jax.random.key_data(a), jax.random.key_data(b)
            np.testing.assert_array_equal(a, b)
    for i in eager_envs:
        for a, c in zip(
            jax.tree.leaves(take(batched[:4], i)),
            jax.tree.leaves(eager[i][:4]),
            strict=True,
        ):
            if jnp.issubdtype(a.dtype, jax.dtypes.prng_key):
                a, c = jax.random.key_data(a), jax.random.key_data(c)
            np.testing.assert_array_equal(a, c)

    def scan_body(s, a):
        s, _, r, _, _ = batch_step(s, a, cfg)
        return s, r

    stacked = jax.tree.map(lambda x: jnp.stack([x, x]), actions)
    final, rewards = jax.lax.scan(scan_body, states, stacked)
    again, *_ = batch_step(batched[0], actions, cfg)
    np.testing.assert_array_equal(final.grid, again.grid)


def test_step_compiles_once_for_many_actions_and_tasks(bank, count_compilations):
    cfg = config()
    rng = np.random.default_rng(0)
    keys = [jax.random.split(jax.random.key(seed), 4) for seed in range(20)]
    indices = [jnp.asarray(rng.integers(0, 2, 4), jnp.int32) for _ in range(20)]
    actions = [
        PointAction(*(jnp.asarray(rng.integers(0, hi, 4), jnp.int32) for hi in (35, 6, 6)))
        for _ in range(20)
    ]
    RewardParams()  # its float32 conversions compile once, outside the count
    with count_compilations() as counter:
        for key, index, action in zip(keys, indices, actions, strict=True):
            states, _ = batch_reset(key, cfg, bank, task_indices=index)
            states, *_ = batch_step(states, action, cfg)
            states, *_ = batch_step(states, action, cfg)
        assert counter.programs == 2  # one reset, one step


def test_index_out_of_range_is_a_clear_error(bank):
    cfg = config()
    with pytest.raises(ValueError, match="task_index 5 is outside the bank"):
        arc_reset(jax.random.key(0), cfg, bank, task_index=5)
    with pytest.raises(ValueError, match="pair_index 3 is outside the train pairs of task 't0'"):
        arc_reset(jax.random.key(0), cfg, bank, task_index=0, pair_index=3)
    with pytest.raises(ValueError, match="pair_index 1 is outside the eval pairs"):
        batch_reset(
            jax.random.split(jax.random.key(0), 2),
            config(episode_mode="eval"),
            bank,
            task_indices=jnp.array([0, 1]),
            pair_indices=jnp.array([0, 1]),
        )
    # traced indices are checked inside the compiled reset in validation mode
    strict = config(validate=True)
    traced_reset = jax.jit(lambda i: arc_reset(jax.random.key(0), strict, bank, task_index=i)[0])
    with pytest.raises(Exception, match="task_index beyond the task bank"):
        traced_reset(jnp.int32(7))


def test_play_with_a_first_act_is_the_scan_that_switches_at_step_zero(bank):
    """``play(..., first_act=F)`` records F's actions at step 0 and ``act``'s after, and
    ends where one scan with an act that chooses by the step index ends."""
    from jaxarc.envs.rollout import play

    cfg = config(max_episode_steps=5)
    states, obs = batch_reset(jax.random.split(jax.random.key(3), 4), cfg, bank)

    def fill(colour, step_key):
        rows = jax.random.randint(step_key, (4,), 0, CANVAS[0], jnp.int32)
        op = jnp.full((4,), ops.FILL_0 + colour, jnp.int32)
        return PointAction(operation=op, row=rows, col=jnp.zeros((4,), jnp.int32))

    first_act = lambda s, o, k: (fill(2, k), jnp.zeros(4, jnp.float32))  # noqa: E731
    act = lambda s, o, k: (fill(5, k), jnp.ones(4, jnp.float32))  # noqa: E731

    def by_index(s, o, x):
        key, index = x
        return jax.tree.map(
            lambda a, b: jnp.where(index == 0, a, b), first_act(s, o, key), act(s, o, key)
        )

    keys = jax.random.split(jax.random.key(4), 3)
    run = jax.jit(lambda st, ob: play(st, ob, cfg, act, keys, first_act=first_act))
    end, last_obs, steps = run(states, obs)
    expected = jax.jit(lambda st, ob: play(st, ob, cfg, by_index, (keys, jnp.arange(3))))
    want_end, want_obs, want_steps = expected(states, obs)
    assert steps.rewards.shape == (3, 4)
    np.testing.assert_array_equal(
        steps.actions.operation[:, 0], [ops.FILL_0 + 2, ops.FILL_0 + 5, ops.FILL_0 + 5]
    )
    np.testing.assert_array_equal(steps.extra[:, 0], [0.0, 1.0, 1.0])
    for got, want in zip(
        jax.tree.leaves((end, last_obs, steps)),
        jax.tree.leaves((want_end, want_obs, want_steps)),
        strict=True,
    ):
        if jnp.issubdtype(got.dtype, jax.dtypes.prng_key):
            got, want = jax.random.key_data(got), jax.random.key_data(want)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_the_episode_pair_read_from_a_source_is_the_pair_of_its_task(bank, mode):
    """A bank reads the pair by task and pair index at once (one gather per array, as the
    step does every step); a generator's pair comes from the task its state keeps. Both give
    the pair of the whole task, under ``jit`` and ``vmap``."""
    from jaxarc.data.generators import make_generator
    from jaxarc.envs.episode import episode_pair, source_episode_pair

    generator = make_generator("gen/easy", canvas=(8, 8))
    generated = jax.jit(jax.vmap(lambda k: generator.sample_task(k, jnp.int32(-1))[0]))(
        jax.random.split(jax.random.key(3), 2)
    )
    for source, stores in ((bank, ()), (generator, generated)):
        pairs = source.max_demos if mode == "train" else source.max_tests
        task_index, pair_index = (
            jnp.asarray(x.ravel(), jnp.int32) for x in np.meshgrid(np.arange(2), np.arange(pairs))
        )
        store_axis = None if source is bank else 0
        if source is generator:  # a generator's state keeps its task: one per combination
            stores = jax.tree.map(lambda x, t=task_index: x[t], stores)

        @jax.jit
        def read(stores, task_index, pair_index, source=source, store_axis=store_axis):
            def one(store, t, p):
                direct = source_episode_pair(source, store, t, p, mode)
                via_task = episode_pair(source.episode_task(store, t), p, mode)
                return direct, via_task

            return jax.vmap(one, (store_axis, 0, 0))(stores, task_index, pair_index)

        direct, via_task = read(stores, task_index, pair_index)
        for name in ("input_grid", "input_shape", "target_grid", "target_shape", "scored"):
            np.testing.assert_array_equal(
                getattr(direct, name), getattr(via_task, name), err_msg=f"{name} ({mode})"
            )
