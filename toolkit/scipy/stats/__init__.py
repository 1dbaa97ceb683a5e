"""``toolkit.scipy.stats``: distributions as modules of functions (``norm.logpdf``, ``poisson.pmf``), the
statistics ``mode``, ``rankdata`` and ``sem``, and ``gaussian_kde``, as ``jax.scipy.stats`` (JAX 0.10.2)."""

from toolkit.scipy.stats import (  # noqa: F401
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom, gumbel_l, gumbel_r,
    laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto, poisson, t, truncnorm, uniform,
    vonmises, wrapcauchy,
)
from toolkit.scipy.stats.kde import gaussian_kde  # noqa: F401
from toolkit.scipy.stats.statistics import mode, rankdata, sem  # noqa: F401
