"""toolkit.numpy.diagonals (``diagonal``, ``diag``, ``trace``) against numpy, and errors."""

import numpy as np
import pytest

import toolkit.numpy as tnp

from _vs_numpy import C, X, check


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3, 7])
def test_diagonal_diag_trace(offset):
    check(tnp.diagonal(X, offset), np.diagonal(X, offset))
    check(tnp.diagonal(C, offset, 1, 2), np.diagonal(C, offset, 1, 2))
    check(tnp.diagonal(C, offset, 2, 0), np.diagonal(C, offset, 2, 0))
    check(tnp.diag(X[0], offset), np.diag(X[0], offset))
    check(tnp.diag(X, offset), np.diag(X, offset))
    check(tnp.trace(X, offset), np.trace(X, offset), rtol=1e-5, atol=1e-6)


def test_diag_errors():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        tnp.diag(C)
    with pytest.raises(ValueError, match="rank at least 2"):
        tnp.triu(X[0])
