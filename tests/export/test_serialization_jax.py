"""Interop with jax.export (0.10.2): blobs move both ways with equal fields, and byte-identically.

Every blob is generated here at test time. Sharded exports need 8 host
devices, which XLA only gives a process that sets XLA_FLAGS before importing
jax, so they run in a subprocess.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax import export as jexport  # noqa: E402

from _jax_interop import check_both_ways  # noqa: E402
from toolkit import export  # noqa: E402
from toolkit.core.shape_poly import symbolic_shape  # noqa: E402

Pair = collections.namedtuple("Pair", ["left", "right"])
jexport.register_namedtuple_serialization(Pair, serialized_name="tests.export.interop.Pair")
export.register_namedtuple_serialization(Pair, serialized_name="tests.export.interop.Pair")

f32 = np.float32


def test_simple():
    exp = check_both_ways(jexport.export(jax.jit(jnp.sin))(np.ones((3,), f32)))
    assert exp.platforms == ("cpu",)
    assert "stablehlo.sine" in exp.mlir_module()


def test_pytrees_dicts_lists_none_namedtuples_kwargs():
    def f(p, xs, *, opts):
        return {"out": Pair(p.left * 2, p.right), "rest": [xs[0] + 1, None], "od": opts}

    args = (Pair(np.ones((2,), f32), np.arange(3, dtype=np.int32)), [np.ones((4,), f32)])
    kwargs = {"opts": collections.OrderedDict([("z", np.ones((), f32)), ("a", np.zeros((1,), f32))])}
    exp = check_both_ways(jexport.export(jax.jit(f))(*args, **kwargs))
    assert exp.in_tree.num_leaves == 5


def test_unused_arguments_are_dropped():
    exp = check_both_ways(jexport.export(jax.jit(lambda x, y, z: x + z))(np.ones(3, f32), np.ones(2, f32),
                                                                          np.ones(3, f32)))
    assert exp.module_kept_var_idx == (0, 2)


def test_symbolic_shapes_with_constraints():
    a, b = jexport.symbolic_shape("a, b", constraints=["a >= b", "b >= 2"])

    def f(x, y):
        return x[:, :1] * 2, x.reshape(-1), y

    exp = check_both_ways(jexport.export(jax.jit(f))(jax.ShapeDtypeStruct((a, b), f32),
                                                     jax.ShapeDtypeStruct((2 * a + 1, 3), np.int32)))
    assert exp.uses_global_constants
    assert [str(d) for d in exp.out_avals[1].shape] == ["a*b"]
    x_a, x_b = exp.in_avals[0].shape
    assert exp.out_avals[1].shape[0] == x_a * x_b  # one scope for the whole Exported


def test_symbolic_shapes_floordiv_mod_max():
    (n,) = jexport.symbolic_shape("n")
    f = jax.jit(lambda x: (x[: n // 2], jnp.concatenate([x, x])))
    check_both_ways(jexport.export(f)(jax.ShapeDtypeStruct((n, 3), f32)))


def test_multi_platform():
    exp = check_both_ways(jexport.export(jax.jit(jnp.cos), platforms=("cpu", "cuda", "tpu"))(np.ones(3, f32)))
    assert exp.platforms == ("cpu", "cuda", "tpu")


@pytest.mark.parametrize("version", [9, 10])
def test_calling_conventions(version):
    (n,) = jexport.symbolic_shape("n")
    with jax.export_calling_convention_version(version) if hasattr(jax, "export_calling_convention_version") \
            else _config_context("jax_export_calling_convention_version", version):
        j = jexport.export(jax.jit(lambda x: x * 2))(jax.ShapeDtypeStruct((n,), f32))
    exp = check_both_ways(j)
    assert exp.calling_convention_version == version


class _config_context:
    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.old = getattr(jax.config, self.name)
        jax.config.update(self.name, self.value)

    def __exit__(self, *exc):
        jax.config.update(self.name, self.old)


def test_disabled_checks():
    checks = [jexport.DisabledSafetyCheck.platform(), jexport.DisabledSafetyCheck.custom_call("my_target")]
    exp = check_both_ways(jexport.export(jax.jit(jnp.tanh), disabled_checks=checks)(np.ones(3, f32)))
    assert exp.disabled_safety_checks == (export.DisabledSafetyCheck.platform(),
                                          export.DisabledSafetyCheck.custom_call("my_target"))


def test_vjp_blobs():
    j = jexport.export(jax.jit(lambda x: jnp.sin(x) * x))(np.ones((3,), f32))
    exp = check_both_ways(j, vjp_order=2)
    assert exp.has_vjp() and exp.vjp().has_vjp() and not exp.vjp().vjp().has_vjp()
    assert [a.shape for a in exp.vjp().in_avals] == [(3,), (3,)]
    back = jexport.deserialize(bytes(exp.serialize(vjp_order=2)))
    assert back.vjp().vjp().fun_name == exp.vjp().vjp().fun_name


def test_toolkit_effects_read_by_jax():
    base = export.deserialize(jexport.export(jax.jit(jnp.sin))(np.ones((3,), f32)).serialize())
    import dataclasses

    with_effects = dataclasses.replace(
        base, ordered_effects=(export.Effect("<class 'jax._src.debugging.OrderedDebugEffect'>"),),
        unordered_effects=(export.Effect("<class 'jax._src.debugging.DebugEffect'>"),))
    j = jexport.deserialize(with_effects.serialize())
    assert [type(e).__name__ for e in j.ordered_effects] == ["OrderedDebugEffect"]
    assert [type(e).__name__ for e in j.unordered_effects] == ["DebugEffect"]
    # (JAX itself cannot re-serialize debug effects: they lack a nullary constructor.)


def test_toolkit_symbolic_export_read_by_jax():
    a, b = symbolic_shape("a, b")
    base = export.deserialize(jexport.export(jax.jit(jnp.sin))(np.ones((3,), f32)).serialize())
    from toolkit.core.avals import ShapedArray
    import dataclasses

    exp = dataclasses.replace(base, in_avals=(ShapedArray((a, 2 * b), f32),),
                              out_avals=(ShapedArray((a * b + 1,), f32),), in_shardings_hlo=(),
                              out_shardings_hlo=(), _in_named_shardings=None, _out_named_shardings=None)
    j = jexport.deserialize(exp.serialize())
    assert [str(d) for d in j.in_avals[0].shape] == ["a", "2*b"]
    assert [str(d) for d in j.out_avals[0].shape] == ["a*b + 1"]


def test_sharded_exports_in_a_subprocess():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    here = os.path.dirname(__file__)
    result = subprocess.run([sys.executable, os.path.join(here, "_jax_interop.py")], env=env, cwd=here,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sharded interop ok" in result.stdout
