"""Automatic differentiation as interpreters over toolkit's ``Program``.

``jvp``/``linearize`` (forward mode) and ``vjp``/``grad``/``value_and_grad``
(reverse mode), with JAX's signatures. See ``docs/autodiff.md``.

Example::

    import toolkit
    grads = toolkit.grad(loss)(params, batch)
"""

from toolkit.ad import rules  # noqa: F401  (attaches the rules to the primitives)
from toolkit.ad.api import grad, jvp, linearize, value_and_grad, vjp  # noqa: F401
from toolkit.ad.jvp import DifferentiationError  # noqa: F401

__all__ = ["grad", "jvp", "linearize", "value_and_grad", "vjp", "DifferentiationError"]
