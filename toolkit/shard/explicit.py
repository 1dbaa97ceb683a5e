"""Explicit sharding ("sharding in types"), the type level: ``typeof``, the type a sharding gives an array,
``out_sharding=`` checks. The operations (``reshard``, ``auto_axes``, ``explicit_axes``) are ``toolkit/resharding.py``.

On a mesh whose axes are ``AxisType.Explicit`` (``make_mesh``'s default), an
array's sharding is part of its abstract value: ``typeof(x)`` prints
``float32[8@x,4]`` for an 8×4 array split over axis ``x``. Operations type
their results by sharding rules (``toolkit.core.sharding_types``); ``jit``
outputs are laid out as their types say.

Example::

    mesh = make_mesh((2, 4), ("x", "y"))
    with set_mesh(mesh):
        x = toolkit.device_put(np.ones((8, 4)), P("x"))
        str(typeof(x))                     # 'float32[8@x,4]'
        y = reshard(x, P(None, "y"))       # float32[8,4@y]
"""

from __future__ import annotations

from typing import Any


from toolkit.core import sharding_types
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.shard.mesh import AbstractMesh, AxisType, Mesh, get_mesh
from toolkit.shard.named_sharding import NamedSharding, check_unique_axes
from toolkit.shard.partition_spec import UNCONSTRAINED, PartitionSpec
from toolkit.shard.resolve import resolve_sharding, spec_context_mesh

# -- the type of a sharding -----------------------------------------------------------------------

_made: dict[tuple, NamedSharding] = {}


def _make(mesh: AbstractMesh, spec: tuple) -> NamedSharding | None:
    """The type sharding ``NamedSharding(mesh, P(*spec))``, interned (avals hash and compare it often)."""
    if spec is None:
        return None
    key = (mesh, spec)
    made = _made.get(key)
    if made is None:
        made = _made[key] = NamedSharding(mesh, PartitionSpec(*spec))
    return made


def _canonical(names: list) -> Any:
    return None if not names else (names[0] if len(names) == 1 else tuple(names))


def type_sharding(sharding: Any, ndim: int) -> NamedSharding | None:
    """What an array laid out by ``sharding`` has as its type's sharding.

    None unless ``sharding`` is a ``NamedSharding`` over a mesh with Explicit
    axes; otherwise a ``NamedSharding`` over the abstract mesh whose spec has
    ``ndim`` entries naming only the Explicit axes.
    """
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh
    if AxisType.Explicit not in mesh.axis_types:
        return None
    explicit = set(mesh.explicit_axes)
    spec = tuple(sharding.spec) + (None,) * (ndim - len(sharding.spec))
    entries: list[Any] = []
    for entry in spec[:ndim]:
        if entry is None or entry is UNCONSTRAINED:
            entries.append(None)
            continue
        names = [n for n in (entry if isinstance(entry, tuple) else (entry,)) if n in explicit]
        entries.append(_canonical(names))
    return _make(mesh.abstract_mesh, tuple(entries))


sharding_types.hooks.type_sharding = type_sharding
sharding_types.hooks.make = _make


def concrete_sharding(aval_sharding: NamedSharding, meshes: Any = ()) -> NamedSharding:
    """``aval_sharding`` (over an abstract mesh) over a concrete mesh: the current one, else one of ``meshes``."""
    target = aval_sharding.mesh
    candidates = [get_mesh()] + list(meshes)
    for mesh in candidates:
        if isinstance(mesh, Mesh) and mesh.abstract_mesh == target:
            return NamedSharding(mesh, aval_sharding.spec)
    raise ValueError(f"no concrete mesh matches the abstract mesh {target} of an explicitly sharded value; "
                     "enter the mesh with toolkit.set_mesh(mesh)")


# -- user functions -------------------------------------------------------------------------------

