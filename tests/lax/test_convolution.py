"""conv_general_dilated / conv: results vs a numpy reference convolution, layouts, padding, groups, errors."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax

RNG = np.random.default_rng(1)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def reference_conv(x, w, strides, padding, lhs_dilation=(1, 1), rhs_dilation=(1, 1), groups=1):
    """NCHW x OIHW -> NCHW, written with explicit loops over the (dilated, padded) input."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    # lhs dilation: insert zeros between input elements
    dh, dw = lhs_dilation
    xd = np.zeros((n, c, (h - 1) * dh + 1, (wd - 1) * dw + 1), np.float64)
    xd[:, :, ::dh, ::dw] = x
    (pt, pb), (pl, pr) = padding
    xp = np.zeros((n, c, xd.shape[2] + pt + pb, xd.shape[3] + pl + pr))
    xp[:, :, pt:pt + xd.shape[2], pl:pl + xd.shape[3]] = xd
    rh, rw = rhs_dilation
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    oh = (xp.shape[2] - eh) // strides[0] + 1
    ow = (xp.shape[3] - ew) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    per_group_out = o // groups
    for oc in range(o):
        g = oc // per_group_out
        for y in range(oh):
            for z in range(ow):
                patch = xp[:, g * i:(g + 1) * i, y * strides[0]:y * strides[0] + eh:rh,
                           z * strides[1]:z * strides[1] + ew:rw]
                out[:, oc, y, z] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("strides,padding,lhs_d,rhs_d", [
    ((1, 1), "VALID", (1, 1), (1, 1)),
    ((1, 1), "SAME", (1, 1), (1, 1)),
    ((2, 1), "SAME", (1, 1), (1, 1)),
    ((1, 2), ((1, 2), (0, 1)), (1, 1), (2, 1)),
    ((1, 1), ((0, 0), (1, 1)), (2, 2), (1, 1)),
])
def test_conv_matches_numpy_reference(strides, padding, lhs_d, rhs_d):
    x, w = f32(2, 3, 7, 6), f32(4, 3, 3, 2)
    out = toolkit.jit(lambda x, w: lax.conv_general_dilated(x, w, strides, padding, lhs_d, rhs_d))(x, w)
    if isinstance(padding, str):
        eff = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_d)]
        padding = lax.padtype_to_pads(x.shape[2:], eff, strides, padding)
    want = reference_conv(x, w, strides, padding, lhs_d, rhs_d)
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_conv_nhwc_layout_strings_and_feature_groups():
    x, w = f32(2, 3, 6, 6), f32(6, 1, 3, 3)
    want = reference_conv(x, w, (1, 1), [(1, 1), (1, 1)], groups=3)
    out = lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    out = lax.conv_general_dilated(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), (1, 1), "SAME",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=3)
    np.testing.assert_allclose(out, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def test_conv_dimension_numbers_canonical_form():
    dn = lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None).lhs_spec == (0, 1, 2)
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), dn[:0] + ((0, 1, 2),) * 3).rhs_spec == (0, 1, 2)


def test_conv_1d_and_3d():
    x, w = f32(2, 3, 9), f32(5, 3, 4)
    out = lax.conv(x, w, (2,), "VALID")
    want = reference_conv(x[..., None], w[..., None], (2, 1), [(0, 0), (0, 0)])[..., 0]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    assert lax.conv(f32(1, 2, 4, 4, 4), f32(3, 2, 2, 2, 2), (1, 1, 1), "SAME").shape == (1, 3, 4, 4, 4)


def test_conv_lowering_and_precision():
    text = toolkit.jit(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), precision="highest")).lower(
        f32(1, 5, 5, 3), f32(3, 3, 3, 4)).as_text()
    assert "stablehlo.convolution" in text
    assert "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" in text
    assert "precision HIGHEST" in text


def test_conv_preferred_element_type():
    x, w = np.ones((1, 1, 3, 3), np.int8), np.ones((1, 1, 2, 2), np.int8)
    out = lax.conv(x, w, (1, 1), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.full((1, 1, 2, 2), 4))


def test_small_conv_net_matches_numpy():
    """conv -> relu -> 2x2 max-pool -> dense, as a reference program."""
    x, w1, w2 = f32(2, 1, 8, 8), f32(4, 1, 3, 3) * 0.5, f32(4 * 4 * 4, 10) * 0.1

    def net(x, w1, w2):
        h = lax.conv(x, w1, (1, 1), "SAME")
        h = tnp.maximum(h, 0)
        h = lax.reduce_window_max(h, (1, 1, 2, 2), (1, 1, 2, 2))
        return tnp.reshape(h, (x.shape[0], -1)) @ w2

    h = np.maximum(reference_conv(x, w1, (1, 1), [(1, 1), (1, 1)]), 0)
    h = h.reshape(2, 4, 4, 2, 4, 2).max(axis=(3, 5))
    want = h.reshape(2, -1) @ w2
    np.testing.assert_allclose(toolkit.jit(net)(x, w1, w2), want, rtol=1e-4, atol=1e-4)


