"""The fast paths of the faces give what the generic paths give.

* the gymnax class's ``step`` (reset state only, one observation) against gymnax's generic
  ``Environment.step`` (full reset and two selected observations), every format, a bank
  and a generated source (task pool);
* the one-call action sampler (valid, allowed operations only, deterministic per key);
* the task pool of generated sources (resets choose its tasks, refresh replaces it);
* the vector env resetting only ended environments against the old semantics rebuilt from
  ``batch_step``/``batch_reset`` (every environment reset from its own key);
* the ``episode_context="at_reset"`` option (observations without the constants, the
  context in ``info`` and from ``episode_context``);
* ``make_vec(..., vectorization_mode="async")`` with fork is refused, without hanging.
"""

from __future__ import annotations

import re
import signal

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gym_helpers import SMALL_ID, small_bank
from gymnax.environments.environment import Environment

from jaxarc.benchmarking.env_throughput import random_actions
from jaxarc.benchmarking.face_throughput import (
    FACE_EPISODE_STEPS,
    SPLIT_KEY_FACE,
    face_scan_body,
    faces_stem,
    in_play,
)
from jaxarc.data.generators import make_generator
from jaxarc.envs import CONTEXT_FIELDS, batch_reset, batch_step, episode_context
from jaxarc.envs.structured_actions import BboxAction, MaskAction, PointAction
from jaxarc.grid.lanes import CHUNK
from jaxarc.grid.operation_ids import COPY, SUBMIT
from jaxarc.gym import ArcGymnasiumVectorEnv
from jaxarc.gym.spaces import action_from_gymnasium
from jaxarc.gymnax import build_environment

BATCH = 6
STEPS = 7


def _host(x) -> np.ndarray:
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def _assert_trees_equal(a, b) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(_host(x), _host(y))


def _small_env(fmt: str, **options):
    return build_environment(
        small_bank(), name="small", selection_format=fmt, max_episode_steps=3, **options
    )


def _generic_vmapped_step(env):
    """gymnax's generic ``Environment.step`` (auto-reset by selecting a full reset), vmapped."""
    return jax.vmap(
        lambda k, s, a, p: Environment.step.__wrapped__(env, k, s, a, p), (0, 0, 0, None)
    )


def _rollouts_agree(env, params, batch=BATCH):
    """Random episodes through both steps from the same keys; every output equal."""
    space = env.action_space(params)
    generic = _generic_vmapped_step(env)
    fast = jax.vmap(env.step, (0, 0, 0, None))

    @jax.jit
    def both(key):
        _, state = jax.vmap(env.reset, (0, None))(jax.random.split(key, batch), params)

        def body(carry, key):
            s_generic, s_fast = carry
            act_key, step_key = jax.random.split(key)
            action = jax.vmap(space.sample)(jax.random.split(act_key, batch))
            keys = jax.random.split(step_key, batch)
            out_generic = generic(keys, s_generic, action, params)
            out_fast = fast(keys, s_fast, action, params)
            return (out_generic[1], out_fast[1]), (out_generic, out_fast)

        _, (out_generic, out_fast) = jax.lax.scan(
            body, (state, state), jax.random.split(key, STEPS)
        )
        return out_generic, out_fast

    out_generic, out_fast = both(jax.random.key(3))
    _assert_trees_equal(out_generic, out_fast)
    terminated, truncated = out_fast[3], out_fast[4]
    assert np.asarray(terminated | truncated).any()  # auto-resets happened


@pytest.mark.parametrize("fmt", ["point", "bbox", "mask"])
def test_fast_gymnax_step_equals_the_generic_step_on_a_bank(fmt):
    _rollouts_agree(*_small_env(fmt))


def test_fast_gymnax_step_resets_only_finished_lanes_across_several_chunks():
    # 300 environments: the finished ones are reset 128 at a time (grid.lanes.CHUNK), so
    # the gathered chunks, the padded last chunk and the lanes left alone are all exercised.
    assert 2 * CHUNK < 300
    _rollouts_agree(*_small_env("point"), batch=300)


def _copy_corner(fmt: str, operation, canvas) -> object:
    """Actions of ``operation`` whose selection holds the canvas's corner cell (0, 0)."""
    zeros = jnp.zeros_like(operation)
    if fmt == "point":
        return PointAction(operation=operation, row=zeros, col=zeros)
    if fmt == "bbox":
        return BboxAction(operation=operation, r1=zeros, c1=zeros, r2=zeros + 1, c2=zeros + 1)
    selection = jnp.zeros((operation.shape[0], *canvas), bool).at[:, 0, 0].set(True)
    return MaskAction(operation=operation, selection=selection)


