"""Operations on explicitly sharded values: ``reshard``, ``auto_axes``, ``explicit_axes``, ``with_out_sharding``.

The op-level half of explicit sharding ("sharding in types"); the type-level half — ``typeof``, the
type a sharding gives an array, ``out_sharding=`` checks — is ``toolkit/shard/explicit.py``, below ``lax``.
These bind ``lax``'s sharding constraint and run eagerly through ``jit``, so they sit above both: ``lax``
reaches ``with_out_sharding`` through ``toolkit.core.sharding_types.with_out_sharding``, the hook this
module installs (as the eager hooks of ``toolkit.core.tracing``), never by importing it.

Example::

    with toolkit.set_mesh(toolkit.make_mesh((2, 4), ("x", "y"))):
        x = toolkit.device_put(np.ones((8, 4)), P("x"))
        y = toolkit.reshard(x, P(None, "y"))       # float32[8,4@y]
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from toolkit.core import pytrees, sharding_types, tracing
from toolkit.lax.sharding import sharding_constraint_p
from toolkit.shard.explicit import canonicalize_out_sharding, out_type_sharding, typeof
from toolkit.shard.mesh import AxisType, Mesh, get_mesh, set_mesh
from toolkit.shard.named_sharding import NamedSharding
from toolkit.shard.partition_spec import PartitionSpec
from toolkit.shard.resolve import is_sharding_leaf, resolve_sharding
from toolkit.stages import jit

__all__ = ["auto_axes", "explicit_axes", "reshard", "with_out_sharding"]


def _spec_of(s: Any) -> PartitionSpec:
    if isinstance(s, PartitionSpec):
        return s
    if isinstance(s, NamedSharding):
        return s.spec
    raise TypeError(f"expected a PartitionSpec or NamedSharding, got {s!r}")


def _on_mesh(s: Any, mesh: Mesh) -> Any:
    return NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s


def _tree_map2(fun: Callable, xs: Any, shardings: Any, what: str) -> Any:
    leaves, tree = pytrees.tree_flatten(xs)
    if is_sharding_leaf(shardings):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf = pytrees.broadcast_prefix(shardings, xs, is_leaf=is_sharding_leaf)
    return pytrees.tree_unflatten(tree, [fun(x, s) for x, s in zip(leaves, per_leaf)])


def _bind_constraint(x: Any, sharding: Any) -> Any:
    return sharding_constraint_p.bind(x, sharding=sharding)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (a pytree) laid out by ``out_shardings`` (shardings or, under ``set_mesh``, ``PartitionSpec``s).

    Unlike ``with_sharding_constraint`` this changes an explicitly sharded
    value's type (JAX's ``jax.sharding.reshard``); inside ``jit`` it is a
    sharding constraint, outside a transfer. As in JAX, each sharding names
    only Explicit axes (``ValueError`` for an Auto or Manual one, and for
    None or an empty mesh; ``TypeError`` for another kind of sharding).
    """
    def one(x: Any, s: Any) -> Any:
        return _bind_constraint(x, _checked_reshard_target(s))
    return _tree_map2(one, xs, out_shardings, "reshard")


def _checked_reshard_target(s: Any) -> NamedSharding:
    """``s`` as the ``NamedSharding`` ``reshard`` lays a leaf out by, checked as JAX's ``canonicalize_sharding``
    (without its context-mesh check, as JAX's ``reshard`` asks): a ``NamedSharding`` over a non-empty mesh or a
    ``PartitionSpec`` under a mesh, naming only Explicit axes (an Auto axis is the partitioner's to choose, so it
    cannot be a type; ``with_sharding_constraint`` constrains those)."""
    if s is None or (isinstance(s, NamedSharding) and s.mesh.empty):
        raise ValueError("Reshard should only be used with out_shardings which are non-None and have a non-empty "
                         f"mesh. Got sharding {s}.")
    if not isinstance(s, (NamedSharding, PartitionSpec)):
        raise TypeError("`out_sharding` argument of reshard only supports instances of `NamedSharding` or "
                        f"`PartitionSpec`. Got {s} of type: {type(s)}")
    sharding = resolve_sharding(s, "reshard", ValueError)
    types = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types))
    for name in sharding.spec.axis_names_used():
        if types.get(name) in (AxisType.Auto, AxisType.Manual):
            raise ValueError(f"PartitionSpec passed to reshard cannot contain axis names that are of type Auto or "
                             f"Manual. Got PartitionSpec: {sharding.spec!r} with axis name: {name} of "
                             f"type: {types[name]}.")
    return sharding


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


