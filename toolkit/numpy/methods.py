"""Operators and array methods, installed once on both ``Tracer`` and ``Array``
so traced and concrete values behave the same."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import Tracer
from toolkit.lax.elementwise import bitcast_convert_type, complex as lax_complex, convert_element_type
from toolkit.lax.structural import rev
from toolkit.numpy import (array_api_namespace, array_editing, diagonals, indexing, nonzero_indices, reductions,
                           rounding, scatter, shapes, sorting, statistics, tensor_contractions, ufuncs)
from toolkit.numpy._core import ARRAYLIKE_TYPES, is_arraylike
from toolkit.numpy.take import take


def _no_setitem(self, index, value):
    raise TypeError("toolkit arrays are immutable: instead of x[idx] = y, use x = x.at[idx].set(y)")


def _reshape(self, *shape, order="C", out_sharding=None):
    """``a.reshape(*shape)`` or ``a.reshape(shape)``: :func:`toolkit.numpy.reshape` as a method."""
    if len(shape) == 1 and not isinstance(shape[0], int) and not getattr(shape[0], "_is_symbolic_dim", False):
        shape = shape[0]
    return shapes.reshape(self, shape, order=order, out_sharding=out_sharding)


def _transpose(self, *axes):
    """``a.transpose(*axes)`` or ``a.transpose(axes)``: :func:`toolkit.numpy.transpose` as a method."""
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return shapes.transpose(self, axes or None)


def _astype(self, dtype):
    """``a.astype(dtype)``: the values converted to ``dtype`` (``a`` itself when it already has it, strongly typed)."""
    dtype = dtypes.canonicalize_explicit_dtype(dtype, "astype")
    if dtypes.is_complex(self.dtype) and dtype == dtypes.bool_:
        return ufuncs.not_equal(self, 0)  # either part nonzero, as toolkit.numpy.astype (and jnp's)
    return self if self.dtype == dtype and not self.weak_type else convert_element_type(self, dtype)


def _view(self, dtype=None, type=None):
    """``a.view(dtype)``: the same bits read as ``dtype`` (as ``jax.Array.view``); the last axis grows or
    shrinks by the ratio of the item sizes (a complex value is its real and imaginary parts, in that order).
    ``type`` is not supported (``NotImplementedError``).
    """
    # jax.Array.view: reinterpret the bits; the last axis grows or shrinks by the ratio of item sizes.
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dtype = dtypes.canonicalize_explicit_dtype(dtype, "view")
    bits_in, bits_out = self.dtype.itemsize * 8, dtype.itemsize * 8
    if self.ndim == 0:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
        return shapes.squeeze(_view(shapes.reshape(self, (1,)), dtype))
    if (self.shape[-1] * bits_in) % bits_out:
        raise ValueError("When changing to a larger dtype, its size must be a divisor "
                         "of the total size in bytes of the last axis of the array.")
    if self.dtype == dtype:
        return self
    if self.dtype == np.dtype(bool):
        return _view(convert_element_type(self, "uint8"), dtype)
    # bitcast_convert_type has no complex types: JAX's views go through the parts, interleaved in the last axis.
    if dtypes.is_complex(self.dtype):
        parts = shapes.stack([ufuncs.real(self), ufuncs.imag(self)], axis=-1)  # copies: the bits are JAX's
        return _view(shapes.reshape(parts, (*self.shape[:-1], self.shape[-1] * 2)), dtype)
    if dtype == np.dtype(bool):
        return convert_element_type(_view(self, "uint8"), bool)
    if dtypes.is_complex(dtype):
        parts = convert_element_type(_view(self, np.finfo(dtype).dtype), dtype)
        return ufuncs.add(parts[..., 0::2], ufuncs.multiply(1j, parts[..., 1::2]))  # JAX's arithmetic, bit for bit
    if bits_in < bits_out:
        factor = bits_out // bits_in
        return bitcast_convert_type(shapes.reshape(self, (*self.shape[:-1], self.shape[-1] // factor, factor)),
                                    dtype)
    if bits_in > bits_out:
        out = bitcast_convert_type(self, dtype)
        return shapes.reshape(out, (*out.shape[:-2], out.shape[-2] * out.shape[-1]))
    return bitcast_convert_type(self, dtype)


def _operator_round(number, ndigits=None):
    # round(x) gives integers as Python's round of a float does; round(x, n) keeps the dtype (as JAX).
    out = rounding.round(number, ndigits or 0)
    return _astype(out, int) if ndigits is None else out


def _operator(fn: Any, symbol: str, *, reflected: bool = False, refused: tuple[type, ...] = ()) -> Any:
    """A binary operator method as JAX's: ``fn(self, other)`` (``fn(other, self)`` when ``reflected``) for an
    operand toolkit.numpy takes; for any other, ``NotImplemented``, so that Python asks the operand's own
    (reflected) method — ``x + quantity`` reaches ``Quantity.__radd__`` — or falls back as for any object
    (``x == None`` is ``False``, ``x - [1]`` a ``TypeError``); the ``refused`` types (lists and tuples, whose own
    ``+`` and ``*`` would concatenate or repeat) are a ``TypeError`` at once, as in JAX."""
    arraylike_types = ARRAYLIKE_TYPES  # (closure variables: this runs on every eager x + y)
    if reflected:
        def method(self, other):
            if type(other) in arraylike_types or is_arraylike(other):
                return fn(other, self)
            return _not_taken(self, other, symbol, refused)
    else:
        def method(self, other):
            if type(other) in arraylike_types or is_arraylike(other):
                return fn(self, other)
            return _not_taken(self, other, symbol, refused)
    method.__name__ = getattr(fn, "__name__", "operator")
    return method


def _not_taken(self: Any, other: Any, symbol: str, refused: tuple[type, ...]) -> Any:
    if type(other) in refused:
        raise TypeError(f"unsupported operand type(s) for {symbol}: "
                        f"{type(self).__name__!r} and {type(other).__name__!r}")
    return NotImplemented


def _operators(name: str, fn: Any, symbol: str, refused: tuple[type, ...] = ()) -> dict[str, Any]:
    """``__name__`` and ``__rname__`` (see :func:`_operator`)."""
    return {f"__{name}__": _operator(fn, symbol, refused=refused),
            f"__r{name}__": _operator(fn, symbol, reflected=True, refused=refused)}


def _argpartition(self, kth, axis=-1):
    """``a.argpartition(kth)``: ``toolkit.numpy.argpartition(a, kth, axis)``."""
    return array_editing.argpartition(self, kth, axis=axis)


def _choose(self, choices, out=None, mode="raise"):
    """``a.choose(choices)``: ``toolkit.numpy.choose(a, choices, mode=mode)``."""
    return array_editing.choose(self, choices, out=out, mode=mode)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    """``a.compress(condition)``: ``toolkit.numpy.compress(condition, a, axis)`` (note the argument order)."""
    return array_editing.compress(condition, self, axis=axis, out=out, size=size, fill_value=fill_value)


def _nonzero(self, *, fill_value=None, size=None):
    """``a.nonzero()``: ``toolkit.numpy.nonzero(a, size=size, fill_value=fill_value)``."""
    return nonzero_indices.nonzero(self, size=size, fill_value=fill_value)


def _ptp(self, axis=None, out=None, keepdims=False):
    """``a.ptp()``: the range, ``toolkit.numpy.ptp(a, axis, keepdims=keepdims)``."""
    return statistics.ptp(self, axis=axis, out=out, keepdims=keepdims)


def _searchsorted(self, v, side="left", sorter=None, *, method="scan"):
    """``a.searchsorted(v)``: ``toolkit.numpy.searchsorted(a, v, side, sorter, method=method)``."""
    return sorting.searchsorted(self, v, side=side, sorter=sorter, method=method)


def _byteswap(self):
    """``a.byteswap()``: each element's bytes reversed, the same dtype (JAX's ``Array.byteswap``)."""
    if dtypes.is_complex(np.dtype(self.dtype)):
        return lax_complex(_byteswap(ufuncs.real(self)), _byteswap(ufuncs.imag(self)))
    if np.dtype(self.dtype).itemsize == 1:
        return _copy(self)
    # The bytes of each element as a trailing axis of uint8, reversed, then read back as the dtype.
    swapped = rev(bitcast_convert_type(self, np.dtype(np.uint8)), (len(self.shape),))
    return bitcast_convert_type(swapped, self.dtype)


def _to_device(self, device, *, stream=None):
    """``a.to_device(device)``: a copy placed on ``device`` (a device or a sharding); JAX's ``Array.to_device``."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    from toolkit.array import device_put  # function-level: toolkit.array is a layer above numpy
    return device_put(self, device)


