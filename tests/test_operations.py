"""The 35 grid operations against the plain-NumPy reference in ``tests/numpy_reference.py``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy_reference import reference_operation, same_colour_region

from jaxarc.grid import operation_ids as ops
from jaxarc.grid.flood_fill import flood_regions
from jaxarc.grid.operations import GridState, apply_operation

CANVASES = [(5, 5), (7, 9), (30, 30)]
FIELDS = ("grid", "shape", "selection", "clipboard", "clipboard_mask")

_TRACES = {"apply": 0}


def _counted_apply(state, op, selection, input_grid, input_shape):
    _TRACES["apply"] += 1  # runs once per trace, never at run time
    return apply_operation(state, op, selection, input_grid, input_shape)


# Compiled once per canvas shape for the whole module.
apply_jit = jax.jit(_counted_apply)
apply_batch = jax.jit(jax.vmap(apply_operation))
flood_jit = jax.jit(flood_regions)

SLOW = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


# ----------------------------------------------------------------------------- random inputs


def _random_case(rng: np.random.Generator, canvas: tuple[int, int], n_colours: int | None = None):
    """A random state, selection and input grid on ``canvas`` (numpy arrays)."""
    height, width = canvas
    h, w = int(rng.integers(1, height + 1)), int(rng.integers(1, width + 1))
    if rng.random() < 0.3:
        h, w = height, width  # grid filling the whole canvas
    colours = n_colours or int(rng.integers(1, 5))
    grid = np.full(canvas, -1, np.int8)
    grid[:h, :w] = rng.integers(0, colours, (h, w))
    clipboard = np.full(canvas, -1, np.int8)
    clipboard_mask = np.zeros(canvas, bool)
    if rng.random() < 0.8:
        ch, cw = int(rng.integers(1, height + 1)), int(rng.integers(1, width + 1))
        clipboard[:ch, :cw] = rng.integers(0, 10, (ch, cw))
        clipboard_mask[:ch, :cw] = rng.random((ch, cw)) < 0.6
    selection = np.zeros(canvas, bool)
    kind = rng.integers(4)
    if kind == 0:  # point, anywhere on the canvas (possibly outside the grid)
        selection[rng.integers(height), rng.integers(width)] = True
    elif kind == 1:  # box, corners anywhere: non-square, often touching the border
        r1, r2 = sorted(rng.integers(0, height, 2))
        c1, c2 = sorted(rng.integers(0, width, 2))
        if rng.random() < 0.3:
            r2 = height - 1
        if rng.random() < 0.3:
            c1 = 0
        selection[r1 : r2 + 1, c1 : c2 + 1] = True
    elif kind == 2:  # scattered mask
        selection = rng.random(canvas) < rng.uniform(0.02, 0.4)
    # kind 3: empty selection
    ih, iw = int(rng.integers(1, height + 1)), int(rng.integers(1, width + 1))
    input_grid = np.full(canvas, -1, np.int8)
    input_grid[:ih, :iw] = rng.integers(0, 10, (ih, iw))
    state = {
        "grid": grid,
        "shape": np.array([h, w], np.int32),
        "selection": rng.random(canvas) < 0.1,
        "clipboard": clipboard,
        "clipboard_mask": clipboard_mask,
    }
    return state, selection, input_grid, np.array([ih, iw], np.int32)


def _to_jax(state: dict) -> GridState:
    return GridState(**{name: jnp.asarray(state[name]) for name in FIELDS})


def _to_numpy(state: GridState) -> dict:
    return {name: np.asarray(getattr(state, name)) for name in FIELDS}


def _assert_same(actual: dict, expected: dict, context: str) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=f"{name}: {context}")


def _check_against_reference(seed: int, canvas: tuple[int, int], op: int) -> None:
    rng = np.random.default_rng(seed)
    state, selection, input_grid, input_shape = _random_case(rng, canvas)
    expected = reference_operation(state, op, selection, input_grid, input_shape)
    actual = apply_jit(
        _to_jax(state),
        jnp.int32(op),
        jnp.asarray(selection),
        jnp.asarray(input_grid),
        jnp.asarray(input_shape),
    )
    _assert_same(
        _to_numpy(actual), expected, f"op {ops.OPERATION_NAMES[op] if 0 <= op < 35 else op}"
    )


# ----------------------------------------------------------------------------- parity


@pytest.mark.parametrize("canvas", CANVASES)
@pytest.mark.parametrize("op", range(ops.NUM_OPERATIONS))
def test_every_operation_matches_reference(op: int, canvas: tuple[int, int]) -> None:
    for seed in range(12):
        _check_against_reference(seed * 1000 + op, canvas, op)


@SLOW
@given(
    seed=st.integers(0, 2**32 - 1),
    canvas=st.sampled_from(CANVASES),
    op=st.integers(-3, ops.NUM_OPERATIONS + 3),
)
def test_random_operation_matches_reference(seed: int, canvas, op: int) -> None:
    _check_against_reference(seed, canvas, op)


@SLOW
@given(
    seed=st.integers(0, 2**32 - 1),
    canvas=st.sampled_from(CANVASES),
    op=st.sampled_from([ops.ROTATE_CW, ops.ROTATE_CCW, ops.FLIP_LR, ops.FLIP_TB, ops.PASTE]),
    box=st.tuples(st.integers(0, 29), st.integers(0, 29), st.integers(0, 29), st.integers(0, 29)),
)
def test_box_operations_on_explicit_boxes(seed: int, canvas, op: int, box) -> None:
    """Boxes of every aspect ratio, including ones reaching past the grid or the canvas edge."""
    height, width = canvas
    rng = np.random.default_rng(seed)
    state, _, input_grid, input_shape = _random_case(rng, canvas, n_colours=10)
    r1, r2 = sorted((box[0] % height, box[1] % height))
    c1, c2 = sorted((box[2] % width, box[3] % width))
    selection = np.zeros(canvas, bool)
    selection[r1 : r2 + 1, c1 : c2 + 1] = True
    expected = reference_operation(state, op, selection, input_grid, input_shape)
    actual = apply_jit(
        _to_jax(state),
        jnp.int32(op),
        jnp.asarray(selection),
        jnp.asarray(input_grid),
        jnp.asarray(input_shape),
    )
    _assert_same(_to_numpy(actual), expected, f"{ops.OPERATION_NAMES[op]} box {(r1, c1, r2, c2)}")


# ----------------------------------------------------------------------------- flood fill


def _spiral(size: int) -> np.ndarray:
    """A one-cell-wide spiral corridor of colour 1 in walls of colour 2."""
    grid = np.full((size, size), 2, np.int8)
    r, c, dr, dc = 0, 0, 0, 1
    grid[r, c] = 1
    for _ in range(size * size):
        nr, nc = r + 2 * dr, c + 2 * dc
        if 0 <= nr < size and 0 <= nc < size and grid[nr, nc] == 2:
            grid[r + dr, c + dc] = 1
            grid[nr, nc] = 1
            r, c = nr, nc
        else:
            dr, dc = dc, -dr  # turn clockwise
            nr, nc = r + 2 * dr, c + 2 * dc
            if not (0 <= nr < size and 0 <= nc < size and grid[nr, nc] == 2):
                break
    return grid


def _snake(height: int, width: int) -> np.ndarray:
    """A boustrophedon corridor: rows of colour 3 joined alternately at the right and left."""
    grid = np.full((height, width), 5, np.int8)
    grid[::2, :] = 3
    for r in range(1, height, 2):
        grid[r, width - 1 if (r // 2) % 2 == 0 else 0] = 3
    return grid


@pytest.mark.parametrize(
    ("grid", "seed_cell"),
    [
        (_spiral(30), (0, 0)),
        (_spiral(29), (0, 0)),
        (_snake(30, 30), (0, 0)),
        (_snake(30, 30), (29, 29)),
        (_snake(7, 9), (6, 4)),
        (np.rot90(_snake(30, 30)).copy(), (15, 0)),
    ],
)
def test_flood_fills_spirals_and_snakes_completely(grid: np.ndarray, seed_cell) -> None:
    height, width = grid.shape
    canvas = (max(height, 30) if height > 9 else height, max(width, 30) if width > 9 else width)
    padded = np.full(canvas, -1, np.int8)
    padded[:height, :width] = grid
    state = {
        "grid": padded,
        "shape": np.array([height, width], np.int32),
        "selection": np.zeros(canvas, bool),
        "clipboard": np.full(canvas, -1, np.int8),
        "clipboard_mask": np.zeros(canvas, bool),
    }
    selection = np.zeros(canvas, bool)
    selection[seed_cell] = True
    op = ops.FLOOD_0 + 7
    expected = reference_operation(state, op, selection, padded, state["shape"])
    actual = apply_jit(
        _to_jax(state),
        jnp.int32(op),
        jnp.asarray(selection),
        jnp.asarray(padded),
        jnp.asarray(state["shape"]),
    )
    _assert_same(_to_numpy(actual), expected, "flood of a corridor")
    corridor = grid == grid[seed_cell]
    assert int((np.asarray(actual.grid)[:height, :width] == 7).sum()) == int(corridor.sum())


@SLOW
@given(seed=st.integers(0, 2**32 - 1), canvas=st.sampled_from(CANVASES))
def test_flood_with_seeds_of_several_colours(seed: int, canvas) -> None:
    """Every seed fills its own same-colour region; regions of other seeds' colours stay apart."""
    rng = np.random.default_rng(seed)
    grid = rng.integers(0, 3, canvas).astype(np.int8)
    seeds = rng.random(canvas) < 0.05
    expected = np.zeros(canvas, bool)
    for r, c in zip(*np.nonzero(seeds), strict=True):
        expected |= _bfs_region(grid, (int(r), int(c)))
    actual = np.asarray(flood_jit(jnp.asarray(grid), jnp.asarray(seeds)))
    np.testing.assert_array_equal(actual, expected)


