"""The jax.stages API: Wrapped, Traced, Lowered, Compiled — behaviour and error paths."""

from collections import namedtuple

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core import pytrees
from toolkit.stages import ArgInfo

x32 = np.arange(6, dtype=np.float32).reshape(2, 3)
w32 = np.ones((3, 4), np.float32)
Pair = namedtuple("Pair", "a b")


def affine(x, w, b=1.0):
    return tnp.tanh(x @ w + b)


def test_call_matches_numpy():
    f = toolkit.jit(affine)
    np.testing.assert_allclose(np.asarray(f(x32, w32)), np.tanh(x32 @ w32 + 1), rtol=1e-6)


def test_trace_lower_compile_chain():
    f = toolkit.jit(affine)
    traced = f.trace(x32, w32)
    assert isinstance(traced, toolkit.Traced)
    assert traced.in_tree == pytrees.tree_structure(((0, 0), {}))
    assert traced.out_info.shape == (2, 4) and traced.out_info.dtype == np.float32
    args_info = traced.args_info
    assert isinstance(args_info[0][0], ArgInfo) and args_info[0][0].shape == (2, 3)
    lowered = traced.lower()
    assert isinstance(lowered, toolkit.Lowered)
    assert lowered.in_tree == traced.in_tree and lowered.out_tree == traced.out_tree
    compiled = lowered.compile()
    assert isinstance(compiled, toolkit.Compiled)
    np.testing.assert_allclose(np.asarray(compiled(x32, w32)), np.tanh(x32 @ w32 + 1), rtol=1e-6)


def test_lowered_text_and_module_attributes():
    lowered = toolkit.jit(affine).lower(x32, w32)
    text = lowered.as_text()
    assert "module @jit_affine" in text
    assert "mhlo.num_partitions = 1 : i32" in text and "mhlo.num_replicas = 1 : i32" in text
    assert "func.func public @main" in text and 'jax.result_info = "result"' in text
    assert "stablehlo.dot_general" in text and "stablehlo.tanh" in text
    module = lowered.compiler_ir("stablehlo")
    assert "stablehlo.tanh" in str(module)


def test_debug_info_carries_user_locations():
    text = toolkit.jit(affine).lower(x32, w32).as_text(debug_info=True)
    assert "test_stages.py" in text and '"jit(affine)/tanh"' in text  # JAX's name: jit(f)/primitive


def test_hlo_dialect():
    lowered = toolkit.jit(affine).lower(x32, w32)
    hlo = lowered.as_text(dialect="hlo")
    assert "HloModule" in hlo and "tanh" in hlo
    assert lowered.compiler_ir("hlo") == hlo
    with pytest.raises(ValueError, match="unknown dialect 'tosa'"):
        lowered.as_text(dialect="tosa")
    with pytest.raises(ValueError, match="unknown dialect"):
        lowered.compiler_ir("tosa")


def test_cost_and_memory_analysis():
    lowered = toolkit.jit(affine).lower(x32, w32)
    assert lowered.cost_analysis()["flops"] > 0
    compiled = lowered.compile()
    costs = compiled.cost_analysis()
    assert costs["flops"] >= 2 * 2 * 3 * 4
    memory = compiled.memory_analysis()
    assert memory.argument_size_in_bytes == x32.nbytes + w32.nbytes
    assert memory.output_size_in_bytes == 2 * 4 * 4
    assert "HloModule" in compiled.as_text()
    assert compiled.runtime_executable().hlo_modules()


def test_compile_with_xla_options():
    lowered = toolkit.jit(affine).lower(x32, w32)
    compiled = lowered.compile({"xla_cpu_enable_fast_math": False})
    np.testing.assert_allclose(np.asarray(compiled(x32, w32)), np.tanh(x32 @ w32 + 1), rtol=1e-6)
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        lowered.compile(["xla_cpu_enable_fast_math"])
    with pytest.raises(Exception, match="no_such_xla_option|option"):
        lowered.compile({"no_such_xla_option": True})


