"""``split_key`` and ``random_words``: the keys and words ``jax.random.split`` and
``jax.random.bits`` give, as straight-line code."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxarc.envs.keys import random_words, split_key


def _words(keys: jax.Array) -> np.ndarray:
    if jnp.issubdtype(keys.dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(keys))
    return np.asarray(keys)


@pytest.mark.parametrize("make_key", [jax.random.key, jax.random.PRNGKey], ids=["typed", "raw"])
@pytest.mark.parametrize("num", [1, 2, 3, 7])
def test_split_key_gives_jax_random_split_keys(make_key, num):
    keys = jax.vmap(make_key)(jnp.arange(300, dtype=jnp.uint32) * jnp.uint32(2654435761))
    ours = jax.jit(jax.vmap(lambda k: split_key(k, num)))(keys)
    theirs = jax.vmap(lambda k: jax.random.split(k, num))(keys)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(_words(ours), _words(theirs))
    one = split_key(keys[5], num)  # eager, one key
    np.testing.assert_array_equal(_words(one), _words(jax.random.split(keys[5], num)))


@pytest.mark.parametrize("make_key", [jax.random.key, jax.random.PRNGKey], ids=["typed", "raw"])
@pytest.mark.parametrize("num", [1, 2, 30])
def test_random_words_gives_jax_random_bits_words(make_key, num):
    keys = jax.vmap(make_key)(jnp.arange(300, dtype=jnp.uint32) * jnp.uint32(40503))
    ours = jax.jit(jax.vmap(lambda k: random_words(k, num)))(keys)
    theirs = jax.vmap(lambda k: jax.random.bits(k, (num,), jnp.uint32))(keys)
    assert ours.dtype == theirs.dtype == jnp.uint32
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_split_key_is_one_fused_kernel_not_a_loop():
    compiled = jax.jit(jax.vmap(split_key)).lower(jax.random.split(jax.random.key(0), 128))
    hlo = compiled.compile().as_text()
    assert " while(" not in hlo
    plain = jax.jit(jax.vmap(jax.random.split)).lower(jax.random.split(jax.random.key(0), 128))
    if jax.default_backend() == "cpu":  # (the loop this module avoids is JAX's CPU lowering)
        assert " while(" in plain.compile().as_text()


def test_split_key_falls_back_for_other_implementations_and_settings():
    rbg = jax.random.key(3, impl="rbg")
    np.testing.assert_array_equal(_words(split_key(rbg, 3)), _words(jax.random.split(rbg, 3)))
    np.testing.assert_array_equal(random_words(rbg, 5), jax.random.bits(rbg, (5,), jnp.uint32))
    key = jax.random.key(11)
    previous = jax.config.jax_threefry_partitionable
    try:
        jax.config.update("jax_threefry_partitionable", not previous)
        np.testing.assert_array_equal(_words(split_key(key, 4)), _words(jax.random.split(key, 4)))
        np.testing.assert_array_equal(random_words(key, 5), jax.random.bits(key, (5,), jnp.uint32))
    finally:
        jax.config.update("jax_threefry_partitionable", previous)


def test_raw_keys_that_are_not_threefry_words_get_jax_s_own_error():
    with pytest.raises(TypeError):
        split_key(jnp.zeros((2,), jnp.int32))
    with pytest.raises(TypeError):
        random_words(jnp.zeros((2,), jnp.int32), 3)


def test_split_key_refuses_a_batch_of_keys():
    with pytest.raises(ValueError, match="one key"):
        split_key(jax.random.split(jax.random.key(0), 4))
    with pytest.raises(ValueError, match="one key"):
        split_key(jnp.zeros((4, 2), jnp.uint32))
    with pytest.raises(ValueError, match="one key"):
        random_words(jax.random.split(jax.random.key(0), 4), 2)
