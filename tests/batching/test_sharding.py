"""vmap with sharding constraints (spmd_axis_name) and of shard_map, on the 8 virtual CPU devices."""

import functools

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.shard import NamedSharding
from toolkit.shard import PartitionSpec as P

jax = pytest.importorskip("jax")


def test_sharding_constraint_gets_spmd_axis_name(mesh):
    def f(x):
        y = tnp.sin(x) * 2
        return toolkit.lax.with_sharding_constraint(y, NamedSharding(mesh, P("y")))

    xs = np.arange(2 * 8, dtype=np.float32).reshape(2, 8)
    plain = toolkit.jit(toolkit.vmap(f))
    spmd = toolkit.jit(toolkit.vmap(f, spmd_axis_name="x"))
    np.testing.assert_allclose(np.asarray(plain(xs)), np.sin(xs) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(spmd(xs)), np.sin(xs) * 2, rtol=1e-6)
    program = str(spmd.trace(xs).program)
    assert "PartitionSpec('x', 'y')" in program or "('x', 'y')" in program, program
    assert "('x', 'y')" not in str(plain.trace(xs).program)
    text = spmd.lower(xs).as_text()
    assert '[{"x"}, {"y"}]' in text or "devices=[2,4]" in text, text


def test_vmap_of_shard_map(mesh):
    @functools.partial(toolkit.shard_map, mesh=mesh, in_specs=P("y"), out_specs=P())
    def total(block):
        return toolkit.lax.psum(tnp.sum(block * block), "y")

    xs = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)
    got = toolkit.jit(toolkit.vmap(total))(xs)
    np.testing.assert_allclose(np.asarray(got), (xs * xs).sum(1), rtol=1e-6)
    got = toolkit.jit(toolkit.vmap(total, in_axes=1))(xs.T.copy())
    np.testing.assert_allclose(np.asarray(got), (xs * xs).sum(1), rtol=1e-6)


def test_vmap_of_shard_map_with_spmd_axis_name(mesh):
    @functools.partial(toolkit.shard_map, mesh=mesh, in_specs=P("y"), out_specs=P("y"))
    def scaled(block):
        return block * toolkit.lax.psum(tnp.sum(block), "y")

    xs = np.arange(2 * 8, dtype=np.float32).reshape(2, 8)
    want = xs * xs.sum(1, keepdims=True)
    fn = toolkit.jit(toolkit.vmap(scaled, spmd_axis_name="x"))
    np.testing.assert_allclose(np.asarray(fn(xs)), want, rtol=1e-6)
    assert "PartitionSpec('x', 'y')" in str(fn.trace(xs).program) or "('x', 'y')" in str(fn.trace(xs).program)
