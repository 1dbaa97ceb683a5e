"""The rest of ``toolkit.numpy``: sorting, cumulative ops, ``einsum``, splitting,
padding, flips and rolls, repetition, ``take``, diagonals and triangles,
closeness tests and ``meshgrid``.

All shapes are static: repeat counts, split points, pad widths and (static)
roll shifts are Python ints. Example::

    import toolkit.numpy as tnp
    tnp.einsum("bij,bjk->bik", a, b)
    tnp.sort(x, axis=0); tnp.argsort(x, stable=True)
    tnp.pad(x, ((1, 1), (0, 2)), mode="reflect")
"""

from __future__ import annotations

import contextlib
import string
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes, shape_poly
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import indexing as lax_indexing
from toolkit.lax import linalg as lax_linalg
from toolkit.lax import reductions as lax_reductions
from toolkit.lax import sorting as lax_sorting
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import (
    asarray, broadcast_shapes, broadcast_to, canonical_axes, canonical_axis, convert, is_array, result_dtype,
)
from toolkit.numpy import reductions
from toolkit.numpy import shapes as numpy_shapes
from toolkit.numpy import ufuncs
from toolkit.numpy.indexing import _getitem, getitem

_Axis = Any


def _flatten_if_none(a: Any, axis: _Axis) -> tuple[Any, int]:
    a = asarray(a)
    if axis is None:
        return numpy_shapes.ravel(a), 0
    return a, canonical_axis(axis, a.ndim)


# --- sorting --------------------------------------------------------------------

def sort(a: Any, axis: int | None = -1, *, kind: str | None = None, order: Any = None, stable: bool = True,
         descending: bool = False) -> Any:
    """A sorted copy of ``a`` along ``axis`` (``None``: flattened); NaNs sort last.

    Example::

        sort(asarray([3, 1, 2]))   # [1, 2, 3]
    """
    if order is not None:
        raise NotImplementedError("sort: `order` (structured arrays) is not supported")
    a, axis = _flatten_if_none(a, axis)
    if a.ndim == 0:
        raise ValueError("sort needs an array of rank at least 1 (or axis=None)")
    out = lax_sorting.sort(a, axis, is_stable=stable)
    return lax_structural.rev(out, (axis,)) if descending else out


def argsort(a: Any, axis: int | None = -1, *, kind: str | None = None, order: Any = None, stable: bool = True,
            descending: bool = False) -> Any:
    """int32 indices that sort ``a`` along ``axis``; ties keep input order (also when ``descending``).

    Example::

        argsort(asarray([3, 1, 2]))   # [1, 2, 0]
    """
    if order is not None:
        raise NotImplementedError("argsort: `order` (structured arrays) is not supported")
    a, axis = _flatten_if_none(a, axis)
    if a.ndim == 0:
        raise ValueError("argsort needs an array of rank at least 1 (or axis=None)")
    if not descending:
        return lax_sorting.argsort(a, axis, is_stable=stable)
    # Stable descending: sort the reversed array ascending, reverse back, and map positions back.
    n = a.shape[axis]
    idx = lax_structural.rev(lax_sorting.argsort(lax_structural.rev(a, (axis,)), axis, is_stable=stable), (axis,))
    return lax_elementwise.sub(broadcast_to(np.asarray(n - 1, np.int32), idx.shape), idx)


# --- cumulative -----------------------------------------------------------------

