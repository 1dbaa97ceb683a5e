"""Memory kinds (``memory_kind=``, ``with_memory_kind``, ``device_put`` between memories, ``jit`` in/out
shardings in ``pinned_host``) side by side with JAX 0.10.2 in the same process, on eight CPU devices."""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
from toolkit.runtime.client import devices
from toolkit.shard import GSPMDSharding, HloSharding, NamedSharding, PartitionSpec as P, SingleDeviceSharding
from toolkit.shard.pmap import PmapSharding, ShardedAxis, ShardingSpec, Unstacked
from toolkit.shard.positional import PositionalSharding

X = np.arange(32, dtype=np.float32).reshape(8, 4)


def _kinds(text: str) -> tuple[list[str], list[str]]:
    """The ``mhlo.memory_kind`` attributes and ``_xla_buffer_placement`` annotations of a module, in order."""
    return (re.findall(r'mhlo\.memory_kind = "(\w+)"', text),
            re.findall(r'annotate_device_placement\(%[\w#]+\) \{[^}]*_xla_buffer_placement = "(\w+)"', text))


# -- memory_kind= and with_memory_kind on every sharding kind -------------------------------------------

def _every_kind(memory_kind=None):
    ds = devices()
    return {
        "single": SingleDeviceSharding(ds[0], memory_kind=memory_kind),
        "named": NamedSharding(toolkit.make_mesh((2, 4), ("x", "y")), P("x"), memory_kind=memory_kind),
        "gspmd": GSPMDSharding(ds[:2], HloSharding.replicate(), memory_kind=memory_kind),
        "positional": PositionalSharding(ds[:2], memory_kind=memory_kind),
        "pmap": PmapSharding(ds[:2], ShardingSpec((Unstacked(2),), (ShardedAxis(0),)), memory_kind=memory_kind),
    }


@pytest.mark.parametrize("kind", ["single", "named", "gspmd", "positional", "pmap"])
def test_every_sharding_kind_takes_a_memory_kind(kind):
    if len(devices()) < 8:
        pytest.skip("needs 8 CPU devices")
    plain = _every_kind()[kind]
    host = _every_kind("pinned_host")[kind]
    # No kind given means the devices' default memory, and says so (as JAX canonicalizes it).
    assert plain.memory_kind == "device" and host.memory_kind == "pinned_host"
    assert plain == _every_kind("device")[kind]
    moved = plain.with_memory_kind("pinned_host")
    assert type(moved) is type(plain) and moved.memory_kind == "pinned_host"
    assert moved == host and hash(moved) == hash(host) and moved != plain
    assert moved.with_memory_kind("device") == plain and hash(moved.with_memory_kind("device")) == hash(plain)
    assert moved._device_assignment == plain._device_assignment
    with pytest.raises(ValueError, match="memory kind 'hbm' is not offered by .*available kinds"):
        plain.with_memory_kind("hbm")
    with pytest.raises(TypeError, match="memory_kind must be a string or None"):
        type(plain).with_memory_kind(plain, 3)


def test_memory_kinds_offered_are_jaxs(jx):
    assert sorted(m.kind for m in devices()[0].addressable_memories()) == sorted(
        m.kind for m in jx.devices()[0].addressable_memories())
    assert devices()[0].default_memory().kind == jx.devices()[0].default_memory().kind == "device"


def test_default_memory_kind_as_jax(jx, tmesh, jmesh):
    assert SingleDeviceSharding(devices()[0]).memory_kind == jx.sharding.SingleDeviceSharding(
        jx.devices()[0]).memory_kind == "device"
    assert NamedSharding(tmesh, P("x")).memory_kind == jx.sharding.NamedSharding(
        jmesh, jx.sharding.PartitionSpec("x")).memory_kind == "device"
    assert repr(SingleDeviceSharding(devices()[0])) == repr(jx.sharding.SingleDeviceSharding(jx.devices()[0]))
    abstract = NamedSharding(tmesh.abstract_mesh, P("x"))  # no devices: no default to name (as JAX)
    assert abstract.memory_kind is None
    assert jx.sharding.NamedSharding(jmesh.abstract_mesh, jx.sharding.PartitionSpec("x")).memory_kind is None


