"""jax_debug_nans / jax_debug_infs: jit calls and eager operations whose outputs are invalid raise, as JAX's."""

import contextlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402


@pytest.fixture
def debug_flag():
    """Set a debug flag on both toolkit and jax for one test, then restore both."""
    changed = []
    contexts = contextlib.ExitStack()

    def set_flag(name, value=True):
        changed.append((name, toolkit.config.read(name), getattr(jax.config, name)))
        toolkit.config.update(name, value)
        jax.config.update(name, value)
        # Also JAX's thread-local value (jax.debug_nans(...)): in one full xdist run the global update alone left
        # JAX's eager check off in this worker (not reproduced alone), as a thread-local override would.
        contexts.enter_context(getattr(jax, name.removeprefix("jax_"))(value))
    with contexts:
        yield set_flag
    for name, t_old, j_old in reversed(changed):
        toolkit.config.update(name, t_old)
        jax.config.update(name, j_old)


def test_off_by_default():
    assert toolkit.config.jax_debug_nans is False and toolkit.config.jax_debug_infs is False
    assert np.isnan(np.asarray(toolkit.jit(lambda x: tnp.log(x))(-1.0)))


@pytest.mark.parametrize("np_mod,jit", [(tnp, toolkit.jit), (jnp, jax.jit)])
def test_jit_output_nan_raises(debug_flag, np_mod, jit):
    debug_flag("jax_debug_nans")
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in"):
        jit(lambda x: np_mod.log(x) * 2)(-1.0)
    np.testing.assert_allclose(np.asarray(jit(lambda x: np_mod.log(x))(2.0)), np.log(2.0), rtol=1e-6)


@pytest.mark.parametrize("np_mod", [tnp, jnp])
def test_eager_operation_nan_raises(debug_flag, np_mod):
    debug_flag("jax_debug_nans")
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in .*log"):
        np_mod.log(np_mod.float32(-1.0) if np_mod is jnp else np.float32(-1.0))


def test_message_names_the_function(debug_flag):
    debug_flag("jax_debug_nans")

    def my_loss(x):
        return tnp.sqrt(x)
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in jit\(my_loss\)"):
        toolkit.jit(my_loss)(-4.0)


def test_integer_outputs_and_infs_pass_the_nan_check(debug_flag):
    debug_flag("jax_debug_nans")
    out = toolkit.jit(lambda x: (x.astype(np.int32), 1 / x))(0.0)
    assert np.isinf(np.asarray(out[1]))


@pytest.mark.parametrize("np_mod,jit", [(tnp, toolkit.jit), (jnp, jax.jit)])
def test_jax_debug_infs(debug_flag, np_mod, jit):
    debug_flag("jax_debug_infs")
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in"):
        jit(lambda x: np_mod.exp(x) * 2)(1000.0)


def test_turning_the_flag_off_compiles_without_the_check(debug_flag):
    f = toolkit.jit(lambda x: tnp.log(x))
    debug_flag("jax_debug_nans")
    with pytest.raises(FloatingPointError):
        f(-1.0)
    toolkit.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(-1.0)))


def test_flag_values_are_checked():
    with pytest.raises(TypeError):
        toolkit.config.update("jax_debug_nans", "yes please")


@pytest.mark.parametrize("lib,np_mod", [(toolkit, tnp), (jax, jnp)])
def test_context_managers(lib, np_mod):
    f = lib.jit(lambda x: np_mod.log(x))
    g = lib.jit(lambda x: np_mod.exp(-x))
    with lib.debug_nans(True):
        with pytest.raises(FloatingPointError, match="nan"):
            f(-1.0)
    with lib.debug_infs(True):
        with pytest.raises(FloatingPointError, match="inf"):
            g(-1000.0)
    assert np.isnan(np.asarray(f(-1.0))) and np.isinf(np.asarray(g(-1000.0)))  # off again after the blocks
