"""Array creation: ``array``, ``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, the
``*_like`` functions, and numpy's matrix builders ``eye``, ``identity``, ``tri``, ``tril``, ``triu``, ``vander``."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.array import Array, device_put
from toolkit.core import dtypes, shape_poly, sharding_types
from toolkit.core.avals import canonicalize_shape
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.numpy import ufuncs
from toolkit.numpy._core import asarray, broadcast_to, check_arraylike, convert, is_array, placed
from toolkit.runtime import client as runtime_client
from toolkit.runtime.client import Device
from toolkit.shard import Sharding


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = "K", ndmin: int = 0, *,
          device: Any = None, out_sharding: Any = None) -> Any:
    """A toolkit array from array-like data, as ``jnp.array``.

    ``copy=True`` (the default) gives a new array even for a toolkit array ``object`` (JAX's: donating ``object`` to a
    jit call afterwards leaves the copy alive); ``ndmin`` adds leading dimensions of size 1 up to that rank;
    ``order`` other than ``"K"`` is JAX's ``NotImplementedError``; ``device`` (a device or sharding) or
    ``out_sharding`` places the result (at most one of them).
    """
    out = asarray(object, None if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "array"), order,
                  copy=bool(copy))
    if ndmin > out.ndim:
        out = lax_structural.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return placed(out, device, out_sharding, "jnp.array")


def _with_out_sharding(fun: Any, kwargs: dict, out_sharding: Any, what: str, shape: tuple, primitive: str) -> Any:
    return sharding_types.with_out_sharding(fun, (), kwargs, out_sharding, what, shape, primitive=primitive)


def _full(shape: Any, fill_value: Any, dtype: Any, out_sharding: Any, what: str) -> Any:
    if out_sharding is not None:
        shape = canonicalize_shape(shape)
        return _with_out_sharding(full, {"shape": shape, "fill_value": fill_value, "dtype": dtype}, out_sharding,
                                  what, shape, "broadcast_in_dim")
    shape = canonicalize_shape(shape)
    # JAX's lax.full: weakly typed when no dtype is given and the fill value is (a Python scalar).
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    if dtype is None:
        dtype = fill_value.dtype if is_array(fill_value) else dtypes.dtype_of(fill_value)
    else:  # with x64 off a 64-bit request is truncated, with JAX's warning
        dtype = dtypes.canonicalize_explicit_dtype(dtype, what.removeprefix("toolkit.numpy."))
    if is_array(fill_value):
        value = asarray(fill_value, dtype)
    elif type(fill_value) is int and np.dtype(dtype).kind in "iu":
        value = convert(fill_value, dtype)  # JAX's conversion: full_like(uint8_array, -2) holds 254
    else:
        value = np.asarray(fill_value, dtype)
    out = broadcast_to(value if is_array(value) else asarray(value), shape)
    if weak != bool(out.weak_type):
        out = lax_elementwise.convert_element_type(out, out.dtype, weak_type=weak)
    return out


# out_sharding= (a NamedSharding, or a PartitionSpec under toolkit.set_mesh): the created array's type on
# Explicit mesh axes, as in JAX; eagerly the array is placed so. Each names itself in errors as JAX's does.

def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (as ``jnp.full``); ``dtype`` defaults to ``fill_value``'s.

    ``out_sharding`` lays the result out (a ``Sharding`` or, under ``set_mesh``, a ``PartitionSpec``).
    """
    check_arraylike("full", fill_value)
    if device is not None:
        return placed(full(shape, fill_value, dtype), device, out_sharding, "jnp.full", in_trace=False)
    return _full(shape, fill_value, dtype, out_sharding, "full")


