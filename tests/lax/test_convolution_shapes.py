"""jax.lax's convolution helpers (toolkit/lax/convolution_shapes.py), each against JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(1)
LAYOUTS = [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NHWC", "OIWH", "CNHW"), ("NCW", "WIO", "NWC")]


@pytest.mark.parametrize("dn", LAYOUTS)
def test_conv_general_permutations(dn):
    assert lax.conv_general_permutations(dn) == jlax.conv_general_permutations(dn)


@pytest.mark.parametrize("dn,message", [(("NCHW", "OIHW", "NHW"), "exactly once"),
                                        (("NCHH", "OIHH", "NCHH"), "duplicate"),
                                        (("NCHW", "OIHX", "NCHW"), "same set of spatial")])
def test_conv_general_permutations_errors(dn, message):
    with pytest.raises(TypeError, match=message):
        lax.conv_general_permutations(dn)
    with pytest.raises(TypeError, match=message):
        jlax.conv_general_permutations(dn)
    with pytest.raises(TypeError, match="three layout strings"):
        lax.conv_general_permutations("NCHW")


@pytest.mark.parametrize("pads", ["SAME", "VALID", [(1, 2), (0, 0)], [(-1, 0), (2, 2)]])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_conv_shape_tuple(pads, strides):
    args = ((2, 3, 9, 10), (4, 3, 3, 2), strides, pads)
    assert lax.conv_shape_tuple(*args) == jlax.conv_shape_tuple(*args)
    assert lax.conv_shape_tuple(*args, batch_group_count=2) == jlax.conv_shape_tuple(*args, batch_group_count=2)


def test_conv_shape_tuple_errors():
    with pytest.raises(TypeError, match="Wrong number of explicit pads"):
        lax.conv_shape_tuple((1, 1, 4, 4), (1, 1, 2, 2), (1, 1), [(0, 0)])
    with pytest.raises(ValueError, match="Negative padding"):
        lax.conv_shape_tuple((1, 1, 4, 4), (1, 1, 2, 2), (1, 1), [(-5, 0), (0, 0)])


@pytest.mark.parametrize("dn", LAYOUTS[:3])
@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 1), (2, 0)]])
def test_conv_general_and_transpose_shape_tuple(dn, padding):
    lhs = tuple(np.take((2, 3, 9, 10), np.argsort(jlax.conv_general_permutations(dn)[0])))
    rhs = tuple(np.take((5, 3, 3, 2), np.argsort(jlax.conv_general_permutations(dn)[1])))
    args = (lhs, rhs, (2, 1), padding, dn)
    assert lax.conv_general_shape_tuple(*args) == jlax.conv_general_shape_tuple(*args)
    assert lax.conv_transpose_shape_tuple(*args) == jlax.conv_transpose_shape_tuple(*args)


@pytest.mark.parametrize("base,window_dil", [(None, None), ((1, 2), (2, 1)), ((2, 2), None)])
def test_reduce_window_shape_tuple(base, window_dil):
    args = ((7, 9), (2, 3), (1, 2), ((1, 0), (2, 2)), base, window_dil)
    assert lax.reduce_window_shape_tuple(*args) == jlax.reduce_window_shape_tuple(*args)
    with pytest.raises(TypeError, match="one entry per dimension"):
        lax.reduce_window_shape_tuple((7, 9), (2,), (1, 2), ((0, 0), (0, 0)))


def test_conv_with_general_padding():
    x = RNG.standard_normal((2, 3, 8, 7)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
    args = ((1, 2), [(1, 0), (0, 2)], (2, 1), (1, 2))
    assert_same(lax.conv_with_general_padding(x, w, *args), jlax.conv_with_general_padding(x, w, *args), rtol=1e-5,
                atol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
@pytest.mark.parametrize("transpose_kernel", [False, True])
@pytest.mark.parametrize("consistent", [False, True])
def test_conv_transpose(padding, transpose_kernel, consistent):
    x = RNG.standard_normal((2, 5, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 4) if not transpose_kernel else (3, 2, 4, 3)).astype(np.float32)
    kwargs = dict(transpose_kernel=transpose_kernel, use_consistent_padding=consistent)
    ours = toolkit.jit(lambda a, b: lax.conv_transpose(a, b, (2, 1), padding, **kwargs))(x, w)
    theirs = jax.jit(lambda a, b: jlax.conv_transpose(a, b, (2, 1), padding, **kwargs))(x, w)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-5)


def test_conv_transpose_1d_and_dilation_and_errors():
    x = RNG.standard_normal((2, 7, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 2)).astype(np.float32)
    assert_same(lax.conv_transpose(x, w, (2,), "SAME", rhs_dilation=(2,)),
                jlax.conv_transpose(x, w, (2,), "SAME", rhs_dilation=(2,)), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="same rank"):
        lax.conv_transpose(x, w[0], (2,), "SAME")
    with pytest.raises(ValueError, match="No 4\\+ dimensional"):
        lax.conv_transpose(np.zeros((1,) * 6), np.zeros((1,) * 6), (1,) * 4, "SAME")


@pytest.mark.parametrize("dn", [None, ("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NcHW", "OIwh", "CNHW")])
def test_conv_general_dilated_patches(dn):
    shape = (2, 3, 7, 6) if dn is None or dn[0] != "NHWC" else (2, 7, 6, 3)
    if dn is not None and dn[0] == "NcHW":
        dn = ("NCHW", "OIWH", "CNHW")
    x = RNG.standard_normal(shape).astype(np.float32)
    for padding, lhs_dilation in (("SAME", None), ([(1, 0), (2, 1)], (1, 2))):
        kw = dict(lhs_dilation=lhs_dilation, rhs_dilation=(2, 1), dimension_numbers=dn)
        ours = toolkit.jit(lambda a: lax.conv_general_dilated_patches(a, (2, 3), (1, 2), padding, **kw))(x)
        theirs = jax.jit(lambda a: jlax.conv_general_dilated_patches(a, (2, 3), (1, 2), padding, **kw))(x)
        assert_same(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dn", [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC")])
@pytest.mark.parametrize("precision", [None, "highest"])
def test_conv_general_dilated_local(dn, precision):
    lhs_shape = (2, 3, 6, 5) if dn[0] == "NCHW" else (2, 6, 5, 3)
    x = RNG.standard_normal(lhs_shape).astype(np.float32)
    out_spatial = (5, 4)  # VALID with a 2x2 window and unit strides
    patch = 3 * 2 * 2
    rhs_shape = (4, patch) + out_spatial if dn[1] == "OIHW" else out_spatial + (patch, 4)
    w = RNG.standard_normal(rhs_shape).astype(np.float32)
    ours = toolkit.jit(lambda a, b: lax.conv_general_dilated_local(a, b, (1, 1), "VALID", (2, 2), dimension_numbers=dn,
                                                                   precision=precision))(x, w)
    theirs = jlax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2), dimension_numbers=dn,
                                             precision=precision)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-5)


def test_conv_helpers_differentiate_like_jax():
    x = RNG.standard_normal((1, 4, 4, 2)).astype(np.float32)
    w = RNG.standard_normal((2, 2, 2, 3)).astype(np.float32)
    ours = toolkit.jit(toolkit.grad(lambda a, b: (lax.conv_transpose(a, b, (2, 2), "SAME") ** 2).sum(), (0, 1)))(x, w)
    theirs = jax.grad(lambda a, b: (jlax.conv_transpose(a, b, (2, 2), "SAME") ** 2).sum(), (0, 1))(x, w)
    for o, t in zip(ours, theirs):
        assert_same(o, t, rtol=1e-4, atol=1e-4)


def test_dimension_numbers_alias():
    assert lax.ConvGeneralDilatedDimensionNumbers is not None
    dn = lax.conv_dimension_numbers((1, 1, 2, 2), (1, 1, 1, 1), ("NCHW", "OIHW", "NCHW"))
    assert isinstance(dn, lax.ConvDimensionNumbers)
