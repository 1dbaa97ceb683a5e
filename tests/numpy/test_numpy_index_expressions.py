"""toolkit.numpy's r_, c_, mgrid, ogrid, s_, index_exp and mask_indices against jax.numpy 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from tests.numpy._jax_oracle import check

V = np.array([7, 8], np.int32)


def test_r_():
    check(lambda m: m.r_[1:4, 0, V])
    check(lambda m: m.r_[0.0:1:5j])
    check(lambda m: m.r_[np.ones((2, 2)), np.zeros((1, 2))])
    check(lambda m: m.r_["-1", np.ones((2, 2)), np.zeros((2, 1))])
    check(lambda m: m.r_["0,2", [1, 2], [3, 4]])
    check(lambda m: m.r_["0,2,0", [1, 2], [3, 4]])
    check(lambda m: m.r_["r", 1:3])
    check(lambda m: m.r_["c", V])


def test_c_():
    check(lambda m: m.c_[np.array([1, 2, 3]), np.array([4, 5, 6])])
    check(lambda m: m.c_[np.ones((2, 2)), V])
    check(lambda m: m.c_[1:3, 5])


def test_axis_concat_errors():
    check(lambda m: m.r_["bad", V])
    check(lambda m: m.r_[V, "0"])
    assert len(tnp.r_) == 0 and len(tnp.c_) == 0


def test_mgrid_ogrid():
    check(lambda m: m.mgrid[0:2, 0:3])
    check(lambda m: m.mgrid[0:4])
    check(lambda m: m.mgrid[0:1:3j, 0:2])
    check(lambda m: m.mgrid[-1:1:0.5])
    check(lambda m: m.mgrid[()])
    check(lambda m: m.ogrid[0:2, 0:3])
    check(lambda m: m.ogrid[0:1:5j])
    check(lambda m: m.ogrid[0:2, 0.0:1:0.5])


def test_grids_need_static_bounds():
    with pytest.raises(TypeError, match="static"):
        toolkit.jit(lambda n: tnp.mgrid[0:n])(3)


def test_s_and_index_exp_are_numpys():
    assert tnp.s_[1:3, ::2] == (slice(1, 3), slice(None, None, 2))
    assert tnp.index_exp[1] == (1,)
    x = np.arange(10)
    np.testing.assert_array_equal(np.asarray(tnp.asarray(x)[tnp.s_[2:8:3]]), x[2:8:3])


def test_mask_indices():
    check(lambda m: m.mask_indices(3, m.triu, 1))
    check(lambda m: m.mask_indices(4, m.tril))
    check(lambda m: m.mask_indices(3, m.triu, 1, size=5))
