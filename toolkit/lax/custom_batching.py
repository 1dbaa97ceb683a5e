"""``custom_vmap_call``: a sub-program with a user-given batching rule (``toolkit.custom_batching.custom_vmap``).

The primitive computes exactly its ``call`` sub-program (it lowers inline); only ``vmap`` treats it
differently: its batching rule (``toolkit/batching/rules/custom_batching.py``) runs the user's rule
instead of batching ``call``. Forward mode is a ``custom_vmap_call`` of the JVP whose rule is the JVP
of the user's rule (``toolkit/ad/rules/custom_batching.py``), as JAX's; reverse mode has no rule
(JAX's ``custom_vmap`` does not support it either: combine it with ``custom_vjp``). JAX prints it
``custom_vmap_call`` too::

    b:f32[] = custom_vmap_call[call={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
                               num_consts=0 rule=f_vmap_rule] a
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolkit.core.avals import ShapedArray
from toolkit.core.families import Family
from toolkit.core.program import Program

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("custom_batching")

__all__ = ["FlatVmapRule", "custom_vmap_call_p"]


class FlatVmapRule:
    """A batching rule on flat leaves: ``fun(axis_size, in_batched, args) -> (outs, out_batched)``.

    ``in_batched`` / ``out_batched`` are lists of bools, one per leaf (True: the leaf has the batch
    dimension in front). The rule of the primitive's constant operands is never asked for them: they
    are unbatched (the batching rule refuses otherwise). Compared by identity (a primitive parameter).
    """

    def __init__(self, name: str, fun: Callable[[Any, list[bool], list[Any]], tuple[Sequence[Any], Sequence[bool]]]):
        self.name, self.fun = name, fun

    def __call__(self, axis_size: Any, in_batched: list[bool], args: list[Any]) -> tuple[list[Any], list[bool]]:
        """Run the rule; the result is checked to be one output and one bool per output leaf."""
        outs, out_batched = self.fun(axis_size, in_batched, args)
        return list(outs), [bool(b) for b in out_batched]

    def __repr__(self) -> str:
        return self.name


def _custom_vmap_call_rule(*operands: ShapedArray, call: Program, rule: FlatVmapRule,
                           num_consts: int) -> list[ShapedArray]:
    if len(operands) != len(call.invars):
        raise TypeError(f"custom_vmap_call: the sub-program takes {len(call.invars)} inputs, "
                        f"got {len(operands)} operands")
    for i, (a, b) in enumerate(zip(operands, call.in_avals)):
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            raise TypeError(f"custom_vmap_call: operand {i} is {a.str_short()} but the sub-program takes "
                            f"{b.str_short()}")
    return list(call.out_avals)


custom_vmap_call_p = family.primitive("custom_vmap_call", shape_rule=_custom_vmap_call_rule, multiple_results=True)