def typeof(x: Any) -> ShapedArray:
    """The abstract value of ``x`` (array, tracer, numpy value or scalar): ``str(typeof(x))`` is ``float32[8@x,4]``."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    return aval_of(x)


# -- out_sharding= (toolkit.numpy's matmul/dot/einsum/reshape/creation functions, lax.reshape/broadcasted_iota) ----

def canonicalize_out_sharding(out_sharding: Any, what: str) -> NamedSharding | None:
    """``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``set_mesh`` or ``use_abstract_mesh``)
    checked as JAX checks it.

    JAX's ``canonicalize_sharding`` with its messages: only those two kinds,
    every axis in the mesh and used once, none of them Auto or Manual, the
    sharding's mesh the context's (the concrete mesh, else the abstract one:
    then a ``PartitionSpec`` gives a ``NamedSharding`` over the abstract mesh). ``what`` is the API's name in them
    (``"jnp.zeros"``, ``"reshape"``...). None stays None.
    """
    if out_sharding is None:
        return None
    if isinstance(out_sharding, NamedSharding) and out_sharding.mesh.empty:
        return None
    if not isinstance(out_sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(f"`out_sharding` argument of {what} only supports instances of `NamedSharding` or "
                        f"`PartitionSpec`. Got {out_sharding} of type: {type(out_sharding)}")
    context = spec_context_mesh()
    mesh: Mesh | AbstractMesh | None
    if isinstance(out_sharding, PartitionSpec):
        mesh, spec = context, out_sharding
    else:
        mesh, spec = out_sharding.mesh, out_sharding.spec
        if context is not None and mesh.abstract_mesh != context.abstract_mesh and not (
                AxisType.Explicit not in mesh.axis_types and AxisType.Explicit not in context.axis_types):
            raise ValueError(f"Context mesh {context.abstract_mesh} should match the mesh of sharding "
                             f"{mesh.abstract_mesh} passed to {what}.")
    if mesh is not None:
        names = PartitionSpec(*spec).axis_names_used()
        check_unique_axes(PartitionSpec(*spec), "NamedSharding spec", mesh)
        for n in names:
            if n not in mesh.axis_names:
                raise ValueError(f"Resource axis: {n} of {PartitionSpec(*spec)!r} is not found in mesh: "
                                 f"{tuple(mesh.axis_names)}.")
        types = dict(zip(mesh.axis_names, mesh.axis_types))
        for n in names:
            if types[n] is not AxisType.Explicit:
                raise ValueError(f"PartitionSpec passed to {what} cannot contain axis names that are of type Auto "
                                 f"or Manual. Got PartitionSpec: {PartitionSpec(*spec)!r} with axis name: {n} of "
                                 f"type: {types[n]}.")
    return resolve_sharding(out_sharding, what, ValueError)


def out_type_sharding(sharding: NamedSharding, shape: tuple) -> NamedSharding | None:
    """The type (explicit sharding) a result of ``shape`` gets from ``out_sharding`` ``sharding``, checked as JAX does.

    A spec may be longer than the rank only by trailing Nones (dropped); its
    axes must divide the dimensions they split. None on a mesh without Explicit axes.
    """
    spec = tuple(sharding.spec)
    ndim = len(shape)
    if len(spec) > ndim:
        if any(e is not None for e in spec[ndim:]):
            # JAX fails an assertion here (``AssertionError: (ndim, spec)``).
            raise ValueError(f"out_sharding {PartitionSpec(*spec)!r} has {len(spec)} entries but the result has rank "
                             f"{ndim} (shape {tuple(shape)}); only trailing None entries may exceed the rank")
        spec = spec[:ndim]
    sizes = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_sizes))
    padded = spec + (None,) * (ndim - len(spec))
    for dim, (entry, d) in enumerate(zip(padded, shape)):
        if entry is None or entry is UNCONSTRAINED:
            continue
        names = entry if isinstance(entry, tuple) else (entry,)
        ways = 1
        for n in names:
            ways *= sizes[n]
        if type(d) is int and d % ways:
            raise ValueError(f"Sharding spec {names} implies that array axis {dim} is partitioned {ways} times, but "
                             f"does not evenly divide the dimension size {d}. Got shape: {tuple(shape)} and sharding "
                             f"NamedSharding(mesh={sharding.mesh.abstract_mesh}, spec={PartitionSpec(*padded)!r})")
    return type_sharding(sharding, ndim)
