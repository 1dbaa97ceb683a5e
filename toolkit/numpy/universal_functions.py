"""JAX's ``jnp.ufunc`` class, ``frompyfunc``, and the fourteen ufunc objects ``toolkit.numpy`` exports.

As in JAX 0.10, ``add``, ``subtract``, ``multiply``, ``maximum``, ``minimum``, ``bitwise_and``/``or``/``xor``,
``logical_and``/``or``/``xor``, ``logaddexp``, ``logaddexp2`` (binary) and ``negative`` (unary) are
:class:`ufunc` objects: called, they are :mod:`toolkit.numpy.ufuncs`'s functions; their methods are numpy's::

    tnp.add.reduce(x, axis=0)          # tnp.sum(x, axis=0)
    tnp.multiply.accumulate(x)         # tnp.cumprod(x, axis=0)
    tnp.add.at(x, idx, v, inplace=False)   # x.at[idx].add(v): a new array (``inplace=True`` is refused, as JAX)
    tnp.add.reduceat(x, tnp.asarray([0, 4]))
    tnp.multiply.outer(a, b)           # shape a.shape + b.shape
    tnp.frompyfunc(lambda a, b: 2 * a + b, 2, 1, identity=0).reduce(x)

A method has a direct implementation where JAX has one (``add.reduce`` is ``sum``, ``maximum.reduce`` the
``max`` reduction, ``add.at`` a scatter-add, ``logaddexp.reduce`` a stable log-sum-exp); the others are
JAX's loops over the function (``subtract.reduce`` a ``fori_loop``, ``accumulate`` a ``scan``, ``at`` a
``scan`` of gather-apply-scatter steps, so repeated indices apply again), and so give JAX's values.
Each method compiles whole when called eagerly (JAX jits them) with JAX's static arguments. Differences from
JAX: ``at`` takes slices in ``indices`` (JAX documents them, but its jit refuses a ``slice`` argument).
"""

from __future__ import annotations

import inspect
import operator
from typing import Any, Callable

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import autodiff as lax_autodiff
from toolkit.lax import control_flow as lax_control_flow
from toolkit.lax import elementwise as lax_elementwise
from toolkit.numpy import reductions, shapes, ufuncs
from toolkit.numpy._core import asarray, canonical_axis, check_arraylike, is_array
from toolkit.numpy.creation import full, zeros_like
from toolkit.numpy.take import take
from toolkit.numpy.vectorization import vectorize

_AT_INPLACE = """\
Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like
np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.
>>> arr = jnp.add.at(arr, ind, val, inplace=False)
"""


