"""``toolkit.random``: ``jax.random`` (JAX 0.10.2) with its six PRNG implementations, bit for bit.

For the same seed, every function here returns exactly the bits ``jax.random``
returns, for each of JAX's implementations (threefry2x32, the default, and
threefry4x32, rbg, unsafe_rbg, philox2x32, philox4x32: ``key(seed, impl=...)``
or ``jax_default_prng_impl``), eagerly and under ``toolkit.jit``,
``toolkit.vmap`` and ``toolkit.grad``. It is written with
``toolkit.lax``/``toolkit.numpy`` only: the implementations are in
:mod:`toolkit.random.prng_impls` (hashes in :mod:`toolkit.random.threefry`,
``threefry4x32``, ``philox``, ``rbg``), keys in :mod:`toolkit.random.keys`, the
samplers in :mod:`toolkit.random.samplers`; ``docs/random.md`` lists what is
missing.

Example::

    import toolkit
    from toolkit import random

    key = random.key(0)                      # typed key (dtype key<fry>); random.PRNGKey(0) is uint32[2]
    rbg_key = random.key(0, impl="rbg")      # dtype key<rbg>, data uint32[4]
    k1, k2 = random.split(key)
    w = random.normal(k1, (3, 4))            # == jax.random.normal(jax.random.key(0) ... ) bitwise
    mask = random.bernoulli(k2, 0.9, (3, 4))
    xs = toolkit.vmap(lambda k: random.uniform(k, (2,)))(random.split(key, 8))
"""

from toolkit.random.keys import (  # noqa: F401
    KeyTy, PRNGKey, PRNGKeyArray, bits, clone, fold_in, key, key_data, key_dtype, key_impl, split, wrap_key_data,
)
from toolkit.random.samplers import (  # noqa: F401
    bernoulli, categorical, cauchy, choice, exponential, gumbel, laplace, logistic, normal, permutation,
    rademacher, randint, shuffle, truncated_normal, uniform,
)
from toolkit.random.gamma_samplers import beta, dirichlet, gamma, loggamma  # noqa: F401
from toolkit.random.continuous import (  # noqa: F401
    ball, chisquare, double_sided_maxwell, f, generalized_normal, lognormal, maxwell, multivariate_normal,
    orthogonal, pareto, rayleigh, t, triangular, wald, weibull_min,
)
from toolkit.random.discrete import binomial, geometric, multinomial, poisson  # noqa: F401
from toolkit.random.sample_placement import taking_out_sharding as _taking_out_sharding

# JAX's samplers that take out_sharding= (the others, choice, shuffle, binomial, multinomial, ..., do not in JAX).
(ball, bernoulli, beta, bits, categorical, cauchy, chisquare, dirichlet, exponential, f, gamma, generalized_normal,
 geometric, gumbel, laplace, loggamma, logistic, lognormal, maxwell, multivariate_normal, normal, orthogonal, pareto,
 permutation, poisson, rademacher, randint, rayleigh, t, triangular, truncated_normal, uniform, wald) = map(
    _taking_out_sharding,
    (ball, bernoulli, beta, bits, categorical, cauchy, chisquare, dirichlet, exponential, f, gamma, generalized_normal,
     geometric, gumbel, laplace, loggamma, logistic, lognormal, maxwell, multivariate_normal, normal, orthogonal,
     pareto, permutation, poisson, rademacher, randint, rayleigh, t, triangular, truncated_normal, uniform, wald))
