"""What every ``toolkit.numpy`` function shares: turning inputs into arrays,
dtype promotion (Python scalars are weak) and numpy broadcasting; and
``expand_dims``, ``stack`` and the joining under ``concatenate``, which
``asarray`` needs for nested lists of arrays (``shapes`` re-exports them)."""

from __future__ import annotations

import functools
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence, SupportsIndex, TypeVar

import numpy as np

from toolkit.array import Array, _put_one, device_put, put_host_operand
from toolkit.core import dtypes, shape_poly, sharding_types, tracing
from toolkit.core.avals import abstract_token
from toolkit.core.compiled_whole import compiled_whole
from toolkit.core.config import cache_state, flag_value, host_to_device_unguarded
from toolkit.core.tracing import Tracer
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import structural as lax_structural
from toolkit.runtime.client import Device
from toolkit.shard import Sharding, SingleDeviceSharding
from toolkit.shard.explicit import canonicalize_out_sharding
from toolkit.shard.mesh import OPEN_CONTEXTS

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

ArrayLike = Any


def is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, Array))


def _is_symbolic(x: Any) -> bool:
    return getattr(x, "_is_symbolic_dim", False)


def typed(x: Any) -> tuple[np.dtype, bool]:
    """``(dtype, weak)`` of an operand."""
    if _is_symbolic(x):
        return dtypes.default_int_dtype(), True  # a symbolic dimension acts like a Python int
    if dtypes.is_python_scalar(x):
        return dtypes.dtype_of(x), type(x) is not bool  # a bool is never weakly typed (JAX)
    if is_array(x):
        return x.dtype, x.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize_dtype(x.dtype), False
    if isinstance(x, (list, tuple)):
        return typed(asarray(x))
    raise TypeError(f"a value of type {type(x).__name__} is not array-like: {x!r}")


def placed(out: Any, device: Any, out_sharding: Any, what: str, *, in_trace: bool = True) -> Any:
    """JAX's ``device=``/``out_sharding=`` of a creation function: ``out`` put there (``device_put``: committed).

    Inside a trace: with ``in_trace``, a traced ``device_put`` to the device's sharding, which places the
    computation as JAX's ``array``/``arange``/``astype`` do (they make the device a ``SingleDeviceSharding``
    first); without, nothing, as JAX's ``full``/``zeros``/``eye`` there.
    """
    if device is not None and out_sharding is not None:
        raise ValueError(f"Only one of `device` or `out_sharding` can be set. Got device={device!r} and "
                         f"out_sharding={out_sharding!r}")
    if out_sharding is not None:
        device = canonicalize_out_sharding(out_sharding, what)
    elif device is not None and not isinstance(device, (Device, Sharding)):
        raise ValueError(f"{what}: device={device!r} must be a device or a toolkit.shard Sharding")  # JAX: ValueError
    if device is None:
        return out
    if isinstance(out, Tracer):
        if not in_trace:
            return out
        if isinstance(device, Device):
            device = SingleDeviceSharding(device)
    return device_put(out, device)


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None, device: Any = None,
            out_sharding: Any = None) -> Any:
    """``a`` as a toolkit array (a tracer inside ``jit``), converted to ``dtype`` if given.

    As ``jnp.asarray``: ``copy=True`` gives a new array even for a toolkit array (``None``/``False``: only when
    needed); ``order`` other than ``None``/``"K"`` is JAX's ``NotImplementedError``; ``device`` (a device or
    sharding) or ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``set_mesh``) places the result.
    """
    x = a  # JAX's parameter name is ``a``
    if type(x) is np.ndarray and dtype is None and x.dtype.kind != "O" and not tracing._state.builders \
            and copy is None and order is None and device is None and out_sharding is None:
        return put_host_operand(x)  # what the general path below does for it, without its questions
    if device is not None or out_sharding is not None:
        return placed(asarray(x, dtype, order, copy=copy), device, out_sharding, "jnp.asarray")
    if copy is not None or order is not None:
        if order is not None and order != "K":
            raise NotImplementedError("Only implemented for order='K'")
        out = asarray(x, dtype)
        return out.copy() if copy and out is x else out
    if _is_symbolic(x):
        return lax_structural.dimension_as_value(x, dtype)
    if is_array(x):
        if dtype is None:
            return x
        dtype = dtypes.canonicalize_explicit_dtype(dtype, "asarray")
        return x if x.dtype == dtype else lax_elementwise.convert_element_type(x, dtype)
    if isinstance(x, (list, tuple)) and any(is_array(e) for e in _flat(x)):
        return _stack_nested(x, dtype)
    if dtypes.is_python_scalar(x) and dtype is None:
        if type(x) is int:
            _check_python_int(x, dtypes.default_int_dtype(), "Python int {} too large to convert to {}")
        value = np.asarray(x, dtypes.dtype_of(x))
        return _to_device_or_constant(value, weak=type(x) is not bool)  # a bool is never weakly typed (JAX)
    if dtype is None and isinstance(x, (list, tuple)) and any(isinstance(e, (np.ndarray, np.generic)) for e in _flat(x)):
        # JAX types a list holding numpy values by its own lattice, not numpy's: [float16 array, int32 array] is
        # float16 (numpy: float32), a Python float beside a float16 stays float16.
        dtype = dtypes.canonicalize_dtype(dtypes.result_type(*_flat(x)))
    value = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtypes.canonicalize_explicit_dtype(dtype, "asarray"))
    if dtype is None and isinstance(x, (list, tuple)) and value.dtype in (np.int64, np.uint64, object):
        # Python ints in lists take the default int type; one outside it is an OverflowError, as in JAX
        # (numpy would infer int64/uint64/object and the narrowing below would wrap silently).
        info = np.iinfo(dtypes.default_int_dtype())
        if value.dtype != np.int64 or value.size and (value.min() < info.min or value.max() > info.max):
            for e in _flat(x):
                if type(e) is int:
                    _check_python_int(e, dtypes.default_int_dtype(), "Python integer {} out of bounds for {}")
    if value.dtype == object:
        raise TypeError(f"cannot convert {type(x).__name__} to an array: {x!r}")
    if dtype is None and not isinstance(x, (np.ndarray, np.generic)):
        # Python numbers in lists: the default types (32-bit with x64 off, 64-bit with it on).
        if value.dtype == np.float64:
            value = value.astype(dtypes.default_float_dtype())
        elif value.dtype == np.int64:
            value = value.astype(dtypes.default_int_dtype())
        elif value.dtype == np.complex128:
            value = value.astype(dtypes.default_complex_dtype())
    canonical = dtypes.canonicalize_dtype(value.dtype)  # numpy's 64-bit types are 32-bit with x64 off (JAX)
    if canonical != value.dtype:
        value = value.astype(canonical)
    return _to_device_or_constant(value, weak=False)