def test_conv_errors():
    x, w = f32(1, 3, 5, 5), f32(4, 2, 3, 3)
    with pytest.raises(TypeError, match="feature dimension 3 must equal rhs input feature dimension 2"):
        lax.conv(x, w, (1, 1), "VALID")
    with pytest.raises(TypeError, match="same dtype"):
        lax.conv(x, f32(4, 3, 3, 3).astype(np.float16), (1, 1), "VALID")
    with pytest.raises(TypeError, match="window_strides needs"):
        lax.conv(x, f32(4, 3, 3, 3), (1,), "VALID")
    with pytest.raises(ValueError, match="unknown padding"):
        lax.conv(x, f32(4, 3, 3, 3), (1, 1), "FULL")
    with pytest.raises(TypeError, match="same rank"):
        lax.conv(x, f32(4, 3, 3), (1, 1), "VALID")
    with pytest.raises(ValueError, match="lacks the 'C' dimension"):
        lax.conv_general_dilated(x, f32(4, 3, 3, 3), (1, 1), "VALID", dimension_numbers=("NHWX", "OIHW", "NCHW"))
    with pytest.raises(ValueError, match="must be positive"):
        lax.conv(x, f32(4, 3, 3, 3), (0, 1), "VALID")
    with pytest.raises(ValueError, match="unknown precision"):
        lax.conv(x, f32(4, 3, 3, 3), (1, 1), "VALID", precision="ultra")


@pytest.mark.parametrize("preferred", [None, np.complex64])
def test_complex_conv_is_jaxs_three_real_convs_bit_for_bit(preferred):
    """On CPU JAX lowers a complex convolution to three real ones (Gauss's trick): toolkit does too, so the bits
    are JAX's, and an infinity spreads NaN as in JAX (numpy's loop keeps the other outputs finite)."""
    jax = pytest.importorskip("jax")
    x = (f32(2, 3, 9, 9) + 1j * f32(2, 3, 9, 9)).astype(np.complex64)
    w = (f32(4, 3, 3, 3) + 1j * f32(4, 3, 3, 3)).astype(np.complex64)
    ours = lax.conv_general_dilated(x, w, (1, 2), "SAME", preferred_element_type=preferred)
    theirs = jax.lax.conv_general_dilated(x, w, (1, 2), "SAME", preferred_element_type=preferred)
    assert ours.dtype == theirs.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    signal = np.array([0, 1 + 1j, -1j, 2.5, np.inf, 4, -3, 1e-30j, 7, 1j], np.complex64)
    np.testing.assert_array_equal(np.asarray(tnp.convolve(np.arange(10, dtype=np.float32), signal)),
                                  np.asarray(jax.numpy.convolve(np.arange(10, dtype=np.float32), signal)))
    grads = [np.asarray(m.grad(lambda v: m.numpy.abs(m.lax.conv_general_dilated(v, w, (1, 1), "VALID")).sum())(x))
             for m in (toolkit, jax)]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


GROUPED = [
    ((2, 6, 9), (4, 3, 3), dict(feature_group_count=2, padding="SAME")),
    ((2, 6, 9), (6, 1, 3), dict(feature_group_count=6, window_strides=(2,), padding=[(1, 2)], rhs_dilation=(2,))),
    ((4, 3, 9), (6, 3, 3), dict(batch_group_count=2, padding="VALID")),
    ((2, 4, 7, 6), (8, 2, 3, 2), dict(feature_group_count=2, window_strides=(2, 1), padding=[(1, 1), (0, 2)],
                                      lhs_dilation=(1, 2))),
    ((4, 5, 6, 5), (3, 3, 4, 5), dict(batch_group_count=2, padding="SAME", dimension_numbers=("NHWC", "HWOI", "NHWC"))),
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, kwargs", GROUPED)
def test_grouped_conv_gradients_are_jaxs(lhs_shape, rhs_shape, kwargs):
    # Depthwise and grouped convolutions (feature groups) and batch-grouped ones transpose as JAX's: the same
    # convolutions, so the same bits, for both operands.
    jax = pytest.importorskip("jax")

    kwargs = dict(kwargs)
    strides = kwargs.pop("window_strides", (1,) * (len(lhs_shape) - 2))
    lhs, rhs = f32(*lhs_shape), f32(*rhs_shape)

    def loss(library):
        return lambda a, b: (library.lax.conv_general_dilated(a, b, strides, **kwargs) ** 2).sum()
    ours = toolkit.grad(loss(toolkit), argnums=(0, 1))(lhs, rhs)
    theirs = jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs)
    for got, want in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    jitted = toolkit.jit(toolkit.grad(loss(toolkit), argnums=1))(lhs, rhs)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(theirs[1]))


def test_conv_padding_errors_are_jaxs():
    jax = pytest.importorskip("jax")
    from _oracle import raises_like

    x, w = f32(1, 2, 5), f32(2, 2, 3)
    for kwargs in [dict(padding="SAME", lhs_dilation=(2,)), dict(padding=[(1, 2, 3)]), dict(padding=3)]:
        raises_like(lambda: lax.conv_general_dilated(x, w, (1,), **kwargs),
                    lambda: jax.lax.conv_general_dilated(x, w, (1,), **kwargs))
