"""Functions applied over array elements or slices, on ``toolkit.vmap`` as JAX's are on ``jax.vmap``:
``vectorize`` (numpy's generalized ufuncs, with ``signature=`` and ``excluded=``), ``apply_along_axis``,
``apply_over_axes`` and ``fromfunction``.

``toolkit.numpy`` sits below ``toolkit.batching`` in the layers, so it reaches ``vmap`` through the hook
``toolkit.lax.control_flow`` keeps for ``lax.map`` (installed when ``toolkit`` is imported). Every vmap
here maps all its operands over their leading axis; an unbatched operand is closed over instead.

Example::

    norm = tnp.vectorize(lambda v: tnp.sqrt(tnp.sum(v * v)), signature="(n)->()")
    norm(tnp.ones((4, 3)))                      # shape (4,)
    tnp.apply_along_axis(tnp.sort, 1, x)
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Collection, Sequence

import numpy as np

from toolkit.core import pytrees
from toolkit.lax import control_flow as lax_control_flow
from toolkit.numpy import creation, index_tricks, shapes
from toolkit.numpy._core import asarray, canonical_axis, check_arraylike, expand_dims


def _vmap(f: Callable[..., Any]) -> Callable[..., Any]:
    # lax.control_flow's hook to toolkit.batching.vmap (in_axes=0, out_axes=0), the only way up the layers.
    return lax_control_flow._vmap(f)


def _map_leading(f: Callable[..., Any], batched: Sequence[bool], args: Sequence[Any]) -> Callable[..., Any]:
    """``f`` vmapped over the leading axis of the ``args`` marked ``batched``; the others are closed over."""
    fixed = [a for a, b in zip(args, batched) if not b]

    def on_batched(*mapped: Any) -> Any:
        it_mapped, it_fixed = iter(mapped), iter(fixed)
        return f(*[next(it_mapped) if b else next(it_fixed) for b in batched])

    mapped_f = _vmap(on_batched)
    return lambda: mapped_f(*[a for a, b in zip(args, batched) if b])


# --- vectorize -----------------------------------------------------------------------------------------------------

_DIMENSION_NAME = r"\w+"
_CORE_DIMENSION_LIST = "(?:{0:}(?:,{0:})*)?".format(_DIMENSION_NAME)
_ARGUMENT = rf"\({_CORE_DIMENSION_LIST}\)"
_ARGUMENT_LIST = "{0:}(?:,{0:})*".format(_ARGUMENT)
_SIGNATURE = "^{0:}->{0:}$".format(_ARGUMENT_LIST)


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    args, results = ([tuple(re.findall(_DIMENSION_NAME, arg)) for arg in re.findall(_ARGUMENT, part)]
                     for part in signature.split("->"))
    return args, results


def _update_dim_sizes(sizes: dict[str, int], shape: tuple, core_dims: tuple[str, ...], context: str, *,
                      is_input: bool) -> None:
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all core dimensions "
                         f"{core_dims!r} {context}")
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core_dims!r} {context}")
    for dim, size in zip(core_dims, shape[len(shape) - n:] if n else ()):
        if sizes.setdefault(dim, size) != size:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs {sizes[dim]!r} {context}")


def _apply_excluded(func: Callable[..., Any], excluded: Collection[int | str], args: Sequence[Any],
                    kwargs: dict[str, Any]) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    if not excluded:
        return func, list(args), kwargs
    dynamic_args = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
    static_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}

    def new_func(*a: Any, **kw: Any) -> Any:
        full = list(a)
        for i, arg in static_args:
            full.insert(i, arg)
        return func(*full, **kw, **static_kwargs)
    return new_func, dynamic_args, dynamic_kwargs


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` made to broadcast over its arguments' leading dimensions (numpy's ``vectorize``), as
    ``jnp.vectorize``: ``pyfunc`` sees one element (or, with a gufunc ``signature`` such as
    ``"(n),(n)->()"``, one core slice) at a time, through ``vmap``; arguments in ``excluded`` (positions or
    keyword names) pass through unchanged. Keyword arguments not excluded are passed as they are."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, dyn_args, kwargs = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            input_core, output_core = _parse_signature(signature)
        else:
            input_core, output_core = [()] * len(dyn_args), None
        none_args = {i for i, a in enumerate(dyn_args) if a is None}
        if none_args:
            if any(input_core[i] != () for i in none_args):
                raise ValueError(f"Cannot pass None at locations {none_args} with signature={signature!r}")
            func, dyn_args, _ = _apply_excluded(func, none_args, dyn_args, {})
            input_core = [d for i, d in enumerate(input_core) if i not in none_args]
        if len(dyn_args) != len(input_core):
            raise TypeError(f"wrong number of positional arguments: expected {len(input_core)!r}, "
                            f"got {len(dyn_args)!r} {context}")
        arrays = [asarray(a) for a in dyn_args]
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(arrays, input_core):
            _update_dim_sizes(sizes, tuple(a.shape), core, context, is_input=True)
            loop_shapes.append(tuple(a.shape[:a.ndim - len(core)]))
        loop_shape = tuple(np.broadcast_shapes(*loop_shapes)) if loop_shapes else ()
        checked = func if output_core is None else _checking_outputs(func, sizes, output_core, context)
        return _vectorized_call(lambda *a: checked(*a, **kwargs), arrays, loop_shapes, loop_shape)
    return wrapped


def _checking_outputs(func: Callable[..., Any], sizes: dict[str, int], output_core: list[tuple[str, ...]],
                      context: str) -> Callable[..., Any]:
    def checked(*args: Any) -> Any:
        out = func(*args)
        if len(output_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n{context}")
        outs = out if isinstance(out, tuple) else [out]
        if len(outs) != len(output_core):
            raise TypeError(f"wrong number of output arguments: expected {len(output_core)!r}, got {len(outs)!r} "
                            f"{context}")
        seen = dict(sizes)
        for o, core in zip(outs, output_core):
            _update_dim_sizes(seen, tuple(np.shape(o)), core, context, is_input=False)
        return out
    return checked


def _vectorized_call(func: Callable[..., Any], arrays: list[Any], loop_shapes: list[tuple], loop_shape: tuple) -> Any:
    """``func`` mapped over the loop dimensions, innermost first; a dimension no argument has (size 1 in
    all) is not mapped but added to the result afterwards, as JAX's vectorize does."""
    ndim = len(loop_shape)
    squeezed, filled = [], []
    for a, noncore in zip(arrays, loop_shapes):
        filled.append((1,) * (ndim - len(noncore)) + noncore)
        squeezed.append(shapes.squeeze(a, tuple(i for i, s in enumerate(noncore) if s == 1)) if 1 in noncore else a)
    mapped = func
    expand = []
    for d in reversed(range(ndim)):  # the innermost loop dimension is the innermost vmap
        batched = [f[d] != 1 for f in filled]
        if not any(batched):
            expand.append(d)
            continue
        mapped = _mapped_over(mapped, batched)
    result = mapped(*squeezed)
    if not expand:
        return result
    return pytrees.tree_map(lambda r: expand_dims(r, tuple(expand)), result)


