"""Host callbacks: the ``pure_callback``, ``io_callback`` and ``debug_callback`` primitives.

Each carries a :class:`~toolkit.core.host_callbacks.HostCallback` (the user's
function, flattened, with its declared result types) and lowers to the custom
call JAX 0.10.2 emits on CPU, ``xla_ffi_python_cpu_callback``, whose
``index`` names the callback in the table the runtime gives jaxlib when it
compiles (``toolkit/core/host_callbacks.py``). Ordered callbacks thread a
``!stablehlo.token`` through each function body in program order.

* ``pure_callback``: no side effect (XLA may drop or repeat it); batched by
  its ``vmap_method``; no derivative (JAX's errors).
* ``io_callback``: a side effect, kept in order when ``ordered``; batched by
  a sequential loop when unordered (an ordered one refuses ``vmap``); no derivative.
* ``debug_callback``: a side effect with no results (``toolkit.debug.print``
  and ``toolkit.debug.callback``); batched by calling it once per element;
  under differentiation it sees the primal values only.

The user functions here flatten pytrees and, outside any trace, call the
callback directly on the host values (JAX's impl rules run it on the host too); ``HostCallback`` hands the
user's function arrays on the CPU device.
Their public homes are ``toolkit.pure_callback``, ``toolkit.experimental.io_callback``
and ``toolkit.debug``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes, pytrees, tracing
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.host_callbacks import HostCallback

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("callbacks")

__all__ = ["debug_callback_p", "io_callback_p", "pure_callback_p", "VMAP_METHODS", "bind_debug_callback",
           "io_callback", "pure_callback"]

#: ``pure_callback``'s ``vmap_method`` values (JAX 0.10.2's list).
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None)


def _results_rule(*operands: ShapedArray, callback: HostCallback, **params: Any) -> list[ShapedArray]:
    return list(callback.result_avals)


pure_callback_p = family.primitive("pure_callback", shape_rule=_results_rule, multiple_results=True)
io_callback_p = family.primitive("io_callback", shape_rule=_results_rule, multiple_results=True, effectful=True)
debug_callback_p = family.primitive("debug_callback", shape_rule=_results_rule, multiple_results=True,
                                    effectful=True)


def result_avals_of(api: str, result_shape_dtypes: Any) -> tuple[list[ShapedArray], Any]:
    """The flat result types of ``result_shape_dtypes`` (leaves with ``shape`` and ``dtype``) and their tree.

    A 64-bit dtype with x64 off is a ``ValueError``, as in JAX.
    """
    leaves, tree = pytrees.tree_flatten(result_shape_dtypes)
    avals = []
    for i, leaf in enumerate(leaves):
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"{api}: result_shape_dtypes leaves must have `shape` and `dtype` (e.g. "
                            f"toolkit.ShapeDtypeStruct), got {type(leaf).__name__} at leaf {i}")
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dtype) != dtype:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled")
        avals.append(ShapedArray(tuple(int(d) for d in leaf.shape), dtype))
    return avals, tree


def _is_traced(leaves: Sequence[Any]) -> bool:
    return tracing.current_builder() is not None or any(isinstance(x, tracing.Tracer) for x in leaves)


def _host_values(leaves: Sequence[Any]) -> list[np.ndarray]:
    # Outside a trace the callback runs here, on numpy values as the compiled program gives it.
    return [np.asarray(x) for x in leaves]


def _flat_function(callback: Callable[..., Any], in_tree: Any) -> Callable[..., Any]:
    """``callback`` over flat numpy operands, returning its results' leaves."""
    def flat(*leaves: Any) -> Sequence[Any]:
        args, kwargs = pytrees.tree_unflatten(in_tree, list(leaves))
        out = callback(*args, **kwargs)
        # As JAX: the result's leaves, in order, whatever containers hold them (counts and types are checked).
        return pytrees.tree_leaves(out)
    flat.__qualname__ = getattr(callback, "__qualname__", type(callback).__name__)
    return flat


