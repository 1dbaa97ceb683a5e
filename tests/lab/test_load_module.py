"""toolkit.load_module: every accepted source in, compiled and run, against JAX in the same process."""

from __future__ import annotations

import io
import pathlib

import numpy as np
import pytest
from jaxlib.mlir import ir

import toolkit
from toolkit.export import export as toolkit_export
from toolkit.ir.serialization import write_module
from toolkit.lab.loading import LoadedLowered, load_module
from toolkit.passes import parse_pipeline

jax = pytest.importorskip("jax")
jnp = jax.numpy
from jax import export as jexport  # noqa: E402

try:
    jax.config.update("jax_num_cpu_devices", 8)
except Exception:  # the backend is already up: keep what it has (the JAX sharded test then skips)
    pass

# Binary input is read in a forked child first (toolkit.ir.serialization); JAX warns about forks once it is loaded.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")

F32 = np.float32
PIPELINE = "toolkit-simplify, cse"
RTOL, ATOL = 1e-5, 1e-6

ADD_MUL = """
func.func public @main(%x: tensor<3xf32> {jax.arg_info = "params['x']"}, %y: tensor<3xf32>)
    -> (tensor<3xf32> {jax.result_info = "result['z']"}) {
  %0 = stablehlo.add %x, %y : tensor<3xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
"""

# What torch_xla's or TensorFlow's StableHLO export looks like: a public @main, no JAX attributes.
PLAIN = """
module @torch_like {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<4xf32>) -> tensor<2x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x4xf32>
    %3 = stablehlo.tanh %2 : tensor<2x4xf32>
    return %3 : tensor<2x4xf32>
  }
}
"""

DYNAMIC = """
func.func public @main(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<?x4xf32>
  %0 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""

SHARDED = """
module @sharded attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<16x4xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"},
                         %w: tensor<4x4xf32> {mhlo.sharding = "{replicated}"})
      -> (tensor<16x4xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
    %1 = stablehlo.sine %0 : tensor<16x4xf32>
    return %1 : tensor<16x4xf32>
  }
}
"""


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _close(actual, expected):
    actual_leaves, expected_leaves = toolkit.tree_util.tree_leaves(actual), jax.tree.leaves(expected)
    assert len(actual_leaves) == len(expected_leaves)
    for a, e in zip(actual_leaves, expected_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=RTOL, atol=ATOL)


# --- the three JAX programs the issue names ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flax_cnn():
    """A Flax CNN (conv, batch norm in inference mode, dense), its variables, an input and JAX's answer."""
    nn = pytest.importorskip("flax.linen")

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(8, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=True)(x)
            x = nn.relu(x)
            x = x.mean(axis=(1, 2))
            return nn.Dense(3)(x)

    model = CNN()
    x = _rand(2, 8, 8, 3, seed=1)
    variables = model.init(jax.random.PRNGKey(0), x)
    # Batch statistics other than the initial zeros/ones, so batch norm's arithmetic is exercised.
    rng = np.random.default_rng(2)
    variables = jax.tree.map(lambda v: np.asarray(v) + 0.1 * np.abs(rng.standard_normal(v.shape)).astype(F32),
                             variables)
    apply = jax.jit(lambda variables, x: model.apply(variables, x))
    return apply, variables, x, np.asarray(apply(variables, x))


@pytest.fixture(scope="module")
def equinox_mlp():
    """An Equinox MLP (weights closed over) vmapped over a batch, lowered by jax.jit(f).lower(x)."""
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(in_size=4, out_size=2, width_size=16, depth=2, key=jax.random.PRNGKey(3))
    f = jax.jit(jax.vmap(model))
    x = _rand(5, 4, seed=4)
    return f, x, np.asarray(f(x))


@pytest.fixture(scope="module")
def cnn_loaded(flax_cnn):
    apply, variables, x, _ = flax_cnn
    lowered = toolkit.load_module(apply.lower(variables, x))  # the package's re-export
    return lowered, lowered.compile(), lowered.compile(pipeline=PIPELINE)


