"""Collectives over the manual mesh axes of a ``shard_map`` body (``jax.lax`` parallel operators).

Inside ``toolkit.shard_map(f, mesh=..., in_specs=..., out_specs=...)`` the body
``f`` runs once per device on its shard; these operators communicate between
the devices along named mesh axes:

=================  =========================================================
``psum``           sum over the axes (``stablehlo.all_reduce`` with ``add``)
``pmean``          ``psum`` divided by the number of devices over the axes
``pmax``/``pmin``  ``all_reduce`` with ``maximum``/``minimum``
``all_gather``     concatenate (``tiled``) or stack the shards (``all_gather``); with
                   ``to="invarying"`` the result is the same on every device of the
                   axes (``all_gather_invariant``: same op, other type and transpose)
``psum_scatter``   sum, then keep this device's block (``reduce_scatter``)
``ppermute``       send to another device by a permutation (``collective_permute``)
``all_to_all``     split one dimension, exchange, concatenate another
``pshuffle``       ``ppermute`` by the source of each position (``perm[i]`` goes to ``i``)
``pswapaxes``      ``all_to_all`` with the split and concatenated axis the same
``axis_index``     this device's position along the axes (``partition_id`` arithmetic)
``axis_size``      the number of devices along the axes (a Python int)
=================  =========================================================

``axis_name`` is one mesh axis name or a tuple of them, or the ``axis_name``
of an enclosing ``toolkit.vmap``: over a vmapped axis the collectives act
across the batch (``psum`` sums the batch elements, ``axis_index`` is the
element's position, ...), as in JAX. Outside a ``shard_map`` or ``vmap``
binding the axis a ``NameError`` names the unbound axis.

Every collective equation records the mesh shape (``AxisEnv``) so its
lowering can compute the replica groups (device positions in the mesh,
``use_global_device_ids``) without any lowering context.

``axis_index_groups`` (``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``psum_scatter``, ``all_to_all``, ``pswapaxes``) splits the
positions along ``axis_name`` (row-major over a tuple of axes) into groups,
e.g. ``[[0, 1], [2, 3]]`` for an axis of size 4; the collective then runs
within each group, and its size is the first group's. As JAX: the groups
must cover ``range(total)`` exactly once (``ValueError`` at the call), the
lowering combines them with the mesh's groups (``AxisEnv.groups``) and
refuses groups that do not cover the axes; ``psum``/``pmean`` with groups
are refused under ``check_vma=True`` and every collective over a vmapped
axis refuses them (``NotImplementedError``). The equation carries the
groups as ``axis_index_groups`` only when they are given.

Varying manual axes (``check_vma=True``): ``pvary`` marks a value as varying
over axes (a no-op on values; its transpose is a ``psum``), and
``psum_invariant`` is ``psum`` whose transpose is ``pvary`` — the pair JAX
uses so that gradients of replicated values are summed exactly once.
``toolkit.shard_map`` inserts them (see ``toolkit/shard_map.py``); with
``check_vma=False`` plain ``psum`` (its own transpose) is used.
``all_gather(..., to="invarying")`` binds ``all_gather_invariant`` (in both
modes, as JAX): the same ``stablehlo.all_gather`` as the varying gather, but
its result is invariant over the gathered axes (``out_specs`` may leave them
out) and its transpose is this device's block of the cotangent (a
``dynamic_slice`` at ``axis_index``), not a ``psum_scatter``.

Example::

    @functools.partial(toolkit.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P())
    def total(block):
        return toolkit.lax.psum(block.sum(), "x")
"""

from __future__ import annotations

import math
import operator
import threading
from typing import Any, NamedTuple, Sequence

import numpy as np

from toolkit.core import dtypes, tracing, pytrees
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.primitive import Primitive
from toolkit.lax import elementwise
from toolkit.lax import structural

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("parallel")

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "all_to_all", "pshuffle",
           "pswapaxes", "axis_index", "axis_size", "pvary", "pcast", "AxisEnv", "vmap_axis", "vmapped_axes"]


# --- the axis environment -----------------------------------------------------------


