"""StableHLO for ``toolkit.lax.decompositions``: the ``lapack_*_ffi`` custom calls JAX 0.10.2 emits on CPU.

Each call is built as JAX's ``_linalg_ffi_lowering`` builds it: ``api_version = 1`` with the
typed-FFI attributes in ``mhlo.backend_config``, column-major layouts for the matrices,
``mhlo.frontend_attributes = {num_batch_dims}``, the operand the kernel overwrites aliased to
its result, and (under Shardy) JAX's ``sdy.sharding_rule``. A nonzero LAPACK ``info`` turns
that batch member's results into NaNs, with JAX's broadcast/select sequence. Steps JAX
writes in ``jax.numpy`` terms (QR from geqrf, or geqp3 with pivoting, + orgqr; LU's permutation) are traced from
toolkit functions and inlined here.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.tracing import trace_flat
from toolkit.lax import control_flow, decompositions as dec, elementwise, structural
from toolkit.lax.linalg import dot_general
from toolkit.lowering.registry import register_lowering
from toolkit.lowering.types import dense_constant_attr, tensor_type

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}


def _target(name: str, dtype: np.dtype) -> str:
    """``lapack_<s|d|c|z><name>`` (jaxlib's ``prepare_lapack_call``)."""
    return f"lapack_{_PREFIX[np.dtype(dtype)]}{name}"


def _u8(char: str) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(char))


def _attribute(value: Any) -> ir.Attribute:
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, np.integer):
        width = np.dtype(value.dtype).itemsize * 8
        kind = ir.IntegerType.get_unsigned(width) if np.dtype(value.dtype).kind == "u" else \
            ir.IntegerType.get_signless(width)
        return ir.IntegerAttr.get(kind, int(value))
    raise TypeError(f"unsupported FFI attribute {value!r}")


def _layout_attr(layout: Sequence[int]) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.asarray(layout, np.int64),
                                       type=ir.RankedTensorType.get([len(layout)], ir.IndexType.get()))


def _column_major(ndim: int) -> tuple[int, ...]:
    return (ndim - 2, ndim - 1) + tuple(range(ndim - 3, -1, -1))


def _row_major(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim - 1, -1, -1))


def _factor_name(i: int) -> str:
    """Shardy's printed factor names: ``i`` to ``z``, then ``z_1``, ``z_2``, ..."""
    return chr(ord("i") + i) if i < 18 else f"z_{i - 17}"


def _sdy_rule(num_batch: int, avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray]) -> ir.Attribute:
    """JAX's ``_build_sdy_sharding_rule``: batch dimensions share factors, the rest get one factor each."""
    sizes: list[int] = []

    def factor(size: int) -> str:
        sizes.append(int(size))
        return _factor_name(len(sizes) - 1)

    batch = [factor(d) for d in (avals_in[0].shape[:num_batch] if num_batch else ())]

    def spec(aval: ShapedArray) -> str:
        names = [batch[i] if i < num_batch else factor(d) for i, d in enumerate(aval.shape)]
        return "[" + ", ".join(names) + "]"

    lhs = ", ".join(spec(a) for a in avals_in)
    rhs = ", ".join(spec(a) for a in avals_out)
    factors = ", ".join(f"{_factor_name(i)}={n}" for i, n in enumerate(sizes))
    return ir.Attribute.parse(f"#sdy.op_sharding_rule<({lhs})->({rhs}) {{{factors}}}, custom>")