#: The types :func:`check_arraylike` has accepted, filled as it goes: on the eager hot path (``x + 1``) the
#: check is one set lookup per argument (callers may test ``type(x) in ARRAYLIKE_TYPES`` before calling it).
ARRAYLIKE_TYPES: set[type] = {bool, int, float, complex, np.ndarray}


def check_arraylike(name: str, *args: Any) -> None:
    """JAX's ``check_arraylike``: functions that take arrays refuse lists, tuples and other non-arrays with a
    ``TypeError`` naming the function and the argument's position (``toolkit.numpy.asarray`` converts lists)."""
    for position, x in enumerate(args):
        if type(x) in ARRAYLIKE_TYPES:
            continue
        if isinstance(x, Tracer):
            # A traced token (jit(f)(toolkit.lax.create_token())) is a tracer with no array in it. Checked on every
            # call (tracer types are never added to the set): tracing, not the eager hot path.
            if x.aval is abstract_token:
                raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position "
                                f"{position}: a token, which holds no data.")
            continue
        if not _arraylike_value(x):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position {position}.")
        ARRAYLIKE_TYPES.add(type(x))


def _arraylike_value(x: Any) -> bool:
    return (is_array(x) or isinstance(x, (np.ndarray, np.generic)) or dtypes.is_python_scalar(x) or _is_symbolic(x)
            or hasattr(x, "__jax_array__") or (hasattr(x, "shape") and hasattr(x, "dtype")))


def is_arraylike(x: Any) -> bool:
    """Whether ``x`` is an operand :func:`check_arraylike` takes (a traced token too: the operation refuses it)."""
    return type(x) in ARRAYLIKE_TYPES or isinstance(x, Tracer) or _arraylike_value(x)


def _check_python_int(value: int, dtype: np.dtype, message: str) -> None:
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError(message.format(value, dtype.name))