def test_compiled_rejects_wrong_arguments():
    compiled = toolkit.jit(affine).lower(x32, w32).compile()
    with pytest.raises(TypeError, match=r"argument args\[1\] .* has type f32\[3,5\], but it was compiled for f32\[3,4\]"):
        compiled(x32, np.ones((3, 5), np.float32))
    with pytest.raises(TypeError, match=r"argument args\[0\] .* has type i32\[2,3\]"):
        compiled(x32.astype(np.int32), w32)
    with pytest.raises(TypeError, match="tree structure"):
        compiled(x32, w32, 2.0)


def test_cache_by_signature_and_retrace_on_new_shape():
    calls = []

    def f(x):
        calls.append(x.shape)
        return x * 2

    g = toolkit.jit(f)
    g(np.ones(3, np.float32))
    g(np.ones(3, np.float32) * 5)
    assert calls == [(3,)]
    g(np.ones(4, np.float32))
    assert calls == [(3,), (4,)]
    g(np.ones(4, np.int32))
    assert len(calls) == 3


def test_pytrees_in_and_out():
    def f(params, x):
        return {"y": params.a * x, "z": (params.b + x, None)}

    out = toolkit.jit(f)(Pair(np.float32(2), np.float32(3)), np.ones(2, np.float32))
    assert set(out) == {"y", "z"} and out["z"][1] is None
    np.testing.assert_allclose(np.asarray(out["y"]), [2, 2])
    np.testing.assert_allclose(np.asarray(out["z"][0]), [4, 4])
    text = toolkit.jit(f).lower(Pair(np.float32(2), np.float32(3)), np.ones(2, np.float32)).as_text()
    assert "jax.result_info = \"result['y']\"" in text
    assert "jax.result_info = \"result['z'][0]\"" in text


def test_keyword_arguments():
    f = toolkit.jit(affine)
    np.testing.assert_allclose(np.asarray(f(x32, w32, b=np.float32(2))), np.tanh(x32 @ w32 + 2), rtol=1e-6)


def test_static_argnums_and_argnames():
    def power(x, n, *, scale):
        for _ in range(n):
            x = x * scale
        return x

    f = toolkit.jit(power, static_argnums=1, static_argnames="scale")
    np.testing.assert_allclose(np.asarray(f(np.float32(1), 3, scale=2.0)), 8.0)
    assert len(f.trace(np.float32(1), 2, scale=3.0).program.eqns) == 2
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        f(np.float32(1), [3], scale=2.0)


def test_eval_shape():
    out = toolkit.jit(affine).eval_shape(toolkit.ShapeDtypeStruct((5, 3), np.float32),
                                         toolkit.ShapeDtypeStruct((3, 7), np.float32))
    assert out.shape == (5, 7) and out.dtype == np.float32


def test_keep_unused():
    def f(x, unused):
        return x + 1

    dropped = toolkit.jit(f).lower(x32, x32)
    assert dropped.kept_var_idx == (0,) and dropped.as_text().count("tensor<2x3xf32>") >= 1
    assert "%arg1" not in dropped.as_text()
    kept = toolkit.jit(f, keep_unused=True).lower(x32, x32)
    assert kept.kept_var_idx == (0, 1) and "%arg1" in kept.as_text()
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(x32, x32)), x32 + 1)


def test_donation_aliases_outputs():
    f = toolkit.jit(lambda x: x * 2, donate_argnums=0)
    lowered = f.lower(x32)
    assert "tf.aliasing_output = 0 : i32" in lowered.as_text()
    assert f.trace(x32).args_info[0][0].donated
    with pytest.raises(ValueError, match="both static and donated"):
        toolkit.jit(lambda x: x, static_argnums=0, donate_argnums=0)


