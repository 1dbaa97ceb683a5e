"""Host callbacks, the public API: ``toolkit.pure_callback`` and ``toolkit.experimental.io_callback``.

Both call a Python function on the host from inside a program — eagerly, under
``jit``, ``vmap``, ``scan`` and ``shard_map`` — through jaxlib's host-callback
mechanism (the ``xla_ffi_python_cpu_callback`` custom call JAX emits on CPU;
``toolkit/lax/callbacks.py`` holds the primitives). The callback receives arrays
on the CPU device (JAX's ``jax.Array``s) and must return values of exactly the
declared ``result_shape_dtypes``.
Exported programs cannot contain them (``toolkit.export`` refuses, as JAX's
does). ``toolkit.debug`` has ``print`` and ``callback``. See docs/debugging.md.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from toolkit.array import device_put
from toolkit.core import pytrees
from toolkit.lax import callbacks as lax_callbacks
from toolkit.lax.callbacks import VMAP_METHODS

__all__ = ["VMAP_METHODS", "effects_barrier", "io_callback", "pure_callback"]


def _as_arrays(out: Any) -> Any:
    # Outside a trace the lax functions return the host's numpy values; JAX returns Arrays there.
    return pytrees.tree_map(lambda x: device_put(x) if isinstance(x, np.ndarray) else x, out)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: Any = None,
                  vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the pure host function ``callback(*args, **kwargs)`` from a program (``jax.pure_callback``).

    ``result_shape_dtypes`` is a pytree of ``ShapeDtypeStruct``-likes the result
    must match exactly (else ``RuntimeError`` when it runs; a 64-bit dtype with
    x64 off is a ``ValueError``). The callback gets numpy arrays. ``vmap_method``
    says how ``vmap`` batches it: ``"sequential"`` (a loop), ``"sequential_unrolled"``,
    ``"expand_dims"`` (unbatched operands get a size-1 leading axis),
    ``"broadcast_all"`` (every operand broadcast to the batch), ``"legacy_vectorized"``;
    None makes ``vmap`` raise ``NotImplementedError``. Differentiating it raises
    ``ValueError``: wrap it in ``toolkit.custom_jvp``/``custom_vjp``. Returns
    Arrays of the declared types (eagerly too). ``sharding`` must be None
    (``NotImplementedError`` otherwise: toolkit chooses where callbacks run).
    """
    return _as_arrays(lax_callbacks.pure_callback(callback, result_shape_dtypes, *args, sharding=sharding,
                                                  vmap_method=vmap_method, **kwargs))


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: Any = None,
                ordered: bool = False, **kwargs: Any) -> Any:
    """Call the impure host function ``callback(*args, **kwargs)`` (``jax.experimental.io_callback``).

    Never dropped or repeated by the compiler; ``ordered=True`` keeps it in
    program order with the other ordered callbacks (a token threads them), and
    then ``vmap`` refuses it (``ValueError``); an unordered one is batched by a
    sequential loop. Results and ``sharding`` as :func:`pure_callback`;
    differentiating it raises ``ValueError``.
    """
    return _as_arrays(lax_callbacks.io_callback(callback, result_shape_dtypes, *args, sharding=sharding,
                                                ordered=ordered, **kwargs))


def effects_barrier() -> None:
    """Wait until the side effects of every call made so far have happened (``jax.effects_barrier``).

    A call of a program with host callbacks returns only after its run has
    finished (docs/debugging.md), so nothing is outstanding: this returns at once.
    """
    return None