def _bfs_region(grid: np.ndarray, start: tuple[int, int]) -> np.ndarray:
    region = np.zeros(grid.shape, bool)
    for cell in same_colour_region(grid, start):
        region[cell] = True
    return region


# ----------------------------------------------------------------------------- invariants


def _random_action(rng: np.random.Generator, canvas: tuple[int, int]):
    height, width = canvas
    selection = np.zeros(canvas, bool)
    if rng.random() < 0.5:
        selection[rng.integers(height), rng.integers(width)] = True
    else:
        r1, r2 = sorted(rng.integers(0, height, 2))
        c1, c2 = sorted(rng.integers(0, width, 2))
        selection[r1 : r2 + 1, c1 : c2 + 1] = True
    return int(rng.integers(0, ops.NUM_OPERATIONS)), selection


def _check_invariants(state: dict, canvas: tuple[int, int], context: str) -> None:
    height, width = (int(v) for v in state["shape"])
    assert 1 <= height <= canvas[0] and 1 <= width <= canvas[1], context
    inside = np.zeros(canvas, bool)
    inside[:height, :width] = True
    grid = state["grid"]
    assert grid.dtype == np.int8, context
    assert ((grid >= 0) & (grid <= 9))[inside].all(), f"colour outside 0..9 inside: {context}"
    assert (grid[~inside] == -1).all(), f"cell outside the area is not -1: {context}"
    assert not state["selection"][~inside].any(), f"selection outside the area: {context}"
    clip = state["clipboard"]
    assert ((clip >= -1) & (clip <= 9)).all(), context
    assert (clip[state["clipboard_mask"]] >= 0).all(), f"selected clipboard cell empty: {context}"