class AxisEnv(NamedTuple):
    """The mesh a collective runs in: every axis name and size (mesh order) and the manual ones.

    ``vmapped`` names axes that a ``vmap(..., axis_name=...)`` around the
    collective binds (they come last, after the mesh's): the vmap's batching
    rule replaces the collective over them before anything is lowered, and
    gives the rest of the collective the mesh's own environment back
    (:meth:`without`).
    """

    names: tuple
    sizes: tuple
    manual: tuple
    vmapped: tuple = ()

    def size(self, axes: Sequence[Any]) -> int:
        return math.prod(self.sizes[self.names.index(a)] for a in axes)

    def without(self, name: Any) -> "AxisEnv":
        """This environment without the vmapped axis ``name``."""
        i = self.names.index(name)
        return AxisEnv(self.names[:i] + self.names[i + 1:], self.sizes[:i] + self.sizes[i + 1:],
                       tuple(a for a in self.manual if a != name), tuple(a for a in self.vmapped if a != name))

    def groups(self, axes: Sequence[Any]) -> list[list[int]]:
        """Replica groups of device positions: one group per coordinate of the other axes (JAX's ``axis_groups``)."""
        iota = np.arange(math.prod(self.sizes)).reshape(self.sizes)
        positions = [self.names.index(a) for a in axes]
        moved = np.moveaxis(iota, positions, list(range(len(positions))))
        return moved.reshape(self.size(axes), -1).T.tolist()

    def index_groups(self, axes: Sequence[Any], axis_index_groups: Sequence[Sequence[int]] | None
                     ) -> list[list[int]]:
        """Replica groups of a collective over ``axes`` restricted to ``axis_index_groups`` (JAX's
        ``_replica_groups``): each mesh group splits into one group per index group, in that order.

        ``IndexError`` for an index past the axes' size and ``ValueError`` for groups that do not
        cover every index of the axes: the two ways JAX's lowering fails on such groups.
        """
        mesh_groups = self.groups(axes)
        if axis_index_groups is None:
            return mesh_groups
        size = len(mesh_groups[0])
        past = [i for g in axis_index_groups for i in g if i >= size]
        if past:
            raise IndexError(f"axis_index_groups {list(map(list, axis_index_groups))} name the index {past[0]}, "
                             f"but the axes {tuple(axes)} have only {size} positions")
        covered = sum(len(g) for g in axis_index_groups)
        if covered != size:
            raise ValueError(f"axis_index_groups {list(map(list, axis_index_groups))} cover {covered} of the {size} "
                             f"positions of the axes {tuple(axes)}; they must cover every position")
        return [[mesh_group[i] for i in g] for mesh_group in mesh_groups for g in axis_index_groups]


class _Frame(NamedTuple):
    env: AxisEnv
    check_vma: bool
    #: The builder active when the body's trace began (the body's builder is its child), or None.
    outer_builder: Any = None
    #: Per explicit input of the body: the manual axes it varies over (its in_spec's axes).
    in_vmas: tuple = ()
    #: Whether a vmap inside may bind one of these names again, the vmap's binding winning there (make_jaxpr's
    #: axis_env, JAX's extend_axis_env_nd); a shard_map's names may not be rebound.
    shadowable: bool = False


class _VmapAxis(NamedTuple):
    name: Any
    size: int
    #: How many shard_map frames were active when the vmap began (its body is inside the innermost of them).
    depth: int


class _State(threading.local):
    def __init__(self) -> None:
        self.frames: list[_Frame] = []
        self.vmap_axes: list[_VmapAxis] = []


_state = _State()


class axis_frame:
    """Context manager binding the manual axes of one ``shard_map`` body while it is traced."""

    def __init__(self, env: AxisEnv, check_vma: bool, outer_builder: Any = None, in_vmas: Sequence[frozenset] = (),
                 shadowable: bool = False):
        self.frame = _Frame(env, check_vma, outer_builder, tuple(in_vmas), shadowable)

    def __enter__(self) -> AxisEnv:
        _state.frames.append(self.frame)
        return self.frame.env

    def __exit__(self, *exc: Any) -> None:
        _state.frames.pop()


