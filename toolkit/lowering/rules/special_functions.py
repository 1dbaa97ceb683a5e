"""StableHLO (and CHLO) for ``toolkit.lax.special_functions``, as JAX 0.10.2 lowers them on CPU.

``polygamma``, ``zeta`` and ``bessel_i1e`` are one CHLO op each (XLA expands them). The others are the
expansions of ``toolkit/lax/special_algorithms.py`` traced in place (JAX's ``mlir.lower_fun``), so the
module holds their ``while`` loops and selects, as JAX's does.
"""

from __future__ import annotations

from jaxlib.mlir import ir

from toolkit.lax import special_algorithms as algorithms
from toolkit.lax import special_functions as sf
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.rules.decompositions import lower_traced


def _chlo(op_name: str):
    def rule(ctx, *operands):
        return ir.Operation.create(op_name, results=[ctx.out_type], operands=list(operands)).result
    rule.__name__ = f"lower_{op_name.replace('.', '_')}"
    return rule


def _expanded(fn):
    def rule(ctx, *operands):
        return lower_traced(ctx, lambda *xs: [fn(*xs)], list(operands), list(ctx.avals_in))[0]
    rule.__name__ = f"lower_{fn.__name__}"
    return rule


for _p in sf.family:
    if _p.traits.get("chlo"):
        register_lowering(_p)(_chlo(_p.traits["chlo"]))

register_lowering(sf.regularized_incomplete_beta_p)(
    _expanded(algorithms.upcast_half(algorithms.regularized_incomplete_beta_expansion)))
register_lowering(sf.igamma_p)(_expanded(algorithms.upcast_half(algorithms.igamma_expansion)))
register_lowering(sf.igammac_p)(_expanded(algorithms.upcast_half(algorithms.igammac_expansion)))
register_lowering(sf.igamma_grad_a_p)(_expanded(algorithms.upcast_half(algorithms.igamma_grad_a_expansion)))
register_lowering(sf.bessel_i0e_p)(_expanded(algorithms.bessel_i0e_expansion))