@pytest.mark.parametrize("canvas", CANVASES)
def test_invariants_after_random_action_sequences(canvas) -> None:
    rng = np.random.default_rng(sum(canvas))
    for episode in range(4):
        state, _, input_grid, input_shape = _random_case(rng, canvas)
        state = _to_numpy(_to_jax(state))
        reference = {k: v.copy() for k, v in state.items()}
        for step in range(40):
            op, selection = _random_action(rng, canvas)
            context = f"episode {episode} step {step} {ops.OPERATION_NAMES[op]}"
            state = _to_numpy(
                apply_jit(
                    _to_jax(state),
                    jnp.int32(op),
                    jnp.asarray(selection),
                    jnp.asarray(input_grid),
                    jnp.asarray(input_shape),
                )
            )
            reference = reference_operation(reference, op, selection, input_grid, input_shape)
            _check_invariants(state, canvas, context)
            _assert_same(state, reference, context)


# ----------------------------------------------------------------------------- edge cases


def _state_on(canvas, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    state, _, input_grid, input_shape = _random_case(rng, canvas, n_colours=10)
    return state, input_grid, input_shape


def _apply_np(state, op, selection, input_grid, input_shape) -> dict:
    return _to_numpy(
        apply_jit(
            _to_jax(state),
            jnp.int32(op),
            jnp.asarray(selection),
            jnp.asarray(input_grid),
            jnp.asarray(input_shape),
        )
    )


@pytest.mark.parametrize("op", [ops.SUBMIT, -1, 35, 1000])
def test_submit_and_unknown_ids_leave_the_state_unchanged(op: int) -> None:
    state, input_grid, input_shape = _state_on((7, 9), 3)
    selection = np.ones((7, 9), bool)
    _assert_same(_apply_np(state, op, selection, input_grid, input_shape), state, f"op {op}")


@pytest.mark.parametrize(
    "op",
    [o for o in range(ops.RESIZE + 1) if o not in (ops.CLEAR, ops.COPY_INPUT)],
)
def test_empty_selection_is_a_no_op(op: int) -> None:
    """Outside the grid counts as empty for every operation but RESIZE (then nothing selected)."""
    canvas = (7, 9)
    state, input_grid, input_shape = _state_on(canvas, 5)
    state["shape"] = np.array([4, 5], np.int32)
    state["grid"][4:, :] = -1
    state["grid"][:, 5:] = -1
    selection = np.zeros(canvas, bool)
    if op != ops.RESIZE:
        selection[6, 8] = True  # on the canvas, outside the active area
    after = _apply_np(state, op, selection, input_grid, input_shape)
    for name in ("grid", "shape", "clipboard", "clipboard_mask"):
        np.testing.assert_array_equal(after[name], state[name], err_msg=name)
    assert not after["selection"].any()


def test_clear_and_copy_input_need_no_selection() -> None:
    canvas = (7, 9)
    state, input_grid, input_shape = _state_on(canvas, 7)
    nothing = np.zeros(canvas, bool)
    cleared = _apply_np(state, ops.CLEAR, nothing, input_grid, input_shape)
    h, w = state["shape"]
    assert (cleared["grid"][:h, :w] == 0).all()
    copied = _apply_np(cleared, ops.COPY_INPUT, nothing, input_grid, input_shape)
    np.testing.assert_array_equal(copied["grid"], input_grid)
    np.testing.assert_array_equal(copied["shape"], input_shape)


def test_resize_grows_and_shrinks_from_the_bottom_right_selected_cell() -> None:
    canvas = (7, 9)
    grid = np.full(canvas, -1, np.int8)
    grid[:2, :3] = [[1, 2, 3], [4, 5, 6]]
    state = {
        "grid": grid,
        "shape": np.array([2, 3], np.int32),
        "selection": np.zeros(canvas, bool),
        "clipboard": np.full(canvas, -1, np.int8),
        "clipboard_mask": np.zeros(canvas, bool),
    }
    selection = np.zeros(canvas, bool)
    selection[1, 1] = selection[4, 0] = True  # bottom-right corner of the selection: (4, 1)
    grown = _apply_np(state, ops.RESIZE, selection, grid, state["shape"])
    np.testing.assert_array_equal(grown["shape"], [5, 2])
    expected = np.full(canvas, -1, np.int8)
    expected[:5, :2] = 0
    expected[:2, :2] = [[1, 2], [4, 5]]
    np.testing.assert_array_equal(grown["grid"], expected)


def test_repeated_moves_keep_moving_the_same_object() -> None:
    canvas = (7, 9)
    grid = np.full(canvas, -1, np.int8)
    grid[:6, :8] = 0
    grid[1:3, 1:3] = 4
    state = {
        "grid": grid,
        "shape": np.array([6, 8], np.int32),
        "selection": np.zeros(canvas, bool),
        "clipboard": np.full(canvas, -1, np.int8),
        "clipboard_mask": np.zeros(canvas, bool),
    }
    selection = grid == 4
    for step in range(1, 8):
        state = _apply_np(state, ops.MOVE_RIGHT, selection, grid, state["shape"])
        selection = state["selection"]
        columns = np.nonzero((state["grid"] == 4).any(axis=0))[0]
        visible = [c for c in (1 + step, 2 + step) if c < 8]
        np.testing.assert_array_equal(columns, visible, err_msg=f"step {step}")
        np.testing.assert_array_equal(selection, state["grid"] == 4)


def test_bad_shapes_raise_clear_errors() -> None:
    state = GridState.create(jnp.zeros((5, 5), jnp.int8))
    with pytest.raises(ValueError, match="must match the canvas"):
        apply_operation(state, jnp.int32(0), jnp.zeros((4, 5), bool), state.grid, state.shape)
    wide = GridState.create(jnp.zeros((3, 40), jnp.int8))
    with pytest.raises(ValueError, match="canvas width 40"):
        apply_operation(wide, jnp.int32(0), jnp.zeros((3, 40), bool), wide.grid, wide.shape)
    with pytest.raises(ValueError, match="2-D"):
        GridState.create(jnp.zeros((2, 3, 3), jnp.int8))


def test_create_marks_cells_outside_the_shape() -> None:
    state = GridState.create(jnp.arange(12, dtype=jnp.int8).reshape(3, 4) % 10, jnp.array([2, 3]))
    grid = np.asarray(state.grid)
    assert (grid[2] == -1).all() and (grid[:, 3] == -1).all()
    np.testing.assert_array_equal(np.asarray(GridState.create(state.grid).shape), [2, 3])
    assert not np.asarray(state.clipboard_mask).any()


# ----------------------------------------------------------------------------- transformations


def _batch(canvas, size: int, seed: int):
    rng = np.random.default_rng(seed)
    cases = [_random_case(rng, canvas) for _ in range(size)]
    states = GridState(
        **{name: jnp.asarray(np.stack([c[0][name] for c in cases])) for name in FIELDS}
    )
    ops_ = jnp.asarray(np.arange(size) % ops.NUM_OPERATIONS, jnp.int32)
    return (
        states,
        ops_,
        jnp.asarray(np.stack([c[1] for c in cases])),
        jnp.asarray(np.stack([c[2] for c in cases])),
        jnp.asarray(np.stack([c[3] for c in cases])),
    )


def _index(tree, i: int):
    return jax.tree_util.tree_map(lambda x: x[i], tree)


@pytest.mark.parametrize("canvas", CANVASES)
def test_vmap_matches_one_environment_at_a_time(canvas) -> None:
    batch = _batch(canvas, 2 * ops.NUM_OPERATIONS, seed=11)
    batched = _to_numpy(apply_batch(*batch))
    for i in range(2 * ops.NUM_OPERATIONS):
        single = _to_numpy(apply_jit(*_index(batch, i)))
        _assert_same({k: v[i] for k, v in batched.items()}, single, f"env {i}")


def test_jit_and_no_jit_agree() -> None:
    """One operation of each family eagerly (slow: Python loops) and compiled."""
    canvas = (5, 5)
    batch = _batch(canvas, ops.NUM_OPERATIONS, seed=13)
    families = [3, ops.FLOOD_0 + 4, ops.MOVE_LEFT, ops.ROTATE_CCW, ops.PASTE, ops.CUT, ops.RESIZE]
    with jax.disable_jit():
        for op in families:
            eager = _to_numpy(apply_operation(*_index(batch, op)))
            _assert_same(eager, _to_numpy(apply_jit(*_index(batch, op))), f"op {op}")
        eager_batched = _to_numpy(jax.vmap(apply_operation)(*_index(batch, slice(20, 22))))
    compiled_batched = _to_numpy(apply_batch(*_index(batch, slice(20, 22))))
    _assert_same(eager_batched, compiled_batched, "vmap without jit")


def test_one_compilation_serves_every_operation() -> None:
    canvas = (7, 9)
    batch = _batch(canvas, ops.NUM_OPERATIONS, seed=17)
    apply_jit(*_index(batch, 0))  # compile for this canvas (maybe already done)
    before = _TRACES["apply"]
    for i in range(ops.NUM_OPERATIONS):
        apply_jit(*_index(batch, i))
    assert _TRACES["apply"] == before, "apply_operation was retraced for another operation"


def test_scan_over_steps_matches_step_by_step() -> None:
    canvas = (5, 5)
    states, _, selections, input_grids, input_shapes = _batch(canvas, 1, seed=19)
    state = _index(states, 0)
    rng = np.random.default_rng(19)
    op_seq = jnp.asarray(rng.integers(0, ops.NUM_OPERATIONS, 30), jnp.int32)
    sel_seq = jnp.asarray(rng.random((30, *canvas)) < 0.2)

    def step(carry, action):
        op, selection = action
        return apply_operation(carry, op, selection, input_grids[0], input_shapes[0]), None

    scanned, _ = jax.jit(lambda s: jax.lax.scan(step, s, (op_seq, sel_seq)))(state)
    looped = state
    for t in range(30):
        looped = apply_jit(looped, op_seq[t], sel_seq[t], input_grids[0], input_shapes[0])
    _assert_same(_to_numpy(scanned), _to_numpy(looped), "scan vs loop")


def test_nested_and_partially_batched_vmap() -> None:
    """vmap of vmap, and a shared (unbatched) input grid, give the one-at-a-time results."""
    states, op_ids, selections, input_grids, input_shapes = _batch((7, 9), 12, seed=23)
    flat = _to_numpy(apply_batch(states, op_ids, selections, input_grids, input_shapes))
    split = jax.tree_util.tree_map(
        lambda x: x.reshape((3, 4, *x.shape[1:])),
        (states, op_ids, selections, input_grids, input_shapes),
    )
    nested = jax.jit(jax.vmap(jax.vmap(apply_operation)))(*split)
    nested = {k: v.reshape((12, *v.shape[2:])) for k, v in _to_numpy(nested).items()}
    _assert_same(nested, flat, "vmap of vmap")
    shared = jax.jit(jax.vmap(apply_operation, in_axes=(0, 0, 0, None, None)))(
        states, op_ids, selections, input_grids[0], input_shapes[0]
    )
    for i in range(12):
        single = apply_jit(
            _index(states, i), op_ids[i], selections[i], input_grids[0], input_shapes[0]
        )
        _assert_same({k: v[i] for k, v in _to_numpy(shared).items()}, _to_numpy(single), f"env {i}")
