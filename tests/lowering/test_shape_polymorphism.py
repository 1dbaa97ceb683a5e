"""Shape-polymorphic tracing, lowering and per-shape specialization."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core.shape_poly import InconclusiveDimensionOperation, symbolic_shape
from toolkit.examples.reference_programs import PROGRAMS


def spec(text, dtype=np.float32, constraints=()):
    return toolkit.ShapeDtypeStruct(symbolic_shape(text, constraints=constraints), dtype)


def test_module_computes_dimension_variables_and_asserts():
    text = toolkit.jit(lambda x: x * 2).lower(spec("b, 4", constraints=("b >= 3",))).as_text()
    assert "jax.uses_shape_polymorphism = true" in text
    assert "tensor<?x4xf32>" in text
    assert "stablehlo.get_dimension_size %arg0, dim = 0" in text
    assert "custom_call @shape_assertion" in text
    assert "Constraint 'b >= 3' is not satisfied" in text
    assert "dimension variable 'b'" in text and "args[0]" in text


def test_dynamic_ops_for_symbolic_shapes():
    def f(x):
        y = x.reshape(-1)
        z = tnp.arange(4, dtype=np.float32) + tnp.zeros((x.shape[0], 4), np.float32)
        return y, z, tnp.broadcast_to(x[:, :1], x.shape)

    text = toolkit.jit(f).lower(spec("b, 4")).as_text()
    for op in ("stablehlo.dynamic_reshape", "stablehlo.dynamic_broadcast_in_dim"):
        assert op in text, op


def test_linear_dimension_solves_with_remainder_assertion():
    text = toolkit.jit(lambda x: x + 1).lower(spec("2*b")).as_text()
    assert "Division had remainder {0} when computing the value of 'b'" in text
    compiled = toolkit.jit(lambda x: x.reshape(2, -1)).lower(spec("2*b")).compile()
    assert compiled(np.arange(6, dtype=np.float32)).shape == (2, 3)
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value of 'b'"):
        compiled(np.arange(7, dtype=np.float32))


def test_inconsistent_dimensions_are_asserted():
    b, = symbolic_shape("b")
    same = toolkit.ShapeDtypeStruct((b,), np.float32)
    compiled = toolkit.jit(lambda x, y: x + y).lower(same, same).compile()
    np.testing.assert_allclose(np.asarray(compiled(np.ones(3, np.float32), np.ones(3, np.float32))), 2)
    with pytest.raises(ValueError, match="inconsistency"):
        compiled(np.ones(3, np.float32), np.ones(4, np.float32))


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_polymorphic_mlp_matches_static(batch):
    program = PROGRAMS["mlp"]
    params, _ = program.make_inputs(np.random.default_rng(0), sizes=(16, 32, 8), batch=2)
    fun = toolkit.jit(program.build(toolkit))
    compiled = fun.lower(params, spec("b, 16")).compile()
    x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(compiled(params, x)), np.asarray(fun(params, x)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("batch,seq", [(1, 16), (3, 8), (2, 32)])
def test_polymorphic_transformer_matches_static(batch, seq):
    pytest.importorskip("toolkit.nn")
    program = PROGRAMS["transformer"]
    params, _ = program.make_inputs(np.random.default_rng(0))
    fun = toolkit.jit(program.build(toolkit))
    compiled = fun.lower(params, spec("b, s, 64")).compile()
    x = np.random.default_rng(batch).standard_normal((batch, seq, 64)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(compiled(params, x)), np.asarray(fun(params, x)), rtol=1e-5, atol=1e-5)


def test_violated_constraint_names_variable_and_constraint():
    compiled = toolkit.jit(lambda x: x * 2).lower(spec("b, 4", constraints=("b >= 4",))).compile()
    assert compiled(np.ones((4, 4), np.float32)).shape == (4, 4)
    with pytest.raises(ValueError, match="Constraint 'b >= 4' is not satisfied"):
        compiled(np.ones((2, 4), np.float32))


def test_specialize_and_polymorphic_errors():
    compiled = toolkit.jit(lambda x: x * 2).lower(spec("b")).compile()
    static = compiled.specialize(np.ones(5, np.float32))
    assert "f32[5]" in static.as_text()
    with pytest.raises(TypeError, match="shape-polymorphic"):
        compiled.cost_analysis()
    with pytest.raises(TypeError, match=r"has type f32\[2,2\], but it was compiled for f32\[b\]"):
        compiled(np.ones((2, 2), np.float32))


def test_undecidable_shape_arithmetic_is_reported():
    # JAX 0.10.2's class and words (jax.export of the same function).
    with pytest.raises(InconclusiveDimensionOperation, match="Cannot divide evenly the sizes of shapes"):
        toolkit.jit(lambda x: x.reshape(3, -1)).trace(spec("b"))


@pytest.mark.parametrize("name,fun", [
    ("mean", lambda x: tnp.mean(x, 0)),
    ("var", lambda x: tnp.var(x, 0)),
    ("size division", lambda x: x.sum() / x.shape[0]),
    ("argmax", lambda x: tnp.argmax(x, 0)),
    ("dot", lambda x: x @ np.ones((4, 3), np.float32)),
    ("concatenate", lambda x: tnp.concatenate([x, x], 0)),
    ("transpose", lambda x: x.T),
    ("iota", lambda x: toolkit.lax.iota(np.int32, x.shape[0])),
])
def test_families_specialize_like_static(name, fun):
    compiled = toolkit.jit(fun).lower(spec("b, 4")).compile()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(compiled(x)), np.asarray(toolkit.jit(fun)(x)), rtol=1e-6)


def test_dimension_as_value_lowering():
    text = toolkit.jit(lambda x: x.sum() / x.shape[0]).lower(spec("b")).as_text()
    assert "stablehlo.get_dimension_size" in text and "stablehlo.convert" in text