def test_flax_cnn_lowered_by_jax(flax_cnn, cnn_loaded):
    _, variables, x, expected = flax_cnn
    lowered, compiled, simplified = cnn_loaded
    assert isinstance(lowered, toolkit.Lowered)
    flat = jax.tree.leaves((variables, x))
    assert len(lowered.in_avals) == len(flat)
    _close(compiled(*flat), expected)
    _close(simplified(*flat), expected)
    assert "stablehlo.convolution" in lowered.as_text()


def test_equinox_mlp_lowered_by_jax(equinox_mlp):
    f, x, expected = equinox_mlp
    lowered = load_module(f.lower(x))
    _close(lowered.compile()(x), expected)
    _close(lowered.compile(pipeline=PIPELINE)(x), expected)
    _close(lowered.compile(pipeline=parse_pipeline(PIPELINE))(toolkit.device_put(x)), expected)


@pytest.fixture(scope="module")
def cnn_exported(flax_cnn):
    apply, variables, x, _ = flax_cnn
    return jexport.export(apply)(variables, x)


def test_jax_export_artifact_with_its_tree(flax_cnn, cnn_exported):
    _, variables, x, expected = flax_cnn
    lowered = load_module(cnn_exported)
    # Called as the exported function was: (variables, x), the variables a nested dict.
    _close(lowered.compile()(variables, x), expected)
    _close(lowered.compile(pipeline=PIPELINE)(variables, x), expected)
    names = [info.name for info in toolkit.tree_util.tree_leaves(lowered.args_info)]
    assert names[-1] == "args[1]" and names[0].startswith("args[0]['batch_stats']")


def test_serialized_export_bytes_jax_and_toolkit(flax_cnn, cnn_exported):
    _, variables, x, expected = flax_cnn
    lowered = load_module(bytes(cnn_exported.serialize()))
    _close(lowered.compile()(variables, x), expected)
    tk = toolkit_export(toolkit.jit(lambda a, b: toolkit.numpy.tanh(a @ b)))(_rand(2, 3), _rand(3, 4))
    a, b = _rand(2, 3, seed=5), _rand(3, 4, seed=6)
    for source in (tk, bytes(tk.serialize())):
        _close(load_module(source).compile()(a, b), np.tanh(a @ b))


# --- every module form ------------------------------------------------------------------------------------------------


def _plain_expected(a, b, c):
    return np.tanh(a @ b + c)


PLAIN_ARGS = (_rand(2, 3, seed=7), _rand(3, 4, seed=8), _rand(4, seed=9))


@pytest.fixture(scope="module")
def plain_module():
    with toolkit.ir.context.shared_context():
        return ir.Module.parse(PLAIN)


@pytest.mark.parametrize("form", ["text", "text-bytes", "bytecode", "vhlo", "ir-module"])
def test_module_forms(form, plain_module):
    source = {"text": PLAIN, "text-bytes": PLAIN.encode(), "bytecode": write_module(plain_module, "bytecode"),
              "vhlo": write_module(plain_module, "vhlo", target_version="1.0.0"), "ir-module": plain_module}[form]
    before = str(plain_module)
    lowered = load_module(source)
    assert lowered.name == "torch_like"
    _close(lowered.compile(pipeline=PIPELINE)(*PLAIN_ARGS), _plain_expected(*PLAIN_ARGS))
    if form == "ir-module":
        lowered.compiler_ir().body.operations[0].attributes["sym_visibility"] = ir.StringAttr.get(
            "private", lowered.compiler_ir().context)
        assert str(plain_module) == before  # the caller's module was copied, not taken


@pytest.mark.parametrize("as_pathlike", [False, True])
def test_path(tmp_path, plain_module, as_pathlike):
    path = tmp_path / "model.mlirbc"
    path.write_bytes(write_module(plain_module, "bytecode"))
    lowered = load_module(path if as_pathlike else str(path))
    assert lowered.name == "model"  # the file's stem, without a name in the module... it has one:
    _close(lowered.compile()(*PLAIN_ARGS), _plain_expected(*PLAIN_ARGS))


