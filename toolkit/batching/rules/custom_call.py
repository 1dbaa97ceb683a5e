"""Batching rules for ``custom_call``: the target is opaque, so it is called once per batch element.

The loop (a ``scan`` over the batch) is correct for any target whose
results depend only on its operands; a side-effecting call
(``custom_call_with_side_effect``) runs once per element, in batch order,
as a Python loop over the batch would.
"""

from toolkit.batching.interpret import loop_rule
from toolkit.batching.registry import register_batching
from toolkit.lax.custom_call import custom_call_p, effectful_custom_call_p

register_batching(custom_call_p, loop_rule(custom_call_p))
register_batching(effectful_custom_call_p, loop_rule(effectful_custom_call_p))