def _mapped_over(f: Callable[..., Any], batched: list[bool]) -> Callable[..., Any]:
    def g(*args: Any) -> Any:
        return _map_leading(f, batched, args)()
    return g


# --- apply_along_axis, apply_over_axes, fromfunction ------------------------------------------------------------


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """``func1d(slice, *args, **kwargs)`` for each 1-D slice of ``arr`` along ``axis``, results stacked with
    their dimensions where ``axis`` was, as ``jnp.apply_along_axis``."""
    check_arraylike("apply_along_axis", arr)
    arr = asarray(arr)
    ndim = arr.ndim
    axis = canonical_axis(axis, ndim)
    moved = shapes.moveaxis(arr, axis, -1)

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)
    for _ in range(ndim - 1):
        func = _mapped_over(func, [True])
    out = asarray(func(moved))
    # out: (other dims..., result dims...); the result dims go where axis was.
    n_other, n_result = ndim - 1, out.ndim - (ndim - 1)
    order = list(range(axis)) + list(range(n_other, n_other + n_result)) + list(range(axis, n_other))
    return shapes.transpose(out, order)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """``func(a, axis)`` applied for each of ``axes`` in turn, a dimension lost by ``func`` put back (size
    1), as ``jnp.apply_over_axes``; ``func`` returning another rank is a ``ValueError``."""
    check_arraylike("apply_over_axes", a)
    arr = asarray(a)
    for axis in axes:
        b = func(arr, axis)
        if b.ndim == arr.ndim:
            arr = b
        elif b.ndim == arr.ndim - 1:
            arr = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """The array whose element at ``(i, j, ...)`` is ``function(i, j, ..., **kwargs)`` (indices of
    ``dtype``, each call seeing scalars through ``vmap``), as ``jnp.fromfunction``."""
    shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if any(d < 0 for d in shape):
        raise ValueError(f"fromfunction: the shape {shape} has a negative dimension")
    n = int(np.prod(shape))
    grids = index_tricks.meshgrid(*[creation.arange(s, dtype=dtype) for s in shape], indexing="ij")
    flat = [shapes.ravel(g) for g in grids]
    out = _vmap(lambda *idx: function(*idx, **kwargs))(*flat) if shape else function(**kwargs)
    if not shape:
        return out
    return pytrees.tree_map(lambda r: shapes.reshape(r, shape + tuple(r.shape[1:])) if n else r, out)
