"""Every reference program exported (static, polymorphic, multi-platform), round-tripped through bytes and called."""

import numpy as np
import pytest

import toolkit
from toolkit import export
from toolkit.core import pytrees
from toolkit.core.shape_poly import symbolic_shape
from toolkit.examples.reference_programs import PROGRAMS

# The leading (batch) dimension of the data argument becomes symbolic in the polymorphic variant.
POLYMORPHIC = {"mlp": 1, "transformer": 1, "convnet": 1, "rnn": 1, "newton": 0}


def _specs(args, symbolic_arg=None):
    specs = pytrees.tree_map(lambda a: toolkit.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype), args)
    if symbolic_arg is not None:
        data = specs[symbolic_arg]
        b, = symbolic_shape("b")
        specs = list(specs)
        specs[symbolic_arg] = toolkit.ShapeDtypeStruct((b,) + tuple(data.shape[1:]), data.dtype)
        specs = tuple(specs)
    return specs


@pytest.mark.parametrize("variant", ["static", "polymorphic", "multi_platform"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_round_trip_and_call(name, variant):
    program = PROGRAMS[name]
    args = program.make_inputs(np.random.default_rng(0))
    fun = toolkit.jit(program.build(toolkit))
    expected = np.asarray(fun(*args))
    platforms = ("cpu", "cuda") if variant == "multi_platform" else None
    symbolic_arg = POLYMORPHIC[name] if variant == "polymorphic" else None
    exported = export.export(fun, platforms=platforms)(*_specs(args, symbolic_arg))
    loaded = export.deserialize(exported.serialize())
    assert loaded == exported
    assert loaded.calling_convention_version == export.maximum_supported_calling_convention_version
    np.testing.assert_allclose(np.asarray(loaded.call(*args)), expected, rtol=1e-5, atol=1e-5)
    if variant == "polymorphic" and name != "rnn":  # the rnn's batch is dimension 1 of its data
        smaller = pytrees.tree_map(lambda a: a, list(args))
        smaller[symbolic_arg] = np.asarray(args[symbolic_arg])[:1]
        np.testing.assert_allclose(np.asarray(loaded.call(*smaller)), np.asarray(fun(*smaller)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("version", [9, 10])
def test_both_calling_conventions(version):
    program = PROGRAMS["mlp"]
    args = program.make_inputs(np.random.default_rng(0), sizes=(8, 8, 4), batch=2)
    fun = toolkit.jit(program.build(toolkit))
    exported = export.export(fun, calling_convention_version=version)(*_specs(args))
    loaded = export.deserialize(exported.serialize())
    assert loaded.calling_convention_version == version
    np.testing.assert_allclose(np.asarray(loaded.call(*args)), np.asarray(fun(*args)), rtol=1e-6)


def test_chlo_ops_are_legalized_for_the_artifact():
    from toolkit import lax

    fun = toolkit.jit(lambda x: lax.top_k(lax.erf_inv(x * 0.1), 2)[0] + lax.lgamma(x + 1.0)[:2])
    x = np.arange(1, 6, dtype=np.float32)
    exported = export.export(fun)(toolkit.ShapeDtypeStruct((5,), np.float32))
    assert "= chlo." not in exported.mlir_module()  # CHLO ops became StableHLO (top_k: a composite)
    np.testing.assert_allclose(np.asarray(export.deserialize(exported.serialize()).call(x)), np.asarray(fun(x)),
                               rtol=1e-6)


def test_symbolic_shape_helpers_are_exported_like_jax():
    b, = export.symbolic_shape("b", constraints=("b >= 2",))
    specs = export.symbolic_args_specs([np.ones((3, 4), np.float32)], "b, 4")
    assert str(specs[0].shape) == "(b, 4)" and str(b) == "b"
    assert issubclass(export.InconclusiveDimensionOperation, Exception)
    assert export.SymbolicScope(["a >= 1"]).constraints == ("a >= 1",)
