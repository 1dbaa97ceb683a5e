"""JAX's ``jax.errors`` classes that toolkit raises from several layers (numpy indexing, random, the tracer).

Defined here, at the bottom, so any layer can raise them; ``toolkit.errors`` names them for users. Each has
the base class JAX gives it, so ``except IndexError`` / ``except TypeError`` catch them as they catch JAX's.
"""

from __future__ import annotations

__all__ = ["ConcretizationTypeError", "JAXIndexError", "JAXTypeError", "JaxprTypeError", "KeyReuseError",
           "NonConcreteBooleanIndexError", "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError"]


class JAXTypeError(TypeError):
    """The base of JAX's ``TypeError`` subclasses (``jax.errors.JAXTypeError``)."""


class JAXIndexError(IndexError):
    """The base of JAX's ``IndexError`` subclasses (``jax.errors.JAXIndexError``)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index whose value is traced (``x[x > 0]`` under ``jit``): the result's shape would depend
    on traced data. Use ``toolkit.numpy.where`` (or the ``size=`` argument of ``nonzero``) instead."""


class KeyReuseError(JAXTypeError):
    """A PRNG key used twice (``jax.errors.KeyReuseError``). JAX raises it only under ``jax_debug_key_reuse``,
    a checker toolkit does not have: toolkit never raises it (the class is here for ``except`` clauses)."""


class JaxprTypeError(TypeError):
    """A program that fails its type check (``jax.errors.JaxprTypeError``)."""


# -- the tracer's (raised by toolkit.core.tracing, which names them too) --------------------------------------

class ConcretizationTypeError(TypeError):
    """A traced value was used where Python needs a concrete value."""


class TracerBoolConversionError(ConcretizationTypeError):
    """A traced value was converted to a Python bool (``if x:``), as ``jax.errors.TracerBoolConversionError``."""


class TracerIntegerConversionError(TypeError):
    """A traced value was used as a Python index or size (``__index__``), as
    ``jax.errors.TracerIntegerConversionError``."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the trace that made it (e.g. stored in a global); a ``TypeError``, as JAX's."""


class TracerArrayConversionError(TypeError):
    """A traced value was converted to a numpy array."""
