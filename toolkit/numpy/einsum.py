"""``einsum``: Einstein summation lowered to ``dot_general`` (operand pairs
contracted greedily), reductions, diagonals and transposes; ``out_sharding``
types the result on Explicit mesh axes. Example::

    tnp.einsum("bij,bjk->bik", a, b)
    tnp.einsum("ii", m)                    # trace
"""

from __future__ import annotations

import contextlib
import string
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes, sharding_types
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.lax import linalg as lax_linalg
from toolkit.lax import reductions as lax_reductions
from toolkit.numpy._core import asarray, broadcast_to, check_arraylike, convert, result_dtype
from toolkit.numpy.diagonals import diagonal
from toolkit.numpy.shapes import transpose


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


def einsum(subscripts: str, *operands: Any, out: None = None, optimize: Any = "auto", precision: Any = None,
           preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Einstein summation, lowered to ``dot_general`` products, reductions and transposes, in JAX's order.

    Operands are contracted pair by pair in the order ``optimize`` asks of
    ``opt_einsum.contract_path`` (``"auto"``: optimal up to four operands, else greedy; ``"greedy"``,
    ``"optimal"``, ``True``, ``False`` — left to right —, or a path), with JAX's choice of left and right operand
    and of each intermediate's axis order, so results are JAX's bit for bit; without ``opt_einsum`` (it comes
    with jax) numpy's port of it chooses, and with symbolic shapes the pair with the smallest result goes first.
    An eager call is one compiled program, as JAX's.

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
    with the Explicit axes Auto and the result resharded. ``out``: JAX accepts only None (``NotImplementedError``).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if isinstance(subscripts, str):
        check_arraylike("einsum", *operands)  # positions among the operands, as JAX's
    if not operands:
        raise ValueError("einsum needs at least one operand")
    dtype, weak = result_dtype(*operands)
    arrays = [asarray(convert(o, dtype, weak)) for o in operands]
    labels_list, output = _parse_einsum(subscripts, [tuple(a.shape) for a in arrays])  # (a malformed spec: here)
    path = _contraction_path(subscripts, arrays, output, optimize)
    if out_sharding is None:
        # One program when called eagerly, as JAX's (jit of its _einsum with the contractions static): the products
        # run as XLA compiles them together, bit for bit JAX's.
        return _einsum_whole(*arrays, subscripts=subscripts, preferred_element_type=preferred_element_type, path=path)
    sizes = _label_sizes(arrays, labels_list)
    return sharding_types.with_out_sharding(_einsum, tuple(arrays), {"subscripts": subscripts,
                                                      "preferred_element_type": preferred_element_type,
                                                      "path": path},
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


def _contraction_path(subscripts: str, arrays: Sequence[Any], output: Sequence[str],
                      optimize: Any) -> tuple[tuple[tuple[int, ...], str], ...] | None:
    """JAX's contractions for ``optimize``: ``((positions, result labels), ...)``, as ``jnp.einsum`` takes them
    from ``opt_einsum.contract_path(..., einsum_call=True)`` (numpy's port of it without opt_einsum); None for
    one operand or symbolic shapes (the greedy order then). ``output``: the parsed output labels."""
    if len(arrays) < 2:
        return None
    if len(arrays) == 2:
        # opt_einsum's one contraction (no search to make): the two operands popped last first, into the output.
        return (((1, 0), "".join(output)),)
    if not all(isinstance(d, int) for a in arrays for d in a.shape):
        return None
    _, contractions = _contraction_list(subscripts, [np.shape(a) for a in arrays],
                                        "auto" if optimize is None else optimize)
    steps = []
    for step in contractions:
        formula = next(part for part in step[1:] if isinstance(part, str) and "->" in part)
        steps.append((tuple(int(i) for i in step[0]), formula.split("->")[1]))
    return tuple(steps)


def _contraction_list(subscripts: str, shapes: Sequence[tuple[int, ...]], optimize: Any) -> tuple[Any, Any]:
    shaped = [np.broadcast_to(np.zeros((), np.float32), shape) for shape in shapes]
    optimize = _path_request(optimize, len(shapes))
    try:
        import opt_einsum  # noqa: PLC0415  (optional: jax's dependency, not toolkit's)
    except ImportError:
        if optimize == "auto":  # opt_einsum's "auto" for the sizes einsum meets; numpy has no "auto"
            optimize = "optimal" if len(shapes) <= 4 else "greedy"
        return np.einsum_path(subscripts, *shaped, einsum_call=True,  # type: ignore[arg-type]  # (private)
                              optimize=["einsum_path", *optimize] if isinstance(optimize, list) else optimize)
    return opt_einsum.contract_path(subscripts, *shaped, optimize=optimize, einsum_call=True, use_blas=True)


def _path_request(optimize: Any, count: int) -> Any:
    """``optimize`` as JAX reads it: True is "optimal", False the operands left to right (JAX's Unoptimized)."""
    if optimize is True:
        return "optimal"
    if optimize is False:
        return [(0, 1)] * (count - 1)
    return optimize


def _einsum(*arrays: Any, subscripts: str, preferred_element_type: Any, out_type: Any = None,
            path: tuple[tuple[tuple[int, ...], str], ...] | None = None) -> Any:
    """:func:`einsum` of operands of one dtype; ``out_type`` (a type sharding) types its last product or reduction."""
    labels_list, output = _parse_einsum(subscripts, [tuple(a.shape) for a in arrays])
    pref = dtypes.canonicalize_dtype(preferred_element_type) if preferred_element_type is not None else None
    sizes = _label_sizes(arrays, labels_list)

    def typed_as_output(primitive: str, labels: list[str]) -> Any:
        """While the result with ``labels`` is made: typed as the output's dimensions (before the final transpose)."""
        if out_type is None or sorted(labels) != sorted(output):
            return contextlib.nullcontext()
        spec = tuple(out_type.spec) + (None,) * (len(output) - len(out_type.spec))
        assert sharding_types.hooks.make is not None  # installed by toolkit.shard.explicit, which made out_type
        return sharding_types.out_sharding_override(
            primitive, sharding_types.hooks.make(out_type.mesh, tuple(spec[output.index(lab)] for lab in labels)))

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

    steps = list(path) if path is not None else []
    while len(ops) > 1:
        wanted: list[str] | None = None
        while steps and len(steps[0][0]) == 1:
            # A one-operand step: its reductions were made above, but JAX's pop and append moves the operand last.
            (k,), _ = steps.pop(0)
            ops.append(ops.pop(k))
        if steps and len(steps[0][0]) != 2:
            steps = []  # (a step of three or more operands, which opt_einsum's paths do not make: greedy from here)
        if steps:
            # JAX's contraction: it pops the step's first position, then its second from the shortened list, and
            # contracts the first as the left operand (opt_einsum lists them in descending order).
            (i, j), result = steps.pop(0)
            j = j if j < i else j + 1
            known = {lab for _, labels in ops for lab in labels}
            wanted = list(result) if all(lab in known for lab in result) else None  # ("..." has other letters)
        else:  # Greedy pairwise contraction: always the pair with the smallest result (opt_einsum's "greedy" idea).
            pairs = [(i, j) for i in range(len(ops)) for j in range(i + 1, len(ops))]
            i, j = min(pairs, key=lambda p: cost(*p)) if len(ops) > 2 else (0, 1)
        (lhs, lhs_labels), (rhs, rhs_labels) = ops[i], ops[j]
        shared, batch, _ = result_labels(i, j)
        if wanted is not None:
            batch = [lab for lab in wanted if lab in batch]
        contract = sorted(lab for lab in shared if lab not in batch)  # JAX's order of contracted dimensions
        lhs_free = [lab for lab in lhs_labels if lab not in shared]
        rhs_free = [lab for lab in rhs_labels if lab not in shared]
        if wanted is not None and batch + rhs_free + lhs_free == wanted:
            # As JAX: the right operand first when that gives the result's order without a transpose.
            (lhs, lhs_labels, lhs_free), (rhs, rhs_labels, rhs_free) = (rhs, rhs_labels, rhs_free), \
                (lhs, lhs_labels, lhs_free)
        dims = ((tuple(lhs_labels.index(c) for c in contract), tuple(rhs_labels.index(c) for c in contract)),
                (tuple(lhs_labels.index(b) for b in batch), tuple(rhs_labels.index(b) for b in batch)))
        labels = batch + lhs_free + rhs_free
        with typed_as_output("dot_general", labels) if len(ops) == 2 else contextlib.nullcontext():
            out = lax_linalg.dot_general(lhs, rhs, dims, preferred_element_type=pref if len(ops) == 2 else None)
        if wanted is not None and labels != wanted and len(ops) > 2:  # JAX puts each result in its step's order
            out, labels = transpose(out, [labels.index(lab) for lab in wanted]), wanted
        ops = [op for k, op in enumerate(ops) if k not in (i, j)] + [(out, labels)]
    result, res_labels = ops[0]
    if pref is not None and (result.dtype != pref or result.weak_type):
        # JAX's: a preferred_element_type makes the result strongly typed even when the operands were weak.
        result = lax_elementwise.convert_element_type(result, pref)
    perm = [res_labels.index(lab) for lab in output]
    return transpose(result, perm) if perm != list(range(len(perm))) else result


_einsum_whole = compiled_whole(static_argnames=("subscripts", "preferred_element_type", "path"))(_einsum)


def _reduce_sum(x: Any, axes: Sequence[int]) -> Any:
    if dtypes.is_bool(x.dtype):
        return lax_reductions.reduce_or(x, axes)
    return lax_reductions.reduce_sum(x, axes)


def einsum_path(subscripts: str, /, *operands: Any, optimize: bool | str | list[tuple[int, ...]] = "auto"
                ) -> tuple[list[tuple[int, ...]], Any]:
    """The order in which to contract ``operands`` for ``subscripts`` and a description of its cost, as
    ``jnp.einsum_path``: ``(path, info)`` with ``path`` a list of position tuples.

    JAX's is ``opt_einsum.contract_path``; when ``opt_einsum`` is installed (it comes with jax) this is
    that call, so ``info`` is its ``PathInfo``. Without it numpy's ``einsum_path`` computes the path
    (``"greedy"``/``"optimal"``) and ``info`` is numpy's report text. Only the operands' shapes are used.
    """
    shaped = [np.broadcast_to(np.zeros((), np.float32), np.shape(o)) for o in operands]
    try:
        import opt_einsum  # noqa: PLC0415  (optional: jax's dependency, not toolkit's)
    except ImportError:
        opt_einsum = None
    if opt_einsum is not None:
        return opt_einsum.contract_path(subscripts, *shaped, optimize=_path_request(optimize, len(operands)))
    if optimize == "auto" or optimize is True:
        optimize = "optimal" if len(operands) <= 4 else "greedy"
    elif optimize is False:
        optimize = [(0, 1)] * (len(operands) - 1)
    path, info = np.einsum_path(subscripts, *shaped,
                                optimize=["einsum_path", *optimize] if isinstance(optimize, list) else optimize)
    return [tuple(p) for p in path[1:]], info