def test_jit_as_decorator_and_nested():
    @toolkit.jit
    def inner(x):
        return x + 1

    @toolkit.jit
    def outer(x):
        return inner(x) * 2

    np.testing.assert_allclose(np.asarray(outer(np.float32(1))), 4.0)
    # A nested jit is a `jit` call of its own program (a private function when lowered), as in JAX.
    eqns = outer.trace(np.float32(1)).program.eqns
    assert [e.primitive.name for e in eqns] == ["jit", "mul"]
    assert [e.primitive.name for e in eqns[0].params["jaxpr"].eqns] == ["add"]


def test_not_callable():
    with pytest.raises(TypeError, match="jit expects a callable"):
        toolkit.jit(3)


def test_weak_types_do_not_widen():
    f = toolkit.jit(lambda x: x * 2.5 + 1)
    out = f(np.ones(2, np.float16))
    assert out.dtype == np.float16
    assert toolkit.jit(lambda x: x + 1).trace(np.int8(3)).out_info.dtype == np.int8


def test_scalar_arguments_are_weak():
    f = toolkit.jit(lambda a, x: a * x)
    assert f(2.0, np.ones(2, np.float16)).dtype == np.float16


def test_ir_dump_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLKIT_DUMP_IR_TO", str(tmp_path))
    toolkit.jit(affine).lower(x32, w32)
    names = sorted(p.name for p in (tmp_path / "jit_affine").iterdir())
    assert names == ["000-traced.txt", "001-lowered.mlir"]


def test_pass_pipeline_runs_inside_compile(monkeypatch):
    from toolkit import passes
    lowered = toolkit.jit(lambda x: (x + 0.0) * 1.0).lower(x32)
    lowered.pipeline = passes.parse_pipeline("builtin.module(toolkit-simplify)")
    np.testing.assert_allclose(np.asarray(lowered.compile()(x32)), x32)
    assert str(lowered.pipeline) == "builtin.module(toolkit-simplify)"


def test_eager_ops_outside_jit():
    a = toolkit.device_put(np.arange(4, dtype=np.float32))
    b = a * 2 + 1
    assert isinstance(b, toolkit.Array)
    np.testing.assert_allclose(np.asarray(b), np.arange(4) * 2 + 1)
    np.testing.assert_allclose(np.asarray(tnp.sum(b)), 16)


def test_error_paths_count_static_arguments():
    f = toolkit.jit(lambda n, x, y: x * n + y, static_argnums=0)
    compiled = f.lower(2, x32, x32).compile()
    with pytest.raises(TypeError, match=r"argument args\[2\] .* has type f32\[3\]"):
        compiled(2, x32, np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"argument args\[1\]\['w'\] of type str"):
        toolkit.jit(lambda n, d: d["w"], static_argnums=0).trace(1, {"w": "text"})


def test_nested_call_with_concrete_array_is_traced():
    inner = toolkit.jit(lambda a: a + 1)
    a = toolkit.device_put(np.ones(2, np.float32))
    inner(a)  # fills the fast-path cache
    outer = toolkit.jit(lambda x: inner(a) * x)
    eqns = outer.trace(np.ones(2, np.float32)).program.eqns
    # Staged as a `jit` call of the traced body (not run through the cached executable).
    assert [e.primitive.name for e in eqns] == ["jit", "mul"]
    assert "add" in [e.primitive.name for e in eqns[0].params["jaxpr"].eqns]


def test_multi_platform_lowering_compiles_for_the_current_platform():
    lowered = toolkit.jit(lambda x: tnp.sin(x) * 2).trace(x32).lower(platforms=("cuda", "cpu"))
    assert "jax.global_constant = \"_platform_index\"" in lowered.as_text()
    np.testing.assert_allclose(np.asarray(lowered.compile()(x32)), np.sin(x32) * 2, rtol=1e-6)
    with pytest.raises(ValueError, match="cannot compile for 'cpu'"):
        toolkit.jit(lambda x: x + 1).trace(x32).lower(platforms=("cuda", "tpu")).compile()


def test_jit_on_methods_binds_self():
    class Scale:
        def __init__(self, factor):
            self.factor = factor

        @toolkit.jit(static_argnums=0)
        def apply(self, x):
            return x * self.factor

    np.testing.assert_allclose(np.asarray(Scale(3.0).apply(np.ones(2, np.float32))), [3, 3])


