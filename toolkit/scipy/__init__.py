"""``toolkit.scipy``: ``jax.scipy``'s linear algebra (``toolkit.scipy.linalg``), special functions
(``toolkit.scipy.special``) and distributions (``toolkit.scipy.stats``), over ``toolkit.numpy`` and ``toolkit.lax``."""

from toolkit.scipy import linalg, special, stats  # noqa: F401
