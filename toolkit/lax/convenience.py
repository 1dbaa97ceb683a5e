"""``map`` of ``jax.lax``: a ``scan`` over the leading axis; ``batch_size`` vmaps ``f`` over chunks.

The rest of ``jax.lax``'s wrappers live in their families' files; ``map`` stays here until it reaches
``vmap`` without ``lax`` importing ``toolkit.batching``.
"""

from __future__ import annotations

from typing import Any, Callable

from toolkit import tree_util
from toolkit.core.avals import aval_of
from toolkit.lax import structural

__all__ = ["map"]


def _shape(x: Any) -> tuple:
    return tuple(aval_of(x).shape)


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 - jax.lax.map's name
    """``f`` applied to each slice of the pytree ``xs`` along its leading axis, stacked (a ``scan``).

    With ``batch_size``, ``f`` is vmapped over chunks of that many slices (the
    scan runs ``n // batch_size`` steps, the remainder is one extra vmapped call).
    """
    from toolkit.lax.control_flow import scan
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from toolkit.batching import vmap
    leaves, treedef = tree_util.tree_flatten(xs)
    if not leaves:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    n = _shape(leaves[0])[0]
    batch_size = int(batch_size)
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    batch_elems = num_batches * batch_size
    vf = vmap(f)
    scan_ys = None
    if num_batches:
        scan_leaves = [structural.reshape(structural.slice_in_dim(leaf, 0, batch_elems),
                                          (num_batches, batch_size) + _shape(leaf)[1:]) for leaf in leaves]
        scan_ys = scan(lambda _, x: ((), vf(x)), (), tree_util.tree_unflatten(treedef, scan_leaves))[1]
    if num_batches == 0 or remainder:
        rest = tree_util.tree_unflatten(treedef, [structural.slice_in_dim(leaf, batch_elems, None) for leaf in leaves])
        rest_ys = vf(rest)

    def flatten(y: Any) -> Any:
        return structural.reshape(y, (_shape(y)[0] * _shape(y)[1],) + _shape(y)[2:])

    if scan_ys is None:
        return rest_ys
    if remainder:
        return tree_util.tree_map(lambda y, r: structural.concatenate([flatten(y), r], 0), scan_ys, rest_ys)
    return tree_util.tree_map(flatten, scan_ys)
