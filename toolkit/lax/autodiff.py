"""Primitives that mean something only to automatic differentiation.

``stop_gradient(x)`` is the identity on values (it lowers to nothing), but
every differentiation treats its result as a constant: its tangent is zero,
so no cotangent flows back through it, in forward and reverse mode and at
every nesting level (``jax.lax.stop_gradient``; the rules are in
``toolkit/ad/rules/autodiff.py``). Batching passes the batch dimension
through, sharding rules the operand's type.

Example::

    def loss(params, batch):
        target = toolkit.lax.stop_gradient(teacher(params, batch))   # no gradient into the teacher's branch
        return ((student(params, batch) - target) ** 2).mean()
"""

from __future__ import annotations

from typing import Any

from toolkit.core import pytrees
from toolkit.core.families import Family

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("autodiff")

__all__ = ["stop_gradient", "stop_gradient_p"]

stop_gradient_p = family.primitive("stop_gradient", shape_rule=lambda x: x)


@family.function(binds=(stop_gradient_p,))
def stop_gradient(x: Any) -> Any:
    """``x`` (an array or a pytree of arrays) unchanged, but a constant to autodiff (``jax.lax.stop_gradient``)."""
    return pytrees.tree_map(stop_gradient_p.bind, x)
