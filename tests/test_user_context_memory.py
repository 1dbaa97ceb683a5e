"""make_user_context (jit re-traces when its value changes) and toolkit.memory.Space, against JAX 0.10.2."""

import threading

import numpy as np
import pytest

import toolkit
from toolkit import memory

jax = pytest.importorskip("jax")


def _count_traces(jit, ctx_maker):
    traces = []

    @jit
    def f(x):
        traces.append(1)
        return x * 2

    ctx = ctx_maker()
    f(1.0)
    with ctx(1):
        f(1.0)
    with ctx(2):
        f(1.0)
    with ctx(1):
        f(1.0)
    f(1.0)
    return len(traces)


def test_user_context_retraces_as_jax():
    assert _count_traces(toolkit.jit, toolkit.make_user_context) == _count_traces(jax.jit, jax.make_user_context)


def test_user_context_value_global_and_nesting():
    ctx, jctx = toolkit.make_user_context(5), jax.make_user_context(5)
    for c in (ctx, jctx):
        assert c.value == 5
        with c(6):
            assert c.value == 6
            with c(7):
                assert c.value == 7
            assert c.value == 6 and c.get_global() == 5
        c.set_global(8)
        assert c.value == 8 and c.get_global() == 8


def test_user_context_is_thread_local():
    ctx = toolkit.make_user_context(0)
    seen = []
    with ctx(1):
        t = threading.Thread(target=lambda: seen.append(ctx.value))
        t.start()
        t.join(timeout=10)
        assert ctx.value == 1
    assert seen == [0]


def test_user_context_set_global_retraces():
    ctx = toolkit.make_user_context("a")
    traces = []

    @toolkit.jit
    def f(x):
        traces.append(1)
        return x + 1

    f(np.float32(1))
    ctx.set_global("b")
    f(np.float32(1))
    ctx.set_global("a")
    f(np.float32(1))
    assert len(traces) == 2


def test_user_context_hidden_from_config():
    toolkit.make_user_context(1)
    assert not any(name.startswith("user_context") for name in toolkit.config.values)
    assert not any(name.startswith("user_context") for name in dir(toolkit.config))


def test_user_context_unhashable_value_is_refused():
    with pytest.raises(TypeError, match="hashable"):
        toolkit.make_user_context([1])
    ctx = toolkit.make_user_context()
    with pytest.raises(TypeError, match="hashable"):
        with ctx({}):
            pass
    with pytest.raises(TypeError, match="hashable"):
        ctx.set_global({})


def test_memory_space_matches_jax():
    assert [s.name for s in memory.Space] == [s.name for s in jax.memory.Space]
    for s in memory.Space:
        assert repr(s) == repr(getattr(jax.memory.Space, s.name))
    assert len({memory.Space.Device, memory.Space.Host, memory.Space.Any}) == 3


def test_memory_kind_mapping_matches_jax():
    from jax._src import core as jax_core
    for s in (memory.Space.Device, memory.Space.Host):
        assert memory.space_to_kind(s) == jax_core.mem_space_to_kind(getattr(jax.memory.Space, s.name))
    for kind in ("device", "pinned_host", "unpinned_host", None):
        assert memory.kind_to_space(kind).name == jax_core.mem_kind_to_space(kind).name


def test_memory_errors():
    with pytest.raises(ValueError, match="Any"):
        memory.space_to_kind(memory.Space.Any)
    with pytest.raises(TypeError, match="Space"):
        memory.space_to_kind("device")
    with pytest.raises(TypeError, match="memory kind"):
        memory.kind_to_space(3)


def test_device_put_to_a_space_matches_jax():
    x = np.arange(3, dtype=np.float32)
    host = toolkit.device_put(toolkit.numpy.asarray(x), memory.Space.Host)
    jhost = jax.device_put(jax.numpy.asarray(x), jax.memory.Space.Host)
    assert host.sharding.memory_kind == jhost.sharding.memory_kind == "pinned_host"
    back = toolkit.device_put(host, memory.Space.Device)
    jback = jax.device_put(jhost, jax.memory.Space.Device)
    assert back.sharding.memory_kind == jback.sharding.memory_kind == "device"
    np.testing.assert_array_equal(back + 1, np.asarray(jback) + 1)
    assert (toolkit.device_put(x, memory.Space.Host).sharding.memory_kind
            == jax.device_put(x, jax.memory.Space.Host).sharding.memory_kind)
    tree = toolkit.device_put({"a": x, "b": x}, {"a": memory.Space.Host, "b": None})
    assert tree["a"].sharding.memory_kind == "pinned_host"


def test_device_put_to_a_space_errors():
    with pytest.raises(ValueError, match="Space.Any"):
        toolkit.device_put(np.ones(2, np.float32), memory.Space.Any)
    with pytest.raises(ValueError, match="Space.Any"):
        toolkit.jit(lambda x: toolkit.device_put(x, memory.Space.Any))(np.ones(2, np.float32))
    # A traced put to host memory places the result there, as JAX's on CPU
    # (tests/shard/test_device_put_memory_kind_in_jit_as_jax.py compares every case with JAX).
    placed = toolkit.jit(lambda x: toolkit.device_put(x, memory.Space.Host))(np.ones(2, np.float32))
    assert placed.sharding.memory_kind == "pinned_host"
