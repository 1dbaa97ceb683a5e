"""Gaussian kernel density estimation (``jax.scipy.stats.gaussian_kde``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from toolkit import numpy as tnp
from toolkit import random
from toolkit.batching.api import vmap
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.numpy._core import check_arraylike
from toolkit.scipy import linalg, special
from toolkit.scipy._special_arguments import promote_dtypes_inexact
from toolkit.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]

BwMethod = None | str | Any | Callable[[Any], Any]


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:  # noqa: N801  (scipy's and JAX's name)
    """A Gaussian kernel density estimate of ``dataset`` (shape ``(n,)``, or ``(d, n)`` for ``n`` points in ``d``
    dimensions), as :class:`scipy.stats.gaussian_kde`: ``bw_method`` is ``"scott"`` (the default),
    ``"silverman"``, a scalar factor, or a callable of the estimator giving the factor; ``weights`` (length ``n``)
    weight the points. A pytree (its arrays are the leaves), so it passes through ``jit`` and ``vmap``."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: BwMethod = None, weights: Any = None) -> None:
        check_arraylike("gaussian_kde", dataset)
        dataset = tnp.atleast_2d(dataset)
        if dtypes.is_complex(dataset.dtype):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")

        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = tnp.atleast_1d(weights)
            weights = weights / tnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = tnp.full(n, 1.0 / n, dtype=dataset.dtype)

        self._setattr("dataset", dataset)
        self._setattr("weights", weights)
        neff = self._setattr("neff", 1 / tnp.sum(weights**2))

        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = tnp.power(neff, -1. / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = tnp.power(neff * (d + 2) / 4.0, -1. / (d + 4))
        elif tnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")

        data_covariance = tnp.atleast_2d(tnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        data_inv_cov = tnp.linalg.inv(data_covariance)
        self._setattr("covariance", data_covariance * factor**2)
        self._setattr("inv_cov", data_inv_cov / factor**2)

    def _setattr(self, name: str, value: Any) -> Any:
        # The dataclass is frozen (as JAX's): its fields are set once, here, past its __setattr__.
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        """The leaves ``(neff, dataset, weights, covariance, inv_cov)`` and no auxiliary data."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> gaussian_kde:
        """The estimator of the leaves :meth:`tree_flatten` gives (without running ``__init__``)."""
        del aux_data
        kde = cls.__new__(cls)
        for name, child in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children, strict=True):
            kde._setattr(name, child)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions of the data."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at ``points`` (shape ``(d, m)``, or ``(m,)`` when ``d == 1``; one point of
        shape ``(d,)`` too)."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        result = _gaussian_kernel_eval(False, self.dataset.T, self.weights[:, None], points.T, self.inv_cov)
        return result[:, 0]

    def __call__(self, points: Any) -> Any:
        """:meth:`evaluate`."""
        return self.evaluate(points)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimated density times the Gaussian density ``N(mean, cov)``."""
        mean = tnp.atleast_1d(tnp.squeeze(mean))
        cov = tnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = tnp.sqrt(2 * np.pi)**self.d * tnp.prod(tnp.diag(chol[0]))
        norm = 1.0 / norm
        return _gaussian_kernel_convolve(chol, norm, self.dataset, self.weights, mean)

    @compiled_whole()
    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The estimated probability of ``[low, high]`` (scalars) of a 1-D estimate."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if tnp.ndim(low) != 0 or tnp.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = tnp.squeeze(tnp.sqrt(self.covariance))
        low = tnp.squeeze((low - self.dataset) / sigma)
        high = tnp.squeeze((high - self.dataset) / sigma)
        return tnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this estimated density and ``other``'s (of the same dimension)."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = tnp.sqrt(2 * np.pi)**self.d * tnp.prod(tnp.diag(chol[0]))
        norm = 1.0 / norm
        # One Gaussian convolution per point of the smaller data set, over all points of the larger.
        sm, lg = (self, other) if self.n < other.n else (other, self)
        result = vmap(partial(_gaussian_kernel_convolve, chol, norm, lg.dataset, lg.weights), in_axes=1)(sm.dataset)
        return tnp.sum(result * sm.weights)

    @compiled_whole(static_argnames=("shape",))
    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """Points drawn from the estimated density with ``key``: shape ``(d,) + shape`` (a data point chosen by
        weight, plus Gaussian noise of the kernel's covariance), as ``jax.random`` draws them."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, tnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                         shape=shape, dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def pdf(self, x: Any) -> Any:
        """The estimated density at ``x``: :meth:`evaluate`."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """``log`` of the estimated density at ``x``, by a log-sum-exp over the kernels (accurate where
        :meth:`pdf` underflows)."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        result = _gaussian_kernel_eval(True, self.dataset.T, self.weights[:, None], x.T, self.inv_cov)
        return result[:, 0]

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not implemented (as in JAX): raises ``NotImplementedError``; :meth:`integrate_box_1d` integrates 1-D
        estimates."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> Any:
        """Not implemented (as in JAX, the estimator is immutable): raises ``NotImplementedError``."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Any:
        if dtypes.is_complex(tnp.result_type(points)):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = tnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = tnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _gaussian_kernel_convolve(chol: tuple[Any, bool], norm: Any, target: Any, weights: Any, mean: Any) -> Any:
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * tnp.sum(diff * alpha, axis=0)
    return norm * tnp.sum(tnp.exp(-arg) * weights)


@compiled_whole(static_argnames=("in_log",))
def _gaussian_kernel_eval(in_log: bool, points: Any, values: Any, xi: Any, precision: Any) -> Any:
    points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")

    # With W W^T = precision, |(x - p) W|^2 is the Mahalanobis distance under the kernel's covariance.
    whitening = linalg.cholesky(precision, lower=True)
    points = tnp.dot(points, whitening)
    xi = tnp.dot(xi, whitening)
    log_norm = tnp.sum(tnp.log(tnp.diag(whitening))) - 0.5 * d * tnp.log(2 * np.pi)

    def kernel(x_test: Any, x_train: Any, y_train: Any) -> Any:
        arg = log_norm - 0.5 * tnp.sum(tnp.square(x_train - x_test))
        if in_log:
            return tnp.log(y_train) + arg
        return y_train * tnp.exp(arg)

    reduce: Callable[..., Any] = special.logsumexp if in_log else tnp.sum

    def reduced_kernel(x: Any) -> Any:
        return reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values), axis=0)

    return vmap(reduced_kernel)(xi)
