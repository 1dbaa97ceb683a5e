"""``toolkit.nn.initializers`` against ``jax.nn.initializers``: same key, same bits."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.nn import initializers as init

jax = pytest.importorskip("jax")
jinit = jax.nn.initializers

def _same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform",
                                  "he_normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_normal"])
def test_named_variance_scalings_are_bit_exact(name):
    shape = (3, 3, 2, 5)  # a convolution kernel: the receptive field counts in both fans
    _same(getattr(init, name)()(toolkit.random.key(3), shape), getattr(jinit, name)()(jax.random.key(3), shape))


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling(mode, distribution):
    ours = init.variance_scaling(0.5, mode, distribution, in_axis=(0, 1), out_axis=3, batch_axis=2)
    theirs = jinit.variance_scaling(0.5, mode, distribution, in_axis=(0, 1), out_axis=3, batch_axis=2)
    _same(ours(toolkit.random.key(1), (2, 3, 4, 5)), theirs(jax.random.key(1), (2, 3, 4, 5)))


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_complex_dtypes(distribution):
    ours = init.variance_scaling(1.0, "fan_in", distribution)(toolkit.random.key(2), (4, 3), np.complex64)
    theirs = jinit.variance_scaling(1.0, "fan_in", distribution)(jax.random.key(2), (4, 3), np.complex64)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)


def test_simple_initializers():
    key, jkey = toolkit.random.key(0), jax.random.key(0)
    _same(init.zeros(key, (2, 3)), jinit.zeros(jkey, (2, 3)))
    _same(init.ones(key, (2,), np.int32), jinit.ones(jkey, (2,), np.int32))
    _same(init.constant(-7)(key, (2, 2)), jinit.constant(-7)(jkey, (2, 2)))
    _same(init.uniform(10.0)(key, (5,)), jinit.uniform(10.0)(jkey, (5,)))
    _same(init.normal(5.0, dtype=np.float16)(key, (5,)), jinit.normal(5.0, dtype=np.float16)(jkey, (5,)))
    _same(init.truncated_normal(2.0, lower=-1.0, upper=3.0)(key, (6,)),
          jinit.truncated_normal(2.0, lower=-1.0, upper=3.0)(jkey, (6,)))


def test_inside_jit():
    out = toolkit.jit(lambda k: init.he_normal()(k, (4, 4)))(toolkit.random.key(9))
    _same(out, jinit.he_normal()(jax.random.key(9), (4, 4)))


def test_errors_match_jax():
    for module, key in ((init, toolkit.random.key(0)), (jinit, jax.random.key(0))):
        with pytest.raises(ValueError, match="default in_axis"):
            module.glorot_uniform()(key, (4,))
        with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan_max"):
            module.variance_scaling(1.0, "fan_max", "normal")(key, (2, 2))
        with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer: cauchy"):
            module.variance_scaling(1.0, "fan_in", "cauchy")(key, (2, 2))


def test_names_cover_jax_with_reasons():
    absent = {n for n in dir(jinit) if not n.startswith("_")} - set(init.__all__)
    assert not absent
    assert isinstance(init.glorot_uniform(), init.Initializer)


@pytest.mark.parametrize("shape,kwargs", [((3, 3), {}), ((4, 6), {}), ((6, 4), {}), ((2, 3, 5), {}),
                                          ((5, 2, 3), {"column_axis": 0}), ((3, 3), {"scale": 2.0}),
                                          ((3, 0), {}), ((4, 4), {"dtype": np.float32})])
def test_orthogonal_is_bit_exact_with_jax(shape, kwargs):
    ours = np.asarray(init.orthogonal(**kwargs)(toolkit.random.key(3), shape))
    theirs = np.asarray(jinit.orthogonal(**kwargs)(jax.random.key(3), shape))
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("shape", [(3, 4, 4), (3, 3, 2, 4), (3, 3, 3, 2, 2)])
def test_delta_orthogonal_is_bit_exact_with_jax(shape):
    np.testing.assert_array_equal(np.asarray(init.delta_orthogonal()(toolkit.random.key(1), shape)),
                                  np.asarray(jinit.delta_orthogonal()(jax.random.key(1), shape)))


def test_orthogonal_errors_as_jax():
    for module, key in ((init, toolkit.random.key(0)), (jinit, jax.random.key(0))):
        with pytest.raises(ValueError, match="at least a 2D shape"):
            module.orthogonal()(key, (4,))
        with pytest.raises(ValueError, match="3D, 4D or 5D"):
            module.delta_orthogonal()(key, (4, 4))
        with pytest.raises(ValueError, match="fan_in"):
            module.delta_orthogonal()(key, (3, 4, 2))
