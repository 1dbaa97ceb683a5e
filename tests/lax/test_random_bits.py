"""rng_bit_generator: shapes, dtypes, determinism, algorithms, lowering and errors."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

KEY = np.array([0, 1, 2, 3], np.uint32)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, pytest.param(np.uint64, marks=pytest.mark.x64)])
def test_bits_shape_dtype_and_determinism(dtype):
    new_key, bits = lax.rng_bit_generator(KEY, (4, 5), dtype)
    assert bits.shape == (4, 5) and bits.dtype == dtype
    assert new_key.shape == (4,) and new_key.dtype == np.uint32
    again = toolkit.jit(lambda k: lax.rng_bit_generator(k, (4, 5), dtype))(KEY)
    np.testing.assert_array_equal(again[1], bits)
    assert not np.array_equal(np.asarray(new_key), KEY)


@pytest.mark.parametrize("algorithm", list(lax.RandomAlgorithm))
def test_algorithms_give_spread_out_bits(algorithm):
    _, bits = lax.rng_bit_generator(KEY, (4096,), np.uint32, algorithm)
    bits = np.asarray(bits)
    assert len(np.unique(bits)) > 4000
    # each bit position is set about half the time
    ones = np.unpackbits(bits.view(np.uint8)).mean()
    assert 0.45 < ones < 0.55


@pytest.mark.x64  # uint64 keys
def test_u64_key_and_chaining():
    key64 = np.array([7, 9], np.uint64)
    k1, b1 = lax.rng_bit_generator(key64, (3,))
    assert k1.dtype == np.uint64 and k1.shape == (2,)
    k2, b2 = lax.rng_bit_generator(k1, (3,))
    assert not np.array_equal(np.asarray(b1), np.asarray(b2))


def test_lowering():
    text = toolkit.jit(lambda k: lax.rng_bit_generator(k, (2, 3), np.uint8, lax.RandomAlgorithm.RNG_THREE_FRY)) \
        .lower(KEY).as_text()
    assert "stablehlo.rng_bit_generator" in text and "THREE_FRY" in text
    assert "tensor<2xui64>" in text and "tensor<2x3xui8>" in text


def test_matches_jax_when_available():
    jax = pytest.importorskip("jax")
    for algorithm in (1, 2):
        ours = lax.rng_bit_generator(KEY, (8,), np.uint32, lax.RandomAlgorithm(algorithm))
        theirs = jax.lax.rng_bit_generator(KEY, (8,), np.uint32, jax.lax.RandomAlgorithm(algorithm))
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])


def test_errors():
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(KEY, (2,), np.int32)
    with pytest.raises(TypeError, match="key must be uint32\\[4\\] or uint64\\[2\\]"):
        lax.rng_bit_generator(np.zeros(3, np.uint32), (2,))
    with pytest.raises(ValueError, match="unknown algorithm"):
        lax.rng_bit_generator(KEY, (2,), algorithm=7)
