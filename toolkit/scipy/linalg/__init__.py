"""``toolkit.scipy.linalg``: ``jax.scipy.linalg`` — factorizations and solvers over ``toolkit.lax.linalg``'s LAPACK
kernels (``factorizations``), computations on Schur forms (``schur_forms``), matrix functions
(``matrix_functions``) and special matrices (``special_matrices``).

SciPy's conventions, as JAX keeps them: ``cholesky`` is upper by default, factorizations
come as ``(factor, lower)`` / ``(lu, piv)`` pairs for the matching ``*_solve``, ``qr``'s
modes are ``'full'``, ``'economic'`` and ``'r'``. SciPy's ``overwrite_*`` and
``check_finite`` arguments are accepted and ignored (arrays are immutable; nothing is checked).
"""

from toolkit.scipy.linalg.factorizations import (
    cho_factor, cho_solve, cholesky, det, eigh, eigh_tridiagonal, hessenberg, inv, lu, lu_factor, lu_solve, polar, qr,
    qr_multiply, schur, solve, solve_triangular, svd,
)
from toolkit.scipy.linalg.matrix_functions import expm, expm_frechet, funm, sqrtm
from toolkit.scipy.linalg.schur_forms import rsf2csf, solve_sylvester
from toolkit.scipy.linalg.special_matrices import (
    block_diag, circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion, hadamard, hankel, helmert,
    hilbert, invhilbert, invpascal, leslie, pascal, toeplitz,
)

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix",
           "det", "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm",
           "hadamard", "hankel", "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie",
           "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve",
           "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]