def _flat(x: Any):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _stack_nested(x: Any, dtype: Any) -> Any:
    return stack([asarray(e, dtype) if not isinstance(e, (list, tuple)) else _stack_nested(e, dtype) for e in x])


def _to_device_or_constant(value: np.ndarray, weak: bool) -> Any:
    builder = tracing.current_builder()
    if builder is not None:
        if weak:
            return lax_elementwise.convert_element_type(value, value.dtype, weak_type=True)
        return builder.to_tracer(value)  # a constant of the program being traced
    out = _put_one(value, None)
    if weak:
        out = Array(out._impl, out.aval.update(weak_type=True), out._sharding)
    return out


def result_dtype(*args: Any) -> tuple[np.dtype, bool]:
    return dtypes.result_type_with_weak(*[typed(a) for a in args])


def convert(x: Any, dtype: DTypeLike, weak: bool = False) -> Any:
    """``x`` as an operand of ``dtype`` for a primitive; scalars stay inline literals."""
    if _is_symbolic(x):
        x = lax_structural.dimension_as_value(x)
    if type(x) is int and np.dtype(dtype).kind in "iu":
        # JAX's meaning: a Python int must fit the default int type (int32, or int64 with x64 on), and then
        # converts as that type does, wrapping: uint8 + 300 is uint8 + 44, uint8 + -1 is uint8 + 255.
        default = dtypes.default_int_dtype()
        _check_python_int(x, default, "Python integer {} out of bounds for {}")
        x = np.asarray(x, default).astype(dtype)
    if dtypes.is_python_scalar(x) or isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return np.asarray(x, dtype) if not weak else lax_elementwise.convert_element_type(np.asarray(x, dtype), dtype, True)
    if isinstance(x, (list, tuple)):
        x = asarray(x)  # as JAX's asarray: a sequence of traced scalars is stacked (x.at[0:2].set((a, b)) in jit)
    elif isinstance(x, np.ndarray):
        x = asarray(x)
    if x.dtype != dtype or x.weak_type != weak:
        return lax_elementwise.convert_element_type(x, dtype, weak_type=weak)
    return x


def shape_of(x: Any) -> tuple:
    if is_array(x) or isinstance(x, np.ndarray):
        return tuple(x.shape)
    return np.shape(x)


def broadcast_shapes(*shapes: Sequence[Any]) -> tuple:
    """numpy's broadcasting of shapes; a ``ValueError`` names the incompatible sizes."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(ndim):
        size = 1
        for s in shapes:
            k = axis - (ndim - len(s))
            if k < 0:
                continue
            d = s[k]
            if d == 1:
                continue
            if size == 1:
                size = d
            elif d != size:
                shape_poly.check_same_scope(size, d, f"when broadcasting shapes {tuple(tuple(x) for x in shapes)}")
                raise ValueError(f"shapes {tuple(tuple(x) for x in shapes)} cannot be broadcast together: "
                                 f"sizes {size} and {d} differ at dimension {axis}")
        result.append(size)
    return tuple(result)


def broadcast_to(x: Any, shape: Sequence[Any]) -> Any:
    """``x`` broadcast to ``shape`` (as ``jnp.broadcast_to``); a shape ``x`` cannot broadcast to raises
    ``ValueError``.
    """
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return lax_structural.broadcast_in_dim(x, tuple(shape), ())  # the scalar stays an inline literal
    x = asarray(x) if not is_array(x) else x
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    if len(shape) < x.ndim:
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to the smaller rank shape {shape}")
    broadcast_shapes(x.shape, shape)
    lead = len(shape) - x.ndim
    # Keep the operand's 1-sized dimensions mapped: broadcast_in_dim expands them.
    if any(x.shape[i] != shape[lead + i] and x.shape[i] != 1 for i in range(x.ndim)):
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    return lax_structural.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def check_rank_promotion(fun_name: str, shapes: Sequence[Any]) -> None:
    """Warn or raise for implicit rank promotion of ``shapes`` as ``jax_numpy_rank_promotion`` says (JAX's text)."""
    level = flag_value("jax_numpy_rank_promotion")
    if level == "allow":
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if level == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes {listed}. Set the "
                      "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
                      "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.", stacklevel=4)
        return
    raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes {listed} and with the "
                     "config option jax_numpy_rank_promotion='raise'. For more information, see "
                     "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_inexact(*args: Any) -> list[Any]:
    """JAX's ``promote_args_inexact`` without the broadcast: operands converted to their common dtype, the
    default float when that is not floating, all weakly typed when the promotion's result is (int32 with a Python
    float is a weak float, as in JAX's lattice)."""
    dtype, weak = result_dtype(*args)
    dtype = dtypes.to_inexact_dtype(dtype)
    return [convert(a, dtype, weak) for a in args]


