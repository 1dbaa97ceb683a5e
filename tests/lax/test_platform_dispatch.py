"""lax.platform_dependent (toolkit/lax/platform_dispatch.py) against JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit import export, lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jlax = jax.lax

X = np.array([1.0, -2.0, 3.0], np.float32)


def _f(L):
    return lambda x: L.platform_dependent(x, cpu=lambda v: v * 3.0, tpu=lambda v: v * 2.0, default=lambda v: -v)


def test_values_eager_jit_grad_vmap_like_jax():
    assert_same(_f(lax)(X), _f(jlax)(X))
    assert_same(toolkit.jit(_f(lax))(X), jax.jit(_f(jlax))(X))
    g = lambda L, gr: gr(lambda x: (_f(L)(x) ** 2).sum())  # noqa: E731
    assert_same(toolkit.jit(g(lax, toolkit.grad))(X), jax.grad(lambda x: (_f(jlax)(x) ** 2).sum())(X))
    assert_same(toolkit.vmap(_f(lax))(X), jax.vmap(_f(jlax))(X))


def test_default_serves_other_platforms():
    f = lambda L: lambda x: L.platform_dependent(x, tpu=lambda v: v * 2.0, default=lambda v: v + 1.0)  # noqa: E731
    assert_same(toolkit.jit(f(lax))(X), jax.jit(f(jlax))(X))


def test_single_platform_lowering_is_a_constant_index():
    text = toolkit.jit(_f(lax)).lower(X).as_text()
    assert "_platform_index" not in text
    assert "stablehlo.case" in text and "stablehlo.multiply" in text


def test_multi_platform_export_dispatches_on_the_platform_index():
    exp = export.export(toolkit.jit(_f(lax)), platforms=["cpu", "tpu"])(X)
    text = exp.mlir_module()
    assert 'jax.global_constant = "_platform_index"' in text
    assert text.count("stablehlo.case") >= 2
    assert_same(exp.call(X), X * 3.0)


def test_errors():
    with pytest.raises(TypeError, match="the 'cpu' branch must be a callable"):
        lax.platform_dependent(X, cpu=1)
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm'"):
        lax.platform_dependent(X, gpu=lambda v: v)
    with pytest.raises(TypeError, match="the 'default' branch must be a callable"):
        lax.platform_dependent(X, cpu=lambda v: v, default=3)
    # No branch for the lowering platform and no default: an error when lowering, in both.
    with pytest.raises(Exception, match="Unsupported platform 'cpu'"):
        toolkit.jit(lambda x: lax.platform_dependent(x, tpu=lambda v: v * 5)).lower(X)
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        jax.jit(lambda x: jlax.platform_dependent(x, tpu=lambda v: v * 5)).lower(X)