def test_with_memory_kind_as_jax(jx, tmesh, jmesh):
    t = NamedSharding(tmesh, P("x", "y")).with_memory_kind("pinned_host")
    j = jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec("x", "y")).with_memory_kind("pinned_host")
    assert t.memory_kind == j.memory_kind
    ts = SingleDeviceSharding(devices()[1]).with_memory_kind("unpinned_host")
    js = jx.sharding.SingleDeviceSharding(jx.devices()[1]).with_memory_kind("unpinned_host")
    assert ts.memory_kind == js.memory_kind
    assert repr(ts) == repr(js)  # SingleDeviceSharding(device=CpuDevice(id=1), memory_kind=unpinned_host)


# -- device_put between memories ------------------------------------------------------------------------

@pytest.mark.parametrize("spec", [(), ("x",), ("x", "y")])
def test_device_put_to_pinned_host_and_back_as_jax(jx, tmesh, jmesh, spec):
    t_host = NamedSharding(tmesh, P(*spec), memory_kind="pinned_host")
    j_host = jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec(*spec), memory_kind="pinned_host")
    t = toolkit.device_put(X, t_host)
    j = jx.device_put(X, j_host)
    assert t.sharding.memory_kind == j.sharding.memory_kind == "pinned_host"
    assert t._impl.sharding.memory_kind == "pinned_host"  # the buffers are in host memory, not just labelled
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    for shard_t, shard_j in zip(t.addressable_shards, j.addressable_shards):
        assert shard_t.device.id == shard_j.device.id and shard_t.index == shard_j.index
    t_back = toolkit.device_put(t, t_host.with_memory_kind("device"))
    j_back = jx.device_put(j, j_host.with_memory_kind("device"))
    assert t_back.sharding.memory_kind == j_back.sharding.memory_kind == "device"
    assert t_back._impl.sharding.memory_kind == "device"
    np.testing.assert_array_equal(np.asarray(t_back), np.asarray(j_back))


def test_device_put_single_device_between_memories_as_jax(jx):
    for kind in ("pinned_host", "unpinned_host", "device"):
        t = toolkit.device_put(X, SingleDeviceSharding(devices()[2], memory_kind=kind))
        j = jx.device_put(X, jx.sharding.SingleDeviceSharding(jx.devices()[2], memory_kind=kind))
        assert t.sharding.memory_kind == j.sharding.memory_kind == kind
        np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_device_put_to_a_memory_the_device_lacks_fails_clearly():
    with pytest.raises(ValueError, match="memory kind 'hbm' is not offered"):
        toolkit.device_put(X, SingleDeviceSharding(devices()[0], memory_kind="hbm"))


# -- jit in/out shardings with memory kinds -------------------------------------------------------------

def _double(x):
    return x * 2


