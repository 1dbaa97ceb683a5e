"""SPMD execution of annotated modules on 8 CPU devices, and the sharding passes' Python API."""

import os

os.environ["TOOLKIT_NUM_CPU_DEVICES"] = "8"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402

from toolkit.core.avals import ShapedArray  # noqa: E402
from toolkit.ir.context import make_context  # noqa: E402
from toolkit.passes.sharding_annotate import (  # noqa: E402
    annotate_shardings, parse_mesh_text, parse_spec_text, parse_specs_option)
from toolkit.passes.sharding_report import collect_sharded_values, format_report  # noqa: E402
from toolkit.runtime import arrays as runtime_arrays  # noqa: E402
from toolkit.runtime import executable as runtime_executable  # noqa: E402
from toolkit.runtime.client import devices  # noqa: E402
from toolkit.shard import (  # noqa: E402
    UNCONSTRAINED, AbstractMesh, GSPMDSharding, Mesh, NamedSharding, P, device_put_sharded, host_array)

pytestmark = pytest.mark.multidevice
IN_PROCESS = len(devices()) == 8


@pytest.fixture(autouse=True)
def _needs_eight_devices(request):
    if not IN_PROCESS and request.node.name != "test_in_subprocess":
        pytest.skip("covered by test_in_subprocess")


def test_in_subprocess():
    if IN_PROCESS:
        return
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


MLP = """
func.func public @main(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x8xf32>) -> tensor<16x8xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<16x64xf32>
  %r = stablehlo.maximum %h, %zero : tensor<16x64xf32>
  %y = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : (tensor<16x64xf32>, tensor<64x8xf32>) -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}
"""


def mlp_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in [(16, 32), (32, 64), (64, 8)]]


def mlp_reference(x, w1, w2):
    return np.maximum(x @ w1, 0) @ w2


def run_spmd(in_shardings, out_sharding, mode):
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(MLP)
        annotate_shardings(module, in_shardings, [out_sharding], mode=mode)
        text = str(module)
    devs = list(in_shardings[0]._device_assignment)
    exe = runtime_executable.compile_module(text, devs, num_partitions=len(devs), spmd=True,
                                            use_shardy=(mode == "shardy"))
    inputs = mlp_inputs()
    args = [device_put_sharded(a, s) for a, s in zip(inputs, in_shardings)]
    aval = ShapedArray((16, 8), np.float32)
    handler = runtime_arrays.result_handler(aval, out_sharding._runtime_sharding(2))
    [out] = runtime_executable.execute(exe, args, [handler])
    return exe, out, inputs


@pytest.mark.parametrize("mode", ["gspmd", "shardy"])
def test_data_parallel_mlp(mode):
    mesh = Mesh(np.array(devices()), ("batch",))
    batch, replicated = NamedSharding(mesh, P("batch")), NamedSharding(mesh, P())
    exe, out, inputs = run_spmd([batch, replicated, replicated], batch, mode)
    np.testing.assert_allclose(host_array(out), mlp_reference(*inputs), rtol=1e-5, atol=1e-5)
    [chosen] = runtime_executable.output_shardings(exe)
    assert GSPMDSharding(devices(), chosen).is_equivalent_to(batch, 2)
    for piece in out._arrays:
        assert np.asarray(piece).shape == (2, 8)


@pytest.mark.parametrize("mode", ["gspmd", "shardy"])
def test_model_parallel_mlp(mode):
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("data", "model"))
    x_s = NamedSharding(mesh, P("data"))
    w1_s = NamedSharding(mesh, P(None, "model"))
    w2_s = NamedSharding(mesh, P("model", None))
    out_s = NamedSharding(mesh, P("data"))
    exe, out, inputs = run_spmd([x_s, w1_s, w2_s], out_s, mode)
    np.testing.assert_allclose(host_array(out), mlp_reference(*inputs), rtol=1e-5, atol=1e-5)
    params = runtime_executable.parameter_shardings(exe)
    assert GSPMDSharding(devices(), params[1]).is_equivalent_to(w1_s, 2)
    index_map = out_s.devices_indices_map((16, 8))
    reference = mlp_reference(*inputs)
    for piece in out._arrays:
        device = list(piece.devices())[0]
        np.testing.assert_allclose(np.asarray(piece), reference[index_map[device]], rtol=1e-5, atol=1e-5)


def test_report_after_annotate():
    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(MLP)
        annotate_shardings(module, [NamedSharding(mesh, P("x")), None, NamedSharding(mesh, P("y"))],
                           [NamedSharding(mesh, P("x", "y"))], mode="gspmd")
        rows = collect_sharded_values(module.operation)
    assert [(r.value, r.shard_shape) for r in rows] == [
        ("@main arg 0", "8x32"), ("@main arg 2", "16x8"), ("@main result 0", "8x2")]
    assert "shard shape" in format_report(rows)


def test_annotate_errors():
    mesh_a = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    mesh_b = Mesh(np.array(devices()), ("z",))
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(MLP)
        # Two meshes are two symbols (as JAX names them), not an error.
        annotate_shardings(module, [NamedSharding(mesh_a, P("x")), NamedSharding(mesh_b, P("z"))], mode="shardy")
        assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in str(module) and 'sdy.mesh @mesh_0 = <["z"=8]>' in str(module)
        with pytest.raises(ValueError, match="has 4 entries but @main has 3 arguments"):
            annotate_shardings(module, [None] * 4)
        with pytest.raises(ValueError, match="no function @nope"):
            annotate_shardings(module, [], func_name="nope")
        with pytest.raises(ValueError, match="mode must be"):
            annotate_shardings(module, [NamedSharding(mesh_a, P("x"))], mode="bogus")
        with pytest.raises(ValueError, match="rank 2"):
            annotate_shardings(module, [NamedSharding(mesh_a, P("x", None, "y"))])


def test_option_parsers():
    assert parse_mesh_text("x=2,y=4") == AbstractMesh((2, 4), ("x", "y"))
    with pytest.raises(ValueError, match="name=size"):
        parse_mesh_text("x:2")
    assert parse_spec_text("[x, None]") == P("x", None)
    assert parse_spec_text("P('x', ('y', 'z'))") == P("x", ("y", "z"))
    assert parse_spec_text("[(y,x), ?]") == P(("y", "x"), UNCONSTRAINED)
    assert parse_spec_text("[]") == P()
    assert parse_specs_option("[x];;[None,y]") == [P("x"), None, P(None, "y")]
