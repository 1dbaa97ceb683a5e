"""``pmap`` and ``smap``: JAX's one-axis parallel maps, built on ``jit`` + ``shard_map``.

``pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, backend=None,
axis_size=None, donate_argnums=())`` has ``jax.pmap``'s meaning as JAX 0.10.2 implements it (its
``jax._src.pmap``): the size ``n`` of the mapped axis picks the first ``n`` devices (of ``devices``, or of the
backend), a 1-D mesh over them is named ``axis_name``, and ``fun`` runs once per device under ``shard_map`` on its
slice of each argument *with the mapped axis squeezed away*; each result gets the axis back at its ``out_axes``
position. The call is one ``jit`` whose inputs and outputs are ``NamedSharding`` values over that mesh, so results
are arrays split over the ``n`` devices. Collectives (``psum``, ``pmean``, ``all_gather``, ``axis_index``)
name ``axis_name``; the per-device program is not checked for varying axes (``check_vma=False``, as JAX's pmap).

``smap(f, /, *, in_axes=Infer, out_axes, axis_name)`` is ``jax.smap``: ``shard_map`` over the one mesh axis
``axis_name`` of the context mesh (``set_mesh`` / ``with mesh:``), the other axes left automatic, with integer
axes instead of partition specs (axis ``i`` means ``P(None, ..., None, axis_name)`` with ``i`` Nones; the
block keeps the dimension, unlike ``pmap``). ``in_axes=Infer`` reads each argument's axis from its explicit
sharding (``typeof(x).sharding.spec``).

Example::

    >>> f = pmap(lambda x: x / toolkit.lax.psum(x, "i"), axis_name="i")
    >>> f(toolkit.numpy.arange(4.0))  # on 4 of the devices
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, Iterable, Sequence

import numpy as np

from toolkit import lax
from toolkit.core import pytrees
from toolkit.runtime.client import devices as backend_devices
from toolkit.shard import Mesh, NamedSharding, PartitionSpec, typeof
from toolkit.shard_map import shard_map
from toolkit.stages import jit

__all__ = ["Infer", "pmap", "smap"]

#: The axis name a ``pmap`` without ``axis_name`` uses (JAX's).
_DEFAULT_AXIS_NAME = "_internal_pmap_axis_name"


class _InferFromArgs:
    """``smap``'s default ``in_axes``: read each argument's mapped axis from its sharding (``jax.sharding.Infer``)."""

    def __repr__(self) -> str:
        return "Infer"


#: ``smap(..., in_axes=Infer)``: infer the axes from the arguments' explicit shardings.
Infer = _InferFromArgs()


def _index_tuple(value: int | Iterable[int], what: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, bool):
        raise TypeError(f"pmap {what} must be an int or a collection of ints, got {value!r}")
    try:
        out = tuple(value)
    except TypeError:
        raise TypeError(f"pmap {what} must be an int or a collection of ints, got {value!r}") from None
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in out):
        raise TypeError(f"pmap {what} must be an int or a collection of ints, got {value!r}")
    return out


def _check_axes(axes: Any, what: str) -> None:
    leaves = pytrees.tree_leaves(axes)
    if not all(type(a) is int for a in leaves):
        raise TypeError(f"{what} must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {axes}.")


def _axis_spec(axis_name: Hashable, axis: int | None) -> PartitionSpec:
    """``P(None, ..., axis_name)`` with ``axis`` Nones, or ``P()`` for an unmapped (``None``) axis (JAX's)."""
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*([None] * axis), axis_name)


def _is_none(x: Any) -> bool:
    return x is None