def _static_key(value: Any) -> Any:
    """``value`` as a cache key with every value's type (``1`` and ``1.0`` differ), None unless plain.

    Plain: scalars, strings, dtypes, types, functions, shardings, specs and tuples/dicts of them.
    """
    plain = (type(None), bool, int, float, complex, str, np.dtype, type, np.generic, NamedSharding, PartitionSpec,
             types.FunctionType)
    if isinstance(value, dict):
        items = tuple((k, _static_key(v)) for k, v in value.items())
        return None if any(v is None for _, v in items) else (dict, items)
    if isinstance(value, tuple) and not isinstance(value, PartitionSpec):
        items = tuple(_static_key(v) for v in value)
        return None if any(v is None for v in items) else (type(value), items)
    if isinstance(value, plain):
        return (type(value), value)
    return None


@functools.lru_cache(maxsize=256)
def _eager_jit(static: "_Static") -> Callable:
    return jit(functools.partial(_typed_call, **static.value))


class _Static:
    """Static arguments keyed by :func:`_static_key` (their values compare by key, not by ``==``)."""

    def __init__(self, value: dict, key: Any):
        self.value, self.key = value, key

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Static) and other.key == self.key


def _typed_call(*args: Any, fun: Callable, kwargs: Any, sharding: NamedSharding, typed: NamedSharding | None,
                primitive: str | None, how: str) -> Any:
    kwargs = dict(kwargs)
    if typed is None:  # no Explicit axes: only a layout
        return reshard(fun(*args, **kwargs), sharding)
    if how == "auto":
        # JAX's einsum of more than two operands: the whole computation with the Explicit axes Auto, then resharded.
        return auto_axes(lambda *xs: fun(*xs, **kwargs), axes=sharding.mesh.explicit_axes, out_sharding=sharding)(*args)
    if how == "typed_by_fun":
        out = fun(*args, out_type=typed, **kwargs)
        return out if typeof(out).sharding == typed else reshard(out, sharding)
    make = sharding_types.hooks.make
    assert make is not None  # installed by toolkit.shard.explicit, which this module imports
    override = typed if how == "direct" else make(typed.mesh, ())  # "replicated"
    if primitive is not None:
        with sharding_types.out_sharding_override(primitive, override):
            out = fun(*args, **kwargs)
    else:
        out = fun(*args, **kwargs)
    if typeof(out).sharding != typed:
        out = reshard(out, sharding)
    return out


def with_out_sharding(fun: Callable, args: tuple, kwargs: dict, out_sharding: Any, what: str, shape: tuple, *,
                      primitive: str | None = None, how: str = "direct") -> Any:
    """``fun(*args, **kwargs)`` (arrays ``args``, static ``kwargs``) whose result's type is ``out_sharding``.

    What ``out_sharding=`` does in JAX: the result of ``shape`` is typed
    (explicit sharding) and laid out by ``out_sharding`` — a ``NamedSharding``,
    or a ``PartitionSpec`` under ``toolkit.set_mesh``, checked with JAX's
    messages. ``how`` says how:

    * ``"direct"``: the primitive named ``primitive`` that makes the result is
      typed so (its sharding rule is not asked, as for a reshape JAX cannot
      infer); a result not made by it (a no-op) is resharded;
    * ``"replicated"``: that primitive's results are typed replicated, then resharded;
    * ``"auto"``: ``fun`` runs with the Explicit axes Auto (``auto_axes``), its result resharded;
    * ``"typed_by_fun"``: ``fun`` is also passed ``out_type`` (the result's type sharding) and types
      its result itself (einsum: the product before the final transpose); otherwise resharded.

    Outside a trace it runs as one ``jit`` (eager executables are cached
    without the override), placed as its type says, as JAX places it.
    """
    sharding = canonicalize_out_sharding(out_sharding, what)
    if sharding is None:
        return fun(*args, **kwargs)
    typed = out_type_sharding(sharding, tuple(shape))
    static: dict[str, Any] = dict(fun=fun, kwargs=tuple(kwargs.items()), sharding=sharding, typed=typed,
                                  primitive=primitive, how=how)
    if tracing.is_tracing():
        return _typed_call(*args, **static)
    key = _static_key(static)
    if key is None:
        return jit(functools.partial(_typed_call, **static))(*args)
    return _eager_jit(_Static(static, key))(*args)


sharding_types.hooks.with_out_sharding = with_out_sharding
