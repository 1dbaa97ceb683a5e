"""custom_call: lowering of every attribute, a runnable LAPACK target, effectful variant, errors."""

import numpy as np
import pytest

import toolkit
from toolkit import lax
from toolkit import ShapeDtypeStruct


def test_lowering_string_config_and_side_effect():
    f = lambda x: lax.custom_call("my_target", ShapeDtypeStruct((2,), np.float32), x, has_side_effect=True,
                                  backend_config="opaque")
    text = toolkit.jit(f).lower(np.ones(2, np.float32)).as_text()
    assert 'stablehlo.custom_call @my_target(%arg0)' in text
    assert 'backend_config = "opaque"' in text and "has_side_effect = true" in text
    program = toolkit.jit(f).trace(np.ones(2, np.float32)).program
    assert program.eqns[0].primitive.effectful


def test_lowering_typed_ffi_attributes_and_layouts():
    f = lambda x: lax.custom_call("t", [ShapeDtypeStruct((2, 3), np.float32), ShapeDtypeStruct((), np.int32)], x,
                                  api_version=4, backend_config={"flag": True, "n": 3, "w": np.uint8(7), "s": "x"},
                                  operand_layouts=[(0, 1)], result_layouts=[(0, 1), ()])
    text = toolkit.jit(f).lower(np.ones((2, 3), np.float32)).as_text()
    assert "api_version = 4 : i32" in text
    assert 'backend_config = {flag = true, n = 3 : i64, s = "x", w = 7 : ui8}' in text
    assert "operand_layouts = [dense<[0, 1]> : tensor<2xindex>]" in text
    assert "-> (tensor<2x3xf32>, tensor<i32>)" in text
    assert not toolkit.jit(f).trace(np.ones((2, 3), np.float32)).program.eqns[0].primitive.effectful


def test_runs_lapack_cholesky():
    a = np.array([[4, 2, 0], [2, 5, 1], [0, 1, 3]], np.float32)

    def chol(a):
        return lax.custom_call("lapack_spotrf_ffi", [ShapeDtypeStruct((3, 3), np.float32),
                                                     ShapeDtypeStruct((), np.int32)],
                               a, api_version=4, backend_config={"uplo": np.uint8(ord("L"))},
                               operand_layouts=[(0, 1)], result_layouts=[(0, 1), ()])

    factor, info = toolkit.jit(chol)(a)
    assert int(info) == 0
    np.testing.assert_allclose(np.tril(np.asarray(factor)), np.linalg.cholesky(a), rtol=1e-5)


def test_errors():
    with pytest.raises(TypeError, match="non-empty string"):
        lax.custom_call("", [], np.ones(2))
    with pytest.raises(TypeError, match="must be a ShapeDtypeStruct"):
        lax.custom_call("t", [(2, 3)], np.ones(2))
    with pytest.raises(ValueError, match="needs api_version=4"):
        lax.custom_call("t", [], np.ones(2), backend_config={"a": 1})
    with pytest.raises(ValueError, match="api_version must be"):
        lax.custom_call("t", [], np.ones(2), api_version=7)
    with pytest.raises(TypeError, match="must be a scalar or a string"):
        lax.custom_call("t", [], np.ones(2), api_version=4, backend_config={"a": [1]})
    with pytest.raises(ValueError, match="1 operand layouts for 2 operands"):
        toolkit.jit(lambda x: lax.custom_call("t", [], x, x, operand_layouts=[(0,)])).lower(np.ones(2))
    with pytest.raises(ValueError, match="not a permutation"):
        toolkit.jit(lambda x: lax.custom_call("t", [], x, operand_layouts=[(1,)])).lower(np.ones(2))