class vmap_axis:
    """Context manager binding the axis name of a ``vmap`` while its function is traced."""

    def __init__(self, name: Any, size: int):
        try:
            hash(name)
        except TypeError:
            raise TypeError(f"vmap axis_name must be hashable, got {name!r}") from None
        self.axis = _VmapAxis(name, size, len(_state.frames))

    def __enter__(self) -> None:
        _state.vmap_axes.append(self.axis)

    def __exit__(self, *exc: Any) -> None:
        _state.vmap_axes.pop()


def current_frame() -> _Frame | None:
    return _state.frames[-1] if _state.frames else None


def axis_context() -> tuple:
    """Everything that gives axis names their meaning here (for caches of traced programs)."""
    return (current_frame(), tuple(_state.vmap_axes))


def vmapped_axes(params: dict) -> tuple:
    """The vmap-bound axes a collective equation's parameters name (``()`` for anything else)."""
    env = params.get("env")
    if type(env) is not AxisEnv or not env.vmapped:
        return ()
    return tuple(a for a in params["axes"] if a in env.vmapped)


def _axes_tuple(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _bound(axis_name: Any, api: str) -> tuple[tuple, _Frame]:
    """The axes named and the frame binding them; ``NameError`` for an unbound one.

    Names bound by a ``vmap(..., axis_name=...)`` come with an environment
    that adds them to the shard_map's (or to an empty one): see ``AxisEnv``.
    """
    axes = _axes_tuple(axis_name)
    frame = current_frame()
    mesh_axes = frame.env.manual if frame is not None else ()
    vmapped = {v.name: v for v in _state.vmap_axes}  # the innermost vmap of a name wins
    shadowed = []
    for a in axes:
        if a in vmapped and a in mesh_axes:
            assert frame is not None
            if not (frame.shadowable and vmapped[a].depth >= len(_state.frames)):
                raise ValueError(f"{api}: the axis name {a!r} is bound both by a shard_map and by a vmap; "
                                 "give the vmap another axis_name")
            shadowed.append(a)  # a vmap inside make_jaxpr's axis_env binds the name again: the vmap's wins
        if a not in vmapped and a not in mesh_axes:
            bound = list(mesh_axes) + [v.name for v in _state.vmap_axes]
            raise NameError(f"Found an unbound axis name: {a}. To fix this, please call {api} under "
                            f"`toolkit.shard_map` with {a!r} among its manual axes, or under "
                            f"`toolkit.vmap(..., axis_name={a!r})`"
                            + (f" (the axes bound here are {bound})" if bound else ""))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{api}: axis_name {axis_name!r} repeats an axis")
    named = [vmapped[a] for a in axes if a in vmapped]
    if not named:
        # frame is None only for an empty axis_name outside any shard_map: no axes, one device (as JAX).
        return axes, frame if frame is not None else _Frame(AxisEnv((), (), ()), False)
    if any(v.depth < len(_state.frames) for v in named):
        raise NotImplementedError(f"{api} over the vmap axis {named[0].name!r} inside a shard_map body that the "
                                  "vmap encloses is not supported; vmap inside the body instead")
    base = frame.env if frame is not None else AxisEnv((), (), ())
    if shadowed:
        kept = [i for i, n in enumerate(base.names) if n not in shadowed]
        base = AxisEnv(tuple(base.names[i] for i in kept), tuple(base.sizes[i] for i in kept),
                       tuple(n for n in base.manual if n not in shadowed),
                       tuple(n for n in base.vmapped if n not in shadowed))
    names = tuple(v.name for v in named)
    env = AxisEnv(base.names + names, base.sizes + tuple(v.size for v in named), base.manual + names,
                  base.vmapped + names)
    return axes, _Frame(env, frame.check_vma, frame.outer_builder, frame.in_vmas) if frame is not None \
        else _Frame(env, False)


def _aval(x: Any, api: str) -> ShapedArray:
    try:
        return aval_of(x)
    except TypeError:
        raise TypeError(f"{api}: expected an array, got a value of type {type(x).__name__}") from None


def _axis(axis: int, ndim: int, api: str, what: str, rank: int | None = None) -> int:
    """``axis`` normalized into ``[0, ndim)``; the error names the value's ``rank`` (default ``ndim``)."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"{api}: {what}={axis} is out of bounds for a value of rank {ndim if rank is None else rank}")
    return axis % ndim


def _index_groups(axis_index_groups: Any, axis_name: Any) -> tuple[tuple[int, ...], ...] | None:
    """``axis_index_groups`` as a tuple of int tuples, checked as JAX checks them at the call: only with
    named axes, and covering ``range(total)`` exactly once (that they cover the axes is the lowering's)."""
    if axis_index_groups is None:
        return None
    if any(isinstance(a, int) for a in _axes_tuple(axis_name)):
        raise ValueError("axis_index_groups only supported for sums over just named axes")
    try:
        groups = tuple(tuple(operator.index(i) for i in g) for g in axis_index_groups)
    except TypeError:
        raise TypeError(f"axis_index_groups must be a list of lists of ints, got {axis_index_groups!r}") from None
    if {i for g in groups for i in g} != set(range(sum(len(g) for g in groups))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    return groups


def _group_size(groups: tuple[tuple[int, ...], ...]) -> int:
    """The size a grouped collective runs over: the first group's, as JAX's ``_axis_size``."""
    if not groups:
        raise IndexError("axis_index_groups is empty: it must list at least one group")
    return len(groups[0])


def _collective_size(env: AxisEnv, axes: tuple, groups: tuple | None) -> int:
    """How many devices take part in one instance of the collective: the group's or the axes' size."""
    return env.size(axes) if groups is None else _group_size(groups)


def _groups_param(groups: tuple | None) -> dict:
    """The equation parameter carrying the groups; absent (not None) for a collective over whole axes."""
    return {} if groups is None else {"axis_index_groups": groups}


def _refuse_groups_over_vmap(groups: tuple | None, axes: tuple, env: AxisEnv, api: str) -> None:
    """As JAX's batching rules: no ``axis_index_groups`` over an axis a vmap binds."""
    if groups is not None and any(a in env.vmapped for a in axes):
        raise NotImplementedError(f"{api}: axis_index_groups not supported in vmap collectives (the axis "
                                  f"{next(a for a in axes if a in env.vmapped)!r} is a vmap's)")


# --- primitives ----------------------------------------------------------------------


def _same(x: ShapedArray, **params: Any) -> ShapedArray:
    return x


#: check_vma=False all-reduce sum (transpose: psum).
psum_p = family.primitive("psum", shape_rule=_same)
#: check_vma=True all-reduce sum of a value varying over ``axes`` (transpose: pvary).
psum_invariant_p = family.primitive("psum_invariant", shape_rule=_same)
pmax_p = family.primitive("pmax", shape_rule=_same)
pmin_p = family.primitive("pmin", shape_rule=_same)
#: Marks a value as varying over ``axes``; the identity on values (transpose: psum_invariant).
pvary_p = family.primitive("pvary", shape_rule=_same)
ppermute_p = family.primitive("ppermute", shape_rule=_same)


def _all_gather_rule(x: ShapedArray, *, axes, env, axis, tiled, axis_index_groups=None) -> ShapedArray:
    n = _collective_size(env, axes, axis_index_groups)
    shape = list(x.shape)
    if tiled:
        shape[axis] = shape[axis] * n
    else:
        shape.insert(axis, n)
    return x.update(shape=tuple(shape))


all_gather_p = family.primitive("all_gather", shape_rule=_all_gather_rule)
#: JAX's ``all_gather_invariant``: the gather whose result does not vary over ``axes`` (no ``axis_index_groups``;
#: transpose: this device's block of the cotangent, not ``psum_scatter``).
all_gather_invariant_p = family.primitive("all_gather_invariant", shape_rule=_all_gather_rule)


def _psum_scatter_rule(x: ShapedArray, *, axes, env, scatter_dimension, tiled,
                       axis_index_groups=None) -> ShapedArray:
    n = _collective_size(env, axes, axis_index_groups)
    shape = list(x.shape)
    size = shape[scatter_dimension]
    if tiled:
        if size % n:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} of size {size} is not divisible by the "
                             f"{n} devices of axes {axes}")
        shape[scatter_dimension] = size // n
    else:
        if size != n:
            raise ValueError(f"psum_scatter: with tiled=False dimension {scatter_dimension} must have the size of "
                             f"the axes {axes} ({n}), got {size}")
        del shape[scatter_dimension]
    return x.update(shape=tuple(shape))


psum_scatter_p = family.primitive("psum_scatter", shape_rule=_psum_scatter_rule)


def _all_to_all_rule(x: ShapedArray, *, axes, env, split_axis, concat_axis,
                     axis_index_groups=None) -> ShapedArray:
    n = _collective_size(env, axes, axis_index_groups)
    shape = list(x.shape)
    if shape[split_axis] % n:
        raise ValueError(f"all_to_all: split_axis {split_axis} of size {shape[split_axis]} is not divisible by the "
                         f"{n} devices of axes {axes}")
    shape[split_axis] //= n
    shape[concat_axis] *= n
    return x.update(shape=tuple(shape))


#: The tiled form; the untiled user function inserts and squeezes axes around it, as JAX.
all_to_all_p = family.primitive("all_to_all", shape_rule=_all_to_all_rule)


def _axis_index_rule(*, axes, env) -> ShapedArray:
    return ShapedArray((), dtypes.int32)


axis_index_p = family.primitive("axis_index", shape_rule=_axis_index_rule)

COLLECTIVES = (psum_p, psum_invariant_p, pmax_p, pmin_p, pvary_p, ppermute_p, all_gather_p, all_gather_invariant_p,
               psum_scatter_p, all_to_all_p, axis_index_p)


# --- user functions --------------------------------------------------------------------


def _full_like(x: Any, value: Any) -> Any:
    aval = aval_of(x)
    scalar = np.asarray(value, aval.dtype)
    return scalar if aval.ndim == 0 else structural.broadcast_in_dim(scalar, aval.shape, ())


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, tracing.Tracer)