def promote_and_broadcast(*args: Any, fun_name: str = "") -> list[Any]:
    """Operands converted to their common dtype and broadcast to their common shape.

    Broadcasting operands of different non-zero ranks warns or raises as ``jax_numpy_rank_promotion`` says
    (``toolkit.numpy_rank_promotion``), with JAX's messages.
    """
    if len(args) == 2:
        x, y = args
        if type(x) is Array and type(y) is Array:
            ax, ay = x.aval, y.aval
            # One strong type and one shape (``x + y`` in a loop): nothing to convert or broadcast.
            if ax.dtype == ay.dtype and ax.shape == ay.shape and not ax.weak_type and not ay.weak_type:
                return [x, y]
        operands = _array_and_scalar(x, y)
        if operands is None and (type(x) is np.ndarray or type(y) is np.ndarray):
            operands = _same_typed_host_arrays(x, y)
        if operands is not None:
            return operands
    return _promote_and_broadcast(args, fun_name)


def _same_typed_host_arrays(x: Any, y: Any) -> list[Any] | None:
    """``promote_and_broadcast(x, y)`` for numpy arrays (not 0-d: those stay host literals) and toolkit Arrays
    of one strong dtype (a numpy array's canonical one) and one shape, outside any trace: the numpy ones are only
    put on the device (``x + np_array`` in a loop). None otherwise: the general path decides."""
    if tracing._state.builders:
        return None  # inside a trace a numpy value is a constant of the program
    dtype = shape = None
    for operand in (x, y):
        kind = type(operand)
        if kind is Array:
            aval = operand.aval
            if aval.weak_type or aval.sharding is not None:
                return None
            operand_dtype, operand_shape = aval.dtype, aval.shape
        elif kind is np.ndarray and operand.ndim and operand.dtype.kind != "O":
            operand_dtype, operand_shape = dtypes.canonicalize_dtype(operand.dtype), operand.shape
        else:
            return None
        if dtype is None:
            dtype, shape = operand_dtype, operand_shape
        elif operand_dtype != dtype or operand_shape != shape:
            return None
    return [put_host_operand(x) if type(x) is np.ndarray else x, put_host_operand(y) if type(y) is np.ndarray else y]


#: ``(array dtype, weak, Python scalar type, cache_state())`` -> the ``(dtype, weak)`` they promote to.
_SCALAR_PROMOTIONS: dict[tuple, tuple[np.dtype, bool]] = {}
#: ``(scalar type, value, dtype, weak, shape, cache_state())`` -> the scalar as the device operand it becomes
#: (converted, weakly typed as promoted, broadcast): ``x + 1`` in a loop looks it up instead of running the
#: conversion and the broadcast again. Small ones only (:data:`SCALAR_OPERAND_MAX_BYTES`), 1,024 at most.
_SCALAR_OPERANDS: dict[tuple, Any] = {}
#: The most bytes of a kept scalar operand (as ``toolkit.dispatch`` keeps constants).
SCALAR_OPERAND_MAX_BYTES = 4096