def _flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider arr.flatten() instead.")


def _copy(self):
    """``a.copy()``: a new array with the same value (as ``jax.Array.copy``)."""
    # jax.Array.copy: a new array with the same value; a traced value is immutable, so it is its own copy.
    return self if isinstance(self, Tracer) else self._device_copy()


_SEQUENCES = (tuple, list)
_CONTAINERS = (dict, list, set, tuple)

METHODS = {
    **_operators("add", ufuncs.add, "+", _SEQUENCES), **_operators("sub", ufuncs.subtract, "-"),
    **_operators("mul", ufuncs.multiply, "*", _SEQUENCES), **_operators("truediv", ufuncs.true_divide, "/"),
    **_operators("floordiv", ufuncs.floor_divide, "//"), **_operators("mod", ufuncs.remainder, "%"),
    **_operators("divmod", ufuncs.divmod, "divmod()"), **_operators("pow", ufuncs.power, "**"),
    **_operators("matmul", tensor_contractions.matmul, "@"),
    **_operators("and", ufuncs.bitwise_and, "&"), **_operators("or", ufuncs.bitwise_or, "|"),
    **_operators("xor", ufuncs.bitwise_xor, "^"),
    **_operators("lshift", ufuncs.left_shift, "<<"), **_operators("rshift", ufuncs.right_shift, ">>"),
    "__lt__": _operator(ufuncs.less, "<"), "__le__": _operator(ufuncs.less_equal, "<="),
    "__gt__": _operator(ufuncs.greater, ">"), "__ge__": _operator(ufuncs.greater_equal, ">="),
    "__eq__": _operator(ufuncs.equal, "==", refused=_CONTAINERS),
    "__ne__": _operator(ufuncs.not_equal, "==", refused=_CONTAINERS),  # JAX's message says == for != too
    "__neg__": ufuncs.negative, "__pos__": lambda self: self, "__abs__": ufuncs.absolute,
    "__invert__": ufuncs.invert,
    "__getitem__": indexing.getitem,
    "reshape": _reshape, "transpose": _transpose, "astype": _astype,
    "T": property(lambda self: shapes.transpose(self), doc="The array with its axes reversed (``transpose()``)."),
    "mT": property(lambda self: shapes.swapaxes(self, -1, -2), doc="The matrix transpose: the last two axes swapped."),
    "real": property(ufuncs.real), "imag": property(ufuncs.imag), "conj": ufuncs.conj,
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max, "min": reductions.min,
    "mean": reductions.mean, "var": reductions.var, "std": reductions.std, "any": reductions.any,
    "all": reductions.all, "argmax": reductions.argmax, "argmin": reductions.argmin,
    "squeeze": shapes.squeeze, "swapaxes": shapes.swapaxes, "ravel": shapes.ravel, "flatten": shapes.ravel,
    "clip": ufuncs.clip, "round": rounding.round, "dot": tensor_contractions.dot,
    "at": property(scatter.at_property),
    "sort": sorting.sort, "argsort": sorting.argsort, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod,
    "take": take, "diagonal": diagonals.diagonal, "trace": diagonals.trace, "repeat": shapes.repeat,
    "__setitem__": _no_setitem,
    "conjugate": ufuncs.conj, "view": _view, "__round__": _operator_round, "copy": _copy,
    "__copy__": _copy, "__deepcopy__": lambda self, memo: _copy(self),
    # The rest of jax.Array's methods, each the toolkit.numpy function of the same name with the array first.
    "argpartition": _argpartition, "byteswap": _byteswap, "choose": _choose, "compress": _compress,
    "nonzero": _nonzero, "ptp": _ptp, "searchsorted": _searchsorted, "to_device": _to_device,
    "flat": property(_flat, doc="Not implemented, as in JAX: use ``flatten()``."),
    "__array_namespace__": array_api_namespace.array_namespace,
}


def install(cls: type) -> None:
    for name, value in METHODS.items():
        setattr(cls, name, value)


def install_all() -> None:
    from toolkit.array import Array  # function-level: toolkit.array is a layer above numpy
    install(Tracer)
    install(Array)
    ARRAYLIKE_TYPES.add(Array)  # the operators' first test (x * y of two Arrays: one set lookup)