@pytest.mark.parametrize("spec", [(), ("x",)])
def test_jit_out_shardings_in_pinned_host_as_jax(jx, tmesh, jmesh, spec):
    t_dev = NamedSharding(tmesh, P(*spec))
    j_dev = jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec(*spec))
    t_fn = toolkit.jit(_double, in_shardings=t_dev, out_shardings=t_dev.with_memory_kind("pinned_host"))
    j_fn = jx.jit(_double, in_shardings=j_dev, out_shardings=j_dev.with_memory_kind("pinned_host"))
    t_text, j_text = t_fn.lower(X).as_text(), j_fn.lower(X).as_text()
    # The given input sharding has no kind: it is written as the default ("device"), as JAX does.
    assert _kinds(t_text) == _kinds(j_text) == (["device", "pinned_host"], ["pinned_host"])
    t, j = t_fn(X), j_fn(X)
    assert t.sharding.memory_kind == j.sharding.memory_kind == "pinned_host"
    assert t._impl.sharding.memory_kind == "pinned_host"
    assert t.sharding.spec == tuple(j.sharding.spec)
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_jit_from_pinned_host_to_device_as_jax(jx, tmesh, jmesh):
    t_host = NamedSharding(tmesh, P("x"), memory_kind="pinned_host")
    j_host = jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec("x"), memory_kind="pinned_host")
    t_fn = toolkit.jit(_double, in_shardings=t_host, out_shardings=t_host.with_memory_kind("device"))
    j_fn = jx.jit(_double, in_shardings=j_host, out_shardings=j_host.with_memory_kind("device"))
    t_x, j_x = toolkit.device_put(X, t_host), jx.device_put(X, j_host)
    t_text, j_text = t_fn.lower(t_x).as_text(), j_fn.lower(j_x).as_text()
    # The argument says where it is; the result is placed in device memory by the annotation.
    assert _kinds(t_text) == _kinds(j_text) == (["pinned_host", "device"], ["device"])
    t, j = t_fn(t_x), j_fn(j_x)
    assert t.sharding.memory_kind == j.sharding.memory_kind == "device"
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_jit_single_device_out_sharding_in_host_memory_as_jax(jx):
    for kind in ("pinned_host", "unpinned_host"):
        t_fn = toolkit.jit(_double, out_shardings=SingleDeviceSharding(devices()[0], memory_kind=kind))
        j_fn = jx.jit(_double, out_shardings=jx.sharding.SingleDeviceSharding(jx.devices()[0], memory_kind=kind))
        assert _kinds(t_fn.lower(X).as_text()) == _kinds(j_fn.lower(X).as_text()) == ([kind], [kind])
        t, j = t_fn(X), j_fn(X)
        assert t.sharding.memory_kind == j.sharding.memory_kind == kind
        np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_default_memory_kind_only_writes_nothing_as_jax(jx, tmesh, jmesh):
    t_fn = toolkit.jit(_double, out_shardings=NamedSharding(tmesh, P("x"), memory_kind="device"))
    j_fn = jx.jit(_double, out_shardings=jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec("x"),
                                                                    memory_kind="device"))
    assert _kinds(t_fn.lower(X).as_text()) == _kinds(j_fn.lower(X).as_text()) == ([], [])
    assert t_fn(X).sharding.memory_kind == j_fn(X).sharding.memory_kind == "device"


def test_jit_with_memory_kinds_and_several_outputs(jx, tmesh, jmesh):
    def two(x):
        return x + 1, x * 3

    t_s = NamedSharding(tmesh, P("x"))
    j_s = jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec("x"))
    t_fn = toolkit.jit(two, in_shardings=t_s, out_shardings=(t_s, t_s.with_memory_kind("pinned_host")))
    j_fn = jx.jit(two, in_shardings=j_s, out_shardings=(j_s, j_s.with_memory_kind("pinned_host")))
    assert _kinds(t_fn.lower(X).as_text()) == _kinds(j_fn.lower(X).as_text())
    for t, j in zip(t_fn(X), j_fn(X)):
        assert t.sharding.memory_kind == j.sharding.memory_kind
        np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_jit_outputs_without_a_sharding_next_to_host_ones_as_jax(jx, tmesh, jmesh):
    def two(x):
        return x + 1, x * 3

    t_s = NamedSharding(tmesh, P("x"))
    j_s = jx.sharding.NamedSharding(jmesh, jx.sharding.PartitionSpec("x"))
    t_fn = toolkit.jit(two, in_shardings=t_s, out_shardings=(t_s.with_memory_kind("pinned_host"), None))
    j_fn = jx.jit(two, in_shardings=j_s, out_shardings=(j_s.with_memory_kind("pinned_host"), None))
    # The unsharded output is written as in device memory, and not placed.
    assert _kinds(t_fn.lower(X).as_text()) == _kinds(j_fn.lower(X).as_text()) == (
        ["device", "pinned_host", "device"], ["pinned_host"])
    for t, j in zip(t_fn(X), j_fn(X)):
        assert t.sharding.memory_kind == j.sharding.memory_kind
        np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_jit_out_sharding_in_an_unknown_memory_fails_clearly(tmesh):
    with pytest.raises(ValueError, match="memory kind 'hbm' is not offered"):
        toolkit.jit(_double, out_shardings=NamedSharding(tmesh, P(), memory_kind="hbm"))(X)


