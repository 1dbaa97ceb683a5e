"""Differentiation of ``toolkit.lax.tokens``: none, as in JAX 0.10.2.

A token carries no data, so it has no tangent: the JVP interpreter never needs a rule for an equation
whose operands all have zero tangents (every token's) and whose results are not differentiable (a token
is typed ``bool[0]`` underneath). ``grad`` through a function that makes or merges tokens beside its
differentiated values works, as in JAX.
"""

from __future__ import annotations

from toolkit.ad.registry import NO_JVP
from toolkit.lax import tokens

NO_JVP[tokens.create_token_p] = ("a token carries no data and has no tangent; the interpreter binds it as is "
                                 "(JAX defines no rule either)")
NO_JVP[tokens.after_all_p] = ("tokens carry no data and have no tangents; the interpreter binds it as is "
                              "(JAX defines no rule either)")