@family.function(binds=(psum_p, psum_invariant_p,))
def psum(x: Any, axis_name: Any, *, axis_index_groups: Sequence[Sequence[int]] | None = None) -> Any:
    """Sum of ``x`` (a pytree) over the devices of ``axis_name``; bool values are summed as int32.

    With ``axis_index_groups`` each device sums over its group only (not under ``shard_map(check_vma=True)``,
    as JAX: ``NotImplementedError``; a constant is multiplied by the first group's size)."""
    groups = _index_groups(axis_index_groups, axis_name)
    axes, frame = _bound(axis_name, "psum")
    if not axes:  # no axis: the value itself, as JAX's collectives return it
        return x

    def one(leaf: Any) -> Any:
        aval = _aval(leaf, "psum")
        if aval.dtype == dtypes.bool_:
            leaf = elementwise.convert_element_type(leaf, dtypes.int32)
        if _is_concrete(leaf):  # a constant is the same on every device
            return elementwise.mul(_full_like(leaf, _collective_size(frame.env, axes, groups)), leaf)
        if groups is not None:
            if frame.check_vma:  # JAX's psum_invariant takes no groups
                raise NotImplementedError("psum with axis_index_groups is not supported under "
                                          "shard_map(check_vma=True) (as in JAX); pass check_vma=False")
            return psum_p.bind(leaf, axes=axes, env=frame.env, axis_index_groups=groups)
        prim = psum_invariant_p if frame.check_vma else psum_p
        return prim.bind(leaf, axes=axes, env=frame.env)

    return pytrees.tree_map(one, x)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Sequence[Sequence[int]] | None = None) -> Any:
    """Mean of ``x`` over the devices of ``axis_name`` (of each group with ``axis_index_groups``: the
    sum divided by the first group's size, as JAX)."""
    groups = _index_groups(axis_index_groups, axis_name)
    axes, frame = _bound(axis_name, "pmean")
    if not axes:  # no axis: the value itself, as JAX's collectives return it
        return x

    def one(leaf: Any) -> Any:
        total = psum(leaf, axes, axis_index_groups=groups)
        n = _collective_size(frame.env, axes, groups)
        if not dtypes.is_inexact(aval_of(total).dtype):  # true division, as jnp's `/` in JAX's pmean
            total = elementwise.convert_element_type(total, dtypes.DEFAULT_FLOAT)
        return elementwise.div(total, _full_like(total, n))

    return pytrees.tree_map(one, x)