# -- checkpoint policies that offload ------------------------------------------------------------------

def _loss(w, x):
    return toolkit.numpy.sin(w @ x).sum()


def test_offload_policies_answer_as_jaxs(jx):
    from toolkit.ad.checkpoint_policies import Offloadable
    from toolkit.lax import calls, linalg

    t_policy = toolkit.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")
    j_policy = jx.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")
    plain = {"dimension_numbers": (((1,), (0,)), ((), ()))}
    batched = {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}
    assert t_policy(linalg.dot_general_p, **plain) == Offloadable("device", "pinned_host")
    assert tuple(j_policy(jx.lax.dot_general_p, **plain)) == ("device", "pinned_host")
    assert not t_policy(linalg.dot_general_p, **batched)
    named = toolkit.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"], offload_src="device",
        offload_dst="pinned_host")
    assert named(calls.name_p, name="a") is True
    assert named(calls.name_p, name="b") == Offloadable("device", "pinned_host")
    assert not named(calls.name_p, name="c")


def test_offload_policy_errors_as_jax(jx):
    with pytest.raises(ValueError, match="should not intersect") as mine:
        toolkit.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"], offload_src="device",
            offload_dst="pinned_host")
    with pytest.raises(ValueError, match="should not intersect"):
        jx.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"], offload_src="device",
            offload_dst="pinned_host")
    assert "intersection={'a'}" in str(mine.value)
    with pytest.raises(TypeError, match="offload_dst must be a memory kind name"):
        toolkit.checkpoint_policies.offload_dot_with_no_batch_dims("device", None)
    both = toolkit.checkpoint_policies.save_from_both_policies(
        toolkit.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host"),
        toolkit.checkpoint_policies.nothing_saveable)
    with pytest.raises(ValueError, match="should be a boolean"):
        toolkit.grad(toolkit.checkpoint(_loss, policy=both))(np.ones((3, 3), np.float32), np.ones((3, 3), np.float32))


