"""Dtype canonicalization and the promotion lattice (Python scalars are weak)."""

import numpy as np
import pytest

import toolkit
from toolkit.core import dtypes

CASES = [
    (np.float16, 2.0, np.float16),
    (np.int8, 3, np.int8),
    (np.int32, 1.5, np.float32),
    (np.uint8, np.int8, np.int16),
    (dtypes.bfloat16, np.float16, np.float32),
    (np.float32, np.complex64, np.complex64),
    (np.bool_, np.int8, np.int8),
    (np.bool_, 2, np.int32),
    (np.bool_, 1.0, np.float32),
    (np.float32, 1j, np.complex64),
    (np.int16, np.float16, np.float16),
]


@pytest.mark.parametrize("a,b,expected", CASES)
def test_result_type(a, b, expected):
    assert dtypes.result_type(a, b) == np.dtype(expected)
    assert dtypes.result_type(b, a) == np.dtype(expected)


# (a, b, result with x64 off, result with x64 on): JAX's lattice forms no 64-bit type from 32-bit ones with x64
# off, and results are canonical (tests/test_x64.py checks the whole table against JAX).
X64_CASES = [
    (np.uint32, np.int32, np.int32, np.int64),
    (np.int64, np.uint64, np.int32, np.float64),  # x64 off: canonical inputs int32 and uint32 first
    (np.float64, np.complex64, np.complex64, np.complex128),
]


@pytest.mark.parametrize("a,b,off,on", X64_CASES)
def test_result_type_with_x64_off_and_on(a, b, off, on):
    assert dtypes.result_type(a, b) == np.dtype(off) == dtypes.result_type(b, a)
    with toolkit.enable_x64():
        assert dtypes.result_type(a, b) == np.dtype(on) == dtypes.result_type(b, a)


def test_python_scalars_alone_are_weak_defaults():
    assert dtypes.result_type_with_weak((dtypes.float32, True), (dtypes.int32, True)) == (dtypes.float32, True)
    assert dtypes.result_type(1, 2) == np.int32
    assert dtypes.result_type(1.0) == np.float32


@pytest.mark.parametrize("dtype", dtypes.SUPPORTED_DTYPES)
def test_supported_dtypes_canonicalize(dtype):
    assert dtypes.check_dtype(dtype) == dtype
    assert dtypes.check_dtype(dtype.name) == dtype
    with toolkit.enable_x64():
        assert dtypes.canonicalize_dtype(dtype) == dtype
        assert dtypes.canonicalize_dtype(dtype.name) == dtype
    assert dtypes.canonicalize_dtype(dtype) == dtypes.TO_32BIT.get(dtype, dtype)  # x64 off: 64 bits become 32


def test_unsupported_dtype_names_it():
    with pytest.raises(TypeError, match="'<U3' is not supported|str"):
        dtypes.canonicalize_dtype(np.dtype("U3"))
    with pytest.raises(TypeError, match="not a valid dtype"):
        dtypes.canonicalize_dtype("no-such-type")


def test_matches_jax_promotion_table():
    jnp = pytest.importorskip("jax.numpy")
    names = ["bool", "int8", "int16", "int32", "uint8", "uint16", "bfloat16", "float16", "float32", "complex64"]
    for a in names:
        for b in names:
            ours = dtypes.promote_types(a, b)
            theirs = np.dtype(jnp.promote_types(a, b))
            assert ours == theirs, (a, b, ours, theirs)