class ufunc:  # noqa: N801 - numpy's and JAX's name
    """A universal function: elementwise ``func`` of ``nin`` arrays with numpy's ``reduce``, ``accumulate``,
    ``at``, ``reduceat`` and ``outer`` (JAX's ``jnp.ufunc``; build one with :func:`frompyfunc`).

    ``call``/``reduce``/``accumulate``/``at``/``reduceat``: direct implementations of those operations; without
    one, a method loops over ``func`` as JAX's does. Equality and hashing look at ``func``, the name, the
    identity and the arity only, so a ufunc can be a static argument of ``jit``.
    """

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None, call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None, accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None, reduceat: Callable[..., Any] | None = None) -> None:
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        # Read-only, as JAX's: a ufunc marked static must not change under the cache that keyed it.
        self.__props = (func, operator.index(nin), operator.index(nout), operator.index(nargs or nin), identity)
        self._call = call or self._compiled(self._call_vectorized, "call", ())
        self._reduce = self._compiled(reduce or self._reduce_via_loop, "reduce", ("axis", "dtype", "keepdims"))
        self._accumulate = self._compiled(accumulate or self._accumulate_via_scan, "accumulate", ("axis", "dtype"))
        self._at_impl = at or self._at_via_scan
        self._at = self._compiled(self._at_impl, "at", ())
        self._reduceat = self._compiled(reduceat or self._reduceat_via_loop, "reduceat", ("axis", "dtype"))
        self._outer = self._compiled(self._outer_impl, "outer", ())

    def _compiled(self, fn: Callable[..., Any], method: str, static: tuple[str, ...]) -> Callable[..., Any]:
        """``fn`` compiled whole when called eagerly, its jit named after the method (as JAX's)."""
        def method_fn(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)
        method_fn.__name__ = method_fn.__qualname__ = method
        # The static names are read off this signature.
        method_fn.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return compiled_whole(static_argnames=static)(method_fn)

    @property
    def _func(self) -> Callable[..., Any]:
        return self.__props[0]

    @property
    def nin(self) -> int:
        """How many arrays the function takes."""
        return self.__props[1]

    @property
    def nout(self) -> int:
        """How many arrays the function returns."""
        return self.__props[2]

    @property
    def nargs(self) -> int:
        """How many arguments the function takes (``nin`` unless given)."""
        return self.__props[3]

    @property
    def identity(self) -> Any:
        """The value ``reduce`` starts from when ``initial`` is not given (None: the function has none)."""
        return self.__props[4]

    def __hash__(self) -> int:
        return hash((self.__name__, *self.__props))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and (self.__name__, *self.__props) == (other.__name__, *other.__props)

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        """``func`` applied elementwise to the broadcast ``args``; ``out`` and ``where`` are refused (as JAX)."""
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return self._call(*args)

    def _call_vectorized(self, *args: Any) -> Any:
        check_arraylike(self.__name__, *args)
        return vectorize(self._func)(*args)

    def _binary_only(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, *operands: Any) -> np.dtype:
        """The dtype ``func`` gives scalars of the operands' dtypes and weak types (JAX's ``eval_shape`` of it:
        ``float16`` and a Python float give ``float16``)."""
        ones = []
        for x in operands:
            x = x if is_array(x) else asarray(x)
            ones.append(lax_elementwise.convert_element_type(np.ones((), x.dtype), x.dtype, weak_type=x.weak_type))
        return self._func(*ones).dtype  # traced where it matters (compiled whole); dead code in the program

    # --- reduce ---------------------------------------------------------------------------------------------

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        """The reduction of ``a`` over ``axis`` (default 0; ``None``: all) by the binary function (numpy's
        ``ufunc.reduce``): ``add.reduce`` is ``sum``, ``logical_and.reduce`` is ``all``. ``initial`` starts it;
        ``where`` (boolean) leaves elements out and needs ``initial`` when the function has no identity."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, so to use a "
                                 "where mask one has to specify 'initial'.")
            where_dtype = where.dtype if hasattr(where, "dtype") else dtypes.dtype_of(where)
            if where_dtype != dtypes.bool_:
                raise ValueError(f"where argument must have dtype=bool; got dtype={where_dtype}")
        return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    def _reduce_via_loop(self, arr: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
                         initial: Any = None, where: Any = None) -> Any:
        arr = asarray(arr)
        if initial is None:
            initial = self.identity
        dtype = self._result_dtype(arr, arr) if dtype is None else dtypes.canonicalize_explicit_dtype(
            dtype, f"{self.__name__}.reduce")
        if where is not None:
            where = shapes.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape: tuple = (1,) * arr.ndim if keepdims else ()
            arr = shapes.ravel(arr)
            where = None if where is None else shapes.ravel(where)
            axis = 0
        else:
            axis = canonical_axis(axis, arr.ndim)
            final_shape = (*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims else \
                (*arr.shape[:axis], *arr.shape[axis + 1:])
        if axis != 0:
            arr = shapes.moveaxis(arr, axis, 0)
            where = None if where is None else shapes.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            return full(final_shape, initial, dtype)

        def body(i: Any, val: Any) -> Any:
            new = self(val, arr[i].astype(dtype))
            return new if where is None else ufuncs.where(where[i], new, val)

        start, first = (1, arr[0]) if initial is None else (0, initial)
        init = shapes.broadcast_to(asarray(first).astype(dtype), arr.shape[1:])
        result = lax_control_flow.fori_loop(start, arr.shape[0], body, init)
        return shapes.reshape(result, final_shape) if keepdims else result

    # --- accumulate -----------------------------------------------------------------------------------------

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running reduction of ``a`` along ``axis`` (numpy's ``ufunc.accumulate``): ``add.accumulate``
        is ``cumsum``, ``multiply.accumulate`` is ``cumprod``."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        return self._accumulate(a, axis=axis, dtype=dtype)

    def _accumulate_via_scan(self, arr: Any, axis: int = 0, dtype: Any = None) -> Any:
        check_arraylike(f"{self.__name__}.accumulate", arr)
        arr = asarray(arr)
        dtype = self._result_dtype(arr, arr) if dtype is None else dtypes.canonicalize_explicit_dtype(
            dtype, f"{self.__name__}.accumulate")
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = canonical_axis(axis, arr.ndim)
        if arr.size == 0:
            return full(arr.shape, 0, dtype)
        arr = shapes.moveaxis(arr, axis, 0)

        def step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], Any]:
            i, x = carry
            y = ufuncs.where(i == 0, arr[0].astype(dtype), self(x.astype(dtype), arr[i].astype(dtype)))
            return (i + 1, y), y

        _, result = lax_control_flow.scan(step, (0, arr[0].astype(dtype)), None, length=arr.shape[0])
        return shapes.moveaxis(result, 0, axis)

    # --- at -------------------------------------------------------------------------------------------------

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with the function applied at ``indices`` (numpy's ``ufunc.at``): ``add.at(a, i, b)`` is
        ``a.at[i].add(b)``, repeated indices applying again. Arrays do not change in place, so this returns the
        new array and needs ``inplace=False`` to say so (a ``NotImplementedError`` otherwise, as JAX's)."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        args = (a, indices) if b is None else (a, indices, b)
        # A slice cannot be a traced argument: with one, the operations run as they come.
        slices = isinstance(indices, slice) or (
            isinstance(indices, tuple) and any(isinstance(i, slice) for i in indices))
        return self._at_impl(*args) if slices else self._at(*args)

    def _at_via_scan(self, a: Any, indices: Any, *args: Any) -> Any:
        check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = self._result_dtype(a, *args)
        a = asarray(a).astype(dtype)
        args = tuple(asarray(arg).astype(dtype) for arg in args)
        if isinstance(indices, list):
            raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; use "
                            "`arr[array(seq)]` instead of `arr[seq]`.")
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        index_shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
        shape = index_shapes and np.broadcast_shapes(*index_shapes)
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = int(np.prod(shape))
        if args:
            arg = shapes.broadcast_to(args[0], (*shape, *args[0].shape[len(shape):]))
            args = (shapes.reshape(arg, (count, *args[0].shape[len(shape):])),)
        flat = [i if isinstance(i, slice) else shapes.ravel(shapes.broadcast_to(i, shape)) for i in indices]

        def step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], None]:
            i, x = carry
            idx = tuple(ind if isinstance(ind, slice) else ind[i] for ind in flat)
            x = x.at[idx].set(self(x.at[idx].get(), *(arg[i] for arg in args)))
            return (i + 1, x), None

        (_, result), _ = lax_control_flow.scan(step, (0, a), None, length=count)
        return result

    # --- reduceat -------------------------------------------------------------------------------------------

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """Reductions of ``a`` between consecutive ``indices`` along ``axis`` (numpy's ``ufunc.reduceat``;
        where an index is not below the next, that element alone). ``dtype`` is checked and, as in JAX 0.10,
        not applied: the result has ``a``'s dtype."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        return self._reduceat(a, indices, axis=axis, dtype=dtype)

    def _reduceat_via_loop(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None) -> Any:
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a = asarray(a)
        indices = asarray(indices)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
        if indices.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape={indices.shape}")
        if dtype is not None:
            dtypes.canonicalize_explicit_dtype(dtype, f"{self.__name__}.reduceat")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = canonical_axis(axis, a.ndim)
        out = take(a, indices, axis=axis)
        bounds = shapes.append(indices, a.shape[axis])
        along = [1] * a.ndim
        along[axis] = bounds.shape[0]
        bounds = shapes.reshape(bounds, tuple(along))
        starts = shapes.moveaxis(shapes.moveaxis(bounds, axis, 0)[:-1], 0, axis)
        ends = shapes.moveaxis(shapes.moveaxis(bounds, axis, 0)[1:], 0, axis)

        def body(i: Any, out: Any) -> Any:
            inside = ufuncs.logical_and(i > starts, i < ends)
            return ufuncs.where(inside, self(out, take(a, shapes.expand_dims(i, 0), axis=axis)), out)

        return lax_control_flow.fori_loop(0, a.shape[axis], body, out)

    # --- outer ----------------------------------------------------------------------------------------------

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803 - numpy's names
        """The function of every pair of elements of ``A`` and ``B``: shape ``A.shape + B.shape``."""
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        return self._outer(A, B)

    def _outer_impl(self, A: Any, B: Any) -> Any:  # noqa: N803
        a, b = asarray(A), asarray(B)
        # JAX maps the function over both raveled operands (vmap of vmap); broadcasting them is the same map.
        result = self(shapes.reshape(a, (a.size, 1)), shapes.reshape(b, (1, b.size)))
        return shapes.reshape(result, (*a.shape, *b.shape))


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` from a scalar function of ``nin`` arguments and ``nout`` results (``jnp.frompyfunc``):
    called on arrays it is vectorized over their broadcast elements; its methods loop over it."""
    return ufunc(func, nin, nout, identity=identity)


# --- the direct implementations JAX gives its ufunc objects ---------------------------------------------------

def _require_integer(a: Any) -> Any:
    if not (dtypes.is_integer(a.dtype) or dtypes.is_bool(a.dtype)):
        raise ValueError(f"integer argument required; got dtype={a.dtype}")
    return a


def _cast_to_bool(a: Any) -> Any:
    # JAX's: a complex number's truth is its real part's here (not numpy's ``!= 0``).
    if dtypes.is_complex(a.dtype):
        a = lax_elementwise.real(a)
    return lax_elementwise.convert_element_type(a, dtypes.bool_)


def _reduction(name: str, kind: str, preproc: Callable[[Any], Any] | None = None) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False, initial: Any = None,
               where: Any = None) -> Any:
        return reductions._reduction(name, kind, a, axis, dtype, None, keepdims, initial, where, preproc=preproc)
    return reduce


def _logsumexp(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False, initial: Any = None,
               where: Any = None, *, name: str = "logaddexp") -> Any:
    """``log(sum(exp(a)))`` without overflow: JAX's ``logaddexp.reduce``, whose ``dtype`` is checked only."""
    if dtype is not None:
        dtypes.canonicalize_explicit_dtype(dtype, f"{name}.reduce")
    check_arraylike("logsumexp", a)
    where = reductions.check_where("logsumexp", where)
    a, = ufuncs._inexact(a)
    axes = tuple(range(a.ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = tuple(canonical_axis(x, a.ndim) for x in axes)
    amax = reductions.max(ufuncs.real(a), axis=axes, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax_autodiff.stop_gradient(ufuncs.where(ufuncs.isfinite(amax), amax, zeros_like(amax)))
    amax_with_dims = amax if keepdims else shapes.expand_dims(amax, axes)
    exp_a = ufuncs.exp(a - amax_with_dims.astype(a.dtype))
    total = reductions.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    result = ufuncs.log(total) + amax.astype(total.dtype)
    return result if initial is None else ufuncs.logaddexp(initial, result)


def _logsumexp2(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False, initial: Any = None,
                where: Any = None) -> Any:
    """``log2(sum(2 ** a))`` through :func:`_logsumexp`, as JAX's ``logaddexp2.reduce``."""
    check_arraylike("logsumexp2", a)
    where = reductions.check_where("logsumexp2", where)
    ln2 = float(np.log(2))
    if initial is not None:
        initial = initial * ln2
    return _logsumexp(asarray(a) * ln2, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                      where=where, name="logaddexp2") / ln2


def _scatter_at(method: str, bool_counts: bool) -> Callable[..., Any]:
    """``a.at[indices].<method>(b)``; booleans as JAX's ``add.at``/``multiply.at``: counted in int32, then
    made boolean again."""
    def at(a: Any, indices: Any, b: Any) -> Any:
        a = asarray(a) if not is_array(a) else a
        if bool_counts and a.dtype == dtypes.bool_:
            b = lax_elementwise.convert_element_type(asarray(b), dtypes.bool_).astype(dtypes.int32)
            return getattr(a.astype(dtypes.int32).at[indices], method)(b).astype(dtypes.bool_)
        return getattr(a.at[indices], method)(b)
    return at


def _binary(func: Callable[..., Any], identity: Any, **methods: Any) -> ufunc:
    return ufunc(func, 2, 1, name=func.__name__, call=func, identity=identity, **methods)


add = _binary(ufuncs.add, 0, reduce=reductions.sum, accumulate=reductions.cumsum, at=_scatter_at("add", True))
multiply = _binary(ufuncs.multiply, 1, reduce=reductions.prod, accumulate=reductions.cumprod,
                   at=_scatter_at("multiply", True))
subtract = _binary(ufuncs.subtract, None, at=_scatter_at("subtract", False))
maximum = _binary(ufuncs.maximum, None, reduce=_reduction("max", "max"))
minimum = _binary(ufuncs.minimum, None, reduce=_reduction("min", "min"))
bitwise_and = _binary(ufuncs.bitwise_and, -1, reduce=_reduction("reduce_bitwise_and", "and", _require_integer))
bitwise_or = _binary(ufuncs.bitwise_or, 0, reduce=_reduction("reduce_bitwise_or", "or", _require_integer))
bitwise_xor = _binary(ufuncs.bitwise_xor, 0, reduce=_reduction("reduce_bitwise_xor", "xor", _require_integer))
logical_and = _binary(ufuncs.logical_and, True, reduce=_reduction("reduce_logical_and", "and", _cast_to_bool))
logical_or = _binary(ufuncs.logical_or, False, reduce=_reduction("reduce_logical_or", "or", _cast_to_bool))
logical_xor = _binary(ufuncs.logical_xor, False, reduce=_reduction("reduce_logical_xor", "xor", _cast_to_bool))
logaddexp = _binary(ufuncs.logaddexp, -np.inf, reduce=_logsumexp)
logaddexp2 = _binary(ufuncs.logaddexp2, -np.inf, reduce=_logsumexp2)
negative = ufunc(ufuncs.negative, 1, 1, name="negative", call=ufuncs.negative)
