"""``composite``: a function lowered as one ``stablehlo.composite`` op with its decomposition (JAX's).

``composite(decomposition, name, version=0)`` returns a function; calling it traces
``decomposition`` (keyword arguments become the op's ``composite_attributes``, positional ones its
operands) and binds ``composite`` with that program. The lowering is JAX's: a private function
named after ``name`` holds the decomposition, and ``stablehlo.composite "name" ... {decomposition =
@name, composite_attributes = {...}, version = v}`` calls it, so a compiler that knows the name may
replace it and others inline the decomposition. As in JAX, differentiation raises (use
``custom_jvp``/``custom_vjp``); toolkit also batches it, by batching the decomposition.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit.core import pytrees, tracing
from toolkit.core.avals import ShapedArray, leaf_avals
from toolkit.core.families import Family

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("composites")

__all__ = ["composite", "composite_p", "HashableArray"]


class HashableArray:
    """A NumPy array attribute, hashable by value (equation parameters are hashed)."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray):
        self.value = np.asarray(value)

    def __hash__(self) -> int:
        return hash((self.value.shape, self.value.dtype.str, self.value.tobytes()))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, HashableArray) and self.value.shape == other.value.shape
                and self.value.dtype == other.value.dtype and bool(np.array_equal(self.value, other.value)))

    def __repr__(self) -> str:
        return f"HashableArray({self.value!r})"


def _composite_rule(*args: ShapedArray, name: str, attributes: tuple, version: int, program: Any,
                    num_consts: int) -> list[ShapedArray]:
    return list(program.out_avals)


composite_p = family.primitive("composite", shape_rule=_composite_rule, multiple_results=True)


def _attribute_leaves(name: str, key: str, value: Any) -> tuple[str, tuple, Any]:
    leaves, tree = pytrees.tree_flatten(value)
    out = []
    for leaf in leaves:
        if isinstance(leaf, tracing.Tracer):
            raise tracing.UnexpectedTracerError(
                f"Found a JAX Tracer as an attribute in the decomposition for the composite op '{name}'. This "
                "means that the decomposition function closes over a value that is involved in a JAX "
                "transformation. Any values that aren't explicitly known at compile time must be explicitly "
                "passed as arguments to the composite.\n\nNote: If you are passing jax arrays as attributes, "
                "use numpy arrays instead.")
        if isinstance(leaf, np.ndarray):
            leaf = HashableArray(leaf)
        elif not isinstance(leaf, (bool, int, float, complex, str, bytes, np.generic, np.dtype)):
            raise TypeError(f"composite '{name}': attribute {key!r} holds a {type(leaf).__name__}; attributes are "
                            "Python or NumPy scalars, strings, dtypes, NumPy arrays, or lists, tuples and dicts "
                            "of them")
        out.append(leaf)
    return key, tuple(out), tree


@family.function(binds=(composite_p,))
def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Callable[..., Any]:
    """``decomposition`` as a function lowered to one ``stablehlo.composite`` named ``name`` (``jax.lax.composite``).

    Positional arguments of the returned function are the op's operands (pytrees of arrays);
    keyword arguments are its attributes (scalars, strings, NumPy arrays; ``None`` values are
    left out of ``composite_attributes``). A traced value among the attributes is an
    ``UnexpectedTracerError``, as in JAX.
    """
    if not callable(decomposition):
        raise TypeError(f"composite: decomposition must be callable, got {type(decomposition).__name__}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty string, got {name!r}")

    @functools.wraps(decomposition)
    def call(*args: Any, **kwargs: Any) -> Any:
        attributes = tuple(_attribute_leaves(name, k, v) for k, v in kwargs.items())
        flat, in_tree = pytrees.tree_flatten(args)
        out_tree: list[Any] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            out = decomposition(*pytrees.tree_unflatten(in_tree, list(leaves)), **kwargs)
            out_leaves, tree = pytrees.tree_flatten(out)
            out_tree.append(tree)
            return out_leaves

        program, captured = tracing.trace_flat(flat_fun, leaf_avals(flat, f"composite '{name}'"))
        if captured:
            raise tracing.UnexpectedTracerError(
                f"Found a JAX Tracer as a constant in the decomposition for the composite op '{name}'. This means "
                "that the decomposition function closes over a value that is involved in a JAX transformation. "
                "Any values that aren't explicitly known at compile time must be explicitly passed as arguments "
                "to the composite.")
        outs = composite_p.bind(*flat, name=name, attributes=attributes, version=int(version), program=program,
                                num_consts=0)
        return pytrees.tree_unflatten(out_tree[0], list(outs))

    return call
