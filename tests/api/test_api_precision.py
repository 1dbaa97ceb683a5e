"""lax.Precision and precision= on dot_general beside JAX's (issue 23, item 4)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
import toolkit.lax as tlax

jax = pytest.importorskip("jax")

A = np.arange(4, dtype=np.float32).reshape(2, 2)


def test_precision_enum_as_jax():
    assert [m.name for m in tlax.Precision] == [m.name for m in jax.lax.Precision]
    assert [m.value for m in tlax.Precision] == [m.value for m in jax.lax.Precision]
    for alias in ("highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default", "bfloat16", "fastest"):
        assert tlax.Precision(alias).name == jax.lax.Precision(alias).name
    assert repr(tlax.Precision.HIGH) == repr(jax.lax.Precision.HIGH) == "Precision.HIGH"
    assert str(tlax.Precision.HIGHEST) == str(jax.lax.Precision.HIGHEST) == "HIGHEST"
    with pytest.raises(ValueError):
        tlax.Precision("bogus")
    with pytest.raises(ValueError):
        jax.lax.Precision("bogus")


def _dot_line(text):
    return re.search(r"stablehlo\.dot_general.*", text).group(0)


@pytest.mark.parametrize("precision", [
    "highest", ("bfloat16", "float32"), "HIGH", "tensorfloat32", ("default", "highest"),
], ids=str)
def test_dot_general_lowers_precision_as_jax(precision):
    def tk_precision():
        return tuple(tlax.Precision(p.lower()) for p in precision) if isinstance(precision, tuple) \
            else tlax.Precision(precision.lower())

    def jax_precision():
        return tuple(jax.lax.Precision(p.lower()) for p in precision) if isinstance(precision, tuple) \
            else jax.lax.Precision(precision.lower())

    for make_tk, make_jax in ((lambda: precision, lambda: precision), (tk_precision, jax_precision)):
        if isinstance(precision, str) and precision == "HIGH":
            make_jax = jax_precision  # JAX's strings are lower case; toolkit also takes the member names
        got = toolkit.jit(lambda x, y: tlax.dot(x, y, precision=make_tk())).lower(A, A).as_text()
        want = jax.jit(lambda x, y: jax.lax.dot(x, y, precision=make_jax())).lower(A, A).as_text()
        assert _dot_line(got) == _dot_line(want)


def test_precision_values_gradients_and_batching_match_jax():
    def f(lax):
        return lambda x: lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=lax.Precision.HIGHEST).sum()

    np.testing.assert_allclose(np.asarray(toolkit.grad(f(tlax))(A)), np.asarray(jax.grad(f(jax.lax))(A)))
    batch = np.stack([A, A + 1])
    got = toolkit.vmap(lambda x: tlax.dot(x, x, precision="highest"))(batch)
    want = jax.vmap(lambda x: jax.lax.dot(x, x, precision="highest"))(batch)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def test_no_precision_means_default():
    text = toolkit.jit(lambda x, y: tlax.dot(x, y)).lower(A, A).as_text()
    # toolkit leaves precision_config out; JAX writes [DEFAULT, DEFAULT]: the same meaning.
    assert "precision" not in _dot_line(text)


def test_conv_takes_the_enum():
    x, w = np.ones((1, 4, 4, 1), np.float32), np.ones((2, 2, 1, 1), np.float32)
    text = toolkit.jit(lambda x, w: tlax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
        precision=tlax.Precision.HIGH)).lower(x, w).as_text()
    assert "#stablehlo<precision HIGH>, #stablehlo<precision HIGH>" in text


@pytest.mark.parametrize("bad", ["bogus", ("highest",), ("a", "b", "c"), 3])
def test_bad_precision_is_a_value_error_as_jax(bad):
    with pytest.raises(ValueError, match="precision"):
        tlax.dot(A, A, precision=bad)
    with pytest.raises((ValueError, TypeError)):
        jax.lax.dot(A, A, precision=bad)
