"""JAX's ``out_sharding=`` keyword of the samplers: ``random.normal(key, (8, 4), out_sharding=P("x"))``.

With ``jax_threefry_partitionable`` (JAX's default, and toolkit's bits) a sample's values do not depend on how it
is laid out, so a sampler's result is the unsharded one resharded: its type on the Explicit mesh axes is
``out_sharding``, checked with JAX's messages (``toolkit.shard.explicit``: only Explicit axes, a mesh in context
for a bare ``PartitionSpec``, axes dividing the dimensions they split). Inside ``jit`` the reshard is a sharding
constraint, which XLA's partitioner propagates back into the sampler's computation.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from toolkit.core import sharding_types

F = TypeVar("F", bound=Callable[..., Any])


def _same(x: Any) -> Any:
    return x


def taking_out_sharding(sampler: F) -> F:
    """``sampler`` with JAX's keyword-only ``out_sharding=`` (a ``NamedSharding``, or a ``PartitionSpec`` under
    ``toolkit.set_mesh``; None: as without it)."""
    name = sampler.__name__
    signature = inspect.signature(sampler)
    parameters = [*signature.parameters.values(),
                  inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)]

    @functools.wraps(sampler)
    def sample(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        out = sampler(*args, **kwargs)
        if out_sharding is None:
            return out
        return sharding_types.with_out_sharding(_same, (out,), {}, out_sharding, name, tuple(out.shape))

    sample.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return sample  # type: ignore[return-value]
