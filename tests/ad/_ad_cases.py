"""Functions covering every differentiable primitive family, written once against ``lib`` (toolkit or jax)."""

import numpy as np

IDX = np.array([0, 3, 3, 4], np.int32)


def cases(lib):
    jnp, lax = lib.numpy, lib.lax
    return {
        "unary": lambda x: jnp.sum(jnp.exp(x) + jnp.log1p(x * x) + jnp.tanh(x) + jnp.sin(x) * jnp.cos(x)
                                   + jnp.arctan(x) + jnp.sinh(x) + jnp.sqrt(jnp.abs(x) + 1) + lax.logistic(x)
                                   + lax.erf(x) + jnp.expm1(x) + jnp.cbrt(jnp.abs(x) + 1) + lax.rsqrt(x * x + 1)),
        "binary": lambda x: jnp.sum(jnp.maximum(x, 0.1) * jnp.minimum(x, 0.3) / (x * x + 1)
                                    + jnp.arctan2(x, x + 2) + (jnp.abs(x) + 0.5) ** x + x ** 3 - x),
        "select_clamp": lambda x: jnp.sum(jnp.where(x > 0, x * 3, jnp.exp(x)) + jnp.clip(x, -0.5, 0.5) ** 2),
        "convert": lambda x: jnp.sum(x.astype(np.float16).astype(np.float32) * x),
        "structural": lambda x: jnp.sum(jnp.concatenate([x, x[::-1]], 1) * jnp.arange(12.0))
        + jnp.sum(jnp.pad(x, ((1, 2), (0, 3))) ** 2) + jnp.sum(x.T.reshape(3, 10)[1:, ::3] ** 2)
        + jnp.sum(jnp.broadcast_to(x[:, :1], (5, 6)) ** 2),
        "dynamic": lambda x: jnp.sum(lax.dynamic_slice(x, (np.int32(1), np.int32(2)), (3, 3)) ** 2)
        + jnp.sum(lax.dynamic_update_slice(x, x[:2, :2] * 5, (np.int32(2), np.int32(3))) ** 2),
        "reductions": lambda x: jnp.prod(x[0]) + jnp.max(x) + jnp.sum(jnp.min(x, axis=0) ** 2)
        + jnp.sum(jnp.mean(x, axis=1) ** 2),
        "dot": lambda x: jnp.sum(jnp.tanh(x @ x.T) @ x) + jnp.sum(jnp.einsum("ij,kj->ik", x, x * 2) ** 2),
        "gather_scatter": lambda x: jnp.sum(x[IDX] ** 2) + jnp.sum(x.at[IDX].add(x[:4] * 2.0) ** 2)
        + jnp.sum(x.at[np.array([1, 2])].set(x[:2] * 3.0) ** 2),
        "sort": lambda x: jnp.sum(jnp.sort(x, axis=1) * jnp.arange(6.0)) + jnp.sum(lax.top_k(x, 3)[0] * jnp.arange(3.0)),
        "cumulative": lambda x: jnp.sum(lax.cumsum(x, 1) ** 2) + jnp.sum(lax.cummax(x, 0) ** 2)
        + jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (1, 2), "SAME") ** 2),
        "cumulative_products": lambda x: jnp.sum(lax.cumprod(x, 1) * x) + jnp.sum(lax.cumprod(x, 0, reverse=True) ** 2)
        + jnp.sum(lax.cumlogsumexp(x, 1) * x) + jnp.sum(lax.cumlogsumexp(x, 0, reverse=True) ** 2)
        + jnp.sum(jnp.nancumprod(x, axis=1) * 0.5) + jnp.sum(lax.cumprod(x[:, :1], 1) * x[:, :1])
        + jnp.sum(lax.cumlogsumexp(x[:1], 0) ** 2),  # axes of size 1: windows of one element
        "conv": lambda x: jnp.sum(lax.conv_general_dilated(x[None, None], x[None, None, :3, :3] * 0.5, (2, 1),
                                                           [(1, 2), (0, 1)], rhs_dilation=(1, 2)) ** 2),
        "grouped_conv": lambda x: jnp.sum(lax.conv_general_dilated(x[None, :4], x[:4, None, :3] * 0.5, (1,), "SAME",
                                                                   feature_group_count=4) ** 2)
        + jnp.sum(lax.conv_general_dilated(x[:4, None], x[:2, None, :3], (1,), "VALID", batch_group_count=2) ** 2),
        "cond": lambda x: jnp.sum(lax.cond(jnp.sum(x) > 0, lambda a: jnp.sin(a) * a, lambda a: a * 2.0, x))
        + jnp.sum(lax.switch(2, [lambda a: a, lambda a: jnp.exp(a), lambda a: a ** 2], x)),
        "scan": lambda x: jnp.sum(lax.scan(lambda c, r: (jnp.tanh(c * r + x[0]), c * 2.0), jnp.ones(6), x)[1])
        + jnp.sum(lax.scan(lambda c, r: (c + r, None), jnp.zeros(6), x, reverse=True)[0] ** 2),
    }


def forward_only_cases(lib):
    jnp, lax = lib.numpy, lib.lax
    return {
        "while": lambda x: jnp.sum(lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * x),
                                                  (0, x))[1]),
    }
