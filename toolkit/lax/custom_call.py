"""An escape hatch: emit a ``stablehlo.custom_call`` to a target the runtime knows.

The result types are declared by the caller (``ShapeDtypeStruct``s); nothing
checks that the target agrees, so a wrong declaration fails at compile or run
time. Calls with ``has_side_effect=True`` use a separate, effectful primitive so
that passes never drop them as dead code.

Example — LAPACK's Cholesky, registered by toolkit's CPU runtime::

    factor, info = toolkit.lax.custom_call(
        "lapack_spotrf_ffi",
        [toolkit.ShapeDtypeStruct((3, 3), np.float32), toolkit.ShapeDtypeStruct((), np.int32)],
        a, api_version=4, backend_config={"uplo": np.uint8(ord("L"))},
        operand_layouts=[(0, 1)], result_layouts=[(0, 1), ()])
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from toolkit.core.avals import ShapedArray, ShapeDtypeStruct
from toolkit.core.families import Family

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("custom_call")

__all__ = ["custom_call", "custom_call_p", "effectful_custom_call_p"]


def _custom_call_rule(*operands: ShapedArray, call_target_name: str, result_avals: tuple, has_side_effect: bool,
                      backend_config: Any, api_version: int, operand_layouts: Any,
                      result_layouts: Any) -> list[ShapedArray]:
    if operand_layouts is not None and len(operand_layouts) != len(operands):
        raise ValueError(f"custom_call {call_target_name!r}: {len(operand_layouts)} operand layouts for "
                         f"{len(operands)} operands")
    for i, (layout, aval) in enumerate(zip(operand_layouts or (), operands)):
        if sorted(layout) != list(range(aval.ndim)):
            raise ValueError(f"custom_call {call_target_name!r}: operand layout {i} {layout} is not a permutation "
                             f"of the {aval.ndim} dimensions of {aval.str_short()}")
    if result_layouts is not None and len(result_layouts) != len(result_avals):
        raise ValueError(f"custom_call {call_target_name!r}: {len(result_layouts)} result layouts for "
                         f"{len(result_avals)} results")
    return list(result_avals)


custom_call_p = family.primitive("custom_call", shape_rule=_custom_call_rule, multiple_results=True)
effectful_custom_call_p = family.primitive("custom_call_with_side_effect", shape_rule=_custom_call_rule,
                                    multiple_results=True, effectful=True)


def _as_aval(x: Any, i: int) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return x.to_aval()
    if isinstance(x, ShapedArray):
        return x
    raise TypeError(f"custom_call: result_avals[{i}] must be a ShapeDtypeStruct, got {type(x).__name__}")


def _freeze_config(config: Any) -> Any:
    """A hashable backend config: a string, or sorted (name, scalar) pairs for the typed FFI (api_version 4)."""
    if config is None or isinstance(config, (str, bytes)):
        return config.decode() if isinstance(config, bytes) else config
    if isinstance(config, Mapping):
        items = []
        for name, value in sorted(config.items()):
            if not isinstance(name, str):
                raise TypeError(f"custom_call: backend_config keys must be strings, got {name!r}")
            if not isinstance(value, (bool, int, float, str, np.integer, np.floating, np.bool_)):
                raise TypeError(f"custom_call: backend_config[{name!r}] must be a scalar or a string, got "
                                f"{type(value).__name__}")
            items.append((name, value))
        return tuple(items)
    raise TypeError(f"custom_call: backend_config must be a string or a dict, got {type(config).__name__}")


@family.function(binds=(custom_call_p, effectful_custom_call_p,))
def custom_call(call_target_name: str, result_avals: Any, *operands: Any, has_side_effect: bool = False,
                backend_config: str | Mapping[str, Any] | None = None, api_version: int = 2,
                operand_layouts: Sequence[Sequence[int]] | None = None,
                result_layouts: Sequence[Sequence[int]] | None = None) -> Any:
    """Call ``call_target_name`` on ``operands``; results typed by ``result_avals``.

    ``result_avals`` is one ``ShapeDtypeStruct`` (one result is returned) or a
    sequence of them (a list is returned). ``backend_config`` is an opaque
    string (api_version 1-3) or a dict of attributes (api_version 4, XLA's typed
    FFI). Layouts are minor-to-major dimension orders (default row-major).

    Example::

        (y,) = custom_call("my_target", [ShapeDtypeStruct((4,), np.float32)], x, has_side_effect=True)
    """
    if not isinstance(call_target_name, str) or not call_target_name:
        raise TypeError(f"custom_call: call_target_name must be a non-empty string, got {call_target_name!r}")
    single = isinstance(result_avals, (ShapeDtypeStruct, ShapedArray))
    avals = (result_avals,) if single else tuple(result_avals)
    avals = tuple(_as_aval(a, i) for i, a in enumerate(avals))
    if api_version not in (1, 2, 3, 4):
        raise ValueError(f"custom_call: api_version must be 1, 2, 3 or 4, got {api_version!r}")
    if isinstance(backend_config, Mapping) and api_version != 4:
        raise ValueError("custom_call: a dict backend_config needs api_version=4 (the typed FFI)")
    prim = effectful_custom_call_p if has_side_effect else custom_call_p
    layouts = lambda ls: None if ls is None else tuple(tuple(int(d) for d in layout) for layout in ls)  # noqa: E731
    outs = prim.bind(*operands, call_target_name=call_target_name, result_avals=avals,
                     has_side_effect=bool(has_side_effect), backend_config=_freeze_config(backend_config),
                     api_version=int(api_version), operand_layouts=layouts(operand_layouts),
                     result_layouts=layouts(result_layouts))
    return outs[0] if single else list(outs)