def _operands(api: str, leaves: Sequence[Any]) -> list[Any]:
    for i, x in enumerate(leaves):
        try:
            aval_of(x)
        except TypeError as error:
            raise TypeError(f"{api}: argument leaf {i} is not an array: {error}") from None
    return list(leaves)


def _check_callable(api: str, callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"{api}: the callback must be callable, got an object of type {type(callback).__name__}")


def _check_sharding(api: str, sharding: Any) -> None:
    if sharding is not None:
        raise NotImplementedError(f"{api}: sharding= is not supported by toolkit (a callback outside shard_map runs "
                                  "once, on device 0; inside shard_map once per device); pass sharding=None")


@family.function(binds=(pure_callback_p,))
def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: Any = None,
                  vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the pure host function ``callback(*args, **kwargs)`` from a program (``jax.pure_callback``).

    ``result_shape_dtypes`` is a pytree of ``ShapeDtypeStruct``-likes the result
    must match exactly (else ``RuntimeError`` when it runs). The callback gets
    numpy arrays. ``vmap_method`` says how ``vmap`` batches it: ``"sequential"``
    (a loop), ``"sequential_unrolled"``, ``"expand_dims"`` (unbatched operands
    get a size-1 leading axis), ``"broadcast_all"`` (every operand broadcast to
    the batch), ``"legacy_vectorized"``; None refuses ``vmap``. It has no
    derivative: wrap it in ``custom_jvp``/``custom_vjp``.
    """
    _check_callable("pure_callback", callback)
    _check_sharding("pure_callback", sharding)
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    leaves, in_tree = pytrees.tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of("pure_callback", result_shape_dtypes)
    host = HostCallback(_flat_function(callback, in_tree), result_avals, kind="pure_callback")
    if not _is_traced(leaves):
        return pytrees.tree_unflatten(out_tree, list(host.call_flat(*_host_values(leaves))))
    outs = pure_callback_p.bind(*_operands("pure_callback", leaves), callback=host,
                                result_avals=tuple(result_avals), vmap_method=vmap_method)
    return pytrees.tree_unflatten(out_tree, list(outs))


@family.function(binds=(io_callback_p,))
def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, sharding: Any = None,
                ordered: bool = False, **kwargs: Any) -> Any:
    """Call the impure host function ``callback(*args, **kwargs)`` (``jax.experimental.io_callback``).

    Never dropped or repeated by the compiler; ``ordered=True`` keeps it in
    program order with the other ordered callbacks (a token threads them), and
    then it cannot be batched. Results as :func:`pure_callback`; no derivative.
    """
    _check_callable("io_callback", callback)
    _check_sharding("io_callback", sharding)
    leaves, in_tree = pytrees.tree_flatten((args, kwargs))
    result_avals, out_tree = result_avals_of("io_callback", result_shape_dtypes)
    host = HostCallback(_flat_function(callback, in_tree), result_avals, kind="io_callback",
                        ordered=bool(ordered))
    if not _is_traced(leaves):
        return pytrees.tree_unflatten(out_tree, list(host.call_flat(*_host_values(leaves))))
    outs = io_callback_p.bind(*_operands("io_callback", leaves), callback=host,
                              result_avals=tuple(result_avals), ordered=bool(ordered))
    return pytrees.tree_unflatten(out_tree, list(outs))


@family.function(binds=(debug_callback_p,))
def bind_debug_callback(function: Callable[..., Any], dynamic: Sequence[Any], *, ordered: bool,
                        kind: str = "debug_callback") -> None:
    """Run ``function(*dynamic)`` (returning nothing) on the host: now, or when the traced program runs.

    The building block of ``toolkit.debug.callback`` and ``toolkit.debug.print``:
    ``dynamic`` are the array operands (static values are closed over by ``function``).
    """
    def flat(*values: Any) -> tuple:
        function(*values)
        return ()
    flat.__qualname__ = getattr(function, "__qualname__", type(function).__name__)
    host = HostCallback(flat, (), kind=kind, ordered=ordered)
    if not _is_traced(dynamic):
        host.call_flat(*_host_values(dynamic))
        return
    debug_callback_p.bind(*dynamic, callback=host, ordered=bool(ordered))
