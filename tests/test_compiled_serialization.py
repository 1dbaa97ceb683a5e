"""Compiled.serialize() / toolkit.deserialize_compiled(): round trips, mismatches, corrupt bytes."""

import json
import struct

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import compiled_format


def _f(x, d):
    return {"a": tnp.sin(x) * d["s"], "b": (x.sum(),)}


X = np.arange(8, dtype=np.float32)
D = {"s": np.float32(3)}


@pytest.fixture(scope="module")
def compiled():
    return toolkit.jit(_f).lower(X, D).compile()


def _same(a, b):
    la, ta = toolkit.tree_util.tree_flatten(a)
    lb, tb = toolkit.tree_util.tree_flatten(b)
    assert ta == tb
    for u, v in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


def test_round_trip_single_device(compiled):
    data = compiled.serialize()
    assert data.startswith(compiled_format.MAGIC)
    loaded = toolkit.deserialize_compiled(data)
    assert loaded.in_tree == compiled.in_tree and loaded.out_tree == compiled.out_tree
    _same(loaded(X, D), compiled(X, D))
    assert loaded.as_text() == compiled.as_text()
    with pytest.raises(TypeError, match="compiled for"):
        loaded(X[:4], D)


def test_round_trip_sharded_8_devices():
    devices = toolkit.devices()
    if len(devices) < 8:
        pytest.skip("needs TOOLKIT_NUM_CPU_DEVICES=8")
    from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(devices[:8]).reshape(2, 4), ("x", "y"))
    g = toolkit.jit(lambda a, b: (a * 2 + b.sum(), a.T), in_shardings=(NamedSharding(mesh, P("x", "y")), None),
                    out_shardings=(NamedSharding(mesh, P("y")), None))
    a, b = np.arange(32, dtype=np.float32).reshape(4, 8), np.ones(3, np.float32)
    c = g.lower(a, b).compile()
    loaded = toolkit.deserialize_compiled(c.serialize())
    r, r2 = c(a, b), loaded(a, b)
    _same(r, r2)
    for x, y in zip(r, r2):
        assert x.sharding.is_equivalent_to(y.sharding, x.ndim)
    assert r2[0].sharding == NamedSharding(mesh, P("y"))
    assert str(loaded.input_shardings) == str(c.input_shardings)
    assert str(loaded.output_shardings) == str(c.output_shardings)


def _with_header(data, change):
    (size,) = struct.unpack(">I", data[8:12])
    header = json.loads(data[12:12 + size])
    change(header)
    text = json.dumps(header).encode()
    return data[:8] + struct.pack(">I", len(text)) + text + data[12 + size:]


@pytest.mark.parametrize("field,value,message", [
    ("jaxlib", "0.0.1", "jaxlib: the executable was compiled for '0.0.1'"),
    ("platform_version", "other", "platform_version"),
    ("device_kind", "TPU v9", "device_kind: the executable was compiled for 'TPU v9'"),
])
def test_mismatch_is_refused_naming_it(compiled, field, value, message):
    data = _with_header(compiled.serialize(), lambda h: h["key"].__setitem__(field, value))
    with pytest.raises(ValueError, match=message):
        toolkit.deserialize_compiled(data)


def test_device_count_and_compile_options_mismatch(compiled):
    data = compiled.serialize()
    with pytest.raises(ValueError, match="compiler_options: the executable was compiled with"):
        toolkit.deserialize_compiled(data, compiler_options={"xla_cpu_enable_fast_math": True})
    toolkit.deserialize_compiled(data, compiler_options={})
    many = _with_header(data, lambda h: h["signature"].__setitem__("devices", list(range(10_000, 10_016))))
    with pytest.raises(ValueError, match="device count differs"):
        toolkit.deserialize_compiled(many)
    fast = toolkit.jit(_f).lower(X, D).compile({"xla_cpu_enable_fast_math": True}).serialize()
    loaded = toolkit.deserialize_compiled(fast, compiler_options={"xla_cpu_enable_fast_math": True})
    np.testing.assert_allclose(loaded(X, D)["a"], np.sin(X) * 3, rtol=1e-5)


def test_corrupt_bytes_are_clear_errors(compiled):
    data = compiled.serialize()
    flipped = bytearray(data)
    flipped[-50] ^= 0xFF  # jaxlib itself would load this one
    cases = [b"", b"hello", data[:7], data[:20], data[:-10], bytes(flipped), b"TKEXEC\x00\x09" + data[8:],
             data[:12] + b"[" + data[13:]]
    for bad in cases:
        with pytest.raises(ValueError):
            toolkit.deserialize_compiled(bad)
    with pytest.raises(TypeError):
        toolkit.deserialize_compiled("not bytes")
    # A consistent header over garbage executable bytes: jaxlib's parse error, as a ValueError.
    garbage = b"\x00" * 64

    def swap(h):
        import hashlib
        h["executable"] = {"size": len(garbage), "sha256": hashlib.sha256(garbage).hexdigest()}
    (size,) = struct.unpack(">I", data[8:12])
    forged = _with_header(data[:12 + size], swap) + garbage
    with pytest.raises(ValueError, match="jaxlib cannot load"):
        toolkit.deserialize_compiled(forged)


def test_polymorphic_compiled_refuses(compiled):
    from toolkit import export as texport
    spec = toolkit.ShapeDtypeStruct(texport.symbolic_shape("n"), np.float32)
    poly = toolkit.jit(lambda x: x * 2).lower(spec).compile()
    with pytest.raises(TypeError, match="serialize"):
        poly.serialize()
    spec_c = poly.specialize(X)
    _same(toolkit.deserialize_compiled(spec_c.serialize())(X), X * 2)
