"""Element types and type promotion.

toolkit's dtypes are numpy dtypes (``ml_dtypes`` adds ``bfloat16``). The
promotion rules follow JAX's lattice rather than numpy's value-based rules:

* bool < integers < floats < complex; two dtypes join to the smallest type
  that holds both where one exists (``uint8 + int8 -> int16``), and
  ``int64 + uint64 -> int64`` caps the integer lattice;
* ``bfloat16 + float16 -> float32``;
* **Python scalars are weakly typed**: they join by kind only, never by
  width. ``x_f16 + 1.5`` stays ``float16`` and ``x_i8 + 3`` stays ``int8``; a
  weak float beside an integer array gives the default float, ``float32``.

64-bit types are always available (toolkit has no "x64 off" mode: an
``int64`` numpy array stays ``int64``), but Python scalars and dtype-less
creation functions default to JAX's defaults: ``int32``, ``float32`` and
``complex64``.

Example::

    >>> result_type(np.float16, 2.0)
    dtype('float16')
    >>> result_type(np.int8, np.uint8)
    dtype('int16')
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SUPPORTED_DTYPES: tuple[np.dtype, ...] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    bfloat16, float16, float32, float64, complex64, complex128,
)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)

# Extra ml_dtypes floats that XLA understands; accepted but not promoted with.
_EXTRA_FLOATS = tuple(
    np.dtype(getattr(ml_dtypes, name))
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz")
    if hasattr(ml_dtypes, name)
)
#: JAX's ``float0``: the dtype of tangents and cotangents of integer and boolean values
#: (zero bytes per element). Exports carry it (VJPs of functions with integer
#: arguments); in StableHLO a float0 array is a ``tensor<...xi1>`` of zeros, as JAX lowers it.
float0 = np.dtype([("float0", np.void, 0)])

_ACCEPTED = _SUPPORTED | frozenset(_EXTRA_FLOATS) | {float0}

DEFAULT_INT = int32
DEFAULT_FLOAT = float32
DEFAULT_COMPLEX = complex64


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype for ``dtype`` (a dtype, type, or name), if toolkit supports it.

    Raises ``TypeError`` naming the dtype when it is not supported.
    """
    if isinstance(dtype, np.dtype) and dtype in _ACCEPTED:
        return dtype
    if dtype is builtins.bool:
        return bool_
    if dtype is builtins.int:
        return DEFAULT_INT
    if dtype is builtins.float:
        return DEFAULT_FLOAT
    if dtype is builtins.complex:
        return DEFAULT_COMPLEX
    try:
        result = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{dtype!r} is not a valid dtype") from exc
    if result not in _ACCEPTED:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise TypeError(f"dtype {result.name!r} is not supported by toolkit (supported: {names})")
    return result


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == bfloat16 or dtype in _EXTRA_FLOATS


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def is_signed(dtype: np.dtype) -> bool:
    return dtype.kind == "i"


def is_unsigned(dtype: np.dtype) -> bool:
    return dtype.kind == "u"


def is_bool(dtype: np.dtype) -> bool:
    return dtype.kind == "b"