def test_stage_methods_on_a_plain_module():
    lowered = load_module(PLAIN, name="dense")
    assert lowered.name == "dense"
    assert "stablehlo.tanh" in lowered.as_text()
    assert isinstance(lowered.compiler_ir(), ir.Module)
    assert "tanh" in lowered.as_text(dialect="hlo")
    assert [a.shape for a in lowered.in_avals] == [(2, 3), (3, 4), (4,)]
    assert [i.name for i in toolkit.tree_util.tree_leaves(lowered.args_info)] == ["args[0]", "args[1]", "args[2]"]
    assert lowered.out_info.shape == (2, 4) and lowered.out_info.name == "result[0]"
    assert lowered.cost_analysis()["flops"] > 0
    compiled = lowered.compile()
    assert compiled.cost_analysis()["flops"] > 0
    assert load_module(lowered) is lowered


def test_names_from_jax_attributes():
    lowered = load_module(ADD_MUL)
    args, kwargs = lowered.args_info
    assert [a.name for a in args] == ["params['x']", "args[1]"] and kwargs == {}
    assert lowered.out_info.name == "result['z']"
    x, y = np.arange(3, dtype=F32), np.ones(3, F32)
    np.testing.assert_array_equal(np.asarray(lowered.compile()(x, y)), (x + y) ** 2)


def test_names_and_cost_from_a_jax_lowered():
    def f(x, w):
        return {"y": jnp.tanh(x @ w), "s": (x.sum(),)}

    x, w = _rand(4, 3), _rand(3, 5, seed=1)
    jlowered = jax.jit(f).lower(x, w)
    lowered = load_module(jlowered)
    assert [i.name for i in lowered.args_info[0]] == ["x", "w"]  # JAX 0.10 writes them as argument locations
    assert lowered.out_info["y"].name == "result['y']" and lowered.out_info["s"][0].name == "result['s'][0]"
    assert lowered.cost_analysis()["flops"] == pytest.approx(jlowered.cost_analysis()["flops"])
    out = lowered.compile()(x, w)
    assert set(out) == {"y", "s"}  # JAX's output tree, kept
    _close(out, jax.jit(f)(x, w))


def test_dynamic_shapes_refined_per_call():
    lowered = load_module(DYNAMIC)
    assert not isinstance(lowered.in_avals[0].shape[0], int)
    compiled = lowered.compile(pipeline="cse")
    for rows in (2, 7):
        x = _rand(rows, 4, seed=rows)
        np.testing.assert_allclose(np.asarray(compiled(x)), (x * x).sum(1), rtol=RTOL)
    with pytest.raises(TypeError, match="f32\\[d0_0,4\\]"):
        compiled(_rand(2, 5))


def test_shape_polymorphic_jax_export_two_shapes():
    b, = jexport.symbolic_shape("b")
    f = jax.jit(lambda x, w: jnp.tanh(x @ w))
    exported = jexport.export(f)(jax.ShapeDtypeStruct((b, 3), F32), jax.ShapeDtypeStruct((3, 2), F32))
    compiled = load_module(exported).compile(pipeline=PIPELINE)
    w = _rand(3, 2, seed=1)
    for rows in (1, 6):
        x = _rand(rows, 3, seed=rows)
        _close(compiled(x, w), f(x, w))


def test_multi_platform_export_specialized_for_cpu():
    f = jax.jit(lambda x: jnp.sin(x) * 2)
    exported = jexport.export(f, platforms=("cuda", "cpu"))(jax.ShapeDtypeStruct((3,), F32))
    x = _rand(3)
    _close(load_module(exported).compile()(x), f(x))
    # The bare module needs the platform list its index selects among.
    text = exported.mlir_module()
    with pytest.raises(ValueError, match="platform index"):
        load_module(text)
    _close(load_module(text, platforms=("cuda", "cpu")).compile()(x), f(x))


def test_sharded_module_on_eight_devices():
    if len(toolkit.devices()) < 8:
        pytest.skip("needs TOOLKIT_NUM_CPU_DEVICES=8 (tests/conftest.py sets it)")
    lowered = load_module(SHARDED)
    compiled = lowered.compile()
    x, w = _rand(16, 4), _rand(4, 4, seed=1)
    out = compiled(x, w)
    np.testing.assert_allclose(np.asarray(out), np.sin(x @ w), rtol=1e-5, atol=1e-6)
    assert len(out.sharding.device_set) == 8 and out.sharding.shard_shape((16, 4)) == (2, 4)
    args, _ = compiled.input_shardings
    assert args[0].shard_shape((16, 4)) == (2, 4) and args[1].is_fully_replicated


