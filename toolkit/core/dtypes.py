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

**64-bit types as JAX has them** (``jax_enable_x64``, see
``toolkit.core.config``): with x64 off (the default) :func:`canonicalize_dtype`
maps ``int64``/``uint64``/``float64``/``complex128`` to their 32-bit
counterparts, and every value entering toolkit (numpy arrays and scalars,
requested dtypes, specs) goes through it; Python scalars and dtype-less
creation functions default to ``int32``/``float32``/``complex64``. With x64
on, 64-bit types stay and those defaults are ``int64``/``float64``/
``complex128``. :func:`check_dtype` only checks a dtype is supported (avals
built inside toolkit, e.g. the ``int64`` of shape arithmetic, or a
deserialized export's ``float64``, keep theirs). As in JAX, an existing
toolkit array keeps its dtype whatever the mode (it was made 64-bit under
x64 on).

Example::

    >>> result_type(np.float16, 2.0)
    dtype('float16')
    >>> result_type(np.int8, np.uint8)
    dtype('int16')
"""

from __future__ import annotations

import builtins
import os
import sys
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from toolkit.core.config import flag_value, x64_enabled

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

#: JAX's low-precision floats (``ml_dtypes``; XLA computes in them). In JAX's lattice each sits alone above
#: the weak float: it joins bools and integers (``int8 + float8_e4m3fn -> float8_e4m3fn``) and nothing else.
LOW_PRECISION_FLOAT_NAMES = ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                             "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn")
#: JAX's sub-byte integers: in its lattice each sits alone above the weak int; it joins bools only.
LOW_PRECISION_INT_NAMES = ("int2", "int4", "uint2", "uint4")
_EXTRA_FLOATS = tuple(np.dtype(getattr(ml_dtypes, name)) for name in LOW_PRECISION_FLOAT_NAMES)
_EXTRA_INTS = tuple(np.dtype(getattr(ml_dtypes, name)) for name in LOW_PRECISION_INT_NAMES)
_SUB_BYTE_WIDTH = {np.dtype(ml_dtypes.int2): 2, np.dtype(ml_dtypes.uint2): 2, np.dtype(ml_dtypes.int4): 4,
                   np.dtype(ml_dtypes.uint4): 4, np.dtype(ml_dtypes.float4_e2m1fn): 4}
_UNSIGNED_EXTRA_INTS = frozenset({np.dtype(ml_dtypes.uint2), np.dtype(ml_dtypes.uint4)})


class TypePromotionError(ValueError):
    """Two dtypes have no implicit promotion in JAX's lattice (``jax.dtypes.TypePromotionError``).

    8-bit (and 4-bit) floats and sub-byte integers promote with nothing wider, so that a computation never
    leaves the low-precision type silently; convert explicitly.
    """
#: JAX's ``float0``: the dtype of tangents and cotangents of integer and boolean values
#: (zero bytes per element). Exports carry it (VJPs of functions with integer
#: arguments); in StableHLO a float0 array is a ``tensor<...xi1>`` of zeros, as JAX lowers it.
float0 = np.dtype([("float0", np.void, 0)])

_ACCEPTED = _SUPPORTED | frozenset(_EXTRA_FLOATS) | frozenset(_EXTRA_INTS) | {float0}

#: The defaults with x64 off (JAX's default config); :func:`default_int_dtype` and
#: friends give the current ones (64-bit with x64 on).
DEFAULT_INT = int32
DEFAULT_FLOAT = float32
DEFAULT_COMPLEX = complex64

#: What each 64-bit type becomes with x64 off (JAX's ``_dtype_to_32bit_dtype``).
TO_32BIT: dict[np.dtype, np.dtype] = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def default_int_dtype() -> np.dtype:
    """The type of Python ints and of integer results without a dtype: ``int64`` with x64 on, else ``int32``."""
    return int64 if x64_enabled() else int32


def default_float_dtype() -> np.dtype:
    """The type of Python floats and of dtype-less float creation: ``float64`` with x64 on, else ``float32``."""
    return float64 if x64_enabled() else float32


def to_inexact_dtype(dtype: np.dtype) -> np.dtype:
    """The floating type a non-floating ``dtype`` becomes where a function needs one (JAX's
    ``to_inexact_dtype``, canonicalized): bools and integers up to 32 bits float32, 64-bit integers float64
    (float32 with x64 off); inexact types stay. With x64 on ``sin(int32_array)`` is float32, as in JAX."""
    if is_inexact(dtype):
        return dtype
    return canonicalize_dtype(float64 if np.dtype(dtype).itemsize == 8 else float32)


def default_complex_dtype() -> np.dtype:
    """The type of Python complex numbers: ``complex128`` with x64 on, else ``complex64``."""
    return complex128 if x64_enabled() else complex64


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """``dtype`` (a dtype, type, or name) as toolkit computes in it: 64-bit types become 32-bit with x64 off.

    JAX's ``dtypes.canonicalize_dtype``. ``TypeError`` naming the dtype when it
    is not supported (see :func:`check_dtype`).
    """
    result = dtype if isinstance(dtype, np.dtype) and dtype in _ACCEPTED else check_dtype(dtype)
    if result in TO_32BIT and not x64_enabled():
        return TO_32BIT[result]
    return result


def canonicalize_explicit_dtype(dtype: Any, fun_name: str = "") -> np.dtype:
    """A dtype the user asked for (``zeros(3, dtype=np.float64)``): :func:`canonicalize_dtype`, warning as JAX does.

    With x64 off a 64-bit request is truncated with JAX's ``UserWarning``
    ("Explicitly requested dtype float64 requested in zeros is not available,
    and will be truncated to dtype float32. ...").
    """
    requested = check_dtype(dtype)
    result = canonicalize_dtype(requested)
    if result != requested:
        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(f"Explicitly requested dtype {requested}{where} is not available, and will be truncated to "
                      f"dtype {result.name}. To enable more dtypes, set the jax_enable_x64 configuration option "
                      "(toolkit.config.update('jax_enable_x64', True)) or the TOOLKIT_ENABLE_X64 shell environment "
                      "variable.", UserWarning, stacklevel=_user_stacklevel())
    return result


_TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first caller outside toolkit (a warning points at the user's line)."""
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_TOOLKIT_DIR):
        frame, level = frame.f_back, level + 1
    return level


def check_dtype(dtype: Any) -> np.dtype:
    """The numpy dtype for ``dtype`` (a dtype, type, or name), if toolkit supports it; never narrowed.

    Python's ``int``/``float``/``complex`` give the current default types.
    Raises ``TypeError`` naming the dtype when it is not supported.
    """
    if isinstance(dtype, np.dtype) and dtype in _ACCEPTED:
        return dtype
    if dtype is builtins.bool:
        return bool_
    if dtype is builtins.int:
        return default_int_dtype()
    if dtype is builtins.float:
        return default_float_dtype()
    if dtype is builtins.complex:
        return default_complex_dtype()
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
    return dtype.kind in "iu" or dtype in _EXTRA_INTS


def is_signed(dtype: np.dtype) -> bool:
    return dtype.kind == "i" or (dtype in _EXTRA_INTS and dtype not in _UNSIGNED_EXTRA_INTS)


def is_unsigned(dtype: np.dtype) -> bool:
    return dtype.kind == "u" or dtype in _UNSIGNED_EXTRA_INTS


def is_low_precision(dtype: np.dtype) -> bool:
    """The float8/float4 types and the sub-byte integers: JAX's lattice joins them with nothing wider."""
    return dtype in _EXTRA_FLOATS or dtype in _EXTRA_INTS


def is_bool(dtype: np.dtype) -> bool:
    return dtype.kind == "b"


def is_inexact(dtype: np.dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


def finfo(dtype: Any) -> ml_dtypes.finfo:
    """Machine limits of a float type (``jnp.finfo``: of the canonical type, so float64 gives float32's with x64 off)."""
    return ml_dtypes.finfo(canonicalize_dtype(dtype))


def iinfo(dtype: Any) -> ml_dtypes.iinfo:
    """Machine limits of an integer type (of the canonical type, as ``jnp.iinfo``)."""
    return ml_dtypes.iinfo(canonicalize_dtype(dtype))


def bit_width(dtype: np.dtype) -> int:
    if dtype in _SUB_BYTE_WIDTH:
        return _SUB_BYTE_WIDTH[dtype]
    return 1 if dtype == bool_ else dtype.itemsize * 8


# --- promotion lattice -------------------------------------------------------
# Kinds in promotion order; each dtype's rank inside its kind is its width.
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_SIGNED_BY_WIDTH = {8: int8, 16: int16, 32: int32, 64: int64}
_UNSIGNED_BY_WIDTH = {8: uint8, 16: uint16, 32: uint32, 64: uint64}
_FLOAT_BY_WIDTH = {16: float16, 32: float32, 64: float64}
_COMPLEX_FOR_FLOAT: dict[int, np.dtype] = {16: complex64, 32: complex64, 64: complex128}


def kind_of(dtype: np.dtype) -> str:
    """numpy's kind letter (``b``, ``i``, ``u``, ``f``, ``c``) of a dtype, ``ml_dtypes``' types included
    (numpy calls them all ``V``): bfloat16 and the float8/float4 types are ``f``, ``int4`` is ``i``."""
    return _kind(dtype)


def _kind(dtype: np.dtype) -> str:
    if dtype in _EXTRA_INTS:
        return "u" if dtype in _UNSIGNED_EXTRA_INTS else "i"
    return "f" if dtype == bfloat16 or dtype in _EXTRA_FLOATS else dtype.kind


def _no_promotion(*names: str) -> TypePromotionError:
    listed = ", ".join(repr(n) for n in names)
    return TypePromotionError(
        f"Input dtypes ({listed}) have no available implicit dtype promotion path. To avoid unintended "
        "promotion, 8-bit floats and sub-byte integers do not support implicit promotion. If you'd like your "
        "inputs to be promoted to another type, you can do so explicitly using e.g. x.astype('float32')")


def _join_low_precision(a: np.dtype, b: np.dtype) -> np.dtype:
    """JAX's lattice around a low-precision type ``a`` (not ``b``): a float joins bools and standard integers,
    an integer joins bools; anything else is a :class:`TypePromotionError`."""
    if b == bool_:
        return a
    if a in _EXTRA_FLOATS and _kind(b) in "iu" and b not in _EXTRA_INTS:
        return a
    raise _no_promotion(a.name, b.name)


def _join(a: np.dtype, b: np.dtype) -> np.dtype:
    """The least upper bound of two strongly typed dtypes (:class:`TypePromotionError` when there is none)."""
    if a == b:
        return a
    if is_low_precision(a):
        return _join_low_precision(a, b)
    if is_low_precision(b):
        return _join_low_precision(b, a)
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
        if wu == 64:  # uint64 with any signed type: above int64 in JAX's lattice is the default float
            return float64
        if wu == 32 and not x64_enabled():
            # JAX's x32 lattice: no 64-bit type is formed from 32-bit inputs (uint32 + int32 -> int32).
            return int32
        # A signed type wide enough for the unsigned one.
        return _SIGNED_BY_WIDTH[2 * wu]
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
        return default_int_dtype()
    if isinstance(x, float):
        return default_float_dtype()
    if isinstance(x, complex):
        return default_complex_dtype()
    raise TypeError(f"not a Python scalar: {x!r}")


def is_python_scalar(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


def dtype_of(x: Any) -> np.dtype:
    """The dtype a value has when it enters a traced program.

    Python scalars: the default types; numpy values: canonicalized (float64
    becomes float32 with x64 off); toolkit arrays and tracers keep theirs.
    """
    if is_python_scalar(x):
        return _weak_dtype_of_python_scalar(x)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    if hasattr(x, "aval"):  # a toolkit array or tracer: made in its mode, kept (JAX)
        return check_dtype(dtype)
    return canonicalize_dtype(dtype)


def is_weakly_typed(x: Any) -> bool:
    """Python scalars and values derived only from them are weakly typed; a Python bool is not (JAX's
    ``dtypes.is_weakly_typed``: ``full((2,), True)`` is a strong bool)."""
    if is_python_scalar(x):
        return type(x) is not bool
    return bool(getattr(x, "weak_type", False))


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype two strongly typed dtypes promote to (``jnp.promote_types``: JAX's lattice, not canonicalized).

    With x64 off the lattice forms no 64-bit type from 32-bit ones
    (``uint32, int32 -> int32``), but 64-bit inputs keep their join
    (``float64, float32 -> float64``), as in JAX.
    """
    return _join(check_dtype(a), check_dtype(b))


def result_type_with_weak(*typed: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promote ``(dtype, weak_type)`` pairs; returns the result and whether it is weak.

    A weak operand joins only by kind: its width is ignored, so a strongly
    typed ``float16`` stays ``float16`` beside a Python float. If every operand
    is weak the result is weak, with the default type of the highest kind.
    """
    if len(typed) == 1:
        return typed[0][0], typed[0][1]
    if flag_value("jax_numpy_dtype_promotion") == "strict":
        return _promote_strict(typed)
    first = typed[0][0]
    if all(d == first for d, _ in typed) and not all(w for _, w in typed):
        return first, False  # one strong type: kept, even a 64-bit one with x64 off (JAX's trivial case)
    result, weak_result = _promote_with_weak(typed)
    if result in TO_32BIT and not x64_enabled():
        result = TO_32BIT[result]  # a 64-bit operand made under x64 on, promoted: canonical (JAX)
    return result, weak_result


def _promote_strict(typed: tuple[tuple[np.dtype, bool], ...]) -> tuple[np.dtype, bool]:
    """JAX's strict lattice (``jax_numpy_dtype_promotion='strict'``): strong types never promote with each other;
    a weak int joins any int, float or complex type, a weak float any float or complex, a weak complex a complex."""
    strong = {d for d, w in typed if not w}
    weak = [d for d, w in typed if w]
    order = {"i": 1, "f": 2, "c": 3}
    if len(strong) == 1:
        (result,) = strong
        kind = "i" if _kind(result) in ("i", "u") else _kind(result)
        if all(_kind(d) != "b" and kind in order and order[_kind(d) if _kind(d) != "u" else "i"] <= order[kind]
               for d in weak):
            return result, False
    elif not strong and all(_kind(d) != "b" for d in weak) or all(d == bool_ for d, _ in typed):
        return _promote_with_weak(typed)
    # JAX names a weak type by its Python type ("<class 'float'>").
    python_type = {"b": builtins.bool, "i": builtins.int, "u": builtins.int, "f": builtins.float, "c": builtins.complex}
    names = tuple(str(python_type[_kind(d)]) if w else str(d) for d, w in typed)
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output type, or set "
        "jax_numpy_dtype_promotion=standard.")


def _promote_with_weak(typed: tuple[tuple[np.dtype, bool], ...]) -> tuple[np.dtype, bool]:
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
    weak_result = False
    for d in weak:
        kw, kr = _KIND_ORDER[_kind(d)], _KIND_ORDER[_kind(result)]
        if is_low_precision(result):
            # The weak int sits below every low-precision type, the weak float below the low-precision floats
            # only; a weak complex is above none (JAX's lattice).
            if kw > kr:
                raise _no_promotion(result.name, f"weak {d.name}")
            continue
        if kw > kr:
            if _kind(d) == "c" and _kind(result) == "f" and not weak_result:
                # A strong float beside a weak complex: the complex type of the float's width (strong).
                result = _COMPLEX_FOR_FLOAT.get(bit_width(result), default_complex_dtype())
            else:
                # Above a strong bool or integer in JAX's lattice sits the weak type itself
                # (int32 + 1.5 is a weak float32, as in JAX).
                result = {"f": default_float_dtype, "c": default_complex_dtype}.get(_kind(d), default_int_dtype)()
                weak_result = True
    return result, weak_result


def result_type(*args: Any) -> np.dtype:
    """The dtype of an elementwise operation on ``args`` (values or dtypes).

    Python scalars are weakly typed and do not widen arrays.
    """
    typed = []
    for a in args:
        if is_python_scalar(a):
            typed.append((_weak_dtype_of_python_scalar(a), True))
        elif isinstance(a, (np.dtype, type, str)):
            typed.append((canonicalize_dtype(a), False))  # jnp.result_type canonicalizes dtype arguments
        else:
            typed.append((dtype_of(a), is_weakly_typed(a)))
    if not typed:
        raise ValueError("result_type needs at least one argument")
    return result_type_with_weak(*typed)[0]