def is_inexact(dtype: np.dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


def finfo(dtype: Any) -> ml_dtypes.finfo:
    return ml_dtypes.finfo(canonicalize_dtype(dtype))


def iinfo(dtype: Any) -> ml_dtypes.iinfo:
    return ml_dtypes.iinfo(canonicalize_dtype(dtype))


def bit_width(dtype: np.dtype) -> int:
    return 1 if dtype == bool_ else dtype.itemsize * 8


# --- promotion lattice -------------------------------------------------------
# Kinds in promotion order; each dtype's rank inside its kind is its width.
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_SIGNED_BY_WIDTH = {8: int8, 16: int16, 32: int32, 64: int64}
_UNSIGNED_BY_WIDTH = {8: uint8, 16: uint16, 32: uint32, 64: uint64}
_FLOAT_BY_WIDTH = {16: float16, 32: float32, 64: float64}
_COMPLEX_FOR_FLOAT: dict[int, np.dtype] = {16: complex64, 32: complex64, 64: complex128}


def _kind(dtype: np.dtype) -> str:
    return "f" if dtype == bfloat16 or dtype in _EXTRA_FLOATS else dtype.kind


def _join(a: np.dtype, b: np.dtype) -> np.dtype:
    """The least upper bound of two strongly typed dtypes."""
    if a == b:
        return a
    ka, kb = _kind(a), _kind(b)
    if _KIND_ORDER[ka] != _KIND_ORDER[kb]:
        hi, lo = (a, b) if _KIND_ORDER[ka] > _KIND_ORDER[kb] else (b, a)
        k_hi, k_lo = _kind(hi), _kind(lo)
        if k_hi == "c" and k_lo == "f":
            width = bit_width(lo)
            return hi if bit_width(hi) >= 2 * width else _COMPLEX_FOR_FLOAT[width]
        return hi  # integers/bool join floats/complex at the float's width
    if ka == "b":
        return a
    if ka in "iu":
        wa, wb = bit_width(a), bit_width(b)
        if ka == kb:
            return a if wa >= wb else b
        signed, unsigned = (a, b) if ka == "i" else (b, a)
        ws, wu = bit_width(signed), bit_width(unsigned)
        if ws > wu:
            return signed
        # A signed type wide enough for the unsigned one; int64 caps the lattice.
        return _SIGNED_BY_WIDTH.get(2 * wu, int64) if wu < 64 else int64
    if ka == "f":
        wa, wb = bit_width(a), bit_width(b)
        if wa == wb:  # bfloat16 and float16 (or float8 variants)
            return _FLOAT_BY_WIDTH[max(32, 2 * wa)] if wa < 32 else a
        return a if wa > wb else b
    return a if bit_width(a) >= bit_width(b) else b  # complex


def _weak_dtype_of_python_scalar(x: Any) -> np.dtype:
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return DEFAULT_INT
    if isinstance(x, float):
        return DEFAULT_FLOAT
    if isinstance(x, complex):
        return DEFAULT_COMPLEX
    raise TypeError(f"not a Python scalar: {x!r}")


def is_python_scalar(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


def dtype_of(x: Any) -> np.dtype:
    """The dtype a value has when it enters a traced program (Python scalars: default types)."""
    if is_python_scalar(x):
        return _weak_dtype_of_python_scalar(x)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return canonicalize_dtype(dtype)


def is_weakly_typed(x: Any) -> bool:
    """Python scalars and values derived only from them are weakly typed."""
    if is_python_scalar(x):
        return True
    return bool(getattr(x, "weak_type", False))


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype two strongly typed dtypes promote to."""
    return _join(canonicalize_dtype(a), canonicalize_dtype(b))


def result_type_with_weak(*typed: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote ``(dtype, weak_type)`` pairs; returns the result and whether it is weak.

    A weak operand joins only by kind: its width is ignored, so a strongly
    typed ``float16`` stays ``float16`` beside a Python float. If every operand
    is weak the result is weak, with the default type of the highest kind.
    """
    strong = [d for d, w in typed if not w]
    weak = [d for d, w in typed if w]
    if not strong:
        result = weak[0]
        for d in weak[1:]:
            result = _join(result, d)
        return result, True
    result = strong[0]
    for d in strong[1:]:
        result = _join(result, d)
    for d in weak:
        kw, kr = _KIND_ORDER[_kind(d)], _KIND_ORDER[_kind(result)]
        if kw > kr:
            if _kind(d) == "f":
                result = DEFAULT_FLOAT if _kind(result) in "biu" else result
            elif _kind(d) == "c":
                result = _COMPLEX_FOR_FLOAT.get(bit_width(result), DEFAULT_COMPLEX) if _kind(result) == "f" else DEFAULT_COMPLEX
            else:  # weak int beside a bool
                result = DEFAULT_INT
    return result, False


def result_type(*args: Any) -> np.dtype:
    """The dtype of an elementwise operation on ``args`` (values or dtypes).

    Python scalars are weakly typed and do not widen arrays.
    """
    typed = []
    for a in args:
        if is_python_scalar(a):
            typed.append((_weak_dtype_of_python_scalar(a), True))
        elif isinstance(a, (np.dtype, type, str)):
            typed.append((canonicalize_dtype(a), False))
        else:
            typed.append((dtype_of(a), is_weakly_typed(a)))
    if not typed:
        raise ValueError("result_type needs at least one argument")
    return result_type_with_weak(*typed)[0]
