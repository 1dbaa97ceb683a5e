"""``toolkit.scipy.stats``: distributions as modules of functions (``norm.logpdf``, ``logistic.cdf``), as
``jax.scipy.stats``."""

from toolkit.scipy.stats import logistic, norm  # noqa: F401
