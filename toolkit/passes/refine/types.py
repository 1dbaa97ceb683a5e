"""Type helpers of ``toolkit-refine-shapes``: static checks and merging a known shape into a type.

A shape is a list of sizes with ``-1`` for "unknown" (see :mod:`toolkit.passes.refine.rules`).

Example::

    with_shape(RankedTensorType("tensor<?x4xf32>"), [8, -1])  # tensor<8x4xf32>
"""

from __future__ import annotations

from jaxlib.mlir import ir

from toolkit.passes.refine.rules import DYNAMIC, ShapeError, shape_of


def is_static_type(type_: ir.Type) -> bool:
    """True unless ``type_`` is a tensor (or a tuple holding one) with an unknown size or rank."""
    if isinstance(type_, ir.RankedTensorType):
        return type_.has_static_shape
    if isinstance(type_, ir.ShapedType):  # unranked tensors
        return False
    if isinstance(type_, ir.TupleType):
        return all(is_static_type(type_.get_type(i)) for i in range(type_.num_types))
    return True


def all_static(values) -> bool:
    """True if every value in ``values`` has a static type."""
    return all(is_static_type(v.type) for v in values)


#: (type, sizes) -> refined type (or None) while a refinement runs; emptied with ``rules.SHAPE_CACHE``.
WITH_SHAPE_CACHE: dict[tuple, ir.Type | None] = {}


def with_shape(old: ir.Type, shape: list[int]) -> ir.Type | None:
    """``old`` refined with ``shape`` (-1 = unknown); None if nothing changes.

    Raises :class:`ShapeError` when a static size of ``old`` contradicts ``shape``.
    """
    if isinstance(old, ir.RankedTensorType):
        key = (old, tuple(shape))
        try:
            return WITH_SHAPE_CACHE[key]
        except KeyError:
            pass
        refined = _with_shape_ranked(old, shape)
        if len(WITH_SHAPE_CACHE) < 1 << 16:
            WITH_SHAPE_CACHE[key] = refined
        return refined
    if isinstance(old, ir.ShapedType) and not old.has_rank:
        return ir.RankedTensorType.get([d if d >= 0 else DYNAMIC for d in shape], old.element_type)
    return None


def _with_shape_ranked(old: ir.RankedTensorType, shape: list[int]) -> ir.Type | None:
    current = old.shape
    if len(current) != len(shape):
        raise ShapeError(f"inferred rank {len(shape)} differs from result type {old}")
    merged, changed = [], False
    for have, new in zip(current, shape):
        if have == DYNAMIC and new >= 0:
            merged.append(new)
            changed = True
        else:
            if have != DYNAMIC and new >= 0 and have != new:
                raise ShapeError(f"inferred shape {shape_text(shape)} is incompatible with result type {old}")
            merged.append(have)
    if not changed:
        return None
    return ir.RankedTensorType.get(merged, old.element_type, old.encoding)


def refine_type(old: ir.Type, new: ir.Type) -> ir.Type | None:
    """``old`` refined with the knowledge in ``new`` (tuples element by element); None if nothing changes."""
    if isinstance(old, ir.TupleType) and isinstance(new, ir.TupleType) and old.num_types == new.num_types:
        elements = [refine_type(old.get_type(i), new.get_type(i)) for i in range(old.num_types)]
        if all(e is None for e in elements):
            return None
        return ir.TupleType.get_tuple([e or old.get_type(i) for i, e in enumerate(elements)])
    new_shape = shape_of(new)
    if new_shape is None:
        return None
    return with_shape(old, new_shape)


def shape_text(shape: list[int]) -> str:
    """``3x?x4`` for ``[3, -1, 4]``; ``scalar`` for ``[]``."""
    return "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"
