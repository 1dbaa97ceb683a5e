"""Eager execution's executables are found by their module (toolkit.executables_by_module)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import toolkit
import toolkit.lax as tlax
import toolkit.numpy as tnp
from toolkit import dispatch, executables_by_module
from toolkit.executables_by_module import ExecutablesByModule

XS = np.linspace(-1.0, 1.0, 4, dtype=np.float32)


class _Compiler:
    """``compile`` callables that count their calls and return a new object each time."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return object()


def test_equal_modules_devices_and_settings_share_one_executable():
    kept, compile = ExecutablesByModule(), _Compiler()
    devices = toolkit.devices()
    first = kept.find_or_compile(b"module", devices[:1], (1, False), compile)
    assert kept.find_or_compile(b"module", devices[:1], (1, False), compile) is first
    assert compile.calls == 1 and len(kept) == 1


@pytest.mark.parametrize("other", [
    dict(bytecode=b"another module"),
    dict(devices=slice(1, 2)),
    dict(settings=(1, True)),
])
def test_another_module_device_or_setting_compiles_again(other):
    kept, compile = ExecutablesByModule(), _Compiler()
    devices = toolkit.devices()
    if len(devices) < 2:
        pytest.skip("needs two devices (TOOLKIT_NUM_CPU_DEVICES)")
    base = dict(bytecode=b"module", devices=slice(0, 1), settings=(1, False))
    first = kept.find_or_compile(base["bytecode"], devices[base["devices"]], base["settings"], compile)
    changed = {**base, **other}
    second = kept.find_or_compile(changed["bytecode"], devices[changed["devices"]], changed["settings"], compile)
    assert second is not first and compile.calls == 2


def test_least_recently_used_goes_first():
    kept, compile = ExecutablesByModule(entries=2), _Compiler()
    devices = toolkit.devices()[:1]
    a = kept.find_or_compile(b"a", devices, (), compile)
    kept.find_or_compile(b"b", devices, (), compile)
    assert kept.find_or_compile(b"a", devices, (), compile) is a  # a used again: b is now the oldest
    kept.find_or_compile(b"c", devices, (), compile)
    assert len(kept) == 2 and compile.calls == 3
    assert kept.find_or_compile(b"a", devices, (), compile) is a
    kept.find_or_compile(b"b", devices, (), compile)  # b was dropped: compiled again
    assert compile.calls == 4


@pytest.mark.parametrize("bytecode, settings", [
    (b"x" * 64 + b"xla_ffi_python_cpu_callback", ()),  # calls back into this process: numbered callbacks
    (b"x" * 100, ()),  # larger than the limit below
    (b"module", ([1, 2],)),  # settings that cannot be hashed
])
def test_what_is_compiled_every_time(bytecode, settings):
    kept, compile = ExecutablesByModule(max_module_bytes=96), _Compiler()
    devices = toolkit.devices()[:1]
    first = kept.find_or_compile(bytecode, devices, settings, compile)
    assert kept.find_or_compile(bytecode, devices, settings, compile) is not first
    assert compile.calls == 2 and len(kept) == 0


def test_a_failed_compilation_keeps_nothing():
    kept = ExecutablesByModule()

    def failing():
        raise RuntimeError("XLA refused it")

    with pytest.raises(RuntimeError, match="XLA refused it"):
        kept.find_or_compile(b"module", toolkit.devices()[:1], (), failing)
    assert len(kept) == 0
    kept.clear()


def _jvp_of_cond_with_new_branches(x):
    # The branches are new functions on every call: traced again each time, in toolkit as in JAX.
    return tlax.cond(x.sum() > 0, lambda y: tnp.sin(y) * 2, lambda y: tnp.cos(y), x).sum()


def test_an_eager_transformation_of_new_functions_compiles_once(compilations):
    outs, counts = [], []
    for _ in range(4):  # one call site: the same module each time, its executable found again
        outs.append(toolkit.jvp(_jvp_of_cond_with_new_branches, (XS,), (np.ones_like(XS),)))
        counts.append(compilations[0])
    assert counts[0] >= 1 and counts[1:] == counts[:1] * 3
    expected = jax.jvp(lambda x: jax.lax.cond(x.sum() > 0, lambda y: jnp.sin(y) * 2, jnp.cos, x).sum(),
                       (XS,), (np.ones_like(XS),))
    for ours in outs:
        np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(expected[0]), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(ours[1]), np.asarray(expected[1]), rtol=1e-6)


def test_a_jit_of_a_new_function_still_compiles(compilations):
    # jit keeps executables by function, as JAX: a user's new function with the same body compiles again.
    for k in range(2):
        np.testing.assert_allclose(np.asarray(toolkit.jit(lambda x: x * 3 + 1)(XS)), XS * 3 + 1)
        assert compilations[0] == k + 1


def test_clear_caches_forgets_eager_executables(compilations):
    toolkit.clear_caches()
    xs = toolkit.device_put(XS + 0.25)
    tlax.sin(xs)  # an eager op (toolkit.numpy's sin runs compiled whole): its executable kept by primitive and module
    assert len(executables_by_module.EAGER) > 0 and len(dispatch.EAGER_EXECUTABLES._cache) > 0
    toolkit.clear_caches()
    assert len(executables_by_module.EAGER) == 0 and len(dispatch.EAGER_EXECUTABLES._cache) == 0
    before = compilations[0]
    np.testing.assert_allclose(np.asarray(tlax.sin(xs)), np.sin(XS + 0.25), rtol=1e-6)
    assert compilations[0] == before + 1  # compiled again


def test_eager_executables_are_bounded(monkeypatch):
    monkeypatch.setattr(dispatch, "EAGER_ENTRIES", 3)
    toolkit.clear_caches()
    for n in range(1, 8):  # seven shapes: seven executables of sin, the oldest dropped
        x = np.linspace(0, 1, n, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(tlax.sin(toolkit.device_put(x))), np.sin(x), rtol=1e-6)
        assert 0 < len(dispatch.EAGER_EXECUTABLES._cache) <= 3
    x = np.linspace(0, 1, 1, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(tlax.sin(toolkit.device_put(x))), np.sin(x), rtol=1e-6)  # made again
