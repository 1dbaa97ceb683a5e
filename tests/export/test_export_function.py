"""``toolkit.export.export`` and ``Exported.call``: fields, round trips, calling conventions, platforms, errors."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo

import toolkit
import toolkit.numpy as tnp
from toolkit.core import pytrees
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct
from toolkit.core.primitive import Primitive
from toolkit.export import DisabledSafetyCheck, calling_convention, deserialize, export
from toolkit.lowering.registry import register_lowering

from _exported_helpers import assert_same_fields

F32 = np.float32


def _spec(*shape, dtype=F32):
    return ShapeDtypeStruct(shape, dtype)


# A primitive whose lowering differs per platform: cpu adds, cuda/rocm multiply.
platform_test_p = Primitive("export_test_platform_dependent", shape_rule=lambda x: x)


@register_lowering(platform_test_p, platforms=["cpu"])
def _cpu_rule(ctx, x):
    return stablehlo.add(x, x)


@register_lowering(platform_test_p, platforms=["cuda", "rocm"])
def _gpu_rule(ctx, x):
    return stablehlo.multiply(x, x)


# A primitive lowered to a custom call without a stability guarantee.
custom_test_p = Primitive("export_test_custom_call", shape_rule=lambda x: x)


@register_lowering(custom_test_p)
def _custom_rule(ctx, x):
    return stablehlo.CustomCallOp([x.type], [x], call_target_name="my_unstable_kernel").result


def f_static(x, y):
    return tnp.sin(x) * 2 + y


def test_fields_of_a_static_export():
    exp = export(toolkit.jit(f_static))(_spec(4), np.ones(4, F32))
    assert exp.fun_name == "f_static"
    assert exp.in_tree == pytrees.tree_structure(((1, 2), {}))
    assert exp.out_tree == pytrees.tree_structure(1)
    assert exp.in_avals == (ShapedArray((4,), F32), ShapedArray((4,), F32))
    assert exp.out_avals == (ShapedArray((4,), F32),)
    assert exp.platforms == ("cpu",)
    assert exp.nr_devices == 1
    assert exp.calling_convention_version == 10
    assert exp.module_kept_var_idx == (0, 1)
    assert not exp.uses_global_constants
    assert exp.ordered_effects == exp.unordered_effects == ()
    assert exp.in_shardings_hlo == (None, None) and exp.out_shardings_hlo == (None,)
    assert exp._in_named_shardings == (None, None)
    assert exp.mlir_module_serialized.startswith(b"ML\xefR")
    assert b"StableHLO_v1.15.0" in exp.mlir_module_serialized[:64]
    text = exp.mlir_module()
    assert "jax.uses_shape_polymorphism = false" in text
    assert 'jax.result_info = "result"' in text
    assert "mhlo.num_partitions = 1" in text
    assert exp.has_vjp()  # toolkit.ad differentiates the traced program (docs/autodiff.md)


def test_round_trip_and_call_give_the_jit_results():
    x, y = np.arange(4, dtype=F32), np.full(4, 0.5, F32)
    exp = export(toolkit.jit(f_static))(x, y)
    again = deserialize(exp.serialize())
    assert again == exp
    assert_same_fields(again, exp)
    expected = np.asarray(toolkit.jit(f_static)(x, y))
    np.testing.assert_allclose(np.asarray(exp.call(x, y)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(again.call(x, y)), expected, rtol=1e-6)


Point = collections.namedtuple("Point", ["x", "y"])


def test_pytrees_kwargs_and_dropped_arguments():
    def f(a, pair, *, scale, unused):
        return {"sum": a["w"] * scale + pair[1], "list": [pair[0], a["w"].sum()]}

    specs = ({"w": _spec(3)}, (_spec(2), _spec(3)))
    exp = export(toolkit.jit(f))(*specs, scale=_spec(), unused=_spec(7))
    assert exp.module_kept_var_idx == (0, 1, 2, 3)  # `unused` (index 4) is dropped
    assert len(exp.in_avals) == 5
    args = ({"w": np.arange(3, dtype=F32)}, (np.ones(2, F32), np.full(3, 2.0, F32)))
    out = deserialize(exp.serialize()).call(*args, scale=np.float32(3), unused=np.zeros(7, F32))
    np.testing.assert_allclose(np.asarray(out["sum"]), np.arange(3) * 3 + 2)
    np.testing.assert_allclose(np.asarray(out["list"][1]), 3.0)
    assert isinstance(out["list"], list)


@pytest.mark.parametrize("version", [9, 10])
def test_both_calling_conventions(version):
    exp = export(toolkit.jit(f_static), calling_convention_version=version)(_spec(4), _spec(4))
    assert exp.calling_convention_version == version
    again = deserialize(exp.serialize())
    assert again.calling_convention_version == version
    x = np.arange(4, dtype=F32)
    np.testing.assert_allclose(np.asarray(again.call(x, x)), np.sin(x) * 2 + x, rtol=1e-6)


def test_conventions_9_and_10_write_the_same_module():
    e9 = export(toolkit.jit(f_static), calling_convention_version=9)(_spec(4), _spec(4))
    e10 = export(toolkit.jit(f_static), calling_convention_version=10)(_spec(4), _spec(4))
    assert e9.mlir_module() == e10.mlir_module()


@pytest.mark.parametrize("version", [8, 11, -1])
def test_unsupported_calling_convention_is_refused(version):
    with pytest.raises(ValueError, match=r"outside the range of supported versions \[9\.\.10\]"):
        export(toolkit.jit(f_static), calling_convention_version=version)


def test_export_needs_a_jit_function():
    with pytest.raises(TypeError, match="must be the result of toolkit.jit"):
        export(f_static)


def test_bad_platform_lists():
    with pytest.raises(ValueError, match="distinct"):
        export(toolkit.jit(f_static), platforms=("cpu", "cpu"))
    with pytest.raises(TypeError, match="DisabledSafetyCheck"):
        export(toolkit.jit(f_static), disabled_checks=["platform"])


def test_call_inside_jit():
    exp = deserialize(export(toolkit.jit(f_static))(_spec(4), _spec(4)).serialize())
    g = toolkit.jit(lambda x: exp.call(x, x) * 3)
    x = np.arange(4, dtype=F32)
    np.testing.assert_allclose(np.asarray(g(x)), (np.sin(x) * 2 + x) * 3, rtol=1e-6)
    text = g.lower(x).as_text()
    assert "call @_exported_f_static_" in text and "func.func private @_exported_f_static_" in text


def test_call_twice_inside_one_jit_uses_fresh_names():
    exp = export(toolkit.jit(f_static))(_spec(4), _spec(4))
    g = toolkit.jit(lambda x: exp.call(exp.call(x, x), x))
    x = np.arange(4, dtype=F32)
    once = np.sin(x) * 2 + x
    np.testing.assert_allclose(np.asarray(g(x)), np.sin(once) * 2 + x, rtol=1e-6)


def test_eager_call_compiles_once():
    exp = export(toolkit.jit(f_static))(_spec(4), _spec(4))
    x = np.arange(4, dtype=F32)
    exp.call(x, x)
    first = exp.__dict__["_toolkit_call_jit"]
    exp.call(x, x)
    assert exp.__dict__["_toolkit_call_jit"] is first
    assert len(first._cache) == 1


def test_call_checks_tree_and_avals():
    exp = export(toolkit.jit(lambda a, b: a + b["k"]))(_spec(3), {"k": _spec(3)})
    x = np.ones(3, F32)
    with pytest.raises(TypeError, match="structure"):
        exp.call(x, x)
    with pytest.raises(TypeError, match=r"Argument args\[1\]\['k'\].*shape \(4,\).*exported for shape \(3,\)"):
        exp.call(x, {"k": np.ones(4, F32)})
    with pytest.raises(TypeError, match=r"Argument args\[0\].*i32\[3\].*f32\[3\]"):
        exp.call(np.ones(3, np.int32), {"k": x})
    with pytest.raises(TypeError, match="not an array"):
        exp.call("text", {"k": x})


def test_multi_platform_module_dispatches_on_the_platform_index():
    f = toolkit.jit(lambda x: platform_test_p.bind(tnp.sin(x)))
    exp = export(f, platforms=("cuda", "cpu"))(_spec(4))
    assert exp.platforms == ("cuda", "cpu")
    assert exp.uses_global_constants
    text = exp.mlir_module()
    assert 'jax.global_constant = "_platform_index"' in text
    assert "jax.uses_shape_polymorphism = true" in text
    assert "stablehlo.case" in text
    sig = calling_convention.main_signature_of_exported(exp)
    assert sig.has_platform_index and sig.nr_array_arguments == 1
    x = np.arange(4, dtype=F32)
    again = deserialize(exp.serialize())
    assert again == exp
    np.testing.assert_allclose(np.asarray(again.call(x)), np.sin(x) * 2, rtol=1e-6)  # the cpu branch
    g = toolkit.jit(lambda x: again.call(x) + 1)
    np.testing.assert_allclose(np.asarray(g(x)), np.sin(x) * 2 + 1, rtol=1e-6)
    assert "stablehlo.case" not in g.lower(x).as_text()  # specialized for cpu


def test_multi_platform_unused_platform_index_is_kept():
    exp = export(toolkit.jit(tnp.sin), platforms=("cpu", "tpu"))(_spec(3))
    assert 'jax.global_constant = "_platform_index"' in exp.mlir_module()
    assert exp.uses_global_constants
    np.testing.assert_allclose(np.asarray(exp.call(np.ones(3, F32))), np.sin(np.ones(3)), rtol=1e-6)


def test_multi_platform_caller_passes_its_platform_index():
    inner = export(toolkit.jit(lambda x: platform_test_p.bind(x)), platforms=("cpu", "cuda"))(_spec(4))
    outer = export(toolkit.jit(lambda x: inner.call(x) + 1), platforms=("cuda", "cpu"))(_spec(4))
    text = outer.mlir_module()
    assert text.count("stablehlo.case") >= 2  # the index mapping and the dispatch
    x = np.arange(4, dtype=F32)
    np.testing.assert_allclose(np.asarray(outer.call(x)), x * 2 + 1)


def test_platform_check():
    exp = export(toolkit.jit(tnp.cos), platforms=("cuda",))(_spec(3))
    with pytest.raises(ValueError, match=r"lowered for platforms \('cuda',\) but it is used on 'cpu'"):
        exp.call(np.ones(3, F32))
    with pytest.raises(ValueError, match="used on 'cpu'"):
        toolkit.jit(lambda x: exp.call(x)).lower(np.ones(3, F32))
    allowed = export(toolkit.jit(tnp.cos), platforms=("cuda",),
                     disabled_checks=[DisabledSafetyCheck.platform()])(_spec(3))
    np.testing.assert_allclose(np.asarray(allowed.call(np.ones(3, F32))), np.cos(np.ones(3)), rtol=1e-6)


def test_platform_without_a_rule_is_an_error():
    with pytest.raises(NotImplementedError, match="no lowering rule for platform 'tpu'"):
        export(toolkit.jit(lambda x: platform_test_p.bind(x)), platforms=("cpu", "tpu"))(_spec(2))


def test_unstable_custom_calls_are_refused():
    f = toolkit.jit(lambda x: custom_test_p.bind(x))
    with pytest.raises(ValueError, match="'my_unstable_kernel'.*DisabledSafetyCheck.custom_call"):
        export(f)(_spec(3))
    exp = export(f, disabled_checks=[DisabledSafetyCheck.custom_call("my_unstable_kernel")])(_spec(3))
    assert exp.disabled_safety_checks == (DisabledSafetyCheck.custom_call("my_unstable_kernel"),)
    assert deserialize(exp.serialize()) == exp


def test_stable_custom_call_list_matches_the_documented_one():
    from toolkit.export.exporting import STABLE_CUSTOM_CALL_TARGETS
    assert {"lapack_dgeqrf_ffi", "lapack_zungqr_ffi", "Sharding", "shape_assertion",
            "stablehlo.dynamic_top_k", "cusolver_syevd_ffi"} <= STABLE_CUSTOM_CALL_TARGETS
    assert "my_unstable_kernel" not in STABLE_CUSTOM_CALL_TARGETS


def test_weak_typed_arguments_export_as_strong():
    exp = export(toolkit.jit(lambda x, s: x * s))(_spec(2), 2.0)
    assert not any(a.weak_type for a in exp.in_avals)
    assert deserialize(exp.serialize()) == exp


def test_wrap_main_hook_computes_dimension_variables():
    from toolkit.core.shape_poly import symbolic_shape
    from toolkit.ir.context import make_context
    from jaxlib.mlir import ir

    text = """
    module @m {
      func.func public @main(%arg0: tensor<i64> {jax.global_constant = "a"}, %arg1: tensor<?xf32>)
          -> (tensor<?xf32> {jax.result_info = "result"}) {
        return %arg1 : tensor<?xf32>
      }
    }"""
    context = make_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
    (a,) = symbolic_shape("a")
    seen = []

    def hook(names, array_args, avals):
        seen.append((list(names), len(array_args), [str(av.shape[0]) for av in avals]))
        return calling_convention.dim_vars_from_shapes(names, array_args, avals)

    calling_convention.wrap_main(module, [ShapedArray((a,), F32)], module_kept_var_idx=(0,),
                                 has_platform_index=False, dim_vars=["a"], compute_dim_vars=hook)
    assert module.operation.verify()
    out = str(module)
    assert "func.func private @_wrapped_jax_export_main" in out
    assert "stablehlo.get_dimension_size %arg0, dim = 0" in out
    assert "call @_wrapped_jax_export_main" in out
    assert seen == [(["a"], 1, ["a"])]
    sig = calling_convention.main_signature(module)
    assert sig.wrapped and [a.kind for a in sig.arguments] == ["array"]


def test_wrap_main_solves_variables_inside_expressions():
    from toolkit.core.shape_poly import symbolic_shape
    from toolkit.ir.context import make_context
    from jaxlib.mlir import ir

    context = make_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse("""
        func.func public @main(%arg0: tensor<i64> {jax.global_constant = "a"}, %arg1: tensor<?xf32>) -> tensor<?xf32> {
          return %arg1 : tensor<?xf32>
        }""")
    (a,) = symbolic_shape("a")
    calling_convention.wrap_main(module, [ShapedArray((2 * a,), F32)], module_kept_var_idx=(0,),
                                 has_platform_index=False, dim_vars=["a"])
    assert module.operation.verify()
    assert "Division had remainder {0} when computing the value of 'a'" in str(module)


def test_main_signature_classifies_arguments():
    exp = export(toolkit.jit(lambda x: (x, x * 2)), platforms=("cpu", "cuda"))(_spec(2))
    sig = calling_convention.main_signature_of_exported(exp)
    assert [a.kind for a in sig.arguments] == ["platform_index", "array"]
    assert [r.name for r in sig.results] == ["result[0]", "result[1]"]
    assert "platform_index" in sig.describe()


def test_export_is_the_function_not_a_module():
    import types

    import toolkit.export
    from toolkit.export import exporting

    assert callable(toolkit.export.export) and not isinstance(toolkit.export.export, types.ModuleType)
    assert toolkit.export.export is exporting.export