def ffi_call(ctx: Any, target: str, operands: Sequence[ir.Value], avals_in: Sequence[ShapedArray],
             avals_out: Sequence[ShapedArray], attributes: dict[str, Any] | None = None, *,
             aliases: dict[int, int] | None = None, column_major: bool = True,
             num_non_batch_dims: int = 2) -> list[ir.Value]:
    """A ``stablehlo.custom_call`` of the typed-FFI kernel ``target``, attributes laid out as JAX lays them out."""
    max_ndim = max(len(a.shape) for a in avals_in)
    layout = lambda a: (_column_major(len(a.shape)) if column_major and len(a.shape) == max_ndim  # noqa: E731
                        else _row_major(len(a.shape)))
    num_batch = max_ndim - num_non_batch_dims
    result_types = [tensor_type(a) for a in avals_out]
    attrs: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(""),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": ir.ArrayAttr.get([_layout_attr(layout(a)) for a in avals_in]),
        "result_layouts": ir.ArrayAttr.get([_layout_attr(layout(a)) for a in avals_out]),
    }
    if aliases:
        attrs["output_operand_aliases"] = ir.ArrayAttr.get([
            stablehlo.OutputOperandAlias.get(output_tuple_indices=[out] if len(avals_out) > 1 else [],
                                             operand_index=arg, operand_tuple_indices=[])
            for arg, out in aliases.items()])
    op = stablehlo.CustomCallOp.build_generic(results=result_types, operands=list(operands), attributes=attrs)
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {name: _attribute(v) for name, v in (attributes or {}).items()})
    op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"num_batch_dims": ir.StringAttr.get(str(num_batch))})
    if getattr(ctx.module_context, "partitioner", "gspmd") == "shardy":
        op.operation.attributes["sdy.sharding_rule"] = _sdy_rule(num_batch, avals_in, avals_out)
    return list(op.results)


def _full(value: Any, aval: ShapedArray) -> ir.Value:
    """JAX's ``full_like_aval``: a scalar constant broadcast to ``aval``."""
    scalar = stablehlo.ConstantOp(dense_constant_attr(np.asarray(value, aval.dtype), ShapedArray((), aval.dtype)))
    return stablehlo.BroadcastInDimOp(tensor_type(aval), scalar.result, []).result


def _info_ok(info: ir.Value, batch: tuple, direction: str = "EQ") -> ir.Value:
    zeros = _full(0, ShapedArray(batch, np.int32))
    return stablehlo.CompareOp(info, zeros, stablehlo.ComparisonDirectionAttr.get(direction),
                               compare_type=stablehlo.ComparisonTypeAttr.get("SIGNED")).result


def _nan_unless_ok(ok: ir.Value, batch: tuple, x: ir.Value, aval: ShapedArray) -> ir.Value:
    """JAX's ``_replace_not_ok_with_nan``: NaN where a batch member's factorization failed."""
    nd = len(aval.shape)
    select_aval = ShapedArray(batch + (1,) * (nd - len(batch)), np.bool_)
    which = stablehlo.BroadcastInDimOp(tensor_type(select_aval), ok, list(range(len(batch)))).result
    nan = np.nan + np.nan * 1j if dtypes.is_complex(aval.dtype) else np.nan
    nans = _full(nan, aval)
    which = stablehlo.BroadcastInDimOp(tensor_type(aval.update(dtype=np.bool_)), which, list(range(nd))).result
    return stablehlo.SelectOp(which, x, nans).result


def lower_traced(ctx: Any, fn: Callable[..., Sequence[Any]], operands: Sequence[ir.Value],
                 avals: Sequence[ShapedArray]) -> list[ir.Value]:
    """Trace ``fn`` (toolkit code) over ``avals`` and emit its ops here (JAX's ``mlir.lower_fun``)."""
    program, captured = trace_flat(lambda *xs: list(fn(*xs)), list(avals))
    assert not captured, "a lowering helper captured an outer tracer"
    return ctx.lower_program(program, list(operands), region="")


# --- rules ------------------------------------------------------------------------


@register_lowering(dec.cholesky_p, platforms=("cpu",))
def _cholesky(ctx, x):
    (aval,), (out_aval,) = ctx.avals_in, ctx.avals_out
    batch = tuple(aval.shape[:-2])
    info_aval = ShapedArray(batch, np.int32)
    result, info = ffi_call(ctx, _target("potrf_ffi", aval.dtype), [x], [aval], [aval, info_aval],
                            {"uplo": _u8("L")}, aliases={0: 0})
    return _nan_unless_ok(_info_ok(info, batch), batch, result, out_aval)