def _reduce(prim: Primitive, api: str, x: Any, axis_name: Any, axis_index_groups: Any) -> Any:
    groups = _index_groups(axis_index_groups, axis_name)
    axes, frame = _bound(axis_name, api)
    if not axes:  # no axis: the value itself, as JAX's collectives return it
        return x

    def one(leaf: Any) -> Any:
        _aval(leaf, api)
        if _is_concrete(leaf):
            # JAX binds even a constant, and its vmap rule refuses groups over the vmapped axis.
            _refuse_groups_over_vmap(groups, axes, frame.env, api)
            return leaf
        return prim.bind(leaf, axes=axes, env=frame.env, **_groups_param(groups))

    return pytrees.tree_map(one, x)


@family.function(binds=(pmax_p,))
def pmax(x: Any, axis_name: Any, *, axis_index_groups: Sequence[Sequence[int]] | None = None) -> Any:
    """Elementwise maximum of ``x`` over the devices of ``axis_name`` (of each group with ``axis_index_groups``)."""
    return _reduce(pmax_p, "pmax", x, axis_name, axis_index_groups)


@family.function(binds=(pmin_p,))
def pmin(x: Any, axis_name: Any, *, axis_index_groups: Sequence[Sequence[int]] | None = None) -> Any:
    """Elementwise minimum of ``x`` over the devices of ``axis_name`` (of each group with ``axis_index_groups``)."""
    return _reduce(pmin_p, "pmin", x, axis_name, axis_index_groups)


