"""``jax.random.split`` and ``jax.random.bits`` for one key, as straight-line code (the same
values, cheaper on CPU).

On CPU, JAX lowers each threefry call to an XLA ``while`` loop of five iterations (it keeps
compile times short); under ``vmap`` over a few hundred environments that loop costs
~65 us of fixed overhead per call, far more than its arithmetic. An auto-reset makes two
such calls per finished environment (gymnax's step/reset split and the reset's own split),
and ``action_space.sample`` one per environment and step.
:func:`split_key` computes the same threefry-2x32 hash with its twenty rounds written out,
which XLA fuses into one elementwise kernel.

It gives the keys ``jax.random.split`` gives, and :func:`random_words` the words
``jax.random.bits`` gives (tests compare them), for threefry keys, typed (``jax.random.key``)
or raw (``jax.random.PRNGKey``), under JAX's default ``jax_threefry_partitionable=True``; for
any other key implementation or setting they call JAX's functions themselves.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, PRNGKeyArray, UInt32

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # threefry's key-schedule constant


def _rotate_left(x: UInt32[Array, "..."], bits: int) -> UInt32[Array, "..."]:
    return lax.shift_left(x, jnp.uint32(bits)) | lax.shift_right_logical(x, jnp.uint32(32 - bits))


def threefry2x32(
    key: UInt32[Array, " 2"], x0: UInt32[Array, " N"], x1: UInt32[Array, " N"]
) -> tuple[UInt32[Array, " N"], UInt32[Array, " N"]]:
    """The threefry-2x32 hash (20 rounds) of the counter words ``(x0, x1)`` under ``key``,
    unrolled (JAX's ``threefry2x32`` primitive computes the same words)."""
    schedule = (key[0], key[1], key[0] ^ key[1] ^ jnp.uint32(_PARITY))
    x0 = x0 + schedule[0]
    x1 = x1 + schedule[1]
    for group in range(5):
        for rotation in _ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = _rotate_left(x1, rotation) ^ x0
        x0 = x0 + schedule[(group + 1) % 3]
        x1 = x1 + schedule[(group + 2) % 3] + jnp.uint32(group + 1)
    return x0, x1


def _is_typed(key: PRNGKeyArray) -> bool:
    """A typed key (``jax.random.key``), not raw ``uint32`` words (``jax.random.PRNGKey``)."""
    return jnp.issubdtype(key.dtype, jax.dtypes.prng_key)


def _is_threefry(key: PRNGKeyArray) -> bool:
    if _is_typed(key):
        return str(jax.random.key_impl(key)) == "threefry2x32"
    # a raw key: threefry's if it is uint32[2] and the default implementation is threefry
    default = getattr(jax.config, "jax_default_prng_impl", "threefry2x32")
    return default == "threefry2x32" and key.shape == (2,) and key.dtype == jnp.uint32


def _unrolled(key: PRNGKeyArray, name: str) -> bool:
    """Whether ``key`` (one key) takes the straight-line hash (else JAX's own function)."""
    if key.ndim != (0 if _is_typed(key) else 1):
        raise ValueError(f"{name} takes one key, got shape {key.shape}")
    # (JAX may drop the flag once the partitionable layout is its only one)
    return _is_threefry(key) and getattr(jax.config, "jax_threefry_partitionable", True)


def _hash_counters(key: PRNGKeyArray, num: int) -> tuple[UInt32[Array, " N"], UInt32[Array, " N"]]:
    """The hash of the 64-bit counters ``0..num-1`` (as high and low words) under ``key``:
    what ``split`` and ``bits`` hash for a one-dimensional shape."""
    words = jax.random.key_data(key) if _is_typed(key) else key
    return threefry2x32(words, jnp.zeros(num, jnp.uint32), jnp.arange(num, dtype=jnp.uint32))


def split_key(key: PRNGKeyArray, num: int = 2) -> PRNGKeyArray:
    """``jax.random.split(key, num)`` for one key (typed or raw), without threefry's loop."""
    if not _unrolled(key, "split_key"):
        return jax.random.split(key, num)
    keys = jnp.stack(_hash_counters(key, num), axis=-1)
    if _is_typed(key):
        return jax.random.wrap_key_data(keys, impl=jax.random.key_impl(key))
    return keys


def random_words(key: PRNGKeyArray, num: int) -> UInt32[Array, " N"]:
    """``jax.random.bits(key, (num,), jnp.uint32)`` for one key, without threefry's loop."""
    if not _unrolled(key, "random_words"):
        return jax.random.bits(key, (num,), jnp.uint32)
    high, low = _hash_counters(key, num)
    return high ^ low
