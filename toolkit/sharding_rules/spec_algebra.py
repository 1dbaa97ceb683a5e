"""Spec algebra shared by the sharding rules of several families.

A spec is a plain tuple, one entry per dimension: None, a mesh axis name or a tuple of names.
"""

from __future__ import annotations

from typing import Any, Sequence

from toolkit.core.sharding_types import ShardingTypeError, hooks


def specs_text(specs: Sequence[tuple]) -> str:
    return ", ".join(str(tuple(s)) for s in specs)


def broadcasting(name: str, specs_in: list, avals_in: list) -> tuple:
    shaped = [(s, a.shape) for s, a in zip(specs_in, avals_in) if a.shape]
    if not shaped:
        return ()
    ndim = len(shaped[0][1])
    result: list[Any] = [None] * ndim
    for i in range(ndim):
        entries = [(s[i], shape[i]) for s, shape in shaped if len(shape) == ndim]
        nontrivial = [e for e, d in entries if not (d == 1 and e is None)]
        if not nontrivial:
            continue
        if all(e == nontrivial[0] for e in nontrivial):
            result[i] = nontrivial[0]
            continue
        for e, _ in entries:
            if result[i] is None and e is not None:
                result[i] = e
            elif result[i] is not None and e is not None and result[i] != e:
                raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: "
                                        f"{specs_text([s for s, _ in shaped])}.")
    return tuple(result)


def axes_size(entry: Any, mesh_sizes: dict | None) -> int:
    if entry is None or mesh_sizes is None:
        return 1
    size = 1
    for n in entry if isinstance(entry, tuple) else (entry,):
        size *= mesh_sizes[n]
    return size


def mesh_sizes(avals: Sequence[Any]) -> dict | None:
    for a in avals:
        if getattr(a, "sharding", None) is not None:
            mesh = a.sharding.mesh
            return dict(zip(mesh.axis_names, mesh.axis_sizes))
    return None


def same_as_operand(specs_in, avals_in, avals_out, **params):
    return [specs_in[0] for _ in avals_out]


def drop(spec: tuple, axes: Sequence[int]) -> tuple:
    return tuple(e for i, e in enumerate(spec) if i not in axes)


def sharding_text(avals_in: Sequence[Any], spec: tuple) -> str:
    """``NamedSharding(mesh=..., spec=...)`` of ``spec`` over the inputs' mesh, for JAX's messages."""
    mesh = next(a.sharding.mesh for a in avals_in if getattr(a, "sharding", None) is not None)
    assert hooks.make is not None  # installed by toolkit.shard.explicit, which made the inputs' shardings
    return str(hooks.make(mesh, tuple(spec)))


def from_bodies(specs_in, avals_in, avals_out, **params):
    return [a.sharding for a in avals_out]


def spec_text(spec: tuple) -> str:
    return "P(" + ", ".join(repr(e) for e in spec) + ")"
