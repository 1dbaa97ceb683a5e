"""Automatic differentiation as interpreters over toolkit's ``Program``.

``jvp``/``linearize`` (forward mode) and ``vjp``/``grad``/``value_and_grad``
(reverse mode), ``jacfwd``/``jacrev``/``hessian``, ``custom_jvp``/``custom_vjp``
and ``checkpoint`` with its policies, with JAX's signatures. See ``docs/autodiff.md``.

Example::

    import toolkit
    grads = toolkit.grad(loss)(params, batch)
"""

from toolkit.ad.api import grad, jvp, linearize, value_and_grad, vjp  # noqa: F401
from toolkit.ad.jvp import DifferentiationError  # noqa: F401
from toolkit.ad import checkpoint_policies  # noqa: F401
from toolkit.ad.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, zero_from_primal,
)
from toolkit.ad.jacobians import hessian, jacfwd, jacobian, jacrev  # noqa: F401
from toolkit.ad.remat import checkpoint, checkpoint_name, remat  # noqa: F401
from toolkit.ad.closures import closure_convert, custom_gradient, fwd_and_bwd, linear_transpose  # noqa: F401
from toolkit.ad import custom_solves  # noqa: F401,E402  (installs lax.custom_linear_solve and lax.custom_root)

__all__ = ["grad", "jvp", "linearize", "value_and_grad", "vjp", "DifferentiationError", "custom_jvp", "custom_vjp",
           "SymbolicZero", "CustomVJPPrimal", "zero_from_primal", "checkpoint", "remat", "checkpoint_name",
           "checkpoint_policies", "jacfwd", "jacrev", "jacobian", "hessian", "closure_convert", "custom_gradient",
           "fwd_and_bwd", "linear_transpose"]
