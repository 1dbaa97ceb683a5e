"""toolkit-bind-shapes + toolkit-refine-shapes on modules written by ``jax.export``.

Oracle: jaxlib's C++ ``refine_polymorphic_shapes`` on the same module bound
with ``stablehlo-refine-arguments``. Both must give the same ``@main``
signature and a fully static module; ours must compile and run on XLA CPU
and give jax's results. Violated constraints fail with the assertion's
message naming the dimension variable.
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export  # noqa: E402
from jaxlib import _jax  # noqa: E402  (oracle only)
from jaxlib.mlir import ir, passmanager  # noqa: E402

from toolkit.ir.context import make_context  # noqa: E402
from toolkit.passes import PipelineError, run_pipeline  # noqa: E402
from toolkit.runtime import standalone  # noqa: E402


def _mlp(x):
    w1 = jnp.arange(4 * 16, dtype=np.float32).reshape(4, 16) / 64.0
    w2 = jnp.arange(16 * 3, dtype=np.float32).reshape(16, 3) / 48.0
    h = jnp.tanh(x @ w1 + 1.0)
    return jax.nn.relu(h @ w2) + jnp.sum(x, axis=1, keepdims=True)


def _reshape_half(x):
    # needs a batch of the form 2*k: the exported module asserts it
    return x.reshape(x.shape[0] // 2, 8).sum(axis=1)


def _attention(x):
    # x: (b, s, 8) — softmax over s, broadcasting against iota of s
    scores = jnp.einsum("bsd,btd->bst", x, x) / 8.0
    mask = jnp.arange(x.shape[1])[None, :] <= jnp.arange(x.shape[1])[:, None]
    scores = jnp.where(mask[None], scores, -1e9)
    return jax.nn.softmax(scores, axis=-1) @ x


CASES = {
    "mlp": (_mlp, "b, 4", (4,)),
    "reshape_even": (_reshape_half, "2*b, 4", (4,)),
    "attention": (_attention, "b, s, 8", (8,)),
}


def _exported(name: str, constraints: tuple[str, ...] = ()):
    fn, spec, _ = CASES[name]
    shape = export.symbolic_shape(spec, constraints=constraints)
    return export.export(jax.jit(fn))(jax.ShapeDtypeStruct(shape, np.float32))


def _types_option(shape: tuple[int, ...]) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def _ours(text: str, shape: tuple[int, ...]) -> ir.Module:
    context = make_context()
    with context:
        module = ir.Module.parse(text)
    run_pipeline(module, f"builtin.module(toolkit-bind-shapes{{types={_types_option(shape)}}}, "
                         "toolkit-refine-shapes)")
    return module


def _cxx(text: str, shape: tuple[int, ...]) -> ir.Module:
    context = make_context()
    with context:
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(
            f"builtin.module(stablehlo-refine-arguments{{types={_types_option(shape)}}})").run(module.operation)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        refined = _jax.mlir.refine_polymorphic_shapes(buffer.getvalue(), enable_shape_assertions=True,
                                                      validate_static_shapes=True)
        return ir.Module.parse(refined)


def _main_signature(module: ir.Module) -> str:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main":
            return str(ir.TypeAttr(op.operation.attributes["function_type"]).value)
    raise AssertionError("no @main")


def _fully_static(module: ir.Module) -> bool:
    static = True

    def visit(op):
        nonlocal static
        for result in op.results:
            if isinstance(result.type, ir.ShapedType) and not (
                    isinstance(result.type, ir.RankedTensorType) and result.type.has_static_shape):
                static = False
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return static and "?" not in str(module).split("#loc")[0] and "shape_assertion" not in str(module)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("batch", [2, 6, 64])
def test_matches_jaxlib_and_runs(name, batch):
    fn, spec, tail = CASES[name]
    shape = (batch, 3, *tail) if name == "attention" else (batch, *tail)
    text = _exported(name).mlir_module()
    ours = _ours(text, shape)
    theirs = _cxx(text, shape)
    assert _main_signature(ours) == _main_signature(theirs)
    assert _fully_static(ours)
    x = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 7) / 7.0
    executable = standalone.compile_module(str(ours))
    (got,) = standalone.execute(executable, [x])
    np.testing.assert_allclose(got, np.asarray(jax.jit(fn)(x)), rtol=1e-5, atol=1e-5)


def test_platform_index_and_tokens_module_through_toolkit_opt(tmp_path):
    # The same bind -> refine through the toolkit-opt driver, on bytecode of a jax module.
    text = _exported("mlp").mlir_module()
    source = tmp_path / "mlp.mlir"
    source.write_text(text)
    process = subprocess.run(
        [sys.executable, "-m", "toolkit.tools.opt", str(source),
         "--pass-pipeline=builtin.module(toolkit-bind-shapes{types=tensor<3x4xf32>}, toolkit-refine-shapes)"],
        capture_output=True, text=True)
    assert process.returncode == 0, process.stderr
    assert "func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<3x3xf32>" in process.stdout
    assert "?" not in process.stdout.split("#loc")[0]


def test_constraint_violation_names_the_variable():
    text = _exported("mlp", constraints=("b >= 4",)).mlir_module()
    with pytest.raises(PipelineError) as error:
        _ours(text, (2, 4))
    message = str(error.value)
    assert "b >= 4" in message and "'b' = 2" in message
    assert "{0}" not in message and "{1}" not in message
    # jaxlib reports the same assertion
    with pytest.raises(Exception, match="b >= 4"):
        _cxx(text, (2, 4))


def test_constraint_satisfied_runs():
    text = _exported("mlp", constraints=("b >= 4",)).mlir_module()
    module = _ours(text, (5, 4))
    assert _main_signature(module) == _main_signature(_cxx(text, (5, 4)))


def test_odd_batch_for_even_reshape_fails_clearly():
    text = _exported("reshape_even").mlir_module()
    with pytest.raises(PipelineError) as error:
        _ours(text, (5, 4))
    message = str(error.value)
    assert "'b'" in message and "2*b" in message.replace(" ", "")


def test_assertions_can_be_disabled():
    text = _exported("mlp", constraints=("b >= 4",)).mlir_module()
    context = make_context()
    with context:
        module = ir.Module.parse(text)
    run_pipeline(module, "builtin.module(toolkit-bind-shapes{types=tensor<2x4xf32>}, "
                         "toolkit-refine-shapes{enable-assertions=false})")
    assert "shape_assertion" not in str(module)


def _more_exports():
    b = export.symbolic_shape("b, 4")
    spec = jax.ShapeDtypeStruct(b, np.float32)
    inner = export.export(jax.jit(lambda x: jnp.cos(x) + 1))(spec)

    def loop(x):
        return jax.lax.fori_loop(0, x.shape[0], lambda i, c: c + jnp.ones(x.shape) * i, x)

    def cond(x):
        return jax.lax.cond(x[0, 0] > 2, lambda: jnp.sum(x * x.shape[0], axis=0),
                            lambda: jnp.ones(x.shape).sum(axis=0))

    def mixed(x):
        y = jnp.pad(jnp.concatenate([x, x[:1]], axis=0), ((1, 2), (0, 0)))
        z = y[jnp.arange(x.shape[0]) % 2]
        c = jax.lax.conv_general_dilated(x[None, None], jnp.ones((1, 1, 2, 2)), (1, 1), "VALID")
        return z.sum() + c.sum() + jax.lax.dynamic_slice_in_dim(x, x.shape[0] // 2, 1, axis=1).sum()

    return {
        # platform index argument (jax.global_constant = "_platform_index") stays a runtime argument
        "two_platforms": (export.export(jax.jit(lambda x: jnp.sin(x) * x.shape[0]), platforms=("cpu", "cuda"))(spec),
                          "tensor<i32>,tensor<3x4xf32>"),
        "nested_export": (export.export(jax.jit(lambda x: inner.call(x) * 2))(spec), "tensor<3x4xf32>"),
        "fori_loop": (export.export(jax.jit(loop))(spec), "tensor<5x4xf32>"),
        "cond": (export.export(jax.jit(cond))(spec), "tensor<5x4xf32>"),
        "pad_gather_conv_slice": (export.export(jax.jit(mixed))(spec), "tensor<5x4xf32>"),
    }


def test_more_jax_modules_match_jaxlib():
    for name, (exported, types) in _more_exports().items():
        text = exported.mlir_module()
        context = make_context()
        with context:
            ours = ir.Module.parse(text)
        run_pipeline(ours, f"builtin.module(toolkit-bind-shapes{{types={types}}}, toolkit-refine-shapes)")
        with make_context():
            bound = ir.Module.parse(text)
            passmanager.PassManager.parse(
                f"builtin.module(stablehlo-refine-arguments{{types={types}}})").run(bound.operation)
            buffer = io.BytesIO()
            bound.operation.write_bytecode(buffer)
            theirs = ir.Module.parse(_jax.mlir.refine_polymorphic_shapes(
                buffer.getvalue(), enable_shape_assertions=True, validate_static_shapes=True))
        assert _main_signature(ours) == _main_signature(theirs), name
        assert _fully_static(ours), name
        if not types.startswith("tensor<i32>,"):
            standalone.compile_module(str(ours))


def _dynamic_form_cases():
    """(name, function, polymorphic spec) for each dynamic form jax.export writes; inputs are 5x4 float32."""
    return [
        # stablehlo.dynamic_reduce_window: a window as large as the symbolic dimension
        ("dynamic_reduce_window", lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (x.shape[0], 2), (1, 1),
                                                                 "VALID"), "b, 4"),
        ("cumsum", lambda x: jnp.cumsum(x, axis=0), "b, 4"),
        ("cummax_reverse_two_symbols", lambda x: jax.lax.cummax(x, axis=1, reverse=True), "b, c"),
        # stablehlo.dynamic_top_k: k is a dimension expression
        ("dynamic_top_k", lambda x: jax.lax.top_k(x.T, x.shape[0] // 2)[0], "b, 4"),
        # stablehlo.dynamic_rng_bit_generator
        ("dynamic_rng_bit_generator",
         lambda x: jax.random.uniform(jax.random.key(0, impl="unsafe_rbg"), (x.shape[0], 3)) + x.sum(), "b, 4"),
        # composites JAX writes for bf16 (chlo.cosh) with a dynamic decomposition
        ("composite_cosh_bf16", lambda x: jax.vmap(jnp.cosh)(x.astype(jnp.bfloat16)).astype(jnp.float32), "b, 4"),
        # select_and_scatter (gradient of max pooling)
        ("select_and_scatter", jax.grad(lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2), (1, 1),
                                                                        "VALID").sum()), "b, 4"),
        # LAPACK custom calls with shape operands
        ("lapack_lu", lambda x: jax.scipy.linalg.lu(x @ x.T + jnp.eye(x.shape[0]))[2], "b, 4"),
        ("lapack_eigh", lambda x: jnp.linalg.eigh(x @ x.T + jnp.eye(x.shape[0]))[0], "b, 4"),
        ("lapack_svd", lambda x: jnp.linalg.svd(x, compute_uv=False), "b, 4"),
        # nested private functions with dimension arguments
        ("nested_jits", lambda x: jax.jit(lambda y: jax.jit(lambda z: z * z.shape[0])(y) + y.shape[0])(x), "b, 4"),
        ("nested_export", lambda x: export.export(jax.jit(lambda y: jnp.cumsum(y, axis=0) * y.shape[0]))(
            jax.ShapeDtypeStruct(export.symbolic_shape("a, 4"), np.float32)).call(x), "b, 4"),
        # a while loop whose trip count is a dimension variable, carrying a symbolic shape
        ("fori_loop_symbolic_trip_count",
         lambda x: jax.lax.fori_loop(0, x.shape[0], lambda i, c: c.at[i].set(i * 1.0), jnp.zeros(x.shape[0])),
         "b, 4"),
    ]


@pytest.mark.parametrize("name, fn, spec", _dynamic_form_cases(), ids=[c[0] for c in _dynamic_form_cases()])
def test_dynamic_forms_match_jaxlib_and_jax(name, fn, spec):
    x = (np.arange(20, dtype=np.float32).reshape(5, 4) % 7) / 7.0
    exported = export.export(jax.jit(fn))(jax.ShapeDtypeStruct(export.symbolic_shape(spec), np.float32))
    text = exported.mlir_module()
    ours = _ours(text, x.shape)
    theirs = _cxx(text, x.shape)
    assert _main_signature(ours) == _main_signature(theirs)
    assert _fully_static(ours)
    text_out = str(ours)
    assert "indices_of_shape_operands" not in text_out
    assert "@stablehlo.dynamic_" not in text_out  # JAX's dynamic custom calls became static ops
    executable = standalone.compile_module(str(ours))
    got = standalone.execute(executable, [x])
    want = jax.tree_util.tree_leaves(jax.jit(fn)(x))
    assert len(got) == len(want)
    for actual, expected in zip(got, want):
        np.testing.assert_allclose(actual, np.asarray(expected), rtol=1e-4, atol=1e-4)