def test_shardy_module_from_jax_on_eight_devices():
    if jax.device_count() < 8 or len(toolkit.devices()) < 8:
        pytest.skip("JAX's backend started with fewer than 8 CPU devices in this process")
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((8,), ("x",))
    f = jax.jit(lambda a, b: (jnp.sin(a) * 2 + b, a.sum()), in_shardings=(NamedSharding(mesh, P("x")), None))
    a, b = _rand(16, 4), _rand(16, 4, seed=1)
    lowered = load_module(f.lower(a, b))
    assert "sdy.sharding" in lowered.as_text()
    # The second argument has no sharding: Shardy may split it, and the call lays it out as XLA chose.
    _close(lowered.compile()(a, b), f(a, b))


# --- errors -----------------------------------------------------------------------------------------------------------


def test_unreadable_path(tmp_path):
    with pytest.raises(ValueError, match="cannot read .*missing.mlir.*No such file"):
        load_module(str(tmp_path / "missing.mlir"))
    with pytest.raises(ValueError, match="cannot read"):
        load_module(pathlib.Path(tmp_path))  # a directory


def test_garbage_bytes():
    with pytest.raises(ValueError, match="neither MLIR text"):
        load_module(bytes(range(256)) * 3)
    with pytest.raises(ValueError, match="cannot read the bytes given"):
        load_module(b"ML\xefR" + b"\x00garbage" * 8)


def test_text_that_does_not_parse():
    with pytest.raises(ValueError, match="cannot parse the text given as MLIR: .*:3:.*custom op 'stablehlo.nonsense'"):
        load_module("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
                    "  %0 = stablehlo.add %x, %x : tensor<f32>\n  %1 = stablehlo.nonsense %0\n"
                    "  return %0 : tensor<f32>\n}")


def test_module_without_main():
    with pytest.raises(ValueError, match="no @main .*defines @f"):
        load_module("func.func @f(%x: tensor<f32>) -> tensor<f32> {\n  return %x : tensor<f32>\n}")


def test_object_of_no_accepted_kind():
    with pytest.raises(TypeError, match="builtins.int.*accepts MLIR text"):
        load_module(42)
    with pytest.raises(TypeError, match="builtins.dict"):
        load_module({"a": 1})
    with pytest.raises(TypeError, match="Compiled .*pass the Lowered"):
        load_module(jax.jit(lambda x: x + 1).lower(np.ones(2, F32)).compile())


def test_ordered_effects_are_refused():
    text = ("func.func public @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {\n"
            "  return %t, %x : !stablehlo.token, tensor<2xf32>\n}")
    with pytest.raises(ValueError, match="argument 0 is a token.*Exported.call"):
        load_module(text)


def test_jax_exported_whose_tree_cannot_be_serialized():
    """A JAX Exported whose serialize() fails (a custom pytree node) loads from its module, flat."""
    tk = toolkit_export(toolkit.jit(lambda a, b: a * b + 1))(_rand(3), _rand(3))

    class Unserializable:
        mlir_module_serialized = tk.mlir_module_serialized
        in_avals, in_tree, platforms, fun_name = tk.in_avals, tk.in_tree, tk.platforms, "custom_tree"

        def serialize(self):
            raise ValueError("Cannot serialize PyTreeDef containing a custom node")

    lowered = load_module(Unserializable())
    assert lowered.name == "custom_tree"
    a, b = _rand(3, seed=1), _rand(3, seed=2)
    np.testing.assert_allclose(np.asarray(lowered.compile()(a, b)), a * b + 1, rtol=1e-6)