def pmap(fun: Callable[..., Any], axis_name: Hashable | None = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Iterable[int] = (), devices: Sequence[Any] | None = None,
         backend: str | None = None, axis_size: int | None = None,
         donate_argnums: int | Iterable[int] = ()) -> Callable[..., Any]:
    """Map ``fun`` over an axis of its arguments, one device per index (``jax.pmap``; see the module docstring).

    Contract: every mapped argument's axis (``in_axes``: int, ``None`` or a pytree prefix of the positional
    arguments; keyword arguments are mapped over axis 0) has one size ``n``; ``n`` must not exceed the devices
    available (``devices``, or those of ``backend``) and must equal ``axis_size`` when that is given. Results carry
    the mapped axis at ``out_axes`` (``None``: not mapped, one device's value). Static arguments
    (``static_broadcasted_argnums``) must be hashable and passed positionally. Errors: ``TypeError`` for a
    non-callable ``fun`` or axes that are not ints/``None``; ``ValueError`` for no mapped argument, mismatched axis
    sizes, too few devices, a wrong ``axis_size``, or an ``in_axes`` that is not a prefix of the arguments.
    """
    if not callable(fun):
        raise TypeError(f"pmap requires a callable for its first argument, got {fun!r}")
    if devices is not None:
        devices = tuple(devices)
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
    name = _DEFAULT_AXIS_NAME if axis_name is None else axis_name
    static = _index_tuple(static_broadcasted_argnums, "static_broadcasted_argnums")
    donate = _index_tuple(donate_argnums, "donate_argnums")
    _check_axes(in_axes, "pmap in_axes")
    _check_axes(out_axes, "pmap out_axes")
    cache: dict[Any, Callable[..., Any]] = {}

    def prepare(args: tuple, kwargs: dict) -> tuple[Callable[..., Any], list]:
        if static and max(static) >= len(args):
            raise ValueError(f"pmapped function has static_broadcasted_argnums={static} but was called with only "
                             f"{len(args)} positional argument{'s' if len(args) != 1 else ''}. All static "
                             "broadcasted arguments must be passed positionally.")
        dyn_argnums = [i for i in range(len(args)) if i not in static]
        dyn_args = tuple(args[i] for i in dyn_argnums)
        static_vals = tuple((i, args[i]) for i in static)
        if static and isinstance(in_axes, tuple):
            dyn_in_axes: Any = tuple(in_axes[i] for i in dyn_argnums)
        else:
            dyn_in_axes = in_axes
        leaves, tree = pytrees.tree_flatten((dyn_args, kwargs))
        try:
            axes_flat = pytrees.broadcast_prefix((dyn_in_axes, 0), (dyn_args, kwargs), is_leaf=_is_none)
        except ValueError as exc:
            raise ValueError(f"pmap in_axes specification {in_axes!r} must be a tree prefix of the tuple of "
                             f"arguments passed positionally to the pmapped function: {exc}") from None
        sizes = []
        for leaf, ax in zip(leaves, axes_flat):
            if ax is None:
                continue
            shape = np.shape(leaf)
            if not -len(shape) <= ax < len(shape) or len(shape) == 0:
                raise ValueError(f"pmap was requested to map its argument along axis {ax}, which implies that its "
                                 f"rank should be at least {ax + 1}, but is only {len(shape)} (its shape is "
                                 f"{shape})")
            sizes.append(int(shape[ax]))
        axes_flat = [None if ax is None else ax % np.ndim(leaf) for leaf, ax in zip(leaves, axes_flat)]
        if not sizes:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        if len(set(sizes)) > 1:
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: {sizes}")
        n = sizes[0]
        if axis_size is not None and axis_size != n:
            raise ValueError(f"Specified axis_size {axis_size} doesn't match received axis_size {n}.")
        pool = devices if devices is not None else tuple(backend_devices(backend) if backend else backend_devices())
        if n > len(pool):
            raise ValueError(f"pmap of {getattr(fun, '__name__', fun)!r}: the mapped axis has size {n}, which "
                             f"requires {n} devices, but only {len(pool)} are available")
        key = (static_vals, tree, tuple(axes_flat), tuple(pool[:n]))
        call = cache.get(key)
        if call is None:
            call = cache[key] = _build_pmap(fun, static_vals, tree, list(axes_flat), tuple(pool[:n]), name,
                                            out_axes, donate, dyn_argnums, len(args))
        return call, leaves

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        call, leaves = prepare(args, kwargs)
        return call(*leaves)

    def lower(*args: Any, **kwargs: Any) -> Any:
        """The ``Lowered`` program of a call with these arguments (the flat arrays are its parameters)."""
        call, leaves = prepare(args, kwargs)
        return call.lower(*leaves)  # type: ignore[attr-defined]  # call is a jit object

    wrapped.lower = lower  # type: ignore[attr-defined]
    return wrapped


