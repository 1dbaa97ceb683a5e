"""The sharding passes at shard_map regions, and the Shardy mesh-symbol table they share with the lowering."""

import numpy as np
import pytest

import toolkit
from toolkit import lax
from toolkit.passes.sharding_annotate import annotate_shardings
from toolkit.passes.sharding_report import collect_sharded_values, format_report
from toolkit.shard import AbstractMesh, Mesh, NamedSharding, PartitionSpec as P, ShardyMeshSymbols

pytestmark = pytest.mark.multidevice


def _shard_map_module(mesh, partitioner):
    def body(a, b):
        return lax.psum(a * b, "y")

    f = toolkit.jit(toolkit.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P("y")), out_specs=P("x")))
    args = (np.ones((8, 8), np.float32), np.ones(8, np.float32))
    return f.trace(*args).lower(partitioner=partitioner).compiler_ir()


def test_report_rows_of_a_manual_computation(mesh):
    module = _shard_map_module(mesh, "shardy")
    rows = {r.value.split(" ", 2)[-1]: r for r in collect_sharded_values(module.operation)}
    assert rows["manual in 0"].shard_shape == "4x2" and rows["manual in 1"].shard_shape == "2"
    assert rows["manual out 0"].sharding == '<@mesh, [{"x"}, {}]> manual_axes={"x", "y"}'
    assert rows["manual out 0"].type == "tensor<8x2xf32>" and rows["manual out 0"].devices == "8"
    assert "manual in 0" in format_report(list(rows.values()))


def test_report_rows_of_gspmd_manual_custom_calls(mesh):
    module = _shard_map_module(mesh, "gspmd")
    rows = collect_sharded_values(module.operation)
    entering = [r for r in rows if r.value.endswith("manual in")]
    leaving = [r for r in rows if r.value.endswith("manual out")]
    assert [r.shard_shape for r in entering] == ["4x2", "2"] and all(r.devices == "manual" for r in entering)
    assert leaving[0].type == "tensor<8x2xf32> -> tensor<4x2xf32>" and leaving[0].devices == "8"
    assert not any(r.shard_shape.startswith("error") for r in rows)


def test_annotate_reuses_the_regions_mesh_and_names_another(mesh):
    module = _shard_map_module(mesh, "shardy")
    flat = AbstractMesh((8,), ("z",))
    annotate_shardings(module, [NamedSharding(flat, P("z"))], [NamedSharding(mesh, P("x"))], mode="shardy")
    text = str(module)
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n  sdy.mesh @mesh_0 = <["z"=8]>' in text
    assert 'sdy.sharding = #sdy.sharding<@mesh_0, [{"z"}, {}]>' in text
    assert 'jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text


def test_annotate_refuses_gspmd_form_over_a_manual_computation(mesh):
    module = _shard_map_module(mesh, "shardy")
    with pytest.raises(ValueError, match="sdy.manual_computation .*only the Shardy partitioner runs"):
        annotate_shardings(module, [NamedSharding(mesh, P("x"))], mode="gspmd")


def test_mesh_symbols_are_named_as_jax_names_them():
    symbols = ShardyMeshSymbols()
    a, b = AbstractMesh((2, 4), ("x", "y")), AbstractMesh((8,), ("z",))
    assert [symbols.name_for(a), symbols.name_for(b), symbols.name_for(a)] == ["mesh", "mesh_0", "mesh"]
    assert symbols.declarations() == [("mesh", '<["x"=2, "y"=4]>'), ("mesh_0", '<["z"=8]>')]
    adopted = ShardyMeshSymbols()
    adopted.adopt("mesh_0", '<["z"=8]>')  # a name the module already uses
    assert adopted.name_for(a) == "mesh" and adopted.name_for(b) == "mesh_0" and len(adopted) == 2
    assert adopted.name_for(AbstractMesh((4, 2), ("p", "q"))) == "mesh_1"


def test_exported_shard_map_keeps_one_mesh_when_called_under_another(mesh):
    # A called export's mesh joins the caller's symbol table: equal meshes share a symbol, others get new names.
    from toolkit import export
    flat = Mesh(np.array(toolkit.devices()[:8]), ("z",))
    inner = toolkit.jit(toolkit.shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P("x", "y"),
                                          out_specs=P("x")))
    exp = export.export(inner)(np.ones((8, 8), np.float32))
    outer = toolkit.jit(lambda a: exp.call(lax.with_sharding_constraint(a, NamedSharding(flat, P("z")))))
    text = outer.lower(np.ones((8, 8), np.float32)).as_text()
    assert text.count("sdy.mesh @") == 2, text
    out = outer(np.arange(64, dtype=np.float32).reshape(8, 8))
    expected = np.arange(64, dtype=np.float32).reshape(8, 8).reshape(8, 4, 2).sum(1)
    np.testing.assert_allclose(np.asarray(out), expected)
