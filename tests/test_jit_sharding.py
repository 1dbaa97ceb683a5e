"""jit with in/out shardings and sharding constraints, executed SPMD on 8 CPU devices."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

pytestmark = pytest.mark.multidevice


@pytest.fixture(autouse=True)
def _gspmd(monkeypatch):
    # These tests pin the GSPMD form; tests/test_jit_shardy.py covers Shardy.
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "gspmd")


def mlp(params, x):
    (w1, b1), (w2, b2) = params
    h = tnp.tanh(x @ w1 + b1)
    return h @ w2 + b2


def _params(rng):
    return ((rng.standard_normal((16, 32)).astype(np.float32), np.zeros(32, np.float32)),
            (rng.standard_normal((32, 8)).astype(np.float32), np.zeros(8, np.float32)))


def _reference(params, x):
    (w1, b1), (w2, b2) = params
    return np.tanh(x @ w1 + b1) @ w2 + b2


def test_batch_sharded_mlp(mesh):
    rng = np.random.default_rng(0)
    params, x = _params(rng), rng.standard_normal((8, 16)).astype(np.float32)
    batch = NamedSharding(mesh, P("x"))
    replicated = NamedSharding(mesh, P())
    f = toolkit.jit(mlp, in_shardings=(replicated, batch), out_shardings=batch)
    out = f(params, x)
    np.testing.assert_allclose(np.asarray(out), _reference(params, x), rtol=1e-5, atol=1e-5)
    assert out.sharding == batch
    assert len(out.addressable_shards) == 8
    assert all(s.data.shape == (4, 8) for s in out.addressable_shards)


def test_model_parallel_mlp(mesh):
    rng = np.random.default_rng(1)
    params, x = _params(rng), rng.standard_normal((8, 16)).astype(np.float32)
    (w1, b1), (w2, b2) = params
    shardings = ((NamedSharding(mesh, P(None, "y")), NamedSharding(mesh, P("y"))),
                 (NamedSharding(mesh, P("y", None)), NamedSharding(mesh, P())))
    placed = toolkit.device_put(params, shardings)
    xs = toolkit.device_put(x, NamedSharding(mesh, P("x")))
    out = toolkit.jit(mlp)(placed, xs)
    np.testing.assert_allclose(np.asarray(out), _reference(params, x), rtol=1e-4, atol=1e-4)
    text = toolkit.jit(mlp).lower(placed, xs).as_text()
    assert "mhlo.num_partitions = 8" in text and "mhlo.sharding" in text


def test_compiled_reports_shardings(mesh):
    x = np.ones((8, 8), np.float32)
    row = NamedSharding(mesh, P("x"))
    compiled = toolkit.jit(lambda a: a * 2, in_shardings=row, out_shardings=row).lower(x).compile()
    (arg,), _ = compiled.input_shardings
    assert arg.is_equivalent_to(row, 2)
    assert compiled.output_shardings.is_equivalent_to(row, 2)


def test_xla_chooses_unspecified_output_sharding(mesh):
    x = np.ones((8, 8), np.float32)
    col = NamedSharding(mesh, P(None, "y"))
    out = toolkit.jit(lambda a: a + 1, in_shardings=col)(x)
    assert out.sharding.is_equivalent_to(col, 2)


def test_with_sharding_constraint(mesh):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    target = NamedSharding(mesh, P("y", "x"))
    f = toolkit.jit(lambda a: lax.with_sharding_constraint(a * 2, target) + 1)
    text = f.lower(x).as_text()
    assert "stablehlo.custom_call @Sharding" in text
    out = f(x)
    np.testing.assert_allclose(np.asarray(out), x * 2 + 1)
    assert out.sharding.is_equivalent_to(target, 2)


def test_with_sharding_constraint_errors(mesh):
    with pytest.raises(TypeError, match="toolkit.shard shardings"):
        toolkit.jit(lambda a: lax.with_sharding_constraint(a, "x")).trace(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="divisible|divide"):
        toolkit.jit(lambda a: lax.with_sharding_constraint(a, NamedSharding(mesh, P("y")))).trace(
            np.ones(6, np.float32))


def test_shardings_over_different_device_orders_are_refused(mesh):
    other = Mesh(np.array(toolkit.devices()[:8])[::-1].reshape(2, 4), ("x", "y"))
    f = toolkit.jit(lambda a, b: a + b, in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(other, P("x"))))
    with pytest.raises(ValueError, match="different device assignments"):
        f.lower(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))


def test_single_device_sharding_on_another_device(mesh):
    device = toolkit.devices()[3]
    out = toolkit.jit(lambda a: a * 3, in_shardings=SingleDeviceSharding(device))(np.ones(2, np.float32))
    assert out.devices() == {device}
    np.testing.assert_allclose(np.asarray(out), [3, 3])