@family.function(binds=(pvary_p,))
def pvary(x: Any, axis_name: Any) -> Any:
    """``x`` marked as varying over ``axis_name`` (the same values; see the module docstring)."""
    axes, frame = _bound(axis_name, "pvary")
    return pytrees.tree_map(lambda leaf: pvary_p.bind(leaf, axes=axes, env=frame.env), x)


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """JAX's ``pcast``: only ``to="varying"`` (= :func:`pvary`) is supported."""
    if to != "varying":
        raise NotImplementedError(f"pcast(to={to!r}): only to='varying' is supported")
    return pvary(x, axis_name)


@family.function(binds=(all_gather_p, all_gather_invariant_p))
def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Sequence[Sequence[int]] | None = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Every device's ``x`` gathered along ``axis``: stacked as a new axis, or concatenated when ``tiled``
    (with ``axis_index_groups``, the devices of this one's group, in the group's order).

    ``to``: the result's type over the manual axes ``axis_name``, as JAX's: ``"varying"`` (the default),
    ``"invarying"`` (JAX's ``all_gather_invariant``: the same values, typed as the same on every device of
    ``axis_name``, so ``shard_map``'s ``out_specs`` may leave those axes out; its transpose takes this
    device's block of the cotangent instead of a ``psum_scatter``) or ``"reduced"`` (not supported:
    ``NotImplementedError``). Another value is JAX's ``ValueError``; ``"invarying"``/``"reduced"`` with
    ``axis_index_groups`` are JAX's bare ``NotImplementedError``. ``"invarying"`` over an axis a ``vmap``
    binds is a ``ValueError`` (JAX fails there too: its gather needs a ``shard_map``'s manual axis).
    """
    allowed = {"varying", "reduced", "invarying"}  # JAX's set display: printed in the order JAX's prints
    if to not in allowed:
        raise ValueError(f"Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: {allowed}")
    if to != "varying" and axis_index_groups is not None:
        raise NotImplementedError  # JAX's, bare
    if to == "reduced":
        raise NotImplementedError(f"all_gather(to={to!r}) is not supported by toolkit (JAX's all_gather_reduced): "
                                  "to='varying' and to='invarying' are")
    if to == "invarying":
        return _all_gather_invariant(x, axis_name, axis=axis, tiled=tiled)
    groups = _index_groups(axis_index_groups, axis_name)
    axes, frame = _bound(axis_name, "all_gather")
    if not axes:  # no axis: the value itself, as JAX's collectives return it
        return x
    if groups is not None:
        _group_size(groups)  # JAX sizes the result before binding: empty groups fail here

    def one(leaf: Any) -> Any:
        aval = _aval(leaf, "all_gather")
        d = _axis(axis, aval.ndim + (0 if tiled else 1), "all_gather", "axis", aval.ndim)
        return all_gather_p.bind(leaf, axes=axes, env=frame.env, axis=d, tiled=bool(tiled), **_groups_param(groups))

    return pytrees.tree_map(one, x)


def _all_gather_invariant(x: Any, axis_name: Any, *, axis: int, tiled: bool) -> Any:
    """JAX's ``all_gather_invariant``: ``all_gather_invariant_p`` on each leaf, under either ``check_vma`` (the
    varying-axes analysis of ``toolkit/shard_map.py`` makes the operand vary over the axes, as JAX's
    automatic ``pvary``, and takes the axes off the result)."""
    axes, frame = _bound(axis_name, "all_gather")
    if not axes:  # no axis: the value itself, as JAX's all_gather_invariant returns it
        return x
    vmapped = [a for a in axes if a in frame.env.vmapped]
    if vmapped:
        # JAX makes the operand vary over the axes with pvary, which exists only for a shard_map's manual axes.
        raise ValueError(f"all_gather(to='invarying') over the axis {vmapped[0]!r}, which a vmap binds, is not "
                         "supported (as in JAX, whose all_gather_invariant needs a shard_map's manual axis: 'pvary "
                         "should be called under jax.shard_map.'); use to='varying'")

    def one(leaf: Any) -> Any:
        aval = _aval(leaf, "all_gather")
        d = _axis(axis, aval.ndim + (0 if tiled else 1), "all_gather", "axis", aval.ndim)
        return all_gather_invariant_p.bind(leaf, axes=axes, env=frame.env, axis=d, tiled=bool(tiled))

    return pytrees.tree_map(one, x)


@family.function(binds=(psum_scatter_p,))
def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Sequence[Sequence[int]] | None = None, tiled: bool = False) -> Any:
    """``psum`` of ``x`` of which each device keeps its block of ``scatter_dimension`` (with
    ``axis_index_groups``: the sum over its group, and the block of its position in the group)."""
    groups = _index_groups(axis_index_groups, axis_name)
    axes, frame = _bound(axis_name, "psum_scatter")
    if not axes:  # no axis: the value itself, as JAX's collectives return it
        return x
    if groups is not None:
        _group_size(groups)  # JAX sizes the result before binding: empty groups fail here

    def one(leaf: Any) -> Any:
        aval = _aval(leaf, "psum_scatter")
        d = _axis(scatter_dimension, aval.ndim, "psum_scatter", "scatter_dimension")
        return psum_scatter_p.bind(leaf, axes=axes, env=frame.env, scatter_dimension=d, tiled=bool(tiled),
                                   **_groups_param(groups))

    return pytrees.tree_map(one, x)


@family.function(binds=(ppermute_p,))
def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each device's ``x`` to another along ``axis_name``: ``perm`` lists ``(source, destination)``
    positions; devices no one sends to receive zeros."""
    axes, frame = _bound(axis_name, "ppermute")
    n = frame.env.size(axes)
    perm = tuple((int(s), int(d)) for s, d in perm)
    sources, dests = [s for s, _ in perm], [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(not 0 <= i < n for i in sources + dests):
        raise ValueError(f"ppermute: positions in perm must be in [0, {n}) for axes {axes}, got {perm}")
    return pytrees.tree_map(lambda leaf: ppermute_p.bind(leaf, axes=axes, env=frame.env, perm=perm), x)


@family.function(binds=(all_to_all_p,))
def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Sequence[Sequence[int]] | None = None, tiled: bool = False) -> Any:
    """Split ``split_axis`` into one block per device, send block ``i`` to device ``i`` and
    concatenate the received blocks along ``concat_axis`` (untiled: the split axis, of the
    axes' size, is removed and a new one of that size inserted at ``concat_axis``). With
    ``axis_index_groups`` the exchange is within each group: block ``i`` goes to the group's
    ``i``-th device and the sizes are the group's."""
    groups = _index_groups(axis_index_groups, axis_name)
    axes, frame = _bound(axis_name, "all_to_all")

    def one(leaf: Any) -> Any:
        aval = _aval(leaf, "all_to_all")
        split = _axis(split_axis, aval.ndim, "all_to_all", "split_axis")
        concat = _axis(concat_axis, aval.ndim, "all_to_all", "concat_axis")
        n = _collective_size(frame.env, axes, groups)
        if tiled:
            if aval.shape[split] % n:
                raise ValueError(f"The size of all_to_all split_axis ({aval.shape[split]}) has to be divisible by "
                                 f"the size of the named axis {axis_name} ({n})")
        elif aval.shape[split] != n:
            raise ValueError("all_to_all requires the size of the mapped axis axis_name to equal "
                             f"x.shape[split_axis], but they are {n} and {aval.shape[split]} respectively.")
        elif split != concat:
            # As JAX: a new size-1 axis at concat_axis receives the blocks; the split axis is squeezed.
            if split < concat:
                concat += 1
            else:
                split += 1
            shape = list(aval.shape)
            shape.insert(concat, 1)
            kept = [i for i in range(len(shape)) if i != concat]
            leaf = structural.broadcast_in_dim(leaf, tuple(shape), tuple(kept))
        out = all_to_all_p.bind(leaf, axes=axes, env=frame.env, split_axis=split, concat_axis=concat,
                                **_groups_param(groups))
        if not tiled and split != concat:
            shape = [d for i, d in enumerate(aval_of(out).shape) if i != split]
            out = structural.reshape(out, tuple(shape))
        return out

    return pytrees.tree_map(one, x)


