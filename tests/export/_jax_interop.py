"""Interop helpers: turn a ``jax.export.Exported`` into toolkit's, and compare the two.

Imported only by tests that already did ``pytest.importorskip("jax")`` (and by
the multi-device subprocess, which sets XLA_FLAGS before importing jax).
"""

from __future__ import annotations

import jax
import numpy as np

from toolkit import export
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray
from toolkit.core.shape_poly import SymbolicScope, symbolic_shape


def to_toolkit(jexp) -> export.Exported:
    """The toolkit Exported with the same fields as ``jexp`` (shapes re-parsed from their text)."""
    scope = SymbolicScope(())

    def aval(a):
        text = ",".join(str(d) for d in a.shape)
        shape = symbolic_shape(text, scope=scope) if text else ()
        return ShapedArray(shape, a.dtype)

    def tree(jax_tree, leaves):
        return pytrees.tree_structure(jax.tree_util.tree_unflatten(jax_tree, list(leaves)))

    in_avals = tuple(aval(a) for a in jexp.in_avals)
    out_avals = tuple(aval(a) for a in jexp.out_avals)
    return export.Exported(
        fun_name=jexp.fun_name, in_tree=tree(jexp.in_tree, in_avals), in_avals=in_avals,
        out_tree=tree(jexp.out_tree, out_avals), out_avals=out_avals,
        in_shardings_hlo=(), out_shardings_hlo=(),
        nr_devices=jexp.nr_devices, platforms=jexp.platforms,
        ordered_effects=tuple(export.Effect(str(type(e))) for e in jexp.ordered_effects),
        unordered_effects=tuple(export.Effect(str(type(e))) for e in jexp.unordered_effects),
        disabled_safety_checks=tuple(export.DisabledSafetyCheck(str(c)) for c in jexp.disabled_safety_checks),
        mlir_module_serialized=jexp.mlir_module_serialized,
        calling_convention_version=jexp.calling_convention_version,
        module_kept_var_idx=jexp.module_kept_var_idx, uses_global_constants=jexp.uses_global_constants,
        _in_named_shardings=jexp._in_named_shardings, _out_named_shardings=jexp._out_named_shardings)


def aval_texts(avals):
    return [(tuple(str(d) for d in a.shape), np.dtype(a.dtype).name) for a in avals]


def assert_matches_jax(t: export.Exported, j) -> None:
    """A toolkit Exported carries the same information as a (deserialized) jax Exported."""
    assert t.fun_name == j.fun_name
    assert aval_texts(t.in_avals) == aval_texts(j.in_avals)
    assert aval_texts(t.out_avals) == aval_texts(j.out_avals)
    assert repr(t.in_tree) == repr(j.in_tree), (t.in_tree, j.in_tree)
    assert repr(t.out_tree) == repr(j.out_tree), (t.out_tree, j.out_tree)
    assert t.nr_devices == j.nr_devices
    assert t.platforms == tuple(j.platforms)
    assert [e.type_name for e in t.ordered_effects] == [str(type(e)) for e in j.ordered_effects]
    assert [e.type_name for e in t.unordered_effects] == [str(type(e)) for e in j.unordered_effects]
    assert [str(c) for c in t.disabled_safety_checks] == [str(c) for c in j.disabled_safety_checks]
    assert t.mlir_module_serialized == j.mlir_module_serialized
    assert t.calling_convention_version == j.calling_convention_version
    assert t.module_kept_var_idx == tuple(j.module_kept_var_idx)
    assert t.uses_global_constants == j.uses_global_constants
    assert t.has_vjp() == j.has_vjp()
    for ours, theirs in ((t._in_named_shardings, j._in_named_shardings),
                         (t._out_named_shardings, j._out_named_shardings)):
        assert ours == tuple(export.shardings.as_exported_named_sharding(s) for s in theirs)
    if j.in_shardings_hlo and any(h is not None for h in j.in_shardings_hlo):
        assert [str(h) for h in t.in_shardings_hlo] == [str(h) for h in j.in_shardings_hlo]
    if j.out_shardings_hlo and any(h is not None for h in j.out_shardings_hlo):
        assert [str(h) for h in t.out_shardings_hlo] == [str(h) for h in j.out_shardings_hlo]


def check_both_ways(jexp, *, vjp_order: int = 0, same_bytes: bool = True) -> export.Exported:
    """JAX's blob reads in toolkit; toolkit's blob (from the same fields) reads in JAX; optionally byte-equal."""
    from jax import export as jexport

    blob = bytes(jexp.serialize(vjp_order=vjp_order))
    jax_view = jexport.deserialize(blob)
    ours = export.deserialize(blob)
    assert_matches_jax(ours, jax_view)
    rebuilt = to_toolkit(jexp)
    assert ours.serialize() == export.deserialize(ours.serialize()).serialize()
    if vjp_order == 0:
        our_blob = bytes(rebuilt.serialize())
        if same_bytes:
            assert our_blob == blob, "toolkit wrote different bytes than JAX for the same fields"
        assert_matches_jax(ours, jexport.deserialize(our_blob))
    # What toolkit re-serializes from what it read is accepted by JAX too.
    again = jexport.deserialize(bytes(ours.serialize(vjp_order=vjp_order)))
    assert_matches_jax(ours, again)
    return ours


def check_sharded() -> None:
    """Run in a subprocess with 8 host devices: sharded exports both ways."""
    from jax import export as jexport
    from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

    assert jax.device_count() == 8, jax.devices()
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    f = jax.jit(lambda a, b: (a @ b, a.sum()),
                in_shardings=(NamedSharding(mesh, P("x", "y")), NamedSharding(mesh, P("y", None))),
                out_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())))
    exp = check_both_ways(jexport.export(f)(np.ones((8, 8), np.float32), np.ones((8, 4), np.float32)))
    assert exp.nr_devices == 8
    assert [str(h) for h in exp.in_shardings_hlo] == [
        "{devices=[2,4]<=[8]}", "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"]

    explicit = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    g = jax.jit(lambda a, b: (a * 2, b + 1),
                in_shardings=(NamedSharding(explicit, P("x", "y")), NamedSharding(explicit, P(None, "x"))),
                out_shardings=(NamedSharding(explicit, P("x")), NamedSharding(explicit, P(None, "x"))))
    exp = check_both_ways(jexport.export(g)(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)))
    assert exp._in_named_shardings[0].mesh.axis_types == ("Explicit", "Auto")

    # Unspecified inputs next to sharded ones, and a 1-D mesh with a tuple spec.
    mesh1 = Mesh(np.array(jax.devices()), ("d",))
    h = jax.jit(lambda a, b: a + b.sum(), in_shardings=(NamedSharding(mesh1, P("d")), None))
    check_both_ways(jexport.export(h)(np.ones((16,), np.float32), np.ones((3,), np.float32)))
    k = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P(("x", "y"))))
    check_both_ways(jexport.export(k)(np.ones((16, 2), np.float32)))
    print("sharded interop ok")


if __name__ == "__main__":
    check_sharded()
