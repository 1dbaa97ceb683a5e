"""``toolkit.random``'s samplers with ``out_sharding=`` on an Explicit mesh, beside ``jax.random`` 0.10.2: the
same bits as without it, typed and placed as JAX's, eagerly and under jit, with JAX's errors."""

import numpy as np
import pytest

import toolkit
from toolkit.shard import AxisType, NamedSharding, P

pytestmark = pytest.mark.multidevice

SHAPE = (8, 4)
SAMPLERS = {
    "ball": lambda r, k, **o: r.ball(k, 4, shape=(8,), **o),
    "bernoulli": lambda r, k, **o: r.bernoulli(k, 0.3, SHAPE, **o),
    "beta": lambda r, k, **o: r.beta(k, 2.0, 3.0, SHAPE, **o),
    "bits": lambda r, k, **o: r.bits(k, SHAPE, **o),
    "categorical": lambda r, k, **o: r.categorical(k, np.zeros((8, 4, 3), np.float32), **o),
    "cauchy": lambda r, k, **o: r.cauchy(k, SHAPE, **o),
    "chisquare": lambda r, k, **o: r.chisquare(k, 3.0, SHAPE, **o),
    "dirichlet": lambda r, k, **o: r.dirichlet(k, np.ones(4, np.float32), (8,), **o),
    "exponential": lambda r, k, **o: r.exponential(k, SHAPE, **o),
    "f": lambda r, k, **o: r.f(k, 2.0, 3.0, SHAPE, **o),
    "gamma": lambda r, k, **o: r.gamma(k, 2.0, SHAPE, **o),
    "generalized_normal": lambda r, k, **o: r.generalized_normal(k, 1.5, SHAPE, **o),
    "geometric": lambda r, k, **o: r.geometric(k, 0.4, SHAPE, **o),
    "gumbel": lambda r, k, **o: r.gumbel(k, SHAPE, **o),
    "laplace": lambda r, k, **o: r.laplace(k, SHAPE, **o),
    "loggamma": lambda r, k, **o: r.loggamma(k, 2.0, SHAPE, **o),
    "logistic": lambda r, k, **o: r.logistic(k, SHAPE, **o),
    "lognormal": lambda r, k, **o: r.lognormal(k, 0.5, SHAPE, **o),
    "maxwell": lambda r, k, **o: r.maxwell(k, SHAPE, **o),
    "multivariate_normal": lambda r, k, **o: r.multivariate_normal(k, np.zeros(4, np.float32),
                                                                   np.eye(4, dtype=np.float32), (8,), **o),
    "normal": lambda r, k, **o: r.normal(k, SHAPE, **o),
    "orthogonal": lambda r, k, **o: r.orthogonal(k, 4, (8,), **o),
    "pareto": lambda r, k, **o: r.pareto(k, 3.0, SHAPE, **o),
    "permutation": lambda r, k, **o: r.permutation(k, np.arange(32).reshape(SHAPE), **o),
    "poisson": lambda r, k, **o: r.poisson(k, 3.0, SHAPE, **o),
    "rademacher": lambda r, k, **o: r.rademacher(k, SHAPE, **o),
    "randint": lambda r, k, **o: r.randint(k, SHAPE, 0, 10, **o),
    "rayleigh": lambda r, k, **o: r.rayleigh(k, 1.0, SHAPE, **o),
    "t": lambda r, k, **o: r.t(k, 3.0, SHAPE, **o),
    "triangular": lambda r, k, **o: r.triangular(k, 0.0, 0.5, 1.0, SHAPE, **o),
    "truncated_normal": lambda r, k, **o: r.truncated_normal(k, -1.0, 1.0, SHAPE, **o),
    "uniform": lambda r, k, **o: r.uniform(k, SHAPE, **o),
    "wald": lambda r, k, **o: r.wald(k, 1.0, SHAPE, **o),
}


def test_every_jax_sampler_with_out_sharding_is_here(jx):
    import inspect
    jax_names = {n for n in dir(jx.random) if not n.startswith("_") and callable(getattr(jx.random, n))
                 and "out_sharding" in getattr(inspect.signature(getattr(jx.random, n)), "parameters", {})}
    assert jax_names == set(SAMPLERS)
    for name in SAMPLERS:
        assert "out_sharding" in inspect.signature(getattr(toolkit.random, name)).parameters


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_out_sharding_types_and_places_the_same_bits_as_jax(jx, meshes, name):
    from jax.sharding import PartitionSpec as JP
    tm, jm = meshes
    case = SAMPLERS[name]
    with toolkit.set_mesh(tm):
        key = toolkit.random.key(1)
        ours = case(toolkit.random, key, out_sharding=P("x"))
        plain = case(toolkit.random, key)
        traced = toolkit.jit(lambda k: case(toolkit.random, k, out_sharding=P("x")))(key)
    with jx.set_mesh(jm):
        theirs = case(jx.random, jx.random.key(1), out_sharding=JP("x"))
        theirs_traced = jx.jit(lambda k: case(jx.random, k, out_sharding=JP("x")))(jx.random.key(1))
    # Eager against eager: the same bits. Jit against jit: the same up to the last bits, since XLA fuses and
    # partitions the two programs differently (JAX's own jitted f differs from its eager f in the last bit).
    for x, y in ((ours, theirs), (traced, theirs_traced)):
        assert str(toolkit.typeof(x)) == str(jx.typeof(y))
        assert tuple(x.sharding.spec)[:1] == ("x",) and x.sharding.mesh == tm
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    np.testing.assert_allclose(np.asarray(traced), np.asarray(theirs_traced), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(plain), np.asarray(ours))


def test_out_sharding_errors_as_jax(jx, meshes):
    from jax.sharding import PartitionSpec as JP
    tm, jm = meshes
    for random, mesh, spec, key in ((toolkit.random, tm, P, toolkit.random.key(0)),
                                    (jx.random, jm, JP, jx.random.key(0))):
        setter = toolkit.set_mesh if random is toolkit.random else jx.set_mesh
        with setter(mesh):
            with pytest.raises(ValueError, match="does not evenly divide the dimension size 6"):
                random.normal(key, (6, 4), out_sharding=spec("y"))
    auto = toolkit.make_mesh((2, 4), ("x", "y"), (AxisType.Auto,) * 2)
    with pytest.raises(ValueError, match="cannot contain axis names that are of type Auto or Manual"):
        toolkit.random.normal(toolkit.random.key(0), SHAPE, out_sharding=NamedSharding(auto, P("x")))
    with pytest.raises(ValueError, match="needs a mesh in context"):  # JAX: a ValueError too
        toolkit.random.normal(toolkit.random.key(0), SHAPE, out_sharding=P("x"))