def test_wrong_arguments_at_call_time(cnn_loaded, flax_cnn):
    _, compiled, _ = cnn_loaded
    with pytest.raises(TypeError, match="takes 9 positional argument.*variables\\['batch_stats'\\].*got 1 positional"):
        compiled(flax_cnn[2])
    compiled_plain = load_module(PLAIN).compile()
    a, b, c = PLAIN_ARGS
    with pytest.raises(TypeError, match="argument args\\[1\\] .* has type f32\\[4,4\\].*compiled for f32\\[3,4\\]"):
        compiled_plain(a, np.ones((4, 4), F32), c)
    with pytest.raises(TypeError, match="keyword"):
        compiled_plain(a, b, c=c)


def test_bad_pipeline():
    lowered = load_module(ADD_MUL)
    with pytest.raises(ValueError, match="no-such-pass"):
        lowered.compile(pipeline="no-such-pass")
    with pytest.raises(TypeError, match="pipeline must be"):
        lowered.compile(pipeline=3)


def test_compile_pipeline_on_a_jit_lowering():
    """``pipeline=`` is Lowered's, not only the loader's: a traced lowering takes it too."""
    f = toolkit.jit(lambda x: x * 1.0 + 0.0)
    lowered = f.lower(np.ones(3, F32))
    compiled = lowered.compile(pipeline="toolkit-simplify")
    np.testing.assert_array_equal(np.asarray(compiled(np.arange(3, dtype=F32))), np.arange(3, dtype=F32))
    assert lowered.pipeline.elements == ()  # the lowering's own pipeline is unchanged


def test_loaded_lowered_type(plain_module):
    lowered = load_module(plain_module)
    assert isinstance(lowered, LoadedLowered)
    buffer = io.StringIO()
    buffer.write(repr(lowered))
    assert "f32[2,3]" in buffer.getvalue()


# --- the tools run through the same path ---------------------------------------------------------------------------


def test_toolkit_run_refines_dynamic_shapes_and_honours_shardings():
    from toolkit.tools.run import run_program

    outcome = run_program(DYNAMIC, arguments=["[[1, 2, 3, 4], [0, 0, 0, 1]]"])
    np.testing.assert_array_equal(outcome.results[0], np.array([30, 1], F32))
    if len(toolkit.devices()) >= 8:
        x, w = np.ones((16, 4), F32), np.eye(4, dtype=F32)
        outcome = run_program(SHARDED, arguments=[repr(x.tolist()), repr(w.tolist())])
        np.testing.assert_allclose(outcome.results[0], np.sin(x), rtol=1e-6)


def test_toolkit_export_run_of_a_sharded_jax_export(tmp_path, capsys):
    if jax.device_count() < 8 or len(toolkit.devices()) < 8:
        pytest.skip("JAX's backend started with fewer than 8 CPU devices in this process")
    from jax.sharding import NamedSharding, PartitionSpec as P

    from toolkit.tools import export_cli

    mesh = jax.make_mesh((8,), ("x",))
    f = jax.jit(lambda a: jnp.cos(a) + 1, in_shardings=NamedSharding(mesh, P("x")))
    path = tmp_path / "sharded.bin"
    path.write_bytes(jexport.export(f)(jax.ShapeDtypeStruct((8, 2), F32)).serialize())
    np.save(tmp_path / "a.npy", np.zeros((8, 2), F32))
    assert export_cli.main(["export", "run", str(path), "--arg", str(tmp_path / "a.npy")]) == 0
    assert "result[0] (result): float32[8, 2] = [[2., 2.]," in capsys.readouterr().out


def test_a_module_with_64_bit_types_runs_with_them_while_x64_is_off():
    # toolkit-run over upstream f64/c128 programs: the module's types are its own, never canonicalized to 32 bits.
    assert not toolkit.config.jax_enable_x64
    lowered = toolkit.load_module("""
      func.func @main(%x: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
        %c = stablehlo.convert %n : (tensor<i64>) -> tensor<f64>
        %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f64>) -> tensor<3xf64>
        %r = stablehlo.add %x, %b : tensor<3xf64>
        return %r : tensor<3xf64>
      }""")
    out = lowered.compile()(np.array([1e-300, 2.0, 3.0]), np.int64(2**40))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(out), np.array([1e-300, 2.0, 3.0]) + 2.0**40)
    assert not toolkit.config.jax_enable_x64  # the call's x64 ends with it