def _array_and_scalar(x: Any, y: Any) -> list[Any] | None:
    """``promote_and_broadcast(x, y)`` for a toolkit ``Array`` and a Python int or float outside any trace,
    when the array already has the promoted type (``x + 1`` on float32): from two dict lookups. None otherwise.

    The keys hold everything the general path's result depends on: the array's dtype, weak type and shape, the
    scalar's type and exact value (a float by its bits: ``0.0`` and ``-0.0`` differ), and the flags compiled
    results depend on (x64, the promotion mode, the default device: ``cache_state()``).
    """
    kind_x, kind_y = type(x), type(y)
    if kind_x is Array and (kind_y is float or kind_y is int):
        array, scalar, kind = x, y, kind_y
    elif kind_y is Array and (kind_x is float or kind_x is int):
        array, scalar, kind = y, x, kind_x
    else:
        return None
    aval = array.aval
    if aval.sharding is not None or tracing._state.builders or sharding_types._overrides or OPEN_CONTEXTS[0]:
        # types with shardings, out_sharding= overrides, traces and mesh contexts (under set_mesh the operand is
        # placed over the mesh, and must not answer outside it): the general path
        return None
    if not host_to_device_unguarded():
        return None  # a guarded scalar is uploaded (and checked, or logged) on every use, as JAX's is
    dtype, weak = aval.dtype, aval.weak_type
    state = cache_state()
    promoted = _SCALAR_PROMOTIONS.get((dtype, weak, kind, state))
    if promoted is None:
        promoted = dtypes.result_type_with_weak((dtype, weak), typed(scalar))  # raises as the general path does
        if len(_SCALAR_PROMOTIONS) >= 1024:
            _SCALAR_PROMOTIONS.clear()
        _SCALAR_PROMOTIONS[(dtype, weak, kind, state)] = promoted
    if promoted[0] != dtype or promoted[1] != weak:
        return None  # the array converts too
    if kind is float:
        if scalar != scalar:
            return None  # NaN: its payload is not in the key
        value: Any = scalar.hex()
    else:
        value = scalar
    key = (kind, value, dtype, weak, aval.shape, state)
    operand = _SCALAR_OPERANDS.get(key)
    if operand is None or operand._impl.is_deleted():  # deleted: delete() or donation of a returned operand
        out = _promote_and_broadcast((x, y), "")
        operand = out[1] if array is x else out[0]
        if type(operand) is Array and aval.size * dtype.itemsize <= SCALAR_OPERAND_MAX_BYTES:
            if len(_SCALAR_OPERANDS) >= 1024:
                _SCALAR_OPERANDS.clear()
            _SCALAR_OPERANDS[key] = operand
        return out
    return [array, operand] if array is x else [operand, array]


def eager_unsharded(x: Any) -> bool:
    """``x`` (an ``Array``, numpy array or Python scalar) is an operand of an eager call outside any trace, without a
    sharding in its type and without ``out_sharding=`` overrides: a call a ufunc may run as one compiled program
    (as JAX's jitted ufuncs run) when binding its operations one by one would run several executables."""
    if tracing._state.builders or sharding_types._overrides:
        return False
    kind = type(x)
    return (kind is Array and x.aval.sharding is None) or (kind is np.ndarray and x.dtype.kind != "O") \
        or kind in _SCALAR_KINDS


def jitted_when_eager(*, operands: int, static_argnames: Sequence[str] = ()) -> Callable[[F], F]:
    """Decorate a function JAX defines as ``jit(..., inline=True)`` (its ufuncs, ``matmul``, ``dot``): called
    outside every trace with its first ``operands`` (1 or 2) arguments :func:`eager_unsharded` and no
    ``out_sharding``, it runs as one compiled program (``compiled_whole``, with JAX's static arguments), as JAX's
    runs; otherwise, and inside traces (where ``inline`` inlines it), the function itself binds its operations.
    The jit fast path answers a repeated eager call sooner than binding even one primitive does, and a conversion,
    broadcast or several operations are one executable, not one each (see docs/performance.md)."""
    if operands not in (1, 2):
        raise ValueError(f"jitted_when_eager: operands must be 1 or 2, not {operands}")

    def decorate(fun: F) -> F:
        whole = compiled_whole(static_argnames=static_argnames)(fun)
        compiled = whole.outside_traces  # type: ignore[attr-defined]

        def general(args: tuple, kwargs: dict) -> Any:
            if len(args) >= operands and kwargs.get("out_sharding") is None \
                    and all([eager_unsharded(a) for a in args[:operands]]):
                return whole(*args, **kwargs)  # (whole checks the other arguments for tracers)
            return fun(*args, **kwargs)

        # The operands alone (every eager x + y and sin(x)) are tested first, spelled out: operands of those types
        # outside traces hold no tracer, so the compiled call is made without compiled_whole's checks.
        if operands == 1:
            @functools.wraps(fun)
            def call(*args: Any, **kwargs: Any) -> Any:
                if len(args) == 1 and not kwargs and eager_unsharded(args[0]):
                    return compiled(*args)
                return general(args, kwargs)
        else:
            @functools.wraps(fun)
            def call(*args: Any, **kwargs: Any) -> Any:
                if len(args) == 2 and not kwargs and eager_unsharded(args[0]) and eager_unsharded(args[1]):
                    return compiled(*args)
                return general(args, kwargs)
        return call  # type: ignore[return-value]
    return decorate


