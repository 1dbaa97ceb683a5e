"""Error messages of ``toolkit-refine-shapes`` that name the op and the values it saw.

A refinement failure should tell the reader which op (and which custom call
target) could not be made static, where it came from, and what its shape
operands were — so a failing export can be debugged from the message alone.

Example::

    describe_op(op)        # "'stablehlo.custom_call' @stablehlo.dynamic_reduce_window at cumsum (x.py:3:4)"
    describe_operands(op, constant)  # "#0: tensor<?x5xf32>, #2: tensor<2xi32> = [3, 1], ..."
    context(op, constant)  # " [in 'stablehlo.add' at x.py:3:4 with operands #0: ..., #1: ...]"
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from jaxlib.mlir import ir

#: Large constant operands are shown up to this many elements.
_SHOWN_ELEMENTS = 16
#: Ops with many operands (concatenate) show this many.
_SHOWN_OPERANDS = 8


def _operation(op_like) -> ir.Operation:
    return op_like.operation if hasattr(op_like, "operation") else op_like


def location_text(location: ir.Location) -> str:
    """A location without the ``loc(...)`` wrapper (``unknown`` when there is none)."""
    text = str(location)
    if text.startswith("loc(") and text.endswith(")"):
        text = text[4:-1]
    return text.replace('"', "")


def describe_op(op: ir.Operation) -> str:
    """``'op.name' [@custom_call_target] [at location]``."""
    op = _operation(op)
    text = f"'{op.name}'"
    if op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes:
        text += f" @{ir.StringAttr(op.attributes['call_target_name']).value}"
    elif op.name == "stablehlo.composite" and "name" in op.attributes:
        text += f" \"{ir.StringAttr(op.attributes['name']).value}\""
    elif op.name == "func.call":
        text += f" @{ir.FlatSymbolRefAttr(op.attributes['callee']).value}"
    location = location_text(op.location)
    if location != "unknown":
        text += f" at {location}"
    return text


def describe_value(value: ir.Value, constant: Callable[[ir.Value], np.ndarray | None]) -> str:
    """``tensor<2xi32> = [3, 1]`` for a constant, ``tensor<2xi32> from 'op' at loc`` otherwise."""
    text = str(value.type)
    array = constant(value)
    if array is not None:
        array = np.asarray(array)
        if array.size <= _SHOWN_ELEMENTS:
            body = str(array.tolist())
        else:
            body = str(array.reshape(-1)[:_SHOWN_ELEMENTS].tolist())[:-1] + ", ...]"
        return f"{text} = {body}"
    owner = value.owner
    if isinstance(owner, (ir.Operation, ir.OpView)):
        return f"{text} from {describe_op(owner)}"
    return f"{text} (block argument)"


def describe_operands(op: ir.Operation, constant: Callable[[ir.Value], np.ndarray | None],
                      indices: Sequence[int] | None = None) -> str:
    """The operands of ``op`` (all, or those at ``indices``), each with its type and value or origin."""
    op = _operation(op)
    operands = list(op.operands)
    chosen = range(len(operands)) if indices is None else indices
    return ", ".join(f"#{i}: {describe_value(operands[i], constant)}" for i in chosen if i < len(operands))


def context(op: ir.Operation, constant: Callable[[ir.Value], np.ndarray | None]) -> str:
    """`` [in <op> with operands ...]``: appended to a verifier-style message about ``op``."""
    op = _operation(op)
    count = len(op.operands)
    shown = describe_operands(op, constant, range(min(count, _SHOWN_OPERANDS)))
    if count > _SHOWN_OPERANDS:
        shown = f"{shown}, ... ({count} operands)"
    return f" [in {describe_op(op)} with operands {shown or 'none'}]"
