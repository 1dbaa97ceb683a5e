"""toolkit.numpy's packbits, unpackbits and einsum_path against jax.numpy 0.10.2."""

import numpy as np
import pytest

from tests.numpy._jax_oracle import check

BITS = np.array([[1, 0, 1, 1, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 1]], np.int32)


def test_packbits():
    check(lambda m, b: m.packbits(b), BITS, jit=True)
    check(lambda m, b: m.packbits(b, axis=1, bitorder="little"), BITS)
    check(lambda m, b: m.packbits(b, axis=0), BITS.astype(bool))
    check(lambda m: m.packbits(np.zeros((0,), np.uint8)))


def test_unpackbits():
    packed = np.array([[5, 255], [7, 128]], np.uint8)
    check(lambda m, p: m.unpackbits(p), packed, jit=True)
    check(lambda m, p: m.unpackbits(p, axis=1, count=3), packed)
    check(lambda m, p: m.unpackbits(p, axis=0, count=20, bitorder="little"), packed)
    check(lambda m, p: m.unpackbits(p, count=-4), packed)


def test_round_trip():
    import toolkit.numpy as tnp
    x = np.random.default_rng(0).integers(0, 2, (3, 13)).astype(bool)
    out = tnp.unpackbits(tnp.packbits(x, axis=1), axis=1, count=13)
    np.testing.assert_array_equal(np.asarray(out), x.astype(np.uint8))


def test_errors():
    check(lambda m: m.packbits(np.ones(3, np.float32)))
    check(lambda m: m.packbits(BITS, bitorder="middle"))
    check(lambda m: m.unpackbits(np.ones(3, np.int32)))
    check(lambda m: m.unpackbits(np.ones(3, np.uint8), bitorder="x"))
    check(lambda m: m.packbits([1, 0]))


@pytest.mark.parametrize("optimize", ["auto", "greedy", "optimal", True, False, [(1, 2), (0, 1)]])
def test_einsum_path(optimize):
    import jax.numpy as jnp

    import toolkit.numpy as tnp
    a, b, c = np.ones((3, 4)), np.ones((4, 50)), np.ones((50, 2))
    ours = tnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize)
    theirs = jnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=optimize)
    assert ours[0] == theirs[0]
    assert str(ours[1]) == str(theirs[1])
