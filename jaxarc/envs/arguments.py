"""Python arguments checked where they enter: flags, counts, finite numbers, lists of names.

Each check returns the value in its canonical form or raises a one-line error naming the
argument (and its owner, where one is given): a ``TypeError`` for a value of the wrong kind,
a ``ValueError`` for one of the right kind outside its range. Truthiness is never used as a
flag (``flat="no"`` would be true), a bool is never a count or a number (``True`` would be
1), and a string where a list of names is expected is one name, not its letters.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import jax
import numpy as np


def _where(owner: str | None) -> str:
    return "" if owner is None else f" of {owner}"


def check_flag(value: Any, name: str, owner: str | None = None) -> bool:
    """``value`` as a bool: ``True``/``False`` (or NumPy bools) only."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"{name}{_where(owner)} must be True or False, got {value!r}")


def check_count(value: Any, name: str, minimum: int = 1, owner: str | None = None) -> int:
    """``value`` as an int ``>= minimum``: Python or NumPy integers, never a bool."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name}{_where(owner)} must be an int >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name}{_where(owner)} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_number(value: Any, name: str, owner: str | None = None) -> Any:
    """``value`` unchanged if it is a finite real number (or an array of them, as the
    per-environment reward weights are): never a bool, a string or NaN/inf. A traced value
    is checked by dtype (its values are unknown when the code is traced)."""
    if isinstance(value, jax.core.Tracer):
        if not jax.numpy.issubdtype(value.dtype, jax.numpy.number):
            raise TypeError(f"{name}{_where(owner)} must be a number, got a {value.dtype} array")
        return value
    if isinstance(value, bool | np.bool_ | str | bytes):
        raise TypeError(f"{name}{_where(owner)} must be a finite number, got {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"{name}{_where(owner)} must be a finite number, got {value!r}")
        return value
    try:
        array = np.asarray(value)
    except Exception:  # an object NumPy cannot read
        array = np.asarray(None)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name}{_where(owner)} must be a finite number, got {value!r}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name}{_where(owner)} must be a finite number, got {value!r}")
    return value


def check_names(value: Any, name: str, owner: str | None = None) -> tuple[str, ...]:
    """``value`` as a tuple of names: one name (a ``str``) or an iterable of them, at least
    one, without duplicates."""
    if isinstance(value, str):
        names: tuple[Any, ...] = (value,)
    elif isinstance(value, Iterable) and not isinstance(value, bytes | dict):
        names = tuple(value)
    else:
        raise TypeError(f"{name}{_where(owner)} must be a name or a list of names, got {value!r}")
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{name}{_where(owner)} must hold names (strings), got {bad[0]!r}")
    if not names:
        raise ValueError(f"{name}{_where(owner)} must name at least one entry")
    repeated = sorted({v for v in names if names.count(v) > 1})
    if repeated:
        raise ValueError(f"{name}{_where(owner)} names {repeated} more than once")
    return names