def _cumulative(name: str):
    def fn(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        from toolkit import lax
        a, axis = _flatten_if_none(a, axis)
        target = dtypes.canonicalize_dtype(dtype) if dtype is not None else reductions._sum_dtype(a.dtype)
        if a.dtype != target:
            a = lax_elementwise.convert_element_type(a, target)
        return getattr(lax, name)(a, axis=axis)
    fn.__name__ = name
    fn.__doc__ = (f"Cumulative {name[3:]} along ``axis`` (``None``: flattened); small integers and bools "
                  f"accumulate in the default integer type, as in numpy.\n\nExample::\n\n    {name}(asarray([1, 2, 3]))\n")
    return fn


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")


def diff(a: Any, n: int = 1, axis: int = -1) -> Any:
    """``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]`` repeated ``n`` times."""
    a = asarray(a)
    axis = canonical_axis(axis, a.ndim)
    if n < 0:
        raise ValueError(f"diff: order n={n} must be non-negative")
    for _ in range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        a = ufuncs.subtract(getitem(a, tuple(hi)), getitem(a, tuple(lo)))
    return a


# --- einsum ---------------------------------------------------------------------

_LETTERS = set(string.ascii_letters)


def _parse_einsum(subscripts: str, shapes: Sequence[tuple]) -> tuple[list[list[str]], list[str]]:
    """Operand label lists and the output label list; ``...`` becomes private labels (rightmost-aligned)."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} contain more than one '->'")
    inputs_spec, arrow, output_spec = spec.partition("->")
    terms = inputs_spec.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands but {len(shapes)} were given")
    ellipsis_rank = 0
    parsed: list[list[str]] = []
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        if term.count("...") > 1 or ("." in term.replace("...", "")):
            raise ValueError(f"einsum: operand {k} term {term!r} has a malformed ellipsis")
        letters = term.replace("...", "")
        for c in letters:
            if c not in _LETTERS:
                raise ValueError(f"einsum: invalid subscript {c!r} in operand {k} term {term!r}; use letters a-z, A-Z")
        if "..." in term:
            covered = len(shape) - len(letters)
            if covered < 0:
                raise ValueError(f"einsum: operand {k} term {term!r} names more dimensions than its rank "
                                 f"{len(shape)}")
            ellipsis_rank = max(ellipsis_rank, covered)
        elif len(letters) != len(shape):
            raise ValueError(f"einsum: operand {k} term {term!r} names {len(letters)} dimensions but the operand has "
                             f"rank {len(shape)} (shape {tuple(shape)})")
        parsed.append([term, letters])
    ell_labels = [f"...{i}" for i in range(ellipsis_rank)]
    operands_labels = []
    for (term, letters), shape in zip(parsed, shapes):
        if "..." in term:
            before, after = term.split("...")
            covered = len(shape) - len(letters)
            operands_labels.append(list(before) + ell_labels[ellipsis_rank - covered:] + list(after))
        else:
            operands_labels.append(list(term))
    if arrow:
        if output_spec.count("...") > 1 or "." in output_spec.replace("...", ""):
            raise ValueError(f"einsum: output term {output_spec!r} has a malformed ellipsis")
        out_letters = output_spec.replace("...", "")
        for c in out_letters:
            if c not in _LETTERS:
                raise ValueError(f"einsum: invalid subscript {c!r} in the output term {output_spec!r}")
            if not any(c in labels for labels in operands_labels):
                raise ValueError(f"einsum: output subscript {c!r} does not appear in any input term")
        if len(set(out_letters)) != len(out_letters):
            raise ValueError(f"einsum: output term {output_spec!r} repeats a subscript")
        if "..." in output_spec:
            before, after = output_spec.split("...")
            output = list(before) + ell_labels + list(after)
        else:
            output = list(output_spec)  # ellipsis dimensions missing from the output are summed
    else:
        counts: dict[str, int] = {}
        for labels in operands_labels:
            for c in labels:
                if not c.startswith("..."):
                    counts[c] = counts.get(c, 0) + 1
        output = ell_labels + sorted(c for c, n in counts.items() if n == 1)
    return operands_labels, output


def _take_diagonal_label(x: Any, labels: list[str]) -> tuple[Any, list[str]]:
    """Merge the first repeated label of ``x`` by taking the diagonal (moved last)."""
    for i, c in enumerate(labels):
        j = labels.index(c, i + 1) if labels.count(c) > 1 else -1
        if j >= 0:
            x = diagonal(x, 0, i, j)
            rest = [lab for k, lab in enumerate(labels) if k not in (i, j)]
            return x, rest + [c]
    return x, labels


def einsum(subscripts: str, *operands: Any, optimize: Any = None, precision: Any = None,
           preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Einstein summation, lowered to ``dot_general`` (pairs chosen greedily), reductions and transposes.

    Supports ``...`` (broadcast, size-1 dimensions broadcast against others),
    repeated labels within an operand (diagonals, e.g. ``"ii->i"``, ``"ii"``)
    and implicit outputs (labels appearing once, sorted). A malformed spec
    raises ``ValueError``.

    Example::

        einsum("ij,jk->ik", a, b)          # matmul
        einsum("...ij->...ji", x)          # batched transpose
        einsum("ii", m)                    # trace

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``) is the result's
    type on Explicit mesh axes, as in JAX: for two operands the product is typed so (contractions over
    sharded dimensions are ambiguous without it), for one the reduction; more operands are contracted
    with the Explicit axes Auto and the result resharded.
    """
    if not operands:
        raise ValueError("einsum needs at least one operand")
    dtype, weak = result_dtype(*operands)
    arrays = [asarray(convert(o, dtype, weak)) for o in operands]
    if out_sharding is None:
        return _einsum(*arrays, subscripts=subscripts, preferred_element_type=preferred_element_type)
    from toolkit.shard.explicit import with_out_sharding
    labels_list, output = _parse_einsum(subscripts, [tuple(a.shape) for a in arrays])
    sizes = _label_sizes(arrays, labels_list)
    return with_out_sharding(_einsum, tuple(arrays), {"subscripts": subscripts,
                                                      "preferred_element_type": preferred_element_type},
                             out_sharding, "einsum", tuple(sizes[lab] for lab in output),
                             how="auto" if len(arrays) > 2 else "typed_by_fun")


def _label_sizes(arrays: Sequence[Any], labels_list: Sequence[list[str]]) -> dict[str, Any]:
    """Each label's size, broadcasting 1 against n."""
    sizes: dict[str, Any] = {}
    for k, (a, labels) in enumerate(zip(arrays, labels_list)):
        for lab, n in zip(labels, a.shape):
            old = sizes.get(lab)
            if old is None or old == 1:
                sizes[lab] = n
            elif n != 1 and n != old:
                raise ValueError(f"einsum: subscript {lab!r} has size {n} in operand {k} but {old} elsewhere")
    return sizes


def _einsum(*arrays: Any, subscripts: str, preferred_element_type: Any, out_type: Any = None) -> Any:
    """:func:`einsum` of operands of one dtype; ``out_type`` (a type sharding) types its last product or reduction."""
    labels_list, output = _parse_einsum(subscripts, [tuple(a.shape) for a in arrays])
    pref = dtypes.canonicalize_dtype(preferred_element_type) if preferred_element_type is not None else None
    sizes = _label_sizes(arrays, labels_list)

    def typed_as_output(primitive: str, labels: list[str]) -> Any:
        """While the result with ``labels`` is made: typed as the output's dimensions (before the final transpose)."""
        if out_type is None or sorted(labels) != sorted(output):
            return contextlib.nullcontext()
        from toolkit.core import sharding_rules
        spec = tuple(out_type.spec) + (None,) * (len(output) - len(out_type.spec))
        return sharding_rules.out_sharding_override(
            primitive, sharding_rules.hooks.make(out_type.mesh, tuple(spec[output.index(lab)] for lab in labels)))

    ops: list[tuple[Any, list[str]]] = []
    for a, labels in zip(arrays, labels_list):
        labels = list(labels)
        while len(set(labels)) != len(labels):
            a, labels = _take_diagonal_label(a, labels)
        target = tuple(sizes[lab] for lab in labels)
        if tuple(a.shape) != target:
            a = broadcast_to(a, target)
        ops.append((a, labels))

    def needed_elsewhere(lab: str, exclude: Sequence[int]) -> bool:
        return lab in output or any(lab in labels for k, (_, labels) in enumerate(ops) if k not in exclude)

    # Labels only one operand has and the output lacks are summed away first.
    for k, (a, labels) in enumerate(ops):
        drop = [i for i, lab in enumerate(labels) if not needed_elsewhere(lab, (k,))]
        if drop:
            kept = [lab for i, lab in enumerate(labels) if i not in drop]
            with typed_as_output("reduce_or" if dtypes.is_bool(a.dtype) else "reduce_sum",
                                 kept) if len(ops) == 1 else contextlib.nullcontext():
                ops[k] = (_reduce_sum(a, drop), kept)

    def result_labels(i: int, j: int) -> tuple[list[str], list[str], list[str]]:
        li, lj = ops[i][1], ops[j][1]
        shared = [lab for lab in li if lab in lj]
        batch = [lab for lab in shared if needed_elsewhere(lab, (i, j))]
        free = [lab for lab in li if lab not in shared] + [lab for lab in lj if lab not in shared]
        return shared, batch, free

    def cost(i: int, j: int) -> Any:
        _, batch, free = result_labels(i, j)
        size = 1
        for lab in batch + free:
            size = size * sizes[lab] if isinstance(sizes[lab], int) else size
        return size

    # Greedy pairwise contraction: always the pair with the smallest result (opt_einsum's "greedy" idea).
    while len(ops) > 1:
        pairs = [(i, j) for i in range(len(ops)) for j in range(i + 1, len(ops))]
        i, j = min(pairs, key=lambda p: cost(*p)) if len(ops) > 2 else (0, 1)
        (lhs, lhs_labels), (rhs, rhs_labels) = ops[i], ops[j]
        shared, batch, free = result_labels(i, j)
        contract = [lab for lab in shared if lab not in batch]
        dims = ((tuple(lhs_labels.index(c) for c in contract), tuple(rhs_labels.index(c) for c in contract)),
                (tuple(lhs_labels.index(b) for b in batch), tuple(rhs_labels.index(b) for b in batch)))
        with typed_as_output("dot_general", batch + free) if len(ops) == 2 else contextlib.nullcontext():
            out = lax_linalg.dot_general(lhs, rhs, dims, preferred_element_type=pref if len(ops) == 2 else None)
        ops = [op for k, op in enumerate(ops) if k not in (i, j)] + [(out, batch + free)]
    result, res_labels = ops[0]
    if pref is not None and result.dtype != pref:
        result = lax_elementwise.convert_element_type(result, pref)
    perm = [res_labels.index(lab) for lab in output]
    return numpy_shapes.transpose(result, perm) if perm != list(range(len(perm))) else result


def _reduce_sum(x: Any, axes: Sequence[int]) -> Any:
    if dtypes.is_bool(x.dtype):
        return lax_reductions.reduce_or(x, axes)
    return lax_reductions.reduce_sum(x, axes)


# --- splitting ------------------------------------------------------------------

def _split(a: Any, indices_or_sections: Any, axis: int, even: bool, name: str) -> list[Any]:
    a = asarray(a)
    axis = canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {sections}")
        base, extra = divmod(n, sections)
        if even and not shape_poly.definitely_equal(extra, 0):
            raise ValueError(f"{name}: array split does not result in an equal division: axis {axis} of size {n} "
                             f"into {sections} sections")
        # Section i starts at i*base + min(i, extra): the first `extra` sections get one more element.
        bounds = [i * base + shape_poly.min_dim(i, extra) for i in range(sections)] + [n]
    else:
        points = [p if shape_poly.is_symbolic_dim(p) else int(p) for p in indices_or_sections]
        bounds = [0] + [shape_poly.min_dim(shape_poly.max_dim(p + n if p < 0 else p, 0), n) for p in points] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * a.ndim
        index[axis] = slice(lo, shape_poly.max_dim(lo, hi))
        out.append(getitem(a, tuple(index)))
    return out


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections (an int, which must divide the axis) or at the given indices."""
    return _split(ary, indices_or_sections, axis, True, "split")


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like ``split`` but sections may differ in size by one (the first ones are larger)."""
    return _split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    ary = asarray(ary)
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    return split(ary, indices_or_sections, 0)


# --- padding ----------------------------------------------------------------------

def _pad_widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    try:
        widths = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of rank {ndim}") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad widths must be non-negative, got {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in widths]


def _axis_slice(a: Any, axis: int, lo: int | None, hi: int | None, step: int | None = None) -> Any:
    index = [slice(None)] * a.ndim
    index[axis] = slice(lo, hi, step)
    return getitem(a, tuple(index))


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad ``array`` (modes ``constant`` [``constant_values``], ``edge``, ``reflect``, ``symmetric``, ``wrap``).

    Example::

        pad(x, 1)                                  # one zero on every side
        pad(x, ((0, 0), (2, 1)), mode="edge")
    """
    a = asarray(array)
    widths = _pad_widths(pad_width, a.ndim)
    if mode == "constant":
        values = kwargs.pop("constant_values", 0)
        _no_kwargs(kwargs, mode)
        if is_array(values) and values.ndim == 0 or np.ndim(values) == 0:
            value = convert(values, a.dtype) if not is_array(values) else lax_elementwise.convert_element_type(values, a.dtype)
            return lax_structural.pad(a, value, [(lo, hi, 0) for lo, hi in widths])
        per_axis = np.broadcast_to(np.asarray(values), (a.ndim, 2))
        for axis, (lo, hi) in enumerate(widths):
            config = [(0, 0, 0)] * a.ndim
            if lo:
                config[axis] = (lo, 0, 0)
                a = lax_structural.pad(a, np.asarray(per_axis[axis, 0], a.dtype), config)
            if hi:
                config[axis] = (0, hi, 0)
                a = lax_structural.pad(a, np.asarray(per_axis[axis, 1], a.dtype), config)
        return a
    _no_kwargs(kwargs, mode)
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (constant, edge, reflect, symmetric, wrap)")
    for axis, (lo, hi) in enumerate(widths):
        if not lo and not hi:
            continue
        n = a.shape[axis]
        if n == 0:
            raise ValueError(f"pad: cannot pad empty axis {axis} with mode {mode!r}")
        a = _pad_axis(a, axis, lo, hi, mode)
    return a


def _no_kwargs(kwargs: dict, mode: str) -> None:
    if kwargs:
        raise TypeError(f"pad: unexpected arguments {sorted(kwargs)} for mode {mode!r}")


def _pad_axis(a: Any, axis: int, lo: int, hi: int, mode: str) -> Any:
    n = a.shape[axis]
    if mode != "edge" and shape_poly.is_symbolic_dim(n):
        return _pad_axis_symbolic(a, axis, lo, hi, mode)
    if mode == "edge":
        parts = []
        if lo:
            parts.append(_repeat_slice(_axis_slice(a, axis, 0, 1), axis, lo))
        parts.append(a)
        if hi:
            parts.append(_repeat_slice(_axis_slice(a, axis, n - 1, n), axis, hi))
        return lax_structural.concatenate(parts, axis) if len(parts) > 1 else a
    if mode == "wrap":
        # Repeat the whole axis enough times, then cut the window out.
        reps = 1 + -(-lo // n) + -(-hi // n)
        tiled = lax_structural.concatenate([a] * reps, axis) if reps > 1 else a
        start = -(-lo // n) * n - lo
        return _axis_slice(tiled, axis, start, start + lo + n + hi)
    # reflect / symmetric: periodic with period 2(n-1) resp. 2n.
    if mode == "reflect" and shape_poly.definitely_equal(n, 1):
        return _repeat_slice(a, axis, lo + 1 + hi)
    period = n - 1 if mode == "reflect" else n
    if lo > period or hi > period:
        # Wider than one reflection: one gather with the static source index of every output position.
        positions = np.arange(-lo, n + hi) % (2 * period)
        source = np.where(positions < n, positions, 2 * period - positions - (0 if mode == "reflect" else 1))
        index = [slice(None)] * a.ndim
        index[axis] = source.astype(np.int32)
        return getitem(a, tuple(index))
    parts = []
    if lo:
        parts.append(_axis_slice(a, axis, lo, 0, -1) if mode == "reflect" else
                     _axis_slice(a, axis, lo - 1, None, -1))
    parts.append(a)
    if hi:
        stop = n - 2 - hi if mode == "reflect" else n - 1 - hi
        parts.append(_axis_slice(a, axis, n - 2 if mode == "reflect" else n - 1, stop if stop >= 0 else None, -1))
    return lax_structural.concatenate(parts, axis)


def _pad_axis_symbolic(a: Any, axis: int, lo: int, hi: int, mode: str) -> Any:
    """reflect / symmetric / wrap padding of a symbolic-size axis: one gather with source indices computed at
    run time (which reflection a position falls in depends on the size)."""
    n = a.shape[axis]
    positions = ufuncs.subtract(lax_structural.iota(np.int32, lo + n + hi), np.int32(lo))   # -lo .. n + hi - 1
    size = lax_structural.dimension_as_value(n, np.int32)
    if mode == "wrap":
        source = ufuncs.remainder(positions, size)
    else:
        # reflect: period 2(n-1) (n == 1 repeats the only element); symmetric: period 2n.
        period = ufuncs.subtract(size, np.int32(1)) if mode == "reflect" else size
        twice = ufuncs.maximum(ufuncs.add(period, period), np.int32(1))
        folded = ufuncs.remainder(positions, twice)
        back = ufuncs.subtract(ufuncs.subtract(twice, folded), np.int32(0 if mode == "reflect" else 1))
        source = ufuncs.where(ufuncs.less(folded, size), folded, back)
    index = [slice(None)] * a.ndim
    index[axis] = source
    return getitem(a, tuple(index))


def _repeat_slice(piece: Any, axis: int, count: int) -> Any:
    shape = list(piece.shape)
    shape[axis] = count
    return broadcast_to(piece, tuple(shape))


# --- flips, rolls, rotations ---------------------------------------------------------

def flip(m: Any, axis: _Axis = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes when ``None``)."""
    m = asarray(m)
    axes = canonical_axes(axis, m.ndim)
    return lax_structural.rev(m, axes) if axes else m


def fliplr(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("fliplr needs an array of rank at least 2")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud needs an array of rank at least 1")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the second)."""
    m = asarray(m)
    a0, a1 = canonical_axis(axes[0], m.ndim), canonical_axis(axes[1], m.ndim)
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return numpy_shapes.transpose(flip(m, a1), perm)
    return flip(numpy_shapes.transpose(m, perm), a1)


def roll(a: Any, shift: Any, axis: _Axis = None) -> Any:
    """Shift elements along ``axis`` with wrap-around (``None``: the flattened array).

    ``shift`` may be a traced integer scalar (lowered to a ``dynamic_slice`` of the doubled array).
    """
    a = asarray(a)
    if axis is None:
        return numpy_shapes.reshape(roll(numpy_shapes.ravel(a), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = (shift,) * len(axes) if (isinstance(shift, (int, np.integer)) or shape_poly.is_symbolic_dim(shift) or
                                      (is_array(shift) and shift.ndim == 0)) else tuple(shift)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, ax in zip(shifts, axes):
        ax = canonical_axis(ax, a.ndim)
        n = a.shape[ax]
        if shape_poly.definitely_equal(n, 0):
            continue
        if isinstance(s, (int, np.integer)) and type(n) is int:
            s = int(s) % n
            if s:
                a = lax_structural.concatenate([_axis_slice(a, ax, n - s, n), _axis_slice(a, ax, 0, n - s)], ax)
        else:
            # A traced shift, or a symbolic size or shift: the amount is known at run time only.
            if isinstance(s, (int, np.integer)) or shape_poly.is_symbolic_dim(s):
                s = lax_structural.dimension_as_value(s, np.int32) if shape_poly.is_symbolic_dim(s) else np.int32(s)
            if not dtypes.is_integer(s.dtype):
                raise TypeError(f"roll: shift must be an integer, got {s.dtype.name}")
            if s.dtype != dtypes.int32 or getattr(s, "weak_type", False):
                s = lax_elementwise.convert_element_type(s, dtypes.int32)
            size = lax_structural.dimension_as_value(n, np.int32) if shape_poly.is_symbolic_dim(n) else np.int32(n)
            start = ufuncs.remainder(ufuncs.subtract(size, ufuncs.remainder(s, size)), size)
            doubled = lax_structural.concatenate([a, a], ax)
            starts = [np.int32(0)] * a.ndim
            starts[ax] = start
            a = lax_structural.dynamic_slice(doubled, starts, a.shape)
    return a


# --- repetition ---------------------------------------------------------------------

def tile(A: Any, reps: Any) -> Any:
    """Repeat ``A`` ``reps`` times per axis (numpy's rank promotion on both sides)."""
    A = asarray(A)
    def count(r: Any) -> Any:
        return r if shape_poly.is_symbolic_dim(r) else int(r)  # symbolic counts (x.shape[0]) broadcast at run time

    scalar = isinstance(reps, (int, np.integer)) or shape_poly.is_symbolic_dim(reps)
    reps = (count(reps),) if scalar else tuple(count(r) for r in reps)
    if any(type(r) is int and r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(A.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - A.ndim) + tuple(A.shape)
    # Broadcast to (r0, d0, r1, d1, ...) and merge each pair.
    expanded = []
    dims = []
    for i, (r, d) in enumerate(zip(reps, shape)):
        expanded += [r, d]
        dims.append(2 * i + 1)
    A = numpy_shapes.reshape(A, shape)
    out = lax_structural.broadcast_in_dim(A, tuple(expanded), tuple(dims))
    return numpy_shapes.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


def repeat(a: Any, repeats: Any, axis: int | None = None, *, total_repeat_length: int | None = None) -> Any:
    """Repeat each element ``repeats`` times (an int, or one static count per element)."""
    a, axis = _flatten_if_none(a, axis)
    n = a.shape[axis]
    if is_array(repeats):
        raise TypeError("repeat: repeats must be static (a Python int or a sequence of ints), not a traced array")
    if shape_poly.is_symbolic_dim(repeats):
        return _repeat_each(a, axis, repeats)
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iu":
        raise TypeError(f"repeat: repeats must be integers, got {repeats!r}")
    if (counts < 0).any():
        raise ValueError("repeat: repeats may not be negative")
    if counts.ndim == 0:
        return _repeat_each(a, axis, int(counts))
    if counts.shape != (n,):
        raise ValueError(f"repeat: {counts.size} repeat counts for axis {axis} of size {n}")
    positions = np.repeat(np.arange(n), counts)
    index = [slice(None)] * a.ndim
    index[axis] = positions
    return getitem(a, tuple(index))


def _repeat_each(a: Any, axis: int, r: Any) -> Any:
    """Every element ``r`` times along ``axis`` (``r`` an int or a symbolic size): broadcast, then merge."""
    shape = list(a.shape)
    expanded = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
    out = lax_structural.broadcast_in_dim(a, tuple(expanded), tuple(i for i in range(a.ndim + 1) if i != axis + 1))
    shape[axis] = a.shape[axis] * r
    return numpy_shapes.reshape(out, tuple(shape))


# --- take ---------------------------------------------------------------------------

def _take_mode(mode: str | None):
    if mode is None or mode == "fill":
        return lax_indexing.GatherScatterMode.FILL_OR_DROP
    if mode in ("clip", "promise_in_bounds"):
        return lax_indexing.GatherScatterMode.from_any(mode)
    if mode == "wrap":
        return "wrap"
    raise ValueError(f"take: unknown mode {mode!r}; expected 'fill', 'clip', 'wrap' or 'promise_in_bounds'")


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None, fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (``None``: flattened).

    Out-of-range indices follow ``mode`` (as in JAX): ``"fill"`` (default;
    negative indices wrap once, the rest give NaN for floats, see ``lax.gather``),
    ``"clip"`` (clamped into ``[0, n-1]``, negative ones to 0, as numpy does),
    ``"wrap"`` (modulo ``n``) or ``"promise_in_bounds"``.
    """
    a, axis = _flatten_if_none(a, axis)
    gather_mode = _take_mode(mode)
    indices = indices if is_array(indices) else np.asarray(indices)
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"take: indices must be integers, got {np.dtype(indices.dtype).name}")
    n = a.shape[axis]
    if isinstance(indices, np.ndarray) and shape_poly.is_symbolic_dim(n) and gather_mode in (
            "wrap", lax_indexing.GatherScatterMode.CLIP):
        indices = asarray(indices)  # wrapping/clamping by a symbolic size happens at run time
    if gather_mode == "wrap":
        indices = np.mod(indices, n) if isinstance(indices, np.ndarray) else ufuncs.remainder(indices, n)
        gather_mode = lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS
    elif gather_mode is lax_indexing.GatherScatterMode.CLIP:
        # numpy's and JAX's "clip" clamps raw indices: negative ones become 0 rather than wrapping.
        indices = np.clip(indices, 0, n - 1) if isinstance(indices, np.ndarray) else ufuncs.clip(indices, 0, n - 1)
        gather_mode = lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS
    index = [slice(None)] * a.ndim
    index[axis] = indices
    return _getitem(a, tuple(index), gather_mode, fill_value, check_static_bounds=False) \
        if _is_nd_index(indices) else _take_scalar(a, axis, indices, gather_mode, fill_value)


def _is_nd_index(indices: Any) -> bool:
    return np.ndim(indices) > 0 if isinstance(indices, np.ndarray) else indices.ndim > 0


def _take_scalar(a: Any, axis: int, index: Any, mode: Any, fill_value: Any) -> Any:
    # A 0-d index removes the axis; route it through the gather path so `mode` applies.
    out = take(a, index.reshape(1) if isinstance(index, np.ndarray) else numpy_shapes.reshape(index, (1,)), axis,
               _mode_name(mode), fill_value)
    return numpy_shapes.squeeze(out, axis)


def _mode_name(mode: Any) -> str:
    return {lax_indexing.GatherScatterMode.FILL_OR_DROP: "fill", lax_indexing.GatherScatterMode.CLIP: "clip",
            lax_indexing.GatherScatterMode.PROMISE_IN_BOUNDS: "promise_in_bounds"}[mode]


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Any:
    """``arr`` indexed along ``axis`` by ``indices`` (same rank, other dimensions broadcast), e.g. with argsort.

    Negative indices wrap once; then out-of-range ones follow ``mode`` (``"fill"``
    by default, or ``"clip"``/``"promise_in_bounds"``), as in JAX.

    Example::

        take_along_axis(x, argsort(x, axis=1), axis=1)   # == sort(x, axis=1)
    """
    arr, axis = _flatten_if_none(arr, axis)
    indices = indices if is_array(indices) else np.asarray(indices)
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: indices of rank {indices.ndim} must match the array's rank {arr.ndim}")
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"take_along_axis: indices must be integers, got {np.dtype(indices.dtype).name}")
    gather_mode = _take_mode(mode)
    if gather_mode == "wrap":
        raise ValueError("take_along_axis: mode 'wrap' is not supported")
    # JAX's gather: the dimensions where array and indices agree are gather batching dimensions (so a sharded
    # batch dimension resolves between them), size-1 index dimensions take the whole array dimension (offset
    # dimensions), size-1 array dimensions are squeezed away.
    definitely_equal = shape_poly.definitely_equal
    rank, idx_shape, axis_size = arr.ndim, tuple(indices.shape), arr.shape[axis]
    arr_shape = tuple(1 if i == axis else d for i, d in enumerate(arr.shape))
    out_shape = broadcast_shapes(idx_shape, arr_shape)
    if definitely_equal(axis_size, 0) or any(type(d) is int and d == 0 for d in out_shape):
        from toolkit.numpy.creation import zeros
        return zeros(out_shape, arr.dtype)
    indices = _along_axis_indices(indices, axis_size)
    index_dims = [i for i, d in enumerate(idx_shape) if i == axis or not definitely_equal(d, 1)]
    gather_index_shape = tuple(out_shape[i] for i in index_dims) + (1,)
    if isinstance(indices, np.ndarray):
        indices = asarray(indices.reshape(gather_index_shape))
    else:
        indices = lax_structural.reshape(indices, gather_index_shape)
    slice_sizes, offset_dims, start_index_map, collapsed_slice_dims = [], [], [], []
    operand_batching_dims, start_indices_batching_dims, dims_to_squeeze = [], [], []
    new_i = j = 0
    for i in range(rank):
        if i == axis:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed_slice_dims.append(new_i)
            new_i += 1
            j += 1
        elif definitely_equal(idx_shape[i], 1):
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif definitely_equal(arr_shape[i], 1):
            dims_to_squeeze.append(i)
            j += 1
        else:
            slice_sizes.append(1)
            operand_batching_dims.append(new_i)
            start_indices_batching_dims.append(j)
            new_i += 1
            j += 1
    if dims_to_squeeze:
        arr = lax_structural.reshape(arr, tuple(d for i, d in enumerate(arr.shape) if i not in dims_to_squeeze))
    dnums = lax_indexing.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims))
    return lax_indexing.gather(arr, indices, dnums, tuple(slice_sizes), mode=gather_mode, fill_value=fill_value)


def _along_axis_indices(indices: Any, n: Any) -> Any:
    """take_along_axis's indices as int32 (int64 for 64-bit traced ones) with negative entries wrapped once by ``n``."""
    from toolkit.numpy.indexing import _INT32_MAX, _common_index_dtype, _normalize_dynamic
    if isinstance(indices, np.ndarray):
        if type(n) is int or not (indices < 0).any():
            v = indices.astype(np.int64)
            v = np.where(v < 0, v + n, v) if type(n) is int else v
            return np.clip(v, -_INT32_MAX - 1, _INT32_MAX).astype(np.int32)
        indices = asarray(indices.astype(np.int32))  # negative entries wrap by a symbolic size: at run time
    index_dtype = _common_index_dtype([indices])
    if indices.dtype != index_dtype or indices.weak_type:
        indices = lax_elementwise.convert_element_type(indices, index_dtype)
    return _normalize_dynamic(indices, n)


# --- diagonals and triangles ----------------------------------------------------------

def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset`` diagonal of the ``axis1``/``axis2`` planes, as the last axis (numpy's layout)."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal needs an array of rank at least 2, got shape {a.shape}")
    axis1, axis2 = canonical_axis(axis1, a.ndim), canonical_axis(axis2, a.ndim)
    if axis1 == axis2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = numpy_shapes.moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = a.shape[-2], a.shape[-1]
    offset = int(offset)
    min_dim, max_dim = shape_poly.min_dim, shape_poly.max_dim
    length = max_dim(0, min_dim(rows, cols - offset) if offset >= 0 else min_dim(rows + offset, cols))
    if shape_poly.definitely_equal(length, 0):
        from toolkit.numpy.creation import zeros
        return zeros(tuple(a.shape[:-2]) + (0,), a.dtype)
    if shape_poly.is_symbolic_dim(length):
        positions = lax_structural.iota(np.int32, length)
        r = ufuncs.add(positions, np.int32(-offset)) if offset < 0 else positions
        c = ufuncs.add(positions, np.int32(offset)) if offset > 0 else positions
        return getitem(a, (Ellipsis, r, c))
    r = np.arange(length) + max(-offset, 0)
    c = np.arange(length) + max(offset, 0)
    return getitem(a, (Ellipsis, r, c))


def diag(v: Any, k: int = 0) -> Any:
    """1-D input: a 2-D array with ``v`` on diagonal ``k``; 2-D input: its ``k`` diagonal."""
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag needs a 1-D or 2-D array, got shape {v.shape}")
    n = v.shape[0] + abs(int(k))
    rows = lax_structural.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax_structural.broadcasted_iota(dtypes.int32, (n, n), 1)
    on_diagonal = lax_elementwise.eq(lax_elementwise.sub(cols, rows), broadcast_to(np.asarray(k, np.int32), (n, n)))
    # Row i of the diagonal holds v[i] (k >= 0) or v[i + k]; pad v to n so both cases index it by row or column.
    source = lax_structural.pad(v, np.zeros((), v.dtype), [(0, abs(int(k)), 0)])
    values = lax_structural.broadcast_in_dim(source, (n, n), (0 if k >= 0 else 1,))
    return lax_elementwise.select(on_diagonal, values, broadcast_to(np.zeros((), v.dtype), (n, n)))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Any:
    """Sum along a diagonal (see ``diagonal``)."""
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _triangle(m: Any, k: int, lower: bool) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'} needs an array of rank at least 2, got shape {m.shape}")
    rows, cols = m.shape[-2], m.shape[-1]
    r = lax_structural.broadcasted_iota(dtypes.int32, (rows, cols), 0)
    c = lax_structural.broadcasted_iota(dtypes.int32, (rows, cols), 1)
    offset = broadcast_to(np.asarray(k, np.int32), (rows, cols))
    keep = lax_elementwise.le(c, lax_elementwise.add(r, offset)) if lower else lax_elementwise.ge(c, lax_elementwise.add(r, offset))
    keep = broadcast_to(keep, m.shape)
    return lax_elementwise.select(keep, m, broadcast_to(np.zeros((), m.dtype), m.shape))


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the elements above diagonal ``k`` (of the last two axes) zeroed."""
    return _triangle(m, k, True)


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the elements below diagonal ``k`` (of the last two axes) zeroed."""
    return _triangle(m, k, False)


# --- counting and closeness -----------------------------------------------------------

def count_nonzero(a: Any, axis: _Axis = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements (default integer dtype)."""
    a = asarray(a)
    nonzero = ufuncs.not_equal(a, np.zeros((), a.dtype)) if a.dtype != dtypes.bool_ else a
    return reductions.sum(nonzero, axis=axis, dtype=dtypes.DEFAULT_INT, keepdims=keepdims)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """``|a - b| <= atol + rtol * |b|`` elementwise; infinities equal only themselves."""
    dtype, weak = result_dtype(a, b)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.DEFAULT_FLOAT
    a, b = asarray(convert(a, dtype, weak)), asarray(convert(b, dtype, weak))
    if not dtypes.is_inexact(a.dtype):
        return ufuncs.equal(a, b)
    diff_ = ufuncs.absolute(ufuncs.subtract(a, b))
    tol = ufuncs.add(atol, ufuncs.multiply(rtol, ufuncs.absolute(b)))
    finite_close = ufuncs.less_equal(diff_, tol)
    both_inf = ufuncs.logical_and(ufuncs.isinf(a), ufuncs.isinf(b))
    same = ufuncs.equal(a, b)
    out = ufuncs.where(both_inf, same, ufuncs.logical_and(finite_close, ufuncs.logical_and(ufuncs.isfinite(a), ufuncs.isfinite(b))))
    if equal_nan:
        out = ufuncs.logical_or(out, ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b)))
    return out


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Whether ``isclose`` holds everywhere (a bool array of shape ())."""
    return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and elements (a Python ``False`` when the shapes differ)."""
    a1, a2 = asarray(a1), asarray(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return asarray(False)
    eq = ufuncs.equal(a1, a2)
    if equal_nan and dtypes.is_inexact(a1.dtype):
        eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
    return reductions.all(eq)


# --- grids and stacking ----------------------------------------------------------------

def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Any]:
    """Coordinate arrays from 1-D vectors (``indexing="xy"``: the first two outputs' axes are swapped)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [numpy_shapes.ravel(asarray(x)) for x in xi]
    n = len(arrays)
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        if sparse:
            shape = [1] * n
            shape[pos] = a.shape[0]
            out.append(numpy_shapes.reshape(a, tuple(shape)))
        else:
            out.append(lax_structural.broadcast_in_dim(a, tuple(sizes), (pos,)))
    return out


def dstack(tup: Sequence[Any]) -> Any:
    """Stack along the third axis (1-D and 2-D inputs are promoted to 3-D first)."""
    def to3(a):
        a = asarray(a)
        if a.ndim == 0:
            return numpy_shapes.reshape(a, (1, 1, 1))
        if a.ndim == 1:
            return numpy_shapes.reshape(a, (1, a.shape[0], 1))
        if a.ndim == 2:
            return numpy_shapes.reshape(a, tuple(a.shape) + (1,))
        return a
    return numpy_shapes.concatenate([to3(a) for a in tup], 2)


def column_stack(tup: Sequence[Any]) -> Any:
    """Stack 1-D arrays as columns (2-D arrays are joined as they are)."""
    cols = []
    for a in tup:
        a = asarray(a)
        cols.append(numpy_shapes.reshape(a, (a.shape[0], 1)) if a.ndim == 1 else a)
    return numpy_shapes.concatenate(cols, 1)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` appended (flattened when ``axis`` is None)."""
    if axis is None:
        return numpy_shapes.concatenate([numpy_shapes.ravel(asarray(arr)), numpy_shapes.ravel(asarray(values))], 0)
    return numpy_shapes.concatenate([arr, values], axis)


# --- more sorting-based helpers -------------------------------------------------------------

def lexsort(keys: Sequence[Any], axis: int = -1) -> Any:
    """Indices sorting by several keys, the *last* key primary (numpy's convention); stable.

    Example::

        lexsort((first_names, surnames))   # by surname, then first name
    """
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("lexsort needs at least one key")
    shape = tuple(keys[0].shape)
    for i, k in enumerate(keys):
        if tuple(k.shape) != shape:
            raise ValueError(f"lexsort: all keys need the same shape; key 0 has {shape}, key {i} has {tuple(k.shape)}")
    if not shape:
        raise ValueError("lexsort needs keys of rank at least 1")
    axis = canonical_axis(axis, len(shape))
    iota = lax_structural.broadcasted_iota(dtypes.int32, shape, axis)
    outs = lax_sorting.sort(tuple(reversed(keys)) + (iota,), axis, is_stable=True, num_keys=len(keys))
    return outs[-1]


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """Insertion points of ``v`` into the sorted 1-D ``a`` (NaNs count as largest, as in numpy's sort).

    Lowered as one comparison of every ``v`` with every ``a`` and a count (O(len(a) * v.size)).
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a = asarray(a)
    if a.ndim != 1:
        raise ValueError(f"searchsorted needs a 1-D sorted array, got shape {tuple(a.shape)}")
    if sorter is not None:
        a = take(a, sorter, mode="promise_in_bounds")
    dtype, weak = result_dtype(a, v)
    a, v = asarray(convert(a, dtype)), asarray(convert(v, dtype, weak))
    av = lax_structural.broadcast_in_dim(a, tuple(v.shape) + (a.shape[0],), (v.ndim,))
    vv = lax_structural.broadcast_in_dim(v, tuple(v.shape) + (a.shape[0],), tuple(range(v.ndim)))
    if side == "left":
        before = _sort_less(av, vv)                    # a[i] < v
    else:
        before = lax_elementwise.bitwise_not(_sort_less(vv, av))     # a[i] <= v  <=>  not (v < a[i])
    return reductions.sum(before, axis=-1, dtype=dtypes.int32)


def _sort_less(x: Any, y: Any) -> Any:
    """``x < y`` in sort order: NaN is largest."""
    if not dtypes.is_inexact(x.dtype):
        return lax_elementwise.lt(x, y)
    x_nan, y_nan = lax_elementwise.ne(x, x), lax_elementwise.ne(y, y)
    return lax_elementwise.bitwise_or(lax_elementwise.lt(x, y), lax_elementwise.bitwise_and(y_nan, lax_elementwise.bitwise_not(x_nan)))


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays: ``x[ix_(rows, cols)]`` selects the cross product."""
    out = []
    n = len(args)
    for i, a in enumerate(args):
        a = a if is_array(a) else np.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: argument {i} must be 1-D, got shape {tuple(a.shape)}")
        if a.dtype == np.bool_:
            if is_array(a) and not hasattr(a, "_impl"):
                raise IndexError("ix_: a boolean argument must be concrete")
            a = np.nonzero(np.asarray(a))[0]
        shape = [1] * n
        shape[i] = a.shape[0]
        out.append(a.reshape(shape) if isinstance(a, np.ndarray) else numpy_shapes.reshape(a, tuple(shape)))
    return tuple(out)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """Flat indices to coordinate arrays for ``shape`` (out-of-range flat indices are clamped, as in JAX)."""
    shape = tuple(d if shape_poly.is_symbolic_dim(d) else int(d) for d in shape)
    indices = asarray(indices)
    if not dtypes.is_integer(indices.dtype):
        raise TypeError(f"unravel_index: indices must be integers, got {indices.dtype.name}")
    total = shape_poly.dim_size_product(shape)
    flat = ufuncs.clip(indices, -total, total - 1)
    flat = ufuncs.where(ufuncs.less(flat, 0), ufuncs.add(flat, total), flat)
    coords = []
    for d in reversed(shape):
        coords.append(ufuncs.remainder(flat, d))
        flat = ufuncs.floor_divide(flat, d)
    return tuple(reversed(coords))


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise") -> Any:
    """Coordinate arrays to flat indices (``mode``: ``"clip"`` or ``"wrap"``; ``"raise"`` behaves like clip)."""
    dims = tuple(d if shape_poly.is_symbolic_dim(d) else int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"ravel_multi_index: unknown mode {mode!r}")
    flat = None
    for idx, d in zip(multi_index, dims):
        idx = asarray(idx)
        idx = ufuncs.remainder(idx, d) if mode == "wrap" else ufuncs.clip(idx, 0, d - 1)
        flat = idx if flat is None else ufuncs.add(ufuncs.multiply(flat, d), idx)
    return flat
