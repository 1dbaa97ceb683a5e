"""Sharding rules: how explicit shardings ("sharding in types") flow through primitives.

An abstract value may carry ``sharding`` — a ``NamedSharding`` over an
``AbstractMesh`` with Explicit axes, its spec one entry per dimension (see
``toolkit.shard.explicit``). When any input of a primitive carries one,
``Primitive.abstract_eval`` calls :func:`apply_sharding_rules`, which looks up
the primitive's rule in the one table :data:`SHARDING_RULES` (filled for the
families by ``toolkit/sharding_rules/<family>.py``, imported on first use) and types the outputs.

A rule works on specs (plain tuples, one entry per dimension: None, an
axis name or a tuple of names); it may also return a type sharding itself or
None (untyped) for an output, as the sharding constraint's rule does::

    @register_sharding_rule(neg_p)
    def rule(specs_in, avals_in, avals_out, **params):
        return [specs_in[0]]           # one spec per output

so this module knows nothing of meshes or devices; inputs without a sharding
count as replicated. A primitive without a rule given an explicitly sharded
input raises :class:`ShardingTypeError` naming it. After a rule, every output
spec is checked like JAX does: a mesh axis used twice, or a dimension its axes
do not divide, is an error.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Protocol, Sequence

from toolkit.core.avals import ShapedArray, format_sharded_shape, short_dtype_name
from toolkit.core.registries import RuleTable

Spec = tuple  # one entry per dimension: None, an axis name, or a tuple of axis names


class ShardingTypeError(Exception):
    """Explicit shardings that do not fit an operation (JAX's ``core.ShardingTypeError``)."""


#: primitive -> rule(specs_in, avals_in, avals_out, **params) -> list of output specs
class ShardingRule(Protocol):
    """``rule(specs_in, avals_in, avals_out, **params) -> one spec (or type sharding, or None) per output``."""

    def __call__(self, specs_in: list[Spec], avals_in: list[ShapedArray], avals_out: list[ShapedArray], /,
                 *args: Any, **params: Any) -> list[Any]: ...


SHARDING_RULES: RuleTable[ShardingRule] = RuleTable("sharding", "toolkit.sharding_rules")
#: primitive -> why it has no sharding rule (read by the rule-coverage test, ``tests/test_rule_coverage.py``).
NO_SHARDING_RULE: dict[Any, str] = {}


def register_sharding_rule(*primitives: Any) -> Callable[[ShardingRule], ShardingRule]:
    """Decorator: ``fn`` is the sharding rule of each of ``primitives``."""
    def register(fn: ShardingRule) -> ShardingRule:
        for p in primitives:
            SHARDING_RULES[p] = fn
        return fn
    return register


# -- the bridges to toolkit.shard (installed by toolkit.shard.explicit and toolkit.resharding) ------------

class _Hooks:
    #: (sharding, ndim) -> the type sharding (NamedSharding over the abstract mesh) or None
    type_sharding: Callable[[Any, int], Any] | None = None
    #: (abstract mesh, spec tuple) -> NamedSharding
    make: Callable[[Any, Spec], Any] | None = None
    #: ``toolkit.resharding.with_out_sharding`` (installed by it): lax's ``out_sharding=``/``sharding=``
    with_out_sharding: Callable[..., Any] | None = None


hooks = _Hooks()


def with_out_sharding(fun: Callable, args: tuple, kwargs: dict, out_sharding: Any, what: str, shape: tuple,
                      **options: Any) -> Any:
    """``fun(*args, **kwargs)`` typed and laid out by ``out_sharding`` (``toolkit.resharding.with_out_sharding``).

    The hook lets ``toolkit.lax`` offer ``out_sharding=`` without importing the layers above it.
    """
    if hooks.with_out_sharding is None:
        raise RuntimeError(f"{what}: out_sharding= needs toolkit.resharding; import toolkit first")
    return hooks.with_out_sharding(fun, args, kwargs, out_sharding, what, shape, **options)


def type_sharding(sharding: Any, ndim: int) -> Any:
    """The sharding an array placed by ``sharding`` has in its type (None unless Explicit axes are involved)."""
    if sharding is None or hooks.type_sharding is None:
        return None
    return hooks.type_sharding(sharding, ndim)


# -- out_sharding= overrides (toolkit.numpy's matmul/dot/einsum, lax.dot_general) ---------------

#: (primitive name, abstract mesh, spec) pushed by :func:`out_sharding_override`; read by the next bind.
_overrides: list[tuple[str, Any, Spec]] = []


@contextlib.contextmanager
def out_sharding_override(primitive_name: str, sharding: Any) -> Iterator[None]:
    """Inside the block, the outputs of ``primitive_name`` get ``sharding`` (a type sharding) as their type.

    What ``out_sharding=`` of ``toolkit.numpy.matmul`` and friends does: the
    ambiguous cases of the rule (sharded contracting dimensions) are decided by the caller.
    """
    _overrides.append((primitive_name, sharding.mesh, tuple(sharding.spec)))
    try:
        yield
    finally:
        _overrides.pop()


def _override_for(primitive: Any) -> tuple[Any, Spec] | None:
    for name, mesh, spec in reversed(_overrides):
        if name == primitive.name:
            return mesh, spec
    return None


# -- applying the rules ---------------------------------------------------------------------------

def _entry_axes(entry: Any) -> tuple:
    if entry is None:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def spec_of(aval: ShapedArray) -> Spec:
    """``aval``'s spec with one entry per dimension (all None when it has no sharding)."""
    sharding = aval.sharding
    if sharding is None:
        return (None,) * len(aval.shape)
    spec = tuple(sharding.spec)
    return spec + (None,) * (len(aval.shape) - len(spec))


def _type_text(aval: ShapedArray, spec: Spec | None = None) -> str:
    spec = spec_of(aval) if spec is None else spec
    return f"{short_dtype_name(aval.dtype)}[{format_sharded_shape(aval.shape, spec)}]"


def needs_rules(avals: Sequence[Any], primitive: Any) -> bool:
    for a in avals:
        if getattr(a, "sharding", None) is not None:
            return True
    return bool(_overrides) and _override_for(primitive) is not None


def apply_sharding_rules(primitive: Any, avals_in: Sequence[ShapedArray], avals_out: list[ShapedArray],
                         params: dict[str, Any]) -> list[ShapedArray]:
    """``avals_out`` typed with the shardings ``primitive``'s rule gives for ``avals_in``."""
    mesh = None
    for a in avals_in:
        sharding = getattr(a, "sharding", None)
        if sharding is None:
            continue
        if mesh is None:
            mesh = sharding.mesh
        elif sharding.mesh != mesh:
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one mesh: {mesh} and another mesh: "
                                    f"{sharding.mesh}")
    override = _override_for(primitive) if _overrides else None
    if override is not None:
        o_mesh, o_spec = override
        if mesh is not None and o_mesh != mesh:
            raise ShardingTypeError(f"the out_sharding of `{primitive.name}` is over mesh {o_mesh}, but its inputs "
                                    f"are sharded over mesh {mesh}")
        mesh = o_mesh
        out_specs = [tuple(o_spec) + (None,) * (len(a.shape) - len(o_spec)) for a in avals_out]
    else:
        rule = SHARDING_RULES.lookup(primitive)
        if rule is None:
            inputs = ", ".join(_type_text(a) for a in avals_in if isinstance(a, ShapedArray))
            raise ShardingTypeError(
                f"`{primitive.name}` has no sharding rule, so it cannot take explicitly sharded inputs (got "
                f"{inputs}). Reshard the inputs to replicated with toolkit.reshard(x, P()), or run it under "
                "toolkit.auto_axes.")
        specs_in = [spec_of(a) if isinstance(a, ShapedArray) else () for a in avals_in]
        out_specs = rule(specs_in, list(avals_in), avals_out, **params)
    result = []
    for aval, spec in zip(avals_out, out_specs):
        if spec is None or not isinstance(spec, tuple):
            # A rule may type an output itself (a sharding over another mesh) or leave it untyped (None).
            result.append(aval.update(sharding=spec))
            continue
        _check_spec(primitive, avals_in, aval, spec, mesh)
        assert hooks.make is not None  # installed by toolkit.shard.explicit, which made the shardings typed here
        result.append(aval.update(sharding=hooks.make(mesh, spec)))
    return result


def _check_spec(primitive: Any, avals_in: Sequence[Any], aval: ShapedArray, spec: Spec, mesh: Any) -> None:
    seen: set = set()
    for entry in spec:
        for name in _entry_axes(entry):
            if name in seen:
                inputs = ", ".join(_type_text(a) for a in avals_in if isinstance(a, ShapedArray))
                raise ShardingTypeError(f"{primitive.name} operation with inputs: {inputs} produces an illegally "
                                        f"sharded result: {_type_text(aval, spec)}")
            seen.add(name)
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    for dim, (d, entry) in enumerate(zip(aval.shape, spec)):
        ways = 1
        for name in _entry_axes(entry):
            ways *= sizes[name]
        if ways > 1 and type(d) is int and d % ways:
            raise ShardingTypeError(
                f"{primitive.name}: sharding spec {entry!r} implies that array axis {dim} is partitioned {ways} "
                f"times, but it does not evenly divide the dimension size {d} of the result "
                f"{_type_text(aval, spec)}")
