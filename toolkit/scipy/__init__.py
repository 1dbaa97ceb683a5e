"""``toolkit.scipy``: ``jax.scipy``'s special functions (``toolkit.scipy.special``) and distributions
(``toolkit.scipy.stats``), over ``toolkit.numpy`` and ``toolkit.lax``."""

from toolkit.scipy import special, stats  # noqa: F401