@pytest.mark.parametrize("fmt", ["point", "bbox", "mask"])
def test_auto_reset_clears_the_clipboard_and_history_the_step_wrote_in_place(fmt):
    # The clipboard and the action history are reset in the finished lanes only (the step
    # updates them in place; see ArcEnvironment.step): COPY in every lane, then SUBMIT in
    # every other one, over more than two chunks of lanes.
    env, params = _small_env(fmt)
    batch = 2 * CHUNK + 3
    generic = _generic_vmapped_step(env)
    fast = jax.vmap(env.step, (0, 0, 0, None))
    both = jax.jit(lambda *args: (generic(*args), fast(*args)))  # one program for both steps
    canvas = env.config.dataset.canvas_shape
    copy = _copy_corner(fmt, jnp.full((batch,), COPY, jnp.int32), canvas)
    submit_every_other = jnp.where(jnp.arange(batch) % 2 == 0, SUBMIT, COPY).astype(jnp.int32)
    second = _copy_corner(fmt, submit_every_other, canvas)
    keys = jax.random.split(jax.random.key(5), 3 * batch).reshape(3, batch)
    _, state = jax.jit(jax.vmap(env.reset, (0, None)))(keys[0], params)
    copied_generic, copied = both(keys[1], state, copy, params)
    _assert_trees_equal(copied_generic, copied)
    assert np.asarray(copied[1].clipboard_mask[:, 0, 0]).all()
    out_generic, out_fast = both(keys[2], copied[1], second, params)
    _assert_trees_equal(out_generic, out_fast)
    reset, kept = out_fast[1], np.arange(batch) % 2 == 1
    np.testing.assert_array_equal(np.asarray(out_fast[3]), ~kept)  # SUBMIT ended those
    assert not np.asarray(reset.clipboard_mask[~kept]).any()
    assert (np.asarray(reset.clipboard[~kept]) == -1).all()
    assert not np.asarray(reset.history[~kept]).any()
    assert np.asarray(reset.clipboard_mask[kept][:, 0, 0]).all()
    assert (np.asarray(reset.history_length[kept]) == 2).all()


def test_a_program_that_never_reads_the_history_compiles_without_it():
    # RECORD_ONLY: the history is reset in a chunk loop of its own, so XLA drops the step's
    # history write and its reset when nothing reads them, and keeps both when something
    # does (here: the scan returns the states).
    env, params = _small_env("point")
    batch = 2 * CHUNK + 3  # (the chunked path of where_flagged)
    space = env.action_space(params)
    step = jax.vmap(env.step, (0, 0, 0, None))
    _, states = jax.vmap(env.reset, (0, None))(jax.random.split(jax.random.key(0), batch), params)

    def body(states, key):
        act_key, step_key = jax.random.split(key)
        actions = jax.vmap(space.sample)(jax.random.split(act_key, batch))
        out = step(jax.random.split(step_key, batch), states, actions, params)
        return out[1], out[2]

    def rollout(states, key, return_states):
        states, rewards = jax.lax.scan(body, states, jax.random.split(key, 4))
        return (states, rewards) if return_states else (states.step_count, rewards)

    history = states.history
    pattern = rf"= s8\[{','.join(map(str, history.shape))}\]\S* (scatter|fusion|copy)\("
    compiled = jax.jit(rollout, static_argnums=2)
    for return_states, expected in ((False, False), (True, True)):
        hlo = compiled.lower(states, jax.random.key(1), return_states).compile().as_text()
        assert bool(re.search(pattern, hlo)) is expected
    # and the history is still reset where an episode ended (the states are returned)
    final, _ = compiled(states, jax.random.key(1), True)
    lengths = np.asarray(final.history_length)
    rows = np.arange(history.shape[1])[None, :, None] >= lengths[:, None, None]
    assert not np.asarray(final.history)[np.broadcast_to(rows, history.shape)].any()


@pytest.mark.parametrize("task_pool", [16, 0])  # 0: a generation per (finished lane's) reset
def test_fast_gymnax_step_equals_the_generic_step_on_a_task_pool(task_pool):
    env, params = build_environment(
        make_generator("gen/easy"), name="gen", max_episode_steps=3, task_pool=task_pool
    )
    _rollouts_agree(env, params)


def test_action_sampler_is_valid_allowed_and_deterministic():
    for fmt in ("point", "bbox", "mask"):
        env, params = _small_env(fmt, allowed_operations=[2, 5, 34])
        space = env.action_space(params)
        keys = jax.random.split(jax.random.key(0), 512)
        actions = jax.vmap(space.sample)(keys)
        assert np.asarray(jax.vmap(space.contains)(actions)).all()
        assert set(np.asarray(actions.operation).tolist()) == {2, 5, 34}
        _assert_trees_equal(actions, jax.vmap(space.sample)(keys))
    rows = np.asarray(actions.selection).reshape(512, -1)
    assert 0.4 < rows.mean() < 0.6 and len({r.tobytes() for r in rows}) == 512