@register_lowering(dec.eigh_p, platforms=("cpu",))
def _eigh(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (aval,) = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    batch = tuple(aval.shape[:-2])
    prefix = "he" if dtypes.is_complex(aval.dtype) else "sy"
    info_aval = ShapedArray(batch, np.int32)
    v, w, info = ffi_call(ctx, _target(f"{prefix}evd_ffi", aval.dtype), [x], [aval], [v_aval, w_aval, info_aval],
                          {"mode": _u8("V"), "uplo": _u8("L" if lower else "U")}, aliases={0: 0})
    ok = _info_ok(info, batch)
    return [_nan_unless_ok(ok, batch, v, v_aval), _nan_unless_ok(ok, batch, w, w_aval)]


@register_lowering(dec.eig_p, platforms=("cpu",))
def _eig(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs, implementation):
    (aval,) = ctx.avals_in
    batch = tuple(aval.shape[:-2])
    real = not dtypes.is_complex(aval.dtype)
    eigvals_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    eigvecs_aval = ShapedArray(aval.shape, dec.complex_dtype(aval.dtype))
    info_aval = ShapedArray(batch, np.int32)
    avals_out = [eigvals_aval, eigvecs_aval, eigvecs_aval, info_aval]
    if real:
        avals_out = [eigvals_aval, *avals_out]
    mode = lambda on: _u8("V" if on else "N")  # noqa: E731  (lapack.eig.ComputationMode: 'V' or 'N')
    *w, vl, vr, info = ffi_call(ctx, _target("geev_ffi", aval.dtype), [x], [aval], avals_out,
                                {"compute_left": mode(compute_left_eigenvectors),
                                 "compute_right": mode(compute_right_eigenvectors)})
    w_value = stablehlo.ComplexOp(w[0], w[1]).result if real else w[0]
    ok = _info_ok(info, batch)
    outs = [_nan_unless_ok(ok, batch, w_value, ctx.avals_out[0])]
    if compute_left_eigenvectors:
        outs.append(_nan_unless_ok(ok, batch, vl, ctx.avals_out[len(outs)]))
    if compute_right_eigenvectors:
        outs.append(_nan_unless_ok(ok, batch, vr, ctx.avals_out[len(outs)]))
    return outs


def _empty_svd(aval, *, full_matrices, compute_uv):
    batch, (m, n) = tuple(aval.shape[:-2]), aval.shape[-2:]

    def fn(a):
        s = structural.full(batch + (0,), 0, dec.real_dtype(aval.dtype))
        if not compute_uv:
            return [s]
        if full_matrices:
            size = max(m, n)
            u = structural.broadcast_in_dim(np.eye(size, dtype=aval.dtype), batch + (size, size),
                                            (len(batch), len(batch) + 1))
        else:
            u = structural.full(batch + (m, n), 0, aval.dtype)
        v = structural.full(batch + (0, 0), 0, aval.dtype)
        if m < n:
            u, v = v, u
        return [s, u, v]
    return fn


@register_lowering(dec.svd_p, platforms=("cpu",))
def _svd(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (aval,) = ctx.avals_in
    m, n = aval.shape[-2:]
    batch = tuple(aval.shape[:-2])
    if m == 0 or n == 0:
        return lower_traced(ctx, _empty_svd(aval, full_matrices=full_matrices, compute_uv=compute_uv), [x], [aval])
    name = "gesvd_ffi" if algorithm == dec.SvdAlgorithm.QR else "gesdd_ffi"
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    s_aval = ctx.avals_out[0]
    if compute_uv:
        u_aval, vt_aval = ctx.avals_out[1:]
    else:
        k = min(m, n)
        u_aval = ShapedArray(batch + (m, m if full_matrices else k), aval.dtype)
        vt_aval = ShapedArray(batch + (n if full_matrices else k, n), aval.dtype)
    info_aval = ShapedArray(batch, np.int32)
    _, s, u, vt, info = ffi_call(ctx, _target(name, aval.dtype), [x], [aval],
                                 [aval, s_aval, u_aval, vt_aval, info_aval], {"mode": _u8(mode)}, aliases={0: 0})
    ok = _info_ok(info, batch)
    outs = [_nan_unless_ok(ok, batch, s, s_aval)]
    if compute_uv:
        outs += [_nan_unless_ok(ok, batch, u, u_aval), _nan_unless_ok(ok, batch, vt, vt_aval)]
    return outs


@register_lowering(dec.geqrf_p, platforms=("cpu",))
def _geqrf(ctx, x):
    (aval,) = ctx.avals_in
    return ffi_call(ctx, _target("geqrf_ffi", aval.dtype), [x], [aval], list(ctx.avals_out), aliases={0: 0})


@register_lowering(dec.householder_product_p, platforms=("cpu",))
def _householder_product(ctx, a, taus):
    aval = ctx.avals_in[0]
    prefix = "un" if dtypes.is_complex(aval.dtype) else "or"
    return ffi_call(ctx, _target(f"{prefix}gqr_ffi", aval.dtype), [a, taus], list(ctx.avals_in),
                    list(ctx.avals_out), aliases={0: 0})[0]


def _q_and_r(aval: ShapedArray, full_matrices: bool) -> Callable[[Any, Any], list[Any]]:
    """The tail of JAX's ``_qr_lowering``: ``(q, r)`` from geqrf's (or geqp3's) reflectors ``(r, taus)``,
    orgqr on the reflectors padded (full ``q`` of a tall matrix) or cut (wide), ``r`` the upper triangle."""
    *batch, m, n = aval.shape
    nb = len(batch)

    def fn(r, taus):
        if m < n:
            q = dec.householder_product(structural.slice(r, (0,) * (nb + 2), (*batch, m, m)), taus)
        elif full_matrices:
            zero = structural.full((), 0, aval.dtype)
            q = dec.householder_product(structural.pad(r, zero, [(0, 0, 0)] * (nb + 1) + [(0, m - n, 0)]), taus)
        else:
            q = dec.householder_product(r, taus)
            r = structural.slice(r, (0,) * (nb + 2), (*batch, n, n))
        return [q, dec.triu(r)]
    return fn


def _empty_qr(aval: ShapedArray, full_matrices: bool) -> Callable[[Any], list[Any]]:
    """JAX's ``(q, r)`` of matrices with no rows or no columns: ``q`` the identity's first columns, ``r`` zeros."""
    *batch, m, n = aval.shape
    nb = len(batch)
    k = m if full_matrices else min(m, n)

    def fn(a):
        q = structural.broadcast_in_dim(np.eye(m, k, dtype=aval.dtype), (*batch, m, k), (nb, nb + 1))
        return [q, structural.full((*batch, k, n), 0, aval.dtype)]
    return fn


def _qr_program(aval: ShapedArray, full_matrices: bool) -> Callable[[Any], list[Any]]:
    """JAX's ``_qr_lowering`` in toolkit terms: geqrf, then orgqr on the (padded or cut) reflectors."""
    m, n = aval.shape[-2:]
    if m == 0 or n == 0:
        return _empty_qr(aval, full_matrices)
    q_and_r = _q_and_r(aval, full_matrices)

    def fn(a):
        return q_and_r(*dec.geqrf(a))
    return fn


@register_lowering(dec.qr_p, platforms=("cpu",))
def _qr(ctx, x, *, pivoting, full_matrices, use_magma):
    (aval,) = ctx.avals_in
    if not pivoting:
        return lower_traced(ctx, _qr_program(aval, full_matrices), [x], ctx.avals_in)
    # Column pivoting: LAPACK's geqp3 in place of geqrf, as JAX's _qr_lowering (use_magma is GPU-only).
    *batch, m, n = aval.shape
    p_aval = ctx.avals_out[2]
    if m == 0 or n == 0:
        return [*lower_traced(ctx, _empty_qr(aval, full_matrices), [x], ctx.avals_in), _full(0, p_aval)]
    # jpvt all zeros: every column is free to move (a nonzero entry would pin its column to the front).
    jpvt = _full(0, p_aval)
    taus_aval = ShapedArray((*batch, min(m, n)), aval.dtype)
    r, p, taus = ffi_call(ctx, _target("geqp3_ffi", aval.dtype), [x, jpvt], [aval, p_aval],
                          [aval, p_aval, taus_aval], aliases={0: 0, 1: 1})
    p = stablehlo.SubtractOp(p, _full(1, p_aval)).result  # LAPACK's 1-based column indices, made 0-based
    return [*lower_traced(ctx, _q_and_r(aval, full_matrices), [r, taus], [aval, taus_aval]), p]


def permutation_from_pivots(swaps: Any, permutation_size: int) -> Any:
    """The permutation the row swaps ``swaps`` (``[..., k]`` int32) apply to ``iota(permutation_size)``.

    One ``fori_loop`` over the swaps, as JAX's generic lowering; each step exchanges entries
    ``i`` and ``swaps[..., i]`` of every batch member with elementwise selects (batch-friendly).
    """
    *batch, k = aval_of(swaps).shape
    m = permutation_size
    out_shape = (*batch, m)
    permutation = structural.broadcasted_iota(np.int32, out_shape, len(batch))
    if m == 0 or k == 0:
        return permutation
    positions = structural.broadcasted_iota(np.int32, out_shape, len(batch))

    def body(i, perm):
        i = elementwise.convert_element_type(i, np.int32)  # the loop index is 64-bit under x64
        j = structural.dynamic_slice(swaps, [structural.full((), 0, np.int32)] * len(batch) + [i],
                                     (*batch, 1))
        j_full = structural.broadcast_in_dim(j, out_shape, tuple(range(len(batch) + 1)))
        i_full = structural.broadcast_in_dim(i, out_shape, ())
        x = structural.broadcast_in_dim(
            structural.dynamic_slice(perm, [structural.full((), 0, np.int32)] * len(batch) + [i], (*batch, 1)),
            out_shape, tuple(range(len(batch) + 1)))
        # y = perm[..., j]: the entry where positions == j, summed out (one match per row).
        at_j = elementwise.eq(positions, j_full)
        y = _row_pick(perm, at_j, out_shape)
        perm = elementwise.select(elementwise.eq(positions, i_full), y, perm)
        return elementwise.select(at_j, x, perm)
    return control_flow.fori_loop(np.int32(0), np.int32(k), body, permutation)


def _row_pick(values: Any, mask: Any, shape: tuple) -> Any:
    from toolkit.lax import reductions  # function-level: only this helper reduces, keep the rule module's imports small
    picked = elementwise.select(mask, values, structural.full(shape, 0, np.int32))
    total = reductions.reduce_sum(picked, (len(shape) - 1,))
    return structural.broadcast_in_dim(total, shape, tuple(range(len(shape) - 1)))


@register_lowering(dec.lu_pivots_to_permutation_p)
def _lu_pivots_to_permutation(ctx, pivots, *, permutation_size):
    return lower_traced(ctx, lambda p: [permutation_from_pivots(p, permutation_size)], [pivots], ctx.avals_in)[0]


@register_lowering(dec.lu_p, platforms=("cpu",))
def _lu(ctx, x):
    (aval,) = ctx.avals_in
    out_aval, pivot_aval, perm_aval = ctx.avals_out
    batch = tuple(aval.shape[:-2])
    m = aval.shape[-2]
    info_aval = ShapedArray(batch, np.int32)
    lu, pivot, info = ffi_call(ctx, _target("getrf_ffi", aval.dtype), [x], [aval],
                               [out_aval, pivot_aval, info_aval], aliases={0: 0})
    pivot = stablehlo.SubtractOp(pivot, _full(1, pivot_aval)).result  # LAPACK's pivots are 1-based
    ok = _info_ok(info, batch, "GE")
    lu = _nan_unless_ok(ok, batch, lu, out_aval)
    (perm,) = lower_traced(ctx, lambda p: [permutation_from_pivots(p, m)], [pivot], [pivot_aval])
    return [lu, pivot, perm]


@register_lowering(dec.triangular_solve_p, platforms=("cpu",))
def _triangular_solve(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a_aval, b_aval = ctx.avals_in
    if a_aval.dtype not in dec.LAPACK_DTYPES:  # float16/bfloat16: XLA's own, as JAX lowers them (real: no conjugate)
        transpose = stablehlo.TransposeAttr.get("TRANSPOSE" if transpose_a else "NO_TRANSPOSE")
        return stablehlo.TriangularSolveOp(a, b, ir.BoolAttr.get(left_side), ir.BoolAttr.get(lower),
                                           ir.BoolAttr.get(unit_diagonal), transpose).result
    if conjugate_a and not transpose_a:
        a = _conj(a)
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    return ffi_call(ctx, _target("trsm_ffi", a_aval.dtype), [a, b], [a_aval, b_aval], list(ctx.avals_out),
                    {"side": _u8("L" if left_side else "R"), "uplo": _u8("L" if lower else "U"),
                     "trans_x": _u8(trans), "diag": _u8("U" if unit_diagonal else "N")}, aliases={1: 0})[0]


def _conj(x: ir.Value) -> ir.Value:
    from jaxlib.mlir.dialects import chlo  # function-level: chlo.conj is needed for complex triangular solves only
    return chlo.ConjOp(x).result


@register_lowering(dec.tridiagonal_p, platforms=("cpu",))
def _tridiagonal(ctx, a, *, lower):
    (aval,) = ctx.avals_in
    batch = tuple(aval.shape[:-2])
    prefix = "he" if dtypes.is_complex(aval.dtype) else "sy"
    info_aval = ShapedArray(batch, np.int32)
    *outs, info = ffi_call(ctx, _target(f"{prefix}trd_ffi", aval.dtype), [a], [aval],
                           [*ctx.avals_out, info_aval], {"uplo": _u8("L" if lower else "U")}, aliases={0: 0})
    ok = _info_ok(info, batch)
    return [_nan_unless_ok(ok, batch, v, av) for v, av in zip(outs, ctx.avals_out)]


@register_lowering(dec.tridiagonal_solve_p, platforms=("cpu",))
def _tridiagonal_solve(ctx, dl, d, du, b, *, perturb_singular):
    b_aval = ctx.avals_in[-1]
    if perturb_singular:
        # jaxlib's own kernel (not a LAPACK routine): it never fails, so no info and no NaN select; the
        # result is a new buffer (no alias), as in JAX's lowering.
        (x,) = ffi_call(ctx, "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], list(ctx.avals_in), [b_aval])
        return x
    batch = tuple(b_aval.shape[:-2])
    info_aval = ShapedArray(batch, np.int32)
    *_, b_out, info = ffi_call(ctx, _target("gtsv_ffi", b_aval.dtype), [dl, d, du, b], list(ctx.avals_in),
                               [*ctx.avals_in, info_aval], aliases={0: 0, 1: 1, 2: 2, 3: 3})
    return _nan_unless_ok(_info_ok(info, batch), batch, b_out, b_aval)


@register_lowering(dec.hessenberg_p, platforms=("cpu",))
def _hessenberg(ctx, a):
    (aval,) = ctx.avals_in
    batch = tuple(aval.shape[:-2])
    n = aval.shape[-1]
    info_aval = ShapedArray(batch, np.int32)
    out, taus, info = ffi_call(ctx, _target("gehrd_ffi", aval.dtype), [a], [aval], [*ctx.avals_out, info_aval],
                               {"low": np.int32(1), "high": np.int32(n)}, aliases={0: 0})
    ok = _info_ok(info, batch)
    return [_nan_unless_ok(ok, batch, out, ctx.avals_out[0]), _nan_unless_ok(ok, batch, taus, ctx.avals_out[1])]


@register_lowering(dec.schur_p, platforms=("cpu",))
def _schur(ctx, x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    (aval,) = ctx.avals_in
    batch = tuple(aval.shape[:-2])
    info_aval = ShapedArray(batch, np.int32)
    eigvals_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    if dtypes.is_complex(aval.dtype):
        avals_out = [aval, aval, eigvals_aval, info_aval, info_aval]
    else:
        avals_out = [aval, aval, eigvals_aval, eigvals_aval, info_aval, info_aval]
    # lapack.schur.ComputationMode: 'V' computes the vectors, 'N' not; Sort.kNoSortEigenvalues is 'N'.
    form, vectors, *_, info = ffi_call(ctx, _target("gees_ffi", aval.dtype), [x], [aval], avals_out,
                                       {"mode": _u8("V" if compute_schur_vectors else "N"), "sort": _u8("N")},
                                       aliases={0: 0})
    ok = _info_ok(info, batch)
    outs = [_nan_unless_ok(ok, batch, form, ctx.avals_out[0])]
    if compute_schur_vectors:
        outs.append(_nan_unless_ok(ok, batch, vectors, ctx.avals_out[1]))
    return outs


@register_lowering(dec.ormqr_p, platforms=("cpu",))
def _ormqr(ctx, a, taus, c, *, left, transpose):
    aval = ctx.avals_in[0]
    prefix = "un" if dtypes.is_complex(aval.dtype) else "or"
    return ffi_call(ctx, _target(f"{prefix}mqr_ffi", aval.dtype), [a, taus, c], list(ctx.avals_in),
                    list(ctx.avals_out), {"left": bool(left), "transpose": bool(transpose)}, aliases={2: 0})[0]


def _givens(x: Any, y: Any) -> tuple[Any, Any]:
    """JAX's ``_drotg``: the rotation zeroing ``y`` against ``x``, scaled for stability ((1, 0) when y == 0)."""
    abs_x, abs_y = elementwise.abs(x), elementwise.abs(y)
    denominator = elementwise.select(elementwise.gt(abs_x, abs_y), abs_x, abs_y)
    safe = elementwise.select(elementwise.eq(y, structural.full((), 0, aval_of(y).dtype)),
                              structural.full((), 1, aval_of(y).dtype), denominator)
    xs, ys = elementwise.div(x, safe), elementwise.div(y, safe)
    rh = elementwise.div(structural.full((), 1, aval_of(x).dtype),
                         elementwise.sqrt(elementwise.add(elementwise.mul(xs, xs), elementwise.mul(ys, ys))))
    zero = elementwise.eq(y, structural.full((), 0, aval_of(y).dtype))
    c = elementwise.select(zero, structural.full((), 1, aval_of(x).dtype), elementwise.mul(xs, rh))
    s = elementwise.select(zero, structural.full((), 0, aval_of(x).dtype), elementwise.neg(elementwise.mul(ys, rh)))
    return c, s


def _cholesky_update_program(R: Any, z: Any) -> list[Any]:
    """JAX's ``_cholesky_update_jax_fn``: one Givens rotation per row, unrolled over the static size."""
    n = aval_of(z).shape[0]
    for k in range(n):
        r_kk = structural.reshape(structural.slice(R, (k, k), (k + 1, k + 1)), ())
        z_k = structural.reshape(structural.slice(z, (k,), (k + 1,)), ())
        c, s = _givens(r_kk, z_k)
        row = structural.reshape(structural.slice(R, (k, 0), (k + 1, n)), (n,))
        cb, sb = (structural.broadcast_in_dim(v, (n,), ()) for v in (c, s))
        new_row = elementwise.sub(elementwise.mul(cb, row), elementwise.mul(sb, z))
        z = elementwise.add(elementwise.mul(cb, z), elementwise.mul(sb, row))
        R = structural.dynamic_update_slice(R, structural.reshape(new_row, (1, n)),
                                            [structural.full((), k, np.int32), structural.full((), 0, np.int32)])
    return [R]


@register_lowering(dec.cholesky_update_p)
def _cholesky_update(ctx, r, w):
    return lower_traced(ctx, _cholesky_update_program, [r, w], ctx.avals_in)[0]


@register_lowering(dec.symmetric_product_p)
def _symmetric_product(ctx, a, c, *, alpha, beta):
    a_aval, c_aval = ctx.avals_in

    def fn(a_, c_):
        nd = a_aval.ndim
        batch = tuple(range(nd - 2))
        product = dot_general(a_, a_, (((nd - 1,), (nd - 1,)), (batch, batch)))
        scale = lambda v: structural.full(c_aval.shape, v, c_aval.dtype)  # noqa: E731
        return [elementwise.add(elementwise.mul(scale(alpha), product), elementwise.mul(scale(beta), c_))]
    return lower_traced(ctx, fn, [a, c], ctx.avals_in)[0]