def _build_pmap(fun: Callable[..., Any], static_vals: tuple, tree: pytrees.PyTreeDef, axes_flat: list,
                mesh_devices: tuple, name: Hashable, out_axes: Any, donate: tuple, dyn_argnums: list,
                nargs: int) -> Callable[..., Any]:
    """One ``jit(shard_map(...))`` for a call signature: the flat arguments in, the results' pytree out."""
    mesh = Mesh(np.array(mesh_devices, dtype=object), (name,))
    in_specs = tuple(_axis_spec(name, ax) for ax in axes_flat)

    def per_device(*flat: Any) -> Any:
        squeezed = [x if ax is None else lax.squeeze(x, (ax,)) for x, ax in zip(flat, axes_flat)]
        dyn_args, kwargs = pytrees.tree_unflatten(tree, squeezed)
        full = [None] * nargs
        for i, v in static_vals:
            full[i] = v
        for i, v in zip(dyn_argnums, dyn_args):
            full[i] = v
        out = fun(*full, **kwargs)
        out_leaves, out_tree = pytrees.tree_flatten(out)
        try:
            o_axes = pytrees.broadcast_prefix(out_axes, out, is_leaf=_is_none)
        except ValueError as exc:
            raise ValueError(f"pmap out_axes specification {out_axes!r} must be a tree prefix of the pmapped "
                             f"function's output: {exc}") from None
        expanded = [x if ax is None else lax.expand_dims(x, (ax,)) for x, ax in zip(out_leaves, o_axes)]
        return pytrees.tree_unflatten(out_tree, expanded)

    out_specs = pytrees.tree_map(functools.partial(_axis_spec, name), out_axes, is_leaf=_is_none)
    mapped = shard_map(per_device, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
    out_shardings = pytrees.tree_map(lambda s: NamedSharding(mesh, s), out_specs,
                                     is_leaf=lambda s: isinstance(s, PartitionSpec))
    # donate_argnums count positional arguments: the flat leaves of the donated dynamic ones.
    flat_donate: list[int] = []
    if donate:
        dyn_args_tree = pytrees.structure_of(tree, list(range(tree.num_leaves)))[0]
        for pos, argnum in enumerate(dyn_argnums):
            if argnum in donate:
                flat_donate.extend(pytrees.tree_leaves(dyn_args_tree[pos]))
    return jit(mapped, in_shardings=tuple(NamedSharding(mesh, s) for s in in_specs), out_shardings=out_shardings,
               donate_argnums=tuple(flat_donate))


def _infer_axis(x: Any, axis_name: Hashable) -> int | None:
    spec = getattr(getattr(typeof(x), "sharding", None), "spec", None)
    if spec is None:
        return None
    for i, entry in enumerate(spec):
        if entry == axis_name or (isinstance(entry, tuple) and axis_name in entry):
            return i
    return None


def smap(f: Callable[..., Any] | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name: Hashable) -> Any:
    """``shard_map`` over the one axis ``axis_name`` of the context mesh, with integer axes (``jax.smap``).

    Contract: ``in_axes`` is an int, ``None``, ``Infer`` or a tuple (one entry per positional argument, pytree
    prefixes allowed); ``out_axes`` an int, ``None`` or a pytree of them. Axis ``i`` of an argument is split over
    ``axis_name`` (the body sees blocks that keep the dimension); ``None`` replicates. Without ``f`` it returns a
    decorator. Errors: ``TypeError`` for a list/tuple ``axis_name`` or axes of the wrong type; the call raises
    ``ValueError`` without a context mesh or when ``axis_name`` is not one of its axes.
    """
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, Infer, or a tuple of entries corresponding to the "
                        f"positional arguments passed to the function, but got {in_axes}.")
    if in_axes is not Infer:
        _check_axes(in_axes, "smap in_axes")
    _check_axes(out_axes, "smap out_axes")
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if not callable(f):
        raise TypeError(f"smap requires a callable for its first argument, got {f!r}")
    out_specs = pytrees.tree_map(functools.partial(_axis_spec, axis_name), out_axes, is_leaf=_is_none)

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        if in_axes is Infer:
            in_specs: Any = tuple(pytrees.tree_map(lambda x: _axis_spec(axis_name, _infer_axis(x, axis_name)), a)
                                  for a in args)
        elif isinstance(in_axes, tuple):
            in_specs = pytrees.tree_map(functools.partial(_axis_spec, axis_name), in_axes, is_leaf=_is_none)
        else:
            in_specs = _axis_spec(axis_name, in_axes)
        return shard_map(f, in_specs=in_specs, out_specs=out_specs, axis_names=frozenset({axis_name}))(*args)

    return wrapped
