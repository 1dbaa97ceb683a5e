"""Argument values given on a command line: ``.npy`` files and JSON literals, checked against a parameter's type.

``toolkit-run --arg`` and ``toolkit export run --arg`` read each value with
:func:`load_argument_value` and fit it to the parameter with
:func:`checked_array`, which never converts lossily: ``1.5`` for an ``i32``
parameter is an error, not ``1``.

Example::

    value, literal = load_argument_value("[1, 2.5]")
    array = checked_array(value, np.float32, (2,), literal=literal)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

import numpy as np


def load_argument_value(text: str) -> tuple[np.ndarray, bool]:
    """The value an ``--arg`` names: ``(array, is_literal)``.

    ``text`` is a ``.npy`` path (read with ``allow_pickle=False``) or a JSON
    literal (``2``, ``[1, 2.5]``, ``true``, ``nan``, ``inf``). Raises
    ``ValueError`` saying which it could not read.
    """
    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False), False
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read the .npy file: {getattr(error, 'strerror', None) or error}") from None
    try:
        value = json.loads(re.sub(r"\b(-?)inf\b", r"\1Infinity", re.sub(r"\bnan\b", "NaN", text))) \
            if text.strip() else None
    except json.JSONDecodeError:
        raise ValueError("is neither a .npy file nor a JSON number/list") from None
    if value is None or isinstance(value, (str, dict)):
        raise ValueError("is neither a .npy file nor a JSON number/list")
    try:
        array = np.asarray(value)
    except ValueError:  # ragged lists
        raise ValueError("is not a rectangular list of numbers") from None
    if array.dtype == object:
        if array.ndim == 0 and isinstance(value, int):
            raise ValueError(f"{value} does not fit in 64 bits")
        raise ValueError("is not a rectangular list of numbers (or has integers beyond 64 bits)")
    if array.dtype.kind not in "biuf":
        raise ValueError("is neither a .npy file nor a JSON number/list")
    return array, True


def _dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name


def checked_array(value: Any, dtype: Any, shape: Sequence[int | None] | None = None, *,
                  literal: bool = True) -> np.ndarray:
    """``value`` as an array of ``dtype`` (and ``shape``), or ``ValueError`` — never a lossy conversion.

    What ``toolkit-run -arg`` and ``toolkit export run --arg`` use. Literals
    (``literal=True``: JSON numbers) convert when the value survives: an
    integer parameter takes integral numbers in its range (``1.5`` and
    ``4000000000`` for ``i32`` are errors, not ``1`` and ``-294967296``), a
    boolean one ``true``/``false`` (or 0/1), a floating one any number that
    stays finite (integers only when exactly representable). Arrays from
    ``.npy`` files (``literal=False``) must have the parameter's dtype or one
    numpy casts to it safely (``int8`` to ``int32``, ``float32`` to
    ``float64``). ``shape`` entries of ``None`` accept any size (symbolic
    dimensions); a scalar literal broadcasts to a fully static ``shape``.
    """
    target = np.dtype(dtype)
    array = np.asarray(value)
    source = array.dtype
    if source == target:
        converted = array
    elif not literal:
        try:
            safe = np.can_cast(source, target, "safe")
        except TypeError:
            safe = False
        if not safe:
            raise ValueError(f"has dtype {_dtype_name(source)}, the parameter is {_dtype_name(target)} "
                             f"(not converted: that could lose values; save it as {_dtype_name(target)})")
        converted = array.astype(target)
    else:
        converted = _checked_literal(array, target)
    if shape is not None:
        shape = tuple(shape)
        fits = converted.ndim == len(shape) and all(want is None or have == want
                                                     for have, want in zip(converted.shape, shape))
        if not fits:
            text = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
            if converted.ndim == 0 and literal and all(d is not None for d in shape):
                converted = np.broadcast_to(converted, cast("tuple[int, ...]", shape)).copy()  # all static
            else:
                raise ValueError(f"has shape {tuple(converted.shape)}, the parameter is "
                                 f"{_dtype_name(target)}{text}")
    return np.asarray(converted, order="C")


def _checked_literal(array: np.ndarray, target: np.dtype) -> np.ndarray:
    kind = target.kind
    where = "" if array.ndim == 0 else " (an element)"

    def first(mask: Any) -> Any:
        return array[mask].flat[0] if array.ndim else array.item()

    if kind == "b":
        if array.dtype.kind == "b":
            return array.astype(target)
        bad = ~np.isin(array, (0, 1))
        if bad.any():
            raise ValueError(f"{first(bad)!r}{where} is not a boolean (the parameter is bool)")
        return array.astype(target)
    if kind in "iu":
        if array.dtype.kind == "f":
            bad = ~np.isfinite(array) | (array != np.trunc(array))
            if bad.any():
                raise ValueError(f"{first(bad)!r}{where} is not an integer (the parameter is {target.name})")
            as_int = array.astype(np.float64)
        else:
            as_int = array
        info = np.iinfo(target)
        ints = as_int.astype(object) if as_int.size else as_int
        if as_int.size:
            low, high = min(int(v) for v in np.ravel(ints)), max(int(v) for v in np.ravel(ints))
            if low < info.min or high > info.max:
                value = low if low < info.min else high
                raise ValueError(f"{value} is out of the range of {target.name} [{info.min}, {info.max}]")
        return as_int.astype(target)
    if kind in "fcV" or target.name in ("bfloat16",) or kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            converted = array.astype(target)
        finite_in = np.isfinite(array.astype(np.float64)) if array.dtype.kind != "b" else np.ones(array.shape, bool)
        overflow = finite_in & ~np.isfinite(converted.astype(np.complex128 if kind == "c" else np.float64))
        if overflow.any():
            raise ValueError(f"{first(overflow)!r}{where} overflows {target.name}")
        if array.dtype.kind in "iu":
            back = converted.astype(np.float64) if kind != "c" else converted.real.astype(np.float64)
            inexact = back.astype(object) != array.astype(object) if array.size else np.zeros(array.shape, bool)
            inexact = np.asarray(inexact, dtype=bool)
            if inexact.any():
                raise ValueError(f"{first(inexact)!r}{where} is not exactly representable in {target.name}")
        return converted
    raise ValueError(f"cannot convert a literal to {target.name}")
