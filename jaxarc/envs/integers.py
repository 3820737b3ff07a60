"""Integer and mask arguments checked where Python values enter the environment.

Actions, task/pair indices and Gymnasium reset options are int32 inside the compiled step.
A cast would silently turn ``13.7`` into 13, ``True`` into 1, ``"3"`` into 3 (through
NumPy) and ``np.int64(2**32 + 3)`` into 3, so values reaching the boundary are checked
first: they must hold integers (Python ``int``, NumPy or JAX integer dtypes; ``bool`` is
not an integer here) that fit int32. Masks (a mask action's selection) hold booleans or
the integers 0 and 1. Traced values are checked by dtype only (their values are unknown
when the code is traced; see docs/environment.md, "Integers and masks").
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


def _traced_list_as_array(value: Any) -> Any:
    """A list or tuple holding traced values (a list passed through ``jit``) as one traced
    array, checked by its dtype like any traced value; anything else unchanged."""
    if isinstance(value, list | tuple) and any(
        isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(value)
    ):
        return jax.numpy.asarray(value)
    return value


def check_integers(value: Any, name: str) -> Any:
    """``value`` unchanged if it holds int32-range integers; else a ``TypeError`` (not
    integers: fractional or non-finite floats, bools, strings) or ``ValueError`` (outside
    int32) naming ``name``. Concrete floats with integral values (``2.0``) are integers."""
    value = _traced_list_as_array(value)
    if isinstance(value, jax.core.Tracer):
        if not jax.numpy.issubdtype(value.dtype, jax.numpy.integer):
            raise TypeError(
                f"{name} must hold integers, got a traced {value.dtype} array (its values "
                "cannot be checked under jit: cast integral values with .astype(jnp.int32))"
            )
        return value
    if isinstance(value, jax.Array):
        if value.dtype == np.int32 or (
            jax.numpy.issubdtype(value.dtype, jax.numpy.integer) and value.dtype.itemsize < 4
        ):
            return value
        value = np.asarray(value)  # checked by value below
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer, got the bool {value!r}")
    if isinstance(value, int):
        if not INT32_MIN <= value <= INT32_MAX:
            raise ValueError(f"{name} {value} does not fit int32")
        return value
    if isinstance(value, str | bytes):
        raise TypeError(f"{name} must be an integer, got the string {value!r}")
    array = np.asarray(value)
    if array.dtype.kind == "f":
        integral = np.isfinite(array) & (array == np.round(array))
        if not integral.all():
            raise TypeError(f"{name} must hold integers, got {_describe(value)}")
    elif array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got {_describe(value)} ({array.dtype})")
    if array.size and (array.min() < INT32_MIN or array.max() > INT32_MAX):
        bad = array[(array < INT32_MIN) | (array > INT32_MAX)].reshape(-1)[0]
        raise ValueError(f"{name} {int(bad)} does not fit int32")
    return value


def check_mask(value: Any, name: str) -> Any:
    """``value`` as a mask: concrete values as a boolean array, traced ones unchanged.

    A mask holds booleans or the integers 0 and 1. Concrete values (Python, NumPy or JAX
    arrays) are checked: other integers are a ``ValueError``, floats, strings and other
    types a ``TypeError``, each naming ``name``. A traced value is checked by dtype only
    (booleans or integers); an integer one keeps its values, which the step reads by the
    one rule of docs/environment.md (a cell selects when it holds 1; with validation any
    other value than 0 or 1 is an error).
    """
    value = _traced_list_as_array(value)
    if isinstance(value, jax.core.Tracer):
        if value.dtype == np.bool_ or jax.numpy.issubdtype(value.dtype, jax.numpy.integer):
            return value
        raise TypeError(
            f"{name} must hold booleans or 0/1 integers, got a traced {value.dtype} array"
        )
    if isinstance(value, str | bytes):
        raise TypeError(f"{name} must hold booleans or 0/1 integers, got the string {value!r}")
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return jax.numpy.asarray(array)
    if array.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must hold booleans or 0/1 integers, got {_describe(value)} ({array.dtype})"
        )
    bad = array[(array != 0) & (array != 1)]
    if bad.size:
        raise ValueError(
            f"{name} must hold booleans or 0/1 integers, got the value {int(bad.reshape(-1)[0])}"
        )
    return jax.numpy.asarray(array == 1)
