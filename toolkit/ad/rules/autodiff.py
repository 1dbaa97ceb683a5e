"""Differentiation rules of ``toolkit/lax/autodiff.py``: ``stop_gradient``'s tangent is zero.

Its JVP binds ``stop_gradient`` on the primal (so an enclosing differentiation
stops there too) and returns a symbolic zero tangent; a zero tangent is never
transposed, so no transpose rule is needed.
"""

from toolkit.ad.jvp import zero_tangent_jvp
from toolkit.lax import autodiff

zero_tangent_jvp(autodiff.stop_gradient_p)
