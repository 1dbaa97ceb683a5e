"""The Python Array API standard's names in ``jax.numpy``: the short trigonometric names (``acos`` is
``arccos``), ``atan2``, ``astype``, the ``bitwise_*`` names, ``concat``, ``isdtype`` and the
``unique_*`` family (named tuples, ``equal_nan=False``, ``size=``/``fill_value=`` under ``jit``).

Example::

    tnp.unique_counts(tnp.asarray([3, 1, 3]))       # UniqueCountsResult(values=[1, 3], counts=[1, 2])
    tnp.isdtype(tnp.float32, ("integral", "real floating"))   # True
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.numpy import setops, shapes, ufuncs
from toolkit.numpy._core import asarray, check_arraylike, convert, is_array, placed
from toolkit.numpy.array_api_namespace import KINDS


def _operand(name: str, x: Any) -> Any:
    check_arraylike(name, x)
    return x if is_array(x) else asarray(x)


def acos(x: Any, /) -> Any:
    """Elementwise inverse cosine (the Array API's name of ``arccos``)."""
    return ufuncs.arccos(_operand("acos", x))


def acosh(x: Any, /) -> Any:
    """Elementwise inverse hyperbolic cosine (the Array API's name of ``arccosh``)."""
    return ufuncs.arccosh(_operand("acosh", x))


def asin(x: Any, /) -> Any:
    """Elementwise inverse sine (the Array API's name of ``arcsin``)."""
    return ufuncs.arcsin(_operand("asin", x))


def asinh(x: Any, /) -> Any:
    """Elementwise inverse hyperbolic sine (the Array API's name of ``arcsinh``)."""
    return ufuncs.arcsinh(_operand("asinh", x))


def atan(x: Any, /) -> Any:
    """Elementwise inverse tangent (the Array API's name of ``arctan``)."""
    return ufuncs.arctan(_operand("atan", x))


def atanh(x: Any, /) -> Any:
    """Elementwise inverse hyperbolic tangent (the Array API's name of ``arctanh``)."""
    return ufuncs.arctanh(_operand("atanh", x))


def atan2(x1: Any, x2: Any, /) -> Any:
    """Elementwise ``arctan(x1 / x2)`` in the right quadrant (the Array API's name of ``arctan2``)."""
    check_arraylike("atan2", x1, x2)
    return ufuncs.arctan2(x1, x2)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (``None``: the default float type), strongly typed, as ``jnp.astype``.

    A complex ``x`` converted to ``bool`` is ``x != 0`` (a plain conversion would look at the real part only).
    ``device`` (a device or sharding) places the result; ``copy`` has no effect on immutable arrays.
    """
    x = _operand("astype", x)
    del copy  # arrays are immutable: a converted array is as good as a copy
    target = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "astype")
    if dtypes.is_complex(x.dtype) and target == np.dtype(bool):
        out = ufuncs.not_equal(x, 0)
    else:
        out = lax_elementwise.convert_element_type(x, target, weak_type=False)
    return out if device is None else placed(out, device, None, "astype")


@compiled_whole()
def bitwise_count(x: Any, /) -> Any:
    """The number of 1 bits in ``|x|`` as ``uint8`` (numpy's and JAX's ``bitwise_count``); integers and bools."""
    x = _operand("bitwise_count", x)
    if not (dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype)):
        raise TypeError(f"bitwise_count is only defined for integer and bool arrays, got {x.dtype.name}")
    if dtypes.is_bool(x.dtype):
        return convert(x, np.uint8)
    return convert(lax_elementwise.population_count(ufuncs.absolute(x)), np.uint8)


def bitwise_invert(x: Any, /) -> Any:
    """Elementwise bitwise NOT (the Array API's name of ``invert``)."""
    return ufuncs.invert(_operand("bitwise_invert", x))


def bitwise_left_shift(x: Any, y: Any, /) -> Any:
    """Elementwise ``x << y`` (the Array API's name of ``left_shift``, as JAX's: booleans shift as ints)."""
    check_arraylike("bitwise_left_shift", x, y)
    return ufuncs.left_shift(x, y)


def bitwise_right_shift(x: Any, y: Any, /) -> Any:
    """Elementwise ``x >> y`` (the Array API's name of ``right_shift``): logical for unsigned integers."""
    check_arraylike("right_shift", x, y)  # JAX's bitwise_right_shift is right_shift: its name in the check
    return ufuncs.right_shift(x, y)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """``arrays`` joined along ``axis`` (``None``: flattened first), the Array API's ``concatenate``."""
    check_arraylike("concat", *arrays)
    return shapes.concatenate(arrays, axis=axis)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a name (``"bool"``, ``"signed integer"``, ``"unsigned integer"``,
    ``"integral"``, ``"real floating"``, ``"complex floating"``, ``"numeric"``), a dtype, or a tuple of
    them (any matches). An unknown name is a ``ValueError``; a kind of another type a ``TypeError``."""
    the_dtype = np.dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in KINDS:
            if dtypes.kind_of(the_dtype) in KINDS[k]:
                return True
            continue
        try:
            other = np.dtype(k)
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of {list(KINDS)}, "
                                 "or a compatible input for jnp.dtype()") from e
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") from e
        if the_dtype == other:
            return True
    return False


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result: the unique values, first indices, inverse indices and counts."""
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result: the unique values and their counts."""
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result: the unique values and the indices rebuilding the input from them."""
    values: Any
    inverse_indices: Any


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueAllResult:
    """The sorted unique values of ``x`` with first indices, inverse indices (``x``'s shape) and counts
    (NaNs are each unique, the Array API's rule); ``size``/``fill_value`` as ``unique``."""
    check_arraylike("unique_all", x)
    values, indices, inverse, counts = setops.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                                     equal_nan=False, size=size, fill_value=fill_value)
    return UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueCountsResult:
    """The sorted unique values of ``x`` and how often each occurs; ``size``/``fill_value`` as ``unique``."""
    check_arraylike("unique_counts", x)
    values, counts = setops.unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueInverseResult:
    """The sorted unique values of ``x`` and the indices (``x``'s shape) that rebuild ``x`` from them."""
    check_arraylike("unique_inverse", x)
    values, inverse = setops.unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(values, inverse)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of ``x`` (NaNs each unique); ``size``/``fill_value`` as ``unique``."""
    check_arraylike("unique_values", x)
    return setops.unique(x, equal_nan=False, size=size, fill_value=fill_value)

