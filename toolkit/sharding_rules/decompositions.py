"""Sharding rules of ``toolkit/lax/decompositions.py``: JAX's ``linalg_sharding_rule``.

The batch dimensions keep their specs (every operand's alike); the matrix (or vector)
dimensions a LAPACK kernel reads whole must be unsharded, and so are the results'.
"""

from __future__ import annotations

from toolkit.core.sharding_types import ShardingTypeError, register_sharding_rule
from toolkit.lax import decompositions as dec

#: primitive -> the number of trailing non-batch dimensions of each operand
_RANKS = {
    dec.cholesky_p: (2,), dec.eigh_p: (2,), dec.eig_p: (2,), dec.lu_p: (2,), dec.geqrf_p: (2,), dec.qr_p: (2,),
    dec.svd_p: (2,), dec.tridiagonal_p: (2,), dec.householder_product_p: (2, 1), dec.triangular_solve_p: (2, 2),
    dec.lu_pivots_to_permutation_p: (1,), dec.tridiagonal_solve_p: (1, 1, 1, 2), dec.hessenberg_p: (2,),
    dec.schur_p: (2,), dec.ormqr_p: (2, 1, 2), dec.cholesky_update_p: (2, 1), dec.symmetric_product_p: (2, 2),
}


def _rule(prim, ranks):
    def rule(specs_in, avals_in, avals_out, **params):
        batch_specs = []
        for i, (rank, spec) in enumerate(zip(ranks, specs_in)):
            spec = tuple(spec)
            batch, rest = spec[:len(spec) - rank], spec[len(spec) - rank:]
            if any(s is not None for s in rest):
                raise ShardingTypeError(f"Input {i} to {prim.name} must be unsharded on non-batch dimensions, "
                                        f"but got {spec}.")
            batch_specs.append(batch)
        if any(b != batch_specs[0] for b in batch_specs[1:]):
            raise ShardingTypeError(f"All inputs to {prim.name} must have the same batch sharding, but got "
                                    f"{batch_specs}.")
        batch = batch_specs[0]
        return [tuple(batch) + (None,) * (len(a.shape) - len(batch)) for a in avals_out]
    rule.__name__ = f"{prim.name}_sharding"
    return rule


for _prim, _ranks in _RANKS.items():
    register_sharding_rule(_prim)(_rule(_prim, _ranks))