def zeros(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of ``shape`` filled with 0 (as ``jnp.zeros``); ``dtype`` defaults to the default float type
    (float32, float64 under x64). A negative or non-integer dimension raises.
    """
    if device is not None:
        return placed(zeros(shape, dtype), device, out_sharding, "jnp.zeros", in_trace=False)
    return _full(shape, 0, dtypes.default_float_dtype() if dtype is None else dtype, out_sharding, "toolkit.numpy.zeros")


def ones(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of ``shape`` filled with 1 (as ``jnp.ones``); ``dtype`` defaults to the default float type."""
    if device is not None:
        return placed(ones(shape, dtype), device, out_sharding, "jnp.ones", in_trace=False)
    return _full(shape, 1, dtypes.default_float_dtype() if dtype is None else dtype, out_sharding, "toolkit.numpy.ones")


def empty(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Same as :func:`zeros` (as ``jnp.empty``: XLA has no uninitialized arrays)."""
    return zeros(shape, dtype, device=device, out_sharding=out_sharding)


def _full_like(a: Any, fill_value: Any, dtype: Any, shape: Any, out_sharding: Any, what: str) -> Any:
    check_arraylike(what.removeprefix("toolkit.numpy."), a)  # a list is JAX's TypeError
    weak = dtype is None and dtypes.is_weakly_typed(a)  # JAX's lax.full_like: weak like a weak ``a``
    a = a if is_array(a) else np.asarray(a, dtypes.dtype_of(a))
    out = _full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype, out_sharding,
                what)
    if weak and out_sharding is None:
        out = lax_elementwise.convert_element_type(out, out.dtype, weak_type=True)
    return out


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Zeros with ``a``'s shape and dtype, or the ``shape``/``dtype`` given (as ``jnp.zeros_like``)."""
    if device is not None:
        return placed(zeros_like(a, dtype, shape), device, out_sharding, "zeros_like", in_trace=False)
    return _full_like(a, 0, dtype, shape, out_sharding, "toolkit.numpy.zeros_like")


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """Ones with ``a``'s shape and dtype, or the ``shape``/``dtype`` given (as ``jnp.ones_like``)."""
    if device is not None:
        return placed(ones_like(a, dtype, shape), device, out_sharding, "ones_like", in_trace=False)
    return _full_like(a, 1, dtype, shape, out_sharding, "toolkit.numpy.ones_like")


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
              out_sharding: Any = None) -> Any:
    """``fill_value`` with ``a``'s shape and dtype, or the ``shape``/``dtype`` given (as ``jnp.full_like``)."""
    # JAX's check: ``a`` itself only when it is not array-like by duck typing.
    check_arraylike("full_like", 0 if hasattr(a, "dtype") and hasattr(a, "shape") else a, fill_value)
    if device is not None:
        return placed(full_like(a, fill_value, dtype, shape), device, out_sharding, "full_like", in_trace=False)
    return _full_like(a, fill_value, dtype, shape, out_sharding, "full_like")


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """An array with ``prototype``'s shape and dtype (or those given), as ``jnp.empty_like``: zeros, since
    XLA arrays are always initialized; ``device`` (a device or sharding) places it."""
    check_arraylike("ones_like", prototype)  # JAX's name for empty_like's check
    out = _full_like(prototype, 0, dtype, shape, None, "toolkit.numpy.empty_like")
    return placed(out, device, None, "empty_like", in_trace=False)


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of ``a`` as an array (``a``'s values and dtype), as ``jnp.copy``; lists are refused as in JAX
    (``TypeError``) and ``order`` other than ``None``/``"K"``/``"C"`` is not supported."""
    check_arraylike("copy", a)
    if order not in (None, "K", "C", "A"):
        raise NotImplementedError(f"toolkit.numpy.copy: order={order!r} is not supported (arrays are row-major)")
    if is_array(a):
        return a.copy()
    return asarray(a)


#: The dtypes a DLPack tensor may have (JAX's ``jax.dlpack.SUPPORTED_DTYPES``); ``toolkit.dlpack`` exports them.
DLPACK_DTYPES: frozenset[np.dtype] = frozenset(np.dtype(d) for d in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
    dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128, np.bool_))

_DL_CPU = 1  # DLPack's DLDeviceType.kDLCPU


def _copy_needed_error(device: Any, source: Any) -> ValueError:
    return ValueError(f"Specified {device=} which requires a copy since the source device is {source!r}, however "
                      "copy=False. Set copy=True or copy=None to perform the requested operation.")


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array holding the values of ``x``, an object with ``__dlpack__`` and ``__dlpack_device__`` (numpy, torch,
    JAX, toolkit arrays on the CPU), as ``jnp.from_dlpack`` / ``jax.dlpack.from_dlpack``.

    The result is committed to ``device`` (a device, or a sharding over one device: that device) if given, else
    to the device the tensor reports (``__dlpack_device__``; JAX and toolkit arrays report the CPU device 0 whatever
    device they are on, as JAX's do). 64-bit values become 32-bit with x64 off, as JAX canonicalizes them.

    toolkit always copies the tensor into its own device buffer, so ``copy=False`` is a ``ValueError`` — JAX's
    own error when ``device`` differs from the tensor's device, and toolkit's (JAX would share the memory) when not.
    """
    if isinstance(device, Sharding):
        device_set = device.device_set
        if len(device_set) > 1:
            raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, but a Sharding "
                             f"with {len(device_set)} devices was provided.")
        (device,) = device_set
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    device_type, device_id = x.__dlpack_device__()
    if int(device_type) != _DL_CPU:
        raise TypeError(f"Array passed to from_dlpack is on unsupported device type (DLDeviceType: {device_type}, "
                        f"array: {x}); toolkit reads CPU tensors only")
    source = runtime_client.backend("cpu").device_from_local_hardware_id(int(device_id))
    moves = device is not None and device != source
    if moves and copy is False:
        raise _copy_needed_error(device, source)
    if moves and not isinstance(device, Device):
        # JAX's device_put refuses it with a ValueError (toolkit's device_put would say TypeError).
        raise ValueError(f"from_dlpack: device={device!r} must be a device or a toolkit.shard Sharding")
    if copy is False:
        raise ValueError("from_dlpack(copy=False): toolkit cannot wrap an external buffer without copying it "
                         "(it copies the tensor into its own device buffer); pass copy=None or copy=True")
    host = np.asarray(x) if isinstance(x, Array) else np.from_dlpack(x)
    if host.dtype not in DLPACK_DTYPES:
        raise TypeError(f"from_dlpack: dtype {host.dtype} is not supported by DLPack in toolkit")
    # device_put canonicalizes the dtype (float64 is float32 with x64 off) and commits the result, as JAX's
    # from_dlpack does to the tensor's own device or to ``device``.
    return device_put(host, device if moves else source)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device: Any = None,
           out_sharding: Any = None) -> Any:
    """Evenly spaced values; bounds must be concrete (not traced). ``out_sharding``: the result's type, as in JAX;
    ``device`` (a device or sharding) places it."""
    if device is not None:
        return placed(arange(start, stop, step, dtype), device, out_sharding, "jnp.arange")
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if is_array(v) and not hasattr(v, "_impl"):
            raise TypeError(f"arange: {name} must be a concrete value, not a traced one; the result's size must be "
                            "known when tracing")
    if out_sharding is not None:
        if any(shape_poly.is_symbolic_dim(v) for v in (start, stop, step)):
            raise NotImplementedError("arange: out_sharding with symbolic bounds; reshard the result instead")
        lo, hi = (0, start) if stop is None else (start, stop)
        size = len(np.arange(lo, hi, 1 if step is None else step))
        return _with_out_sharding(arange, {"start": start, "stop": stop, "step": step, "dtype": dtype},
                                  out_sharding, "toolkit.numpy.arange", (size,), "iota")
    if dtype is not None:
        dtype = dtypes.canonicalize_explicit_dtype(dtype, "arange")
    if any(shape_poly.is_symbolic_dim(v) for v in (start, stop, step)):
        start, stop = (0, start) if stop is None else (start, stop)
        return _symbolic_arange(start, stop, 1 if step is None else step, dtype or dtypes.default_int_dtype())
    start_name = "stop" if stop is None and step is None else "start"  # JAX's names: arange(n)'s n is the stop
    for name, v in ((start_name, start), ("stop", stop), ("step", step)):
        if v is not None and np.ndim(v) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
    given = [v for v in (start, stop, step) if v is not None]
    if dtype is None:  # JAX's: the arguments' type (np.int8(5) gives int8, a Python float the default float)
        dtype = dtypes.canonicalize_dtype(dtypes.result_type(*given))
    if any(np.iscomplexobj(v) for v in given):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported starting in JAX "
                         "v0.10.0.")
    start, stop, step = (np.asarray(v)[()] if is_array(v) else v for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    # JAX's arithmetic, so its values bit for bit: start + step * iota in the result type (float32 for a narrower
    # float), not numpy's float64 values rounded.
    if step is not None:
        working = dtypes.float32 if dtypes.is_float(dtype) and dtypes.finfo(dtype).bits < 32 else dtype
        size = max(0, int(np.ceil((stop - start) / step)))
        values = lax_elementwise.add(_scalar(start, working),
                                     lax_elementwise.mul(_scalar(step, working), lax_structural.iota(working, size)))
        return lax_elementwise.convert_element_type(values, dtype)
    if start == 0:
        return lax_structural.iota(dtype, max(0, int(np.ceil(stop))))
    size = max(0, int(np.ceil(stop - start)))
    return lax_elementwise.add(_scalar(start, dtype), lax_structural.iota(dtype, size))


def _scalar(value: Any, dtype: np.dtype) -> Any:
    """A concrete scalar converted as JAX's ``lax.convert_element_type`` converts it (a float to an int truncates),
    broadcast by the lax operation it meets."""
    return lax_elementwise.convert_element_type(np.asarray(value), dtype)


def _symbolic_arange(start: Any, stop: Any, step: Any, dtype: np.dtype) -> Any:
    """``arange`` with symbolic bounds (``arange(x.shape[0])``): an iota of symbolic length, scaled and shifted."""
    if not isinstance(step, (int, np.integer)) or step == 0:
        raise TypeError(f"arange: with symbolic bounds the step must be a nonzero Python int, got {step!r}")
    if not all(isinstance(v, (int, np.integer)) or shape_poly.is_symbolic_dim(v) for v in (start, stop)):
        raise TypeError(f"arange: symbolic bounds need integer start and stop, got {start!r} and {stop!r}")
    span = stop - start if step > 0 else start - stop
    length = shape_poly.max_dim((span + abs(step) - 1) // abs(step), 0)
    values = lax_structural.iota(dtype, length)
    if step != 1:
        values = ufuncs.multiply(values, np.asarray(step, dtype))
    if not (isinstance(start, (int, np.integer)) and start == 0):
        values = ufuncs.add(values, lax_structural.dimension_as_value(start, dtype) if shape_poly.is_symbolic_dim(start)
                        else np.asarray(start, dtype))
    return values


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *, device: Any = None) -> Any:
    """A 2-D array with ones on the ``k``-th diagonal (placed on ``device``, a device or sharding, if given)."""
    if device is not None:
        return placed(eye(N, M, k, dtype), device, None, "jnp.eye", in_trace=False)
    M = N if M is None else M
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "eye")
    rows = lax_structural.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax_structural.broadcasted_iota(dtypes.int32, (N, M), 1)
    offset = broadcast_to(asarray(np.asarray(k, np.int32)), (N, M))
    return lax_elementwise.convert_element_type(lax_elementwise.eq(lax_elementwise.add(rows, offset), cols), dtype)