def test_differentiating_with_an_offload_policy_as_jax_on_cpu(jx):
    # JAX 0.10.2 differentiates these on CPU: its residual goes to host memory and back through device_puts
    # that the CPU lowering drops, so XLA gets the saved residual behind an optimization barrier, as toolkit's.
    w = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)
    x = np.linspace(0, 1, 9, dtype=np.float32).reshape(3, 3)

    def j_loss(w, x):
        return jx.numpy.sin(w @ x).sum()
    for name in ("offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"):
        if name == "offload_dot_with_no_batch_dims":
            t_policy = toolkit.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")
            j_policy = jx.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")
            ours_fn, theirs_fn = _loss, j_loss
        else:
            kw = dict(names_which_can_be_saved=[], names_which_can_be_offloaded=["wx"], offload_src="device",
                      offload_dst="pinned_host")
            t_policy = toolkit.checkpoint_policies.save_and_offload_only_these_names(**kw)
            j_policy = jx.checkpoint_policies.save_and_offload_only_these_names(**kw)

            def ours_fn(w, x):
                return toolkit.numpy.sin(toolkit.ad.checkpoint_name(w @ x, "wx")).sum()

            def theirs_fn(w, x):
                from jax.ad_checkpoint import checkpoint_name
                return jx.numpy.sin(checkpoint_name(w @ x, "wx")).sum()
        ours = toolkit.jit(toolkit.grad(toolkit.checkpoint(ours_fn, policy=t_policy), argnums=(0, 1)))
        theirs = jx.jit(jx.grad(jx.checkpoint(theirs_fn, policy=j_policy), argnums=(0, 1)))
        for a, b in zip(ours(w, x), theirs(w, x)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
        for text in (ours.lower(w, x).as_text(), theirs.lower(w, x).as_text()):
            assert "optimization_barrier" in text and "custom_call" not in text, text
        if name == "offload_dot_with_no_batch_dims":  # the saved dot is not computed again, in either
            assert ours.lower(w, x).as_text().count("dot_general") == theirs.lower(w, x).as_text().count(
                "dot_general")


# -- compute_on (issue 26 item 1): JAX's lowering, and jaxlib's CPU backend runs it --------------------------------

def _compute_on_program(np_, jit, compute_on):
    @jit
    def g(x):
        return x * 2

    def f(x):
        with compute_on("device_host"):
            y = g(x)
        return y + 1
    return f


def test_compute_on_lowers_and_runs_as_jax():
    jax = pytest.importorskip("jax")
    from jax.experimental.compute_on import compute_on as jax_compute_on
    import toolkit.numpy as tnp
    x = np.arange(3, dtype=np.float32)
    ours = toolkit.jit(_compute_on_program(tnp, toolkit.jit, toolkit.compute_on))
    theirs = jax.jit(_compute_on_program(jax.numpy, jax.jit, jax_compute_on))
    text = ours.lower(x).as_text()
    # The call and the ops of the called function carry _xla_compute_type = "host", JAX's text exactly.
    assert 'call @g(%arg0) {mhlo.frontend_attributes = {_xla_compute_type = "host"}}' in text
    assert text == theirs.lower(x).as_text()
    np.testing.assert_array_equal(ours(x), theirs(x))


def test_compute_on_marks_ops_traced_inside_and_their_derivatives():
    jax = pytest.importorskip("jax")
    from jax.experimental.compute_on import compute_on as jax_compute_on
    import toolkit.numpy as tnp

    def make(np_, co):
        def f(x):
            with co("device_host"):
                return np_.sin(x)
        return lambda x: f(x).sum()
    x = np.linspace(-1, 1, 3, dtype=np.float32)
    marked = re.compile(r"stablehlo\.(\w+) .*_xla_compute_type = \"host\"")
    ours = toolkit.jit(toolkit.grad(make(tnp, toolkit.compute_on))).lower(x).as_text()
    theirs = jax.jit(jax.grad(make(jax.numpy, jax_compute_on))).lower(x).as_text()
    # grad binds each equation again with its compute type, as JAX re-enters the equation's context.
    assert "cosine" in marked.findall(theirs) and set(marked.findall(theirs)) <= set(marked.findall(ours))
    np.testing.assert_allclose(toolkit.jit(toolkit.grad(make(tnp, toolkit.compute_on)))(x),
                               jax.grad(make(jax.numpy, jax_compute_on))(x), rtol=1e-6)


def test_compute_on_outside_a_trace_and_nested():
    import toolkit.numpy as tnp
    from toolkit.core import tracing
    x = np.ones(3, np.float32)
    with toolkit.compute_on("device_host"):
        np.testing.assert_allclose(tnp.sin(x), np.sin(x), rtol=1e-6)  # eager ops run as before
        assert tracing.current_compute_type() == "device_host"
        with toolkit.compute_on("device"):
            assert tracing.current_compute_type() == "device"
        assert tracing.current_compute_type() == "device_host"
    assert tracing.current_compute_type() is None


def test_compute_on_errors_are_jaxs():
    pytest.importorskip("jax")
    from jax.experimental.compute_on import compute_on as jax_compute_on
    for bad, error in ((3, TypeError), ("host", ValueError)):
        with pytest.raises(error) as ours:
            with toolkit.compute_on(bad):
                pass
        with pytest.raises(error) as theirs:
            with jax_compute_on(bad):
                pass
        assert str(ours.value) == str(theirs.value)


def test_compute_on_frontend_attributes_for_every_type():
    from toolkit.compute_on import frontend_attributes
    assert frontend_attributes("device_host") == {"_xla_compute_type": "host"}
    assert frontend_attributes("device") == {"_xla_compute_type": "dense"}
    assert frontend_attributes("tpu_sparsecore") == {"_xla_compute_type": "sparseoffload"}
    assert frontend_attributes("gpu_stream:2") == {"_xla_stream_annotation": "2", "inlineable": "false"}