@family.function(binds=(ppermute_p,))
def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """``ppermute`` with JAX's other encoding: position ``i`` receives the value of position ``perm[i]``
    (``perm`` a permutation of ``range(axis size)``)."""
    perm = [int(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


@family.function(binds=(all_to_all_p,))
def pswapaxes(x: Any, axis_name: Any, axis: int, *,
              axis_index_groups: Sequence[Sequence[int]] | None = None) -> Any:
    """Swap the manual axis ``axis_name`` with ``x``'s axis ``axis`` (of the axis' size, or the group's with
    ``axis_index_groups``): ``all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def axis_size(axis_name: Any) -> int:
    """The number of devices along ``axis_name`` (a Python int)."""
    axes, frame = _bound(axis_name, "axis_size")
    return frame.env.size(axes)


@family.function(binds=(axis_index_p,))
def axis_index(axis_name: Any) -> Any:
    """This device's int32 position along ``axis_name`` (row-major over a tuple of axes)."""
    axes, frame = _bound(axis_name, "axis_index")
    return position_along(axes, frame.env)


def position_along(axes: tuple, env: AxisEnv) -> Any:
    """``axis_index`` of the (bound) ``axes`` in ``env``, from ``axis_index_p`` equations: what a rule that
    runs without an axis frame (a transpose) binds for it."""
    if len(axes) == 1:
        return axis_index_p.bind(axes=axes, env=env)
    out: Any = np.int32(0)
    stride = 1
    for a in reversed(axes):
        # One axis at a time: a mesh axis's index is lowered in the mesh's own environment.
        one_env = env
        for other in env.vmapped:
            if other != a:
                one_env = one_env.without(other)
        term = elementwise.mul(axis_index_p.bind(axes=(a,), env=one_env), np.int32(stride))
        out = elementwise.add(out, term)
        stride *= env.size((a,))
    return out
