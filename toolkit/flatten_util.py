"""``jax.flatten_util``: a pytree of arrays as one flat vector, and the function that puts it back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit import numpy as tnp
from toolkit.core.pytrees import tree_flatten
from toolkit.numpy import result_type


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravel every leaf and concatenate them into one 1-D array; returns it and the inverse.

    The vector's dtype is the leaves' promoted dtype (as ``toolkit.numpy.result_type``);
    the inverse casts each piece back to its leaf's dtype and shape. An empty tree
    gives a ``float32`` vector of length 0, as ``jax.flatten_util.ravel_pytree``.

    >>> flat, unravel = ravel_pytree({"w": tnp.ones((2, 2)), "b": tnp.zeros(3)})
    >>> flat.shape, unravel(flat)["w"].shape
    ((7,), (2, 2))
    """
    leaves, treedef = tree_flatten(pytree)
    arrays = [tnp.asarray(leaf) for leaf in leaves]
    shapes = [a.shape for a in arrays]
    dtypes = [a.dtype for a in arrays]
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in shapes]
    if not arrays:
        flat = tnp.zeros((0,), np.float32)
    else:
        to = result_type(*dtypes)
        flat = tnp.concatenate([tnp.ravel(a).astype(to) for a in arrays])
    offsets = np.cumsum([0, *sizes])

    def unravel(vector: Any) -> Any:
        vector = tnp.asarray(vector)
        if vector.shape != flat.shape:
            raise ValueError(f"The unravel function expected an array of shape {flat.shape}, got shape "
                             f"{vector.shape}.")
        if vector.dtype != flat.dtype:
            raise TypeError(f"unravel function given array of dtype {vector.dtype}, but expected dtype "
                            f"{flat.dtype}")
        pieces = [tnp.reshape(vector[int(offsets[i]):int(offsets[i + 1])], shape).astype(dtype)
                  for i, (shape, dtype) in enumerate(zip(shapes, dtypes))]
        return treedef.unflatten(pieces)

    return flat, unravel
