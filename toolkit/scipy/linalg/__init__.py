"""``toolkit.scipy.linalg``: ``jax.scipy.linalg`` — factorizations and solvers over ``toolkit.lax.linalg``'s LAPACK
kernels (``factorizations``), matrix functions (``matrix_functions``) and special matrices (``special_matrices``).

SciPy's conventions, as JAX keeps them: ``cholesky`` is upper by default, factorizations
come as ``(factor, lower)`` / ``(lu, piv)`` pairs for the matching ``*_solve``, ``qr``'s
modes are ``'full'``, ``'economic'`` and ``'r'``. SciPy's ``overwrite_*`` and
``check_finite`` arguments are accepted and ignored (arrays are immutable; nothing is checked).
"""

from toolkit.scipy.linalg.factorizations import (
    cho_factor, cho_solve, cholesky, det, eigh, hessenberg, inv, lu, lu_factor, lu_solve, qr, schur, solve,
    solve_triangular, svd,
)
from toolkit.scipy.linalg.matrix_functions import expm
from toolkit.scipy.linalg.special_matrices import block_diag

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "hessenberg", "inv", "lu",
           "lu_factor", "lu_solve", "qr", "schur", "solve", "solve_triangular", "svd"]
