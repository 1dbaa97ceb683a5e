"""Explicit sharding ("sharding in types"): ``typeof``, ``reshard``, ``auto_axes``, ``explicit_axes``.

On a mesh whose axes are ``AxisType.Explicit`` (``make_mesh``'s default), an
array's sharding is part of its abstract value: ``typeof(x)`` prints
``float32[8@x,4]`` for an 8×4 array split over axis ``x``. Operations type
their results by sharding rules (``toolkit.core.sharding_rules``); ``jit``
outputs are laid out as their types say.

Example::

    mesh = make_mesh((2, 4), ("x", "y"))
    with set_mesh(mesh):
        x = toolkit.device_put(np.ones((8, 4)), P("x"))
        str(typeof(x))                     # 'float32[8@x,4]'
        y = reshard(x, P(None, "y"))       # float32[8,4@y]
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from toolkit.core import sharding_rules
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.shard.mesh import AbstractMesh, AxisType, Mesh, get_mesh, set_mesh
from toolkit.shard.named_sharding import NamedSharding
from toolkit.shard.partition_spec import UNCONSTRAINED, PartitionSpec
from toolkit.shard.resolve import is_sharding_leaf, resolve_sharding

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
    entries = []
    for entry in spec[:ndim]:
        if entry is None or entry is UNCONSTRAINED:
            entries.append(None)
            continue
        names = [n for n in (entry if isinstance(entry, tuple) else (entry,)) if n in explicit]
        entries.append(_canonical(names))
    return _make(mesh.abstract_mesh, tuple(entries))


sharding_rules.hooks.type_sharding = type_sharding
sharding_rules.hooks.make = _make


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


def _tree_map2(fun: Callable, xs: Any, shardings: Any, what: str) -> Any:
    from toolkit.core import tree_util
    leaves, tree = tree_util.tree_flatten(xs)
    if is_sharding_leaf(shardings):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf = tree_util.broadcast_prefix(shardings, xs, is_leaf=is_sharding_leaf)
    return tree_util.tree_unflatten(tree, [fun(x, s) for x, s in zip(leaves, per_leaf)])


def _bind_constraint(x: Any, sharding: Any) -> Any:
    from toolkit.lax.sharding import sharding_constraint_p
    return sharding_constraint_p.bind(x, sharding=sharding)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (a pytree) laid out by ``out_shardings`` (shardings or, under ``set_mesh``, ``PartitionSpec``s).

    Unlike ``with_sharding_constraint`` this changes an explicitly sharded
    value's type (JAX's ``jax.sharding.reshard``); inside ``jit`` it is a
    sharding constraint, outside a transfer.
    """
    def one(x: Any, s: Any) -> Any:
        sharding = resolve_sharding(s, "reshard")
        if sharding is None:
            raise TypeError("reshard needs a sharding or PartitionSpec for every leaf, got None")
        return _bind_constraint(x, sharding)
    return _tree_map2(one, xs, out_shardings, "reshard")


def _axes_tuple(axes: Any, default: tuple) -> tuple:
    if axes is None:
        return default
    return (axes,) if isinstance(axes, str) else tuple(axes)


def _context_mesh(what: str) -> Mesh:
    mesh = get_mesh()
    if mesh is None or mesh.empty:
        raise RuntimeError(f"{what} needs a mesh in context: use it under `with toolkit.set_mesh(mesh):`")
    return mesh


def _retyped_mesh(mesh: Mesh, axes: tuple, new_type: AxisType, what: str) -> Mesh:
    for a in axes:
        if a not in mesh.axis_names:
            raise ValueError(f"{what}: axis {a!r} is not in the mesh; its axes are {mesh.axis_names}")
    return mesh.update(axis_types=tuple(new_type if n in axes else t
                                        for n, t in zip(mesh.axis_names, mesh.axis_types)))


def _current_spec(x: Any) -> PartitionSpec:
    sharding = typeof(x).sharding
    return PartitionSpec() if sharding is None else sharding.spec


def auto_axes(fun: Callable | None = None, /, *, axes: Any = None, out_sharding: Any = None) -> Any:
    """``fun`` run with mesh ``axes`` (default: every Explicit axis) Auto; its outputs resharded to ``out_sharding``.

    Inside ``fun`` the inputs' types no longer mention those axes (the
    partitioner chooses); the outputs come back explicitly sharded as
    ``out_sharding`` (a pytree prefix of specs or shardings) says.
    """
    if fun is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        mesh = _context_mesh("auto_axes")
        names = _axes_tuple(axes, mesh.explicit_axes)
        inner = _retyped_mesh(mesh, names, AxisType.Auto, "auto_axes")
        if out_sharding is None:
            raise ValueError("auto_axes needs out_sharding: the shardings the outputs get back on the Explicit axes")
        # Dropping the axes from the types: the same layout over the mesh whose axes are Auto.
        args, kwargs = _tree_map2(lambda x, _: _bind_constraint(x, NamedSharding(inner, _current_spec(x))),
                                  (args, kwargs), None, "auto_axes")
        with set_mesh(inner):
            out = fun(*args, **kwargs)
        return _tree_map2(lambda x, s: _bind_constraint(x, resolve_sharding(_on_mesh(s, mesh), "auto_axes")),
                          out, out_sharding, "auto_axes")
    return wrapper


def explicit_axes(fun: Callable | None = None, /, *, axes: Any = None, in_sharding: Any = None) -> Any:
    """``fun`` run with mesh ``axes`` (default: every Auto axis) Explicit, its inputs typed by ``in_sharding``.

    The outputs go back to the Auto axes (their types lose those axes).
    """
    if fun is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        mesh = _context_mesh("explicit_axes")
        names = _axes_tuple(axes, mesh.auto_axes)
        inner = _retyped_mesh(mesh, names, AxisType.Explicit, "explicit_axes")
        if in_sharding is None:
            raise ValueError("explicit_axes needs in_sharding: the shardings the inputs have on the Explicit axes")
        if kwargs:
            raise TypeError("explicit_axes: pass the inputs positionally (in_sharding is a prefix of them)")
        args = _tree_map2(lambda x, s: _bind_constraint(x, NamedSharding(inner, _spec_of(s))),
                          args, tuple(in_sharding) if isinstance(in_sharding, list) else in_sharding,
                          "explicit_axes")
        with set_mesh(inner):
            out = fun(*args)
        return _tree_map2(lambda x, _: _bind_constraint(x, NamedSharding(mesh, _current_spec(x))),
                          out, None, "explicit_axes")
    return wrapper


def _spec_of(s: Any) -> PartitionSpec:
    if isinstance(s, PartitionSpec):
        return s
    if isinstance(s, NamedSharding):
        return s.spec
    raise TypeError(f"expected a PartitionSpec or NamedSharding, got {s!r}")


def _on_mesh(s: Any, mesh: Mesh) -> Any:
    return NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s
