"""``jit(compiler_options=)`` and JAX's deprecated ``jit(device=)``/``jit(backend=)``, beside JAX 0.10.2."""

import warnings

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(0, 1, 8, dtype=np.float32)
NO_PASSES = {"xla_disable_all_hlo_passes": True}  # observable: XLA's optimized HLO has no fusion then


def _f(m):
    return lambda x: m.exp(x) * 2 + 1


def test_compiler_options_reach_every_compilation_as_jax():
    ours, theirs = toolkit.jit(_f(tnp), compiler_options=NO_PASSES), jax.jit(_f(jnp), compiler_options=NO_PASSES)
    for wrapped in (ours, theirs):
        assert "fusion" not in wrapped.lower(X).compile().as_text()
    np.testing.assert_allclose(ours(X), theirs(X), rtol=1e-6)
    # Lowered.compile's own options go over jit's (JAX appends them to its compile arguments).
    both = ours.lower(X).compile({"xla_backend_optimization_level": 1})
    assert both._compiler_options == {**NO_PASSES, "xla_backend_optimization_level": 1}
    assert "fusion" in toolkit.jit(_f(tnp)).lower(X).compile().as_text()


def test_jit_objects_of_one_function_with_other_options_do_not_share_executables():
    f = _f(tnp)
    plain, options = toolkit.jit(f), toolkit.jit(f, compiler_options=NO_PASSES)
    plain(X)  # fills the function's shared fast path and compile cache
    np.testing.assert_allclose(options(X), plain(X), rtol=1e-6)
    (compiled,) = options._cache.values()  # compiled for this object, not found in plain's caches
    assert compiled._compiler_options == NO_PASSES and "fusion" not in compiled.as_text()


def test_compiler_option_errors():
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        toolkit.jit(_f(tnp), compiler_options=[("xla_backend_optimization_level", 1)])
    with pytest.raises(ValueError, match="xla_no_such_option"):
        toolkit.jit(_f(tnp), compiler_options={"xla_no_such_option": 1})(X)
    with pytest.raises(Exception, match="xla_no_such_option"):
        jax.jit(_f(jnp), compiler_options={"xla_no_such_option": 1})(X)


def test_device_and_backend_place_the_computation_with_jaxs_deprecation():
    devices = toolkit.devices()
    target = devices[-1]
    for lib, device in ((toolkit, target), (jax, jax.devices()[-1])):
        with pytest.warns(DeprecationWarning, match="backend and device argument on jit is deprecated"):
            wrapped = lib.jit(_f(lib.numpy), device=device)
        out = wrapped(X)
        assert out.sharding.device_set == {device}
    with pytest.warns(DeprecationWarning):
        assert toolkit.jit(_f(tnp), backend="cpu")(X).sharding.device_set == {devices[0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for lib, device in ((toolkit, devices[0]), (jax, jax.devices()[0])):
            with pytest.raises(ValueError, match="can't specify both a device and a backend for jit"):
                lib.jit(_f(lib.numpy), device=device, backend="cpu")
            with pytest.raises(ValueError, match="then in_shardings should not be specified"):
                lib.jit(_f(lib.numpy), device=device, in_shardings=lib.sharding.SingleDeviceSharding(device))
            with pytest.raises(ValueError, match="then out_shardings should not be specified"):
                lib.jit(_f(lib.numpy), backend="cpu", out_shardings=lib.sharding.SingleDeviceSharding(device))
        with pytest.raises(TypeError, match="jit's device must be a device"):
            toolkit.jit(_f(tnp), device="cpu")