def identity(n: int, dtype: Any = None) -> Any:
    """The ``n`` x ``n`` identity matrix (as ``jnp.identity``; same as ``eye(n, dtype=dtype)``)."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """An ``N`` x ``M`` (default ``N``) array with ones at and below diagonal ``k``, zeros above (as ``jnp.tri``)."""
    M = N if M is None else M
    # float32 by default even with x64 on: JAX's ("a strange default", its source says).
    dtype = dtypes.float32 if dtype is None else dtypes.canonicalize_explicit_dtype(dtype, "tri")
    rows = lax_structural.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax_structural.broadcasted_iota(dtypes.int32, (N, M), 1)
    offset = broadcast_to(asarray(np.asarray(k, np.int32)), (N, M))
    return lax_elementwise.convert_element_type(lax_elementwise.le(cols, lax_elementwise.add(rows, offset)), dtype)


# --- triangles and Vandermonde matrices -----------------------------------------------------------

def _triangle(m: Any, k: int, lower: bool) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'} needs an array of rank at least 2, got shape {m.shape}")
    rows, cols = m.shape[-2], m.shape[-1]
    r = lax_structural.broadcasted_iota(dtypes.int32, (rows, cols), 0)
    c = lax_structural.broadcasted_iota(dtypes.int32, (rows, cols), 1)
    offset = broadcast_to(np.asarray(k, np.int32), (rows, cols))
    keep = lax_elementwise.le(c, lax_elementwise.add(r, offset)) if lower else lax_elementwise.ge(c, lax_elementwise.add(r, offset))
    keep = broadcast_to(keep, m.shape)
    return lax_elementwise.select(keep, m, broadcast_to(np.zeros((), m.dtype), m.shape))


@compiled_whole(static_argnames=("k",))
def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the elements above diagonal ``k`` (of the last two axes) zeroed."""
    check_arraylike("tril", m)
    return _triangle(m, k, True)


@compiled_whole(static_argnames=("k",))
def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the elements below diagonal ``k`` (of the last two axes) zeroed."""
    check_arraylike("triu", m)
    return _triangle(m, k, False)


@compiled_whole(static_argnames=("N", "increasing"))
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x**0`` (reversed if ``increasing``)."""
    check_arraylike("vander", x)
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else int(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    # JAX's: the exponents in x's dtype (floats for a float x: pow, not repeated products, so the same bits and
    # the same derivative, NaN at 0 from x**0.0), one power of x against them.
    exponents = lax_structural.iota(x.dtype, N)
    if not increasing:
        exponents = lax_elementwise.sub(np.asarray(N - 1, x.dtype), exponents)
    return ufuncs.power(lax_structural.broadcast_in_dim(x, (x.shape[0], 1), (0,)),
                        lax_structural.broadcast_in_dim(exponents, (1, N), (1,)))
