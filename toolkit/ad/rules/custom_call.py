"""``toolkit/lax/custom_call.py`` has no differentiation rules: a custom call is opaque code."""

from __future__ import annotations

from toolkit.ad.jvp import DifferentiationError
from toolkit.ad.registry import JVP_RULES
from toolkit.lax.custom_call import custom_call_p, effectful_custom_call_p


def _no_rule(primals, tangents, *, call_target_name=None, **params):
    raise DifferentiationError(
        f"toolkit.ad: cannot differentiate custom_call `{call_target_name}`: a custom call is opaque to toolkit, "
        "so it has no JVP or transpose rule. Compute its derivative separately and combine it yourself.")


JVP_RULES[custom_call_p] = _no_rule
JVP_RULES[effectful_custom_call_p] = _no_rule