@pytest.mark.parametrize("fmt", ["point", "bbox", "mask"])
def test_action_sampler_matches_a_numpy_reference_of_its_random_words(fmt):
    # The sampler's action is a function of jax.random.bits(key, (n,), uint32): operation,
    # row and column are mixed-radix digits of word 0 (bbox: the second corner of word 1);
    # mask cell c is bit c % 32 of word 1 + c // 32.
    allowed = [2, 5, 13, 34]
    env, params = _small_env(fmt, allowed_operations=allowed)
    space = env.action_space(params)
    height, width = env.config.dataset.canvas_shape
    num_words = 2 if fmt != "mask" else 1 + -(-height * width // 32)
    keys = jax.random.split(jax.random.key(3), 64)
    actions = jax.jit(jax.vmap(space.sample))(keys)
    words = np.asarray(jax.vmap(lambda k: jax.random.bits(k, (num_words,), jnp.uint32))(keys))
    first = words[:, 0].astype(np.uint64)
    np.testing.assert_array_equal(actions.operation, np.asarray(allowed)[first % len(allowed)])
    rest = first // len(allowed)
    if fmt == "mask":
        cells = np.arange(height * width)
        bits = (words[:, 1 + cells // 32] >> (cells % 32).astype(np.uint32)) & 1
        np.testing.assert_array_equal(actions.selection, bits.reshape(-1, height, width) == 1)
        return
    row, col = rest % height, rest // height % width
    if fmt == "point":
        np.testing.assert_array_equal(actions.row, row)
        np.testing.assert_array_equal(actions.col, col)
        return
    second = words[:, 1].astype(np.uint64)
    np.testing.assert_array_equal(actions.r1, row)
    np.testing.assert_array_equal(actions.c1, col)
    np.testing.assert_array_equal(actions.r2, second % height)
    np.testing.assert_array_equal(actions.c2, second // height % width)


def test_faces_results_are_named_by_backend_and_episode_length():
    from jaxarc.cli.main import build_parser

    # the CLI's default (a literal there, so that parsing imports no JAX) is the table's
    args = build_parser().parse_args(["bench", "env"])
    assert args.max_episode_steps == FACE_EPISODE_STEPS
    assert faces_stem("cpu", FACE_EPISODE_STEPS) == "faces_cpu"
    assert faces_stem("gpu", 100) == "faces_gpu_episodes100"


def test_face_benchmark_compares_like_with_like():
    # The benchmark's core row draws the operations the action space draws and keeps every
    # episode in play (a finished episode's step is a no-op, so without this the core would
    # time no-ops against the face's real steps).
    env, params = _small_env("point", allowed_operations=[2, 5, 34])
    actions = random_actions(jax.random.key(0), 512, env.config, None)
    assert set(np.asarray(actions.operation).tolist()) == {2, 5, 34}
    _, states = jax.vmap(env.reset, (0, None))(jax.random.split(jax.random.key(1), 4), params)
    submit = PointAction(*(jnp.full((4,), v, jnp.int32) for v in (SUBMIT, 0, 0)))
    done, *_ = batch_step(states, submit, env.config)
    assert np.asarray(done.terminated).all()
    again = in_play(done)
    assert not np.asarray(again.terminated | again.truncated).any()
    assert (np.asarray(again.step_count) == 0).all()
    _assert_trees_equal(again.grid, done.grid)


def test_the_split_key_row_plays_the_same_episodes_without_threefry_loops():
    # The faces table's purejaxrl-style loop with jaxarc.envs.split_key instead of
    # jax.random.split: the same keys, so the same states and rewards, and (on CPU) no
    # threefry while loop left in the loop's body.
    env, params = _small_env("point")
    _, states = jax.vmap(env.reset, (0, None))(jax.random.split(jax.random.key(1), 64), params)
    outputs, loops = {}, {}
    for face in ("gymnax+sample", SPLIT_KEY_FACE):
        body = face_scan_body(face, env, params, 64, None)
        rollout = jax.jit(lambda s, k, body=body: jax.lax.scan(body, s, jax.random.split(k, 9)))
        compiled = rollout.lower(states, jax.random.key(2)).compile()  # (compiled once)
        outputs[face] = compiled(states, jax.random.key(2))
        loops[face] = compiled.as_text().count(" while(")
    _assert_trees_equal(outputs["gymnax+sample"], outputs[SPLIT_KEY_FACE])
    assert np.asarray(outputs[SPLIT_KEY_FACE][1]).any()  # (rewards: the episodes did something)
    # the scan itself, the flood's and the auto-reset's loops; the plain row adds threefry's
    assert loops[SPLIT_KEY_FACE] < loops["gymnax+sample"]
    with pytest.raises(ValueError, match="unknown face row"):
        face_scan_body("gymnax+typo", env, params, 64, None)


def test_generated_resets_choose_pool_tasks_and_refresh_replaces_the_pool():
    env, params = build_environment(make_generator("gen/easy"), name="gen", task_pool=8)
    pool = params.task_pool
    assert pool.demo_inputs.shape[0] == 8
    _, states = jax.vmap(env.reset, (0, None))(jax.random.split(jax.random.key(1), 32), params)
    chosen = np.asarray(states.episode_store.demo_inputs).reshape(32, -1)
    entries = np.asarray(pool.demo_inputs).reshape(8, -1)
    matches = (chosen[:, None, :] == entries[None, :, :]).all(-1)
    assert (matches.sum(1) >= 1).all() and matches.any(0).sum() > 1
    fresh = env.refresh_task_pool(jax.random.key(5), params)
    assert not np.array_equal(np.asarray(fresh.task_pool.demo_inputs), np.asarray(entries))
    no_pool_env, no_pool = build_environment(make_generator("gen/easy"), task_pool=0)
    assert no_pool.task_pool is None and no_pool_env.task_pool_size == 0
    with pytest.raises(ValueError, match="task_pool"):
        build_environment(make_generator("gen/easy"), task_pool=-1)


def test_vector_env_resets_only_the_ended_environments_from_their_own_keys():
    num_envs = 8
    venv = ArcGymnasiumVectorEnv("test-gym-small", num_envs=num_envs, max_episode_steps=2)
    config, source, reward = venv.config, venv.backend.source, venv.backend.reward_params
    venv.reset(seed=4)
    rng = np.random.default_rng(0)
    pending = np.zeros(num_envs, bool)
    resets = 0
    for _ in range(6):
        action = venv.action_space.sample()
        action["operation"] = rng.integers(0, 34, num_envs)  # no SUBMIT: truncation at 2
        before, key = venv.states, venv._key
        _, reset_key = jax.random.split(key)
        stepped, _, reward_expected, _, info = batch_step(
            before, action_from_gymnasium(action, config), config
        )
        fresh, _ = batch_reset(
            jax.random.split(reset_key, num_envs), config, source, None, None, reward
        )
        expected = jax.tree.map(
            lambda a, b, m=pending: np.where(m.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
            jax.tree.map(_host, fresh),
            jax.tree.map(_host, stepped),
        )
        _, reward_got, terminated, truncated, _ = venv.step(action)
        _assert_trees_equal(expected, jax.tree.map(_host, venv.states))
        np.testing.assert_array_equal(reward_got, np.where(pending, 0.0, reward_expected))
        resets += pending.sum()
        pending = terminated | truncated
    assert resets > 0


def test_episode_context_at_reset_leaves_constants_out_and_gives_them_in_info():
    venv = ArcGymnasiumVectorEnv(
        "test-gym-small", num_envs=4, max_episode_steps=2, episode_context="at_reset"
    )
    obs, info = venv.reset(seed=0)
    assert not set(CONTEXT_FIELDS) & set(obs)
    assert venv.observation_space.contains(obs)
    np.testing.assert_array_equal(info["episode_context_envs"], np.arange(4))
    expected = jax.vmap(lambda s: episode_context(s, venv.config))(venv.states)
    for name in CONTEXT_FIELDS:
        got = info["episode_context"][name]
        np.testing.assert_array_equal(got, np.asarray(getattr(expected, name)).astype(got.dtype))
    seen_autoreset = False
    for _ in range(4):
        obs, _, _, _, info = venv.step(venv.action_space.sample())
        assert not set(CONTEXT_FIELDS) & set(obs)
        if "episode_context_envs" in info:
            seen_autoreset = True
            envs = info["episode_context_envs"]
            expected = jax.vmap(lambda s: episode_context(s, venv.config))(venv.states)
            np.testing.assert_array_equal(
                info["episode_context"]["demo_inputs"], np.asarray(expected.demo_inputs)[envs]
            )
    assert seen_autoreset
    # the same constants are in every observation by default
    env, params = _small_env("point")
    obs, state = env.reset(jax.random.key(0), params)
    context = env.episode_context(state, params)
    for name in CONTEXT_FIELDS:
        assert jnp.array_equal(getattr(obs, name), getattr(context, name))


def test_async_make_vec_with_fork_is_refused_before_forking():
    def hung(signum, frame):
        raise TimeoutError("make_vec(vectorization_mode='async') hung (forked JAX)")

    previous = signal.signal(signal.SIGALRM, hung)  # bounded: a regression fails, never hangs
    signal.alarm(120)
    try:
        with pytest.raises(RuntimeError, match="spawn"):
            gymnasium.make_vec(SMALL_ID, num_envs=2, vectorization_mode="async")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