def divides_by_a_scalar(x: Any, y: Any) -> bool:
    """``x / y`` outside any trace with ``x`` an unsharded array (an Array or numpy array, not 0-d) and ``y`` a
    scalar (Python's, numpy's, a 0-d numpy array). JAX's jitted ``true_divide`` broadcasts such a divisor inside
    its program, and XLA turns ``x / broadcast(y)`` into ``x * broadcast(1 / y)``, which rounds differently from a
    division of two arrays (1 ulp on about a third of float32 quotients): such calls run as one program here
    too, so an eager ``x / 3`` is JAX's (and toolkit's jitted one) bit for bit."""
    if tracing._state.builders or sharding_types._overrides:
        return False
    kind_x = type(x)
    if kind_x is Array:
        if x.aval.sharding is not None or not x.aval.shape:
            return False
    elif kind_x is not np.ndarray or not x.ndim:
        return False
    kind_y = type(y)
    return kind_y in _SCALAR_KINDS or isinstance(y, np.generic) or (kind_y is np.ndarray and not y.ndim)


#: Python's scalar types: weakly typed operands of the eager ufuncs and of a division.
_SCALAR_KINDS = frozenset({bool, int, float, complex})


def promote_numeric(x: Any, y: Any) -> tuple[Any, Any]:
    """Promoted operands, booleans as int32 (JAX's ``promote_args_numeric``, x64 or not: ``True // False`` is an
    int division)."""
    if not dtypes.is_bool(x.dtype if hasattr(x, "dtype") else dtypes.dtype_of(x)):
        return x, y
    dtype = dtypes.int32  # JAX's to_numeric_dtype: int32, x64 or not
    return convert(x, dtype, getattr(x, "weak_type", False)), convert(y, dtype, getattr(y, "weak_type", False))


def _promote_and_broadcast(args: Sequence[Any], fun_name: str) -> list[Any]:
    dtype, weak = result_dtype(*args)
    shapes = [shape_of(a) for a in args]
    if len({len(s) for s in shapes if len(s)}) > 1:
        check_rank_promotion(fun_name, shapes)
    shape = broadcast_shapes(*shapes)
    out = []
    for a, s in zip(args, shapes):
        a = convert(a, dtype, weak)
        if tuple(s) != shape:
            a = broadcast_to(a, shape)
        out.append(a)
    return out


def canonical_axis(axis: SupportsIndex, ndim: int, name: str = "axis") -> int:
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{name} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


def canonical_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (canonical_axis(axis, ndim),)
    axes = tuple(canonical_axis(a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in {tuple(axis)}")
    return axes


# --- joining (asarray stacks nested lists of arrays) ----------------------------------------------

def expand_dims(a: Any, axis: Any) -> Any:
    """``a`` with size-1 axes inserted at the positions ``axis`` (an int or a tuple) of the result, as
    ``jnp.expand_dims``; positions out of range or repeated raise ``ValueError``.
    """
    a = asarray(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    positions = sorted(canonical_axis(x, ndim) for x in axes)
    shape = list(a.shape)
    for x in positions:
        shape.insert(x, 1)
    return lax_structural.reshape(a, tuple(shape))


def join(arrays: Sequence[Any], axis: int) -> Any:
    """``concatenate`` of one or more arrays along the existing ``axis`` (an int): promoted to their common
    dtype, ranks checked."""
    dtype, weak = result_dtype(*arrays)
    arrays = [asarray(convert(a, dtype, weak)) for a in arrays]
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, a in enumerate(arrays):
        if a.ndim != ndim:
            raise ValueError(f"concatenate: array {i} has rank {a.ndim}, but array 0 has rank {ndim}")
    axis = canonical_axis(axis, ndim)
    if len(arrays) == 1:
        return arrays[0]
    return lax_structural.concatenate(arrays, axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays along a new axis."""
    if not len(arrays):
        raise ValueError("stack needs at least one array")
    arrays = [asarray(a) for a in arrays]
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise ValueError(f"stack: all arrays need the same shape; array 0 has {shape}, array {i} has {a.shape}")
    axis = canonical_axis(axis, len(shape) + 1)
    return join([expand_dims(a, axis) for a in arrays], axis)
