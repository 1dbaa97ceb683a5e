"""toolkit.image against jax.image (the oracle): resize and scale_and_translate, bitwise on CPU."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import toolkit  # noqa: E402
from toolkit import image as ti  # noqa: E402

IMG = np.random.default_rng(0).standard_normal((9, 7, 3)).astype(np.float32)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert (a.view(np.uint8) == b.view(np.uint8)).all(), np.abs(a - b).max()


@pytest.mark.parametrize("method", ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"])
def test_resize_bitwise(method):
    for shape in [(18, 14, 3), (4, 5, 3), (9, 12, 3)]:
        for antialias in (True, False):
            if method == "cubic-pytorch" and not antialias and shape[0] < IMG.shape[0]:
                continue  # edge-padded downsampling: within 1e-6 of JAX, not bitwise (docs/random.md)
            _same(ti.resize(IMG, shape, method, antialias), jax.image.resize(IMG, shape, method, antialias))


def test_resize_enum_dtypes_and_batch():
    img = (IMG * 50).astype(np.int32)
    _same(ti.resize(img, (4, 5, 3), ti.ResizeMethod.LINEAR), jax.image.resize(img, (4, 5, 3), jax.image.ResizeMethod.LINEAR))
    _same(ti.resize(img, (4, 5, 3), "nearest"), jax.image.resize(img, (4, 5, 3), "nearest"))
    bf = IMG.astype("bfloat16")
    _same(ti.resize(bf, (12, 7, 3), "bilinear"), jax.image.resize(bf, (12, 7, 3), "bilinear"))
    batch = np.stack([IMG, -IMG])
    _same(ti.resize(batch, (2, 5, 4, 3), "cubic"), jax.image.resize(batch, (2, 5, 4, 3), "cubic"))


def test_scale_and_translate_under_jit():
    s, t = np.array([1.7, 0.6], np.float32), np.array([0.3, -1.2], np.float32)
    for method in ("linear", "lanczos3", "area"):
        got = toolkit.jit(lambda x, s, t: ti.scale_and_translate(x, (12, 5, 3), (0, 1), s, t, method))(IMG, s, t)
        want = jax.jit(lambda x, s, t: jax.image.scale_and_translate(x, (12, 5, 3), (0, 1), s, t, method))(IMG, s, t)
        _same(got, want)
    np.testing.assert_allclose(ti.scale_and_translate(IMG, (12, 5, 3), (0, 1), s, t, "cubic"),
                               jax.image.scale_and_translate(IMG, (12, 5, 3), (0, 1), s, t, "cubic"), atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        ti.resize(IMG, (4, 4, 3), "bogus")
    with pytest.raises(TypeError, match="must be a string or a toolkit.image.ResizeMethod"):
        ti.resize(IMG, (4, 4, 3), 3)
    with pytest.raises(ValueError, match="shape must have length equal to the number of dimensions"):
        ti.resize(IMG, (4, 4), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        ti.scale_and_translate(IMG, (4, 4, 3), (0, 1), np.ones(2), np.zeros(2), "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        ti.scale_and_translate(IMG, (4, 4, 3), (0, 1), np.ones(3), np.zeros(2), "linear")
    with pytest.raises(ValueError, match="out of range"):
        ti.scale_and_translate(IMG, (4, 4, 3), (0, 5), np.ones(2), np.zeros(2), "linear")
    assert ti.ResizeMethod.from_string("tricubic") is ti.ResizeMethod.CUBIC
