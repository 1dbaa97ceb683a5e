"""``toolkit.dtypes``: JAX's ``jax.dtypes`` — dtype canonicalization, promotion and machine limits.

The functions answer as JAX's do (tests/test_dtypes_module.py compares them): ``canonicalize_dtype`` narrows
64-bit types while x64 is off, ``result_type`` follows JAX's promotion lattice with weak Python scalars,
``issubdtype`` knows bfloat16 and the other ml_dtypes types (numpy's does not), ``float0`` is the dtype of
tangents of integer values. toolkit has no extended dtypes: ``extended`` and ``prng_key`` are the abstract
classes JAX's key dtype is a subtype of, and toolkit's typed-key dtype (``key<fry>``) is a ``prng_key``.

Example::

    toolkit.dtypes.canonicalize_dtype("float64")          # float32 while x64 is off
    toolkit.dtypes.result_type(np.int8, 1.0)              # float32
    toolkit.dtypes.issubdtype(toolkit.dtypes.bfloat16, np.floating)  # True
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from toolkit.core import dtypes as core_dtypes
from toolkit.core.dtypes import TypePromotionError, float0
from toolkit.random.keys import KeyTy

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of"]

#: The bfloat16 scalar type (ml_dtypes'), as ``jax.dtypes.bfloat16``.
bfloat16 = ml_dtypes.bfloat16

#: Machine limits of floats and integers, ml_dtypes' classes (bfloat16, float8 and int4 included), as JAX's.
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo


class extended(np.generic):
    """The abstract scalar type of JAX's extended dtypes (keys, ...): ``issubdtype(key_dtype, extended)``."""


class prng_key(extended):
    """The abstract scalar type of typed PRNG keys' dtypes: ``issubdtype(random.key(0).dtype, prng_key)``."""


_ABSTRACT_KINDS: dict[type, Any] = {
    np.generic: lambda d: True,
    np.number: lambda d: core_dtypes.kind_of(d) in "iufc" if d != np.dtype(bool) else False,
    np.integer: core_dtypes.is_integer,
    np.signedinteger: lambda d: core_dtypes.is_integer(d) and core_dtypes.is_signed(d),
    np.unsignedinteger: core_dtypes.is_unsigned,
    np.inexact: core_dtypes.is_inexact,
    np.floating: core_dtypes.is_float,
    np.complexfloating: core_dtypes.is_complex,
    np.bool_: core_dtypes.is_bool,
}


def _as_dtype(a: Any, what: str) -> np.dtype:
    if a is None:
        return np.dtype(np.float64)  # numpy's and JAX's reading of None: the default float
    try:
        return core_dtypes.check_dtype(a) if not isinstance(a, np.dtype) else a
    except TypeError:
        pass
    try:
        return np.dtype(a)
    except TypeError:
        raise TypeError(f"issubdtype: {what} {a!r} is not a dtype") from None


def issubdtype(a: Any, b: Any) -> bool:
    """Whether dtype ``a`` is ``b`` or a subtype of the abstract type ``b`` (``jax.dtypes.issubdtype``).

    Unlike numpy's, it places ml_dtypes' types (bfloat16, float8, int4) under ``np.floating`` /
    ``np.integer``, and key dtypes under :class:`prng_key` and :class:`extended`.
    """
    a_key = isinstance(a, KeyTy) or a in (prng_key, extended)
    if isinstance(b, KeyTy):
        return a == b  # the same implementation's key dtype (key<rbg> is no subtype of key<fry>), as JAX's
    if b in (prng_key, extended):
        return a_key and not (a is extended and b is prng_key)
    if a_key:
        return b is np.generic
    a_dtype = _as_dtype(a, "first argument")
    if isinstance(b, type) and b in _ABSTRACT_KINDS:
        if a_dtype in core_dtypes._ACCEPTED and a_dtype != float0:
            return bool(_ABSTRACT_KINDS[b](a_dtype))
        return bool(np.issubdtype(a_dtype, b))
    return a_dtype == _as_dtype(b, "second argument")


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """``dtype`` as toolkit computes in it: 64-bit types become 32-bit while x64 is off (JAX's function).

    A key dtype is returned as is when ``allow_extended_dtype``, else it is a ``ValueError`` (as JAX's);
    an unknown dtype is a ``TypeError`` naming it.
    """
    if isinstance(dtype, KeyTy):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} with "
                         "allow_extended_dtype=False")
    if dtype is None:
        dtype = np.float64  # numpy's reading of None, as JAX's: the default float
    return core_dtypes.canonicalize_dtype(dtype)


def itemsize_bits(dtype: Any) -> int:
    """The width of one element in bits: 4 for int4, 8 for bool (its storage), 32 for float32 (JAX's)."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    d = _as_dtype(dtype, "dtype")
    if d == float0:
        return 0
    return 8 if d == np.dtype(bool) else core_dtypes.bit_width(d)


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype JAX's promotion gives ``args`` (arrays, dtypes, Python scalars); with ``return_weak_type_flag``
    the pair ``(dtype, weak)``. ``ValueError`` without arguments; ``TypePromotionError`` when there is no
    implicit promotion (8-bit floats, or strict promotion)."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    typed = []
    for a in args:
        if core_dtypes.is_python_scalar(a):
            typed.append((core_dtypes.dtype_of(a), True))
        elif isinstance(a, (np.dtype, type, str)):
            typed.append((core_dtypes.canonicalize_dtype(a), False))
        else:
            typed.append((core_dtypes.dtype_of(a), core_dtypes.is_weakly_typed(a)))
    dtype, weak = core_dtypes.result_type_with_weak(*typed)
    dtype = core_dtypes.canonicalize_dtype(dtype)
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) of ``x``'s dtype, as ``jax.dtypes.scalar_type_of``."""
    d = core_dtypes.dtype_of(x) if not isinstance(x, np.ndarray) else x.dtype
    if d not in core_dtypes._ACCEPTED or d == float0:
        raise TypeError(f"Invalid scalar value {x}")
    if core_dtypes.is_bool(d):
        return bool
    if core_dtypes.is_integer(d):
        return int
    if core_dtypes.is_float(d):
        return float
    return complex
