"""toolkit.numpy.nan_functions against ``jax.numpy`` 0.10.2: values, dtypes, weak types, options, ``jit``."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import BOOL, F, NANS, XI, assert_like_jax, compare_with_jax, jax_tol


NAN_REDUCTIONS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@pytest.mark.parametrize("x", [NANS, NANS.astype(np.float16), XI], ids=["nan32", "nan16", "i32"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 1), True)])
def test_nan_reductions(name, x, axis, keepdims, jnp):
    if name == "nanprod":
        x = np.where(np.isfinite(x), np.clip(x, -1.5, 1.5), x).astype(x.dtype)
    compare_with_jax(name, x, axis=axis, keepdims=keepdims, tol=jax_tol(x) if x.dtype != np.int32 or name in (
        "nanmean", "nanvar", "nanstd") else None)


def test_nan_reduction_options(jnp):
    compare_with_jax("nanvar", NANS, axis=1, ddof=1, tol=1e-5)
    compare_with_jax("nanstd", NANS, axis=0, ddof=3, tol=1e-5)
    compare_with_jax("nansum", NANS, axis=0, where=BOOL)
    compare_with_jax("nansum", NANS, axis=0, initial=2.0)
    compare_with_jax("nanmax", np.nan_to_num(NANS, posinf=0), axis=1, initial=5.0)
    compare_with_jax("nanmean", NANS, axis=1, where=BOOL, tol=1e-6)
    raises_like(lambda: tnp.nanmax(NANS, where=BOOL), lambda: jnp.nanmax(NANS, where=BOOL))
    for name in ("nanmax", "nanmin"):  # where= with initial, as JAX's (an all-NaN or masked slice gives initial)
        compare_with_jax(name, NANS, axis=1, initial=0.5, where=BOOL)
        compare_with_jax(name, NANS, axis=None, keepdims=True, initial=-1.0, where=BOOL)
        compare_with_jax(name, XI, axis=0, initial=3, where=BOOL)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("x", [NANS, F, XI])
def test_nan_arg_reductions(name, axis, x, jnp):
    compare_with_jax(name, x, axis=axis)
    compare_with_jax(name, x, axis=axis, keepdims=True)


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_cumulative(name, axis, jnp):
    x = np.where(np.isfinite(NANS), np.clip(NANS, -1.2, 1.2), NANS).astype(np.float32)
    compare_with_jax(name, x, axis=axis, tol=1e-5)
    compare_with_jax(name, XI % 3, axis=axis)
    compare_with_jax(name, BOOL, axis=axis)


def test_nan_functions_under_jit(jnp):
    f = toolkit.jit(lambda x: (tnp.nanmean(x, 0), tnp.nanargmax(x, 1), tnp.nanstd(x), tnp.nancumsum(x, 1)))
    assert_like_jax(f(NANS), (jnp.nanmean(NANS, 0), jnp.nanargmax(NANS, 1), jnp.nanstd(NANS), jnp.nancumsum(NANS, 1)),
           tol=1e-5)
