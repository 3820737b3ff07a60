"""Integer arguments checked where Python values enter the environment.

Actions, task/pair indices and Gymnasium reset options are int32 inside the compiled step.
A cast would silently turn ``13.7`` into 13, ``True`` into 1, ``"3"`` into 3 (through
NumPy) and ``np.int64(2**32 + 3)`` into 3, so values reaching the boundary are checked
first: they must hold integers (Python ``int``, NumPy or JAX integer dtypes; ``bool`` is
not an integer here) that fit int32. Traced values are checked by dtype only (their values
are unknown when the code is traced; see docs/environment.md).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

INT32_MIN = int(np.iinfo(np.int32).min)
INT32_MAX = int(np.iinfo(np.int32).max)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_integers(value: Any, name: str) -> Any:
    """``value`` unchanged if it holds int32-range integers; else a ``TypeError`` (not
    integers: floats, bools, strings) or ``ValueError`` (outside int32) naming ``name``."""
    if isinstance(value, jax.core.Tracer | jax.Array):
        dtype = value.dtype
        if not jax.numpy.issubdtype(dtype, jax.numpy.integer):
            raise TypeError(f"{name} must hold integers, got a {dtype} array")
        if isinstance(value, jax.core.Tracer) or dtype.itemsize < 4 or dtype == np.int32:
            return value
        value = np.asarray(value)  # a concrete wide integer array: check its range below
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer, got the bool {value!r}")
    if isinstance(value, int):
        if not INT32_MIN <= value <= INT32_MAX:
            raise ValueError(f"{name} {value} does not fit int32")
        return value
    if isinstance(value, str | bytes):
        raise TypeError(f"{name} must be an integer, got the string {value!r}")
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got {_describe(value)} ({array.dtype})")
    if array.size and (int(array.min()) < INT32_MIN or int(array.max()) > INT32_MAX):
        bad = array[(array < INT32_MIN) | (array > INT32_MAX)].reshape(-1)[0]
        raise ValueError(f"{name} {int(bad)} does not fit int32")
    return value