def test_calling_with_symbolic_shapes_is_a_type_error_naming_the_way_out():
    from toolkit.core.shape_poly import symbolic_shape
    f = toolkit.jit(lambda x: x * 2)
    with pytest.raises(TypeError, match=r"symbolic dimensions .* use \.trace\(\)/\.lower\(\)"):
        f(toolkit.ShapeDtypeStruct(symbolic_shape("b, 3"), np.float32))


def _avals_text(tree):
    return [(a.shape, str(a.dtype), a.weak_type) for a in pytrees.tree_leaves(tree)], pytrees.tree_structure(tree)


def test_stage_avals_donation_and_jaxpr_as_jax():
    # jax.stages' in_avals / out_avals are trees ((args, kwargs) and the outputs'), donate_argnums flat leaf
    # positions, Traced.jaxpr the ClosedJaxpr; toolkit's Traced.in_avals was the flat tuple and the rest missing.
    jax = pytest.importorskip("jax")

    def f(x, pair, scale=1.0, unused=None):
        return {"y": x @ pair.a + scale}, pair.b.sum()

    args = (x32, Pair(w32, np.ones(5, np.int32)))
    kwargs = {"scale": 2.0, "unused": np.zeros(2, np.float32)}
    ours = toolkit.jit(f, donate_argnums=1).trace(*args, **kwargs)
    theirs = jax.jit(f, donate_argnums=1).trace(*args, **kwargs)
    t_in, j_in = ours.in_avals, theirs.in_avals
    assert [(a.shape, str(a.dtype), a.weak_type) for a in pytrees.tree_leaves(t_in)] == \
        [(a.shape, str(a.dtype), a.weak_type) for a in jax.tree.leaves(j_in)]
    assert isinstance(t_in, tuple) and len(t_in) == 2 and isinstance(t_in[0][1], Pair) and set(t_in[1]) == set(kwargs)
    t_out, j_out = ours.out_avals, theirs.out_avals
    assert [(a.shape, str(a.dtype)) for a in pytrees.tree_leaves(t_out)] == \
        [(a.shape, str(a.dtype)) for a in jax.tree.leaves(j_out)]
    assert isinstance(t_out, tuple) and set(t_out[0]) == {"y"}
    assert ours.donate_argnums == theirs.donate_argnums == (1, 2)
    assert [str(a.dtype) for a in ours.jaxpr.in_avals] == [str(a.dtype) for a in theirs.jaxpr.in_avals]
    assert str(ours.jaxpr) == str(toolkit.make_jaxpr(f)(*args, **kwargs))
    lowered, jax_lowered = ours.lower(), theirs.lower()
    compiled, jax_compiled = lowered.compile(), jax_lowered.compile()
    for stage, jax_stage in ((lowered, jax_lowered), (compiled, jax_compiled)):
        assert _avals_text(stage.in_avals)[0] == _avals_text(t_in)[0]  # the unused argument's too, as JAX's
        assert pytrees.tree_structure(stage.in_avals) == pytrees.tree_structure(t_in)
        assert len(jax.tree.leaves(jax_stage.in_avals)) == len(pytrees.tree_leaves(stage.in_avals))
        assert stage.donate_argnums == jax_stage.donate_argnums == (1, 2)
    assert len(ours.flat_in_avals) == 5


def test_lower_takes_jax_lowering_platforms_keyword():
    traced = toolkit.jit(lambda x: x * 2).trace(x32)
    lowered = traced.lower(lowering_platforms=("cpu", "cuda"))
    assert lowered.platforms == ("cpu", "cuda") and 'jax.global_constant = "_platform_index"' in lowered.as_text()
    assert traced.lower(lowering_platforms=("cpu",)).as_text() == traced.lower(platforms=("cpu",)).as_text()
    with pytest.raises(TypeError, match="not both"):
        traced.lower(platforms=("cpu",), lowering_platforms=("cpu",))
