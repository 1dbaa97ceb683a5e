"""Top-level essentials beside JAX: default_backend, device_get, live_arrays, clear_caches, disable_jit,
print_environment_info, NamedSharding/P (issue 23, item 4)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


def test_default_backend_matches_jax():
    assert toolkit.default_backend() == jax.default_backend()


def test_device_get_of_a_pytree_matches_jax():
    tree = {"a": tnp.arange(3.0), "b": (tnp.ones((2,), dtype="int32"), 7), "c": np.float32(2.5), "d": None}
    jtree = {"a": jnp.arange(3.0), "b": (jnp.ones((2,), dtype="int32"), 7), "c": np.float32(2.5), "d": None}
    got, want = toolkit.device_get(tree), jax.device_get(jtree)
    assert type(got["a"]) is np.ndarray and type(want["a"]) is np.ndarray
    np.testing.assert_array_equal(got["a"], want["a"])
    assert got["a"].dtype == want["a"].dtype and got["b"][0].dtype == want["b"][0].dtype
    assert got["b"][1] == 7 and got["c"] == np.float32(2.5) and got["d"] is None


def test_device_get_of_a_scalar_and_of_a_deleted_array():
    assert toolkit.device_get(tnp.asarray(3.0)) == np.float32(3.0)
    x = tnp.ones(2)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        toolkit.device_get(x)


def test_live_arrays_sees_a_new_array_and_not_a_deleted_one():
    x = toolkit.device_put(np.arange(5.0, dtype=np.float32))
    assert any(a is x for a in toolkit.live_arrays())
    assert any(a is x for a in toolkit.live_arrays("cpu"))
    x.delete()
    assert not any(a is x for a in toolkit.live_arrays())
    # JAX's answer has the same meaning: its arrays, alive and not deleted.
    y = jnp.arange(3.0)
    assert any(a is y for a in jax.live_arrays())


def test_clear_caches_makes_jit_trace_again():
    traces = []

    @toolkit.jit
    def f(x):
        traces.append(1)
        return x * 2

    x = np.ones(3, np.float32)
    f(x)
    f(x)
    assert len(traces) == 1
    toolkit.clear_caches()
    np.testing.assert_array_equal(f(x), 2 * x)
    assert len(traces) == 2
    gc.collect()


def _count_traces(jit, module):
    traces = []

    @jit
    def f(x):
        traces.append(type(x))
        return module.sin(x) * 2

    return f, traces


def test_disable_jit_runs_the_python_body_like_jax():
    f, traces = _count_traces(toolkit.jit, tnp)
    g, jtraces = _count_traces(jax.jit, jnp)
    x = np.linspace(0, 1, 4, dtype=np.float32)
    with toolkit.disable_jit(), jax.disable_jit():
        got, want = f(x), g(x)
        f(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    # Under the switch the body saw the argument itself (no tracer), each call.
    assert traces == [np.ndarray, np.ndarray] and jtraces == [np.ndarray]
    f(x)  # jit is back on after the block: a tracer
    assert len(traces) == 3 and traces[2] is not np.ndarray


def test_disable_jit_false_inside_and_the_config_flag():
    f, traces = _count_traces(toolkit.jit, tnp)
    x = np.ones(2, np.float32)
    with toolkit.disable_jit():
        with toolkit.disable_jit(False):
            f(x)
    assert traces[0] is not np.ndarray
    assert toolkit.config.jax_disable_jit is False
    toolkit.config.update("jax_disable_jit", True)
    try:
        assert toolkit.config.read("jax_disable_jit") is True
        f(x)
        assert traces[-1] is np.ndarray
    finally:
        toolkit.config.update("jax_disable_jit", False)


def test_disable_jit_turns_off_the_fast_path_of_a_call_seen_before():
    # f(x) with x's aval object of the last call takes jit's quickest path (Wrapped.__call__); disable_jit,
    # however it is set, still runs the Python body there.
    import threading

    f, traces = _count_traces(toolkit.jit, tnp)
    x = tnp.linspace(0, 1, 4, dtype=np.float32)
    for _ in range(3):
        f(x)
    assert len(traces) == 1
    with toolkit.disable_jit():
        f(x)
    assert traces[-1] is toolkit.Array
    toolkit.config.update("jax_disable_jit", True)
    try:
        f(x)
        assert traces[-1] is toolkit.Array and len(traces) == 3
    finally:
        toolkit.config.update("jax_disable_jit", False)
    f(x)
    f(x)
    assert len(traces) == 3  # compiled again? no: the executable of the first call
    # A block open on another thread: this thread's calls leave the quickest path, and stay jitted.
    opened, release = threading.Event(), threading.Event()

    def other():
        with toolkit.disable_jit():
            opened.set()
            release.wait(30)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert opened.wait(30)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.asarray(x)) * 2, rtol=1e-6)
        assert len(traces) == 3
    finally:
        release.set()
        thread.join(30)


def test_disable_jit_bad_argument():
    with pytest.raises(TypeError, match="disable_jit"):
        toolkit.disable_jit("yes")
    with pytest.raises((TypeError, ValueError), match="jax_disable_jit"):
        toolkit.config.update("jax_disable_jit", "yes")


def test_disable_jit_under_grad_matches_jax():
    def body(np_module):
        return lambda x: np_module.sum(np_module.tanh(x) ** 2)

    x = np.array([0.1, 0.5, -0.3], np.float32)
    with toolkit.disable_jit():
        got = toolkit.grad(toolkit.jit(body(tnp)))(x)
    with jax.disable_jit():
        want = jax.grad(jax.jit(body(jnp)))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_print_environment_info(capsys):
    text = toolkit.print_environment_info(return_string=True)
    assert "toolkit:" in text and "jaxlib:" in text and "numpy:" in text and "python:" in text
    assert toolkit.print_environment_info() is None
    assert "jaxlib:" in capsys.readouterr().out
    assert "jaxlib:" in jax.print_environment_info(return_string=True)


def test_named_sharding_and_p_at_top_level():
    from toolkit.shard import NamedSharding, PartitionSpec

    assert toolkit.NamedSharding is NamedSharding and toolkit.P is PartitionSpec
    assert toolkit.P("x", None) == PartitionSpec("x", None)
    assert jax.P is jax.sharding.PartitionSpec  # the same aliasing in JAX


def test_jit_donate_argnames_matches_jax():
    add = lambda x, y: x + y  # noqa: E731
    f, g = toolkit.jit(add, donate_argnames="x"), jax.jit(add, donate_argnames="x")
    a, b = toolkit.device_put(np.ones(3, np.float32)), toolkit.device_put(np.ones(3, np.float32))
    ja, jb = jnp.ones(3), jnp.ones(3)
    np.testing.assert_array_equal(f(a, b), g(ja, jb))
    assert (a.is_deleted(), b.is_deleted()) == (ja.is_deleted(), jb.is_deleted()) == (True, False)
    # As a decorator factory, with donate_argnums too.
    h = toolkit.jit(donate_argnames=("y",), donate_argnums=0)(lambda x, y: (x + y, x - y))
    c, d = toolkit.device_put(np.ones(2, np.float32)), toolkit.device_put(np.ones(2, np.float32))
    h(c, d)
    assert c.is_deleted() and d.is_deleted()


def test_copy_to_host_async_and_process_indices():
    x = {"a": tnp.ones(3), "b": 1}
    assert toolkit.copy_to_host_async(x) is x
    assert jax.copy_to_host_async({"a": jnp.ones(3), "b": 1})["b"] == 1
    assert toolkit.process_indices() == jax.process_indices() == [0]


def test_device_and_shard_classes():
    assert isinstance(toolkit.devices()[0], toolkit.Device)
    assert toolkit.Device is type(jax.devices()[0])  # jaxlib's class, as JAX's
    shard = toolkit.device_put(np.ones(2, np.float32)).addressable_shards[0]
    assert isinstance(shard, toolkit.Shard)
    assert {"device", "index", "data"} <= set(dir(shard)) and {"device", "index", "data"} <= set(dir(jax.Shard))
