"""Sharding rules of the ``lax`` families, registered in ``toolkit.core.sharding_rules.SHARDING_RULES``.

Each rule maps the input specs (tuples, one entry per dimension: None, a mesh
axis name or a tuple of names; unsharded inputs are all None) to one spec per
output, following JAX 0.10's rules in ``jax/_src/lax/lax.py``:

* elementwise (and select_n, clamp, convert, ...): dimension by dimension the
  inputs' specs must agree (None and size-1 dimensions give way); scalars do not count;
* broadcast_in_dim: operand dimension ``i`` keeps its spec at ``broadcast_dimensions[i]``;
* reshape: splitting a dimension keeps its spec on the major part, merging
  dimensions keeps the major one's spec when the others are unsharded; anything
  else is JAX's "This reshape is not supported" error;
* transpose: permuted; rev, pad, slice, cumulative ops, dynamic_update_slice: unchanged;
* sort, top_k: unchanged, but unsharded along the sorted axis (and sort's operands sharded alike);
* gather / scatter (JAX's ``_gather_spec_computation`` / ``_scatter_spec_computation``): the operand's
  unsliced (or fully sliced) dimensions keep their spec, batching dimensions resolve between operand,
  indices and updates, the indices' query dimensions and index vector must be unsharded;
* conv_general_dilated: the rhs replicated, the lhs's feature dimension unsharded; the output takes the
  lhs's spec (batch and spatial) if its axes divide the new sizes;
* rng_bit_generator: the key keeps its spec, the bits are replicated;
* dot_general: batch and free dimensions keep their specs; sharded contracting
  dimensions on both sides are ambiguous (ask for ``out_sharding``);
* reductions: reduced dimensions drop (a sharded one is an error, as in JAX);
* sharding_constraint (``with_sharding_constraint``/``reshard``): the constraint's type.
"""

from __future__ import annotations

from typing import Any, Sequence

from toolkit.core.sharding_rules import NO_SHARDING_RULE, ShardingTypeError, register_sharding_rule
from toolkit.lax import elementwise
from toolkit.lax import linalg, reductions, sorting, structural, windowed
from toolkit.lax.sharding import sharding_constraint_p


def _specs_text(specs: Sequence[tuple]) -> str:
    return ", ".join(str(tuple(s)) for s in specs)


# -- elementwise ------------------------------------------------------------------------------------

def _broadcasting(name: str, specs_in: list, avals_in: list) -> tuple:
    shaped = [(s, a.shape) for s, a in zip(specs_in, avals_in) if a.shape]
    if not shaped:
        return ()
    ndim = len(shaped[0][1])
    result: list[Any] = [None] * ndim
    for i in range(ndim):
        entries = [(s[i], shape[i]) for s, shape in shaped if len(shape) == ndim]
        nontrivial = [e for e, d in entries if not (d == 1 and e is None)]
        if not nontrivial:
            continue
        if all(e == nontrivial[0] for e in nontrivial):
            result[i] = nontrivial[0]
            continue
        for e, _ in entries:
            if result[i] is None and e is not None:
                result[i] = e
            elif result[i] is not None and e is not None and result[i] != e:
                raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: "
                                        f"{_specs_text([s for s, _ in shaped])}.")
    return tuple(result)


def _elementwise_rule(primitive: Any):
    def rule(specs_in, avals_in, avals_out, **params):
        spec = _broadcasting(primitive.name, specs_in, avals_in)
        return [spec + (None,) * (len(a.shape) - len(spec)) for a in avals_out]
    return rule


_ELEMENTWISE = [p for p in vars(elementwise).values() if type(p).__name__ == "Primitive"
                and p is not elementwise.bitcast_convert_type_p]
for _p in _ELEMENTWISE:
    register_sharding_rule(_p)(_elementwise_rule(_p))


@register_sharding_rule(elementwise.bitcast_convert_type_p)
def _bitcast_rule(specs_in, avals_in, avals_out, **params):
    spec, out = specs_in[0], avals_out[0]
    if len(out.shape) > len(spec):
        return [spec + (None,)]
    if len(out.shape) < len(spec):
        if spec[-1] is not None:
            raise ShardingTypeError(f"bitcast_convert_type: the last dimension is sharded {spec[-1]!r} but is "
                                    "folded into the new dtype")
        return [spec[:-1]]
    return [spec]


# -- structural -------------------------------------------------------------------------------------

@register_sharding_rule(structural.broadcast_in_dim_p)
def _broadcast_in_dim_rule(specs_in, avals_in, avals_out, *, shape, broadcast_dimensions, **params):
    out: list[Any] = [None] * len(shape)
    operand = avals_in[0]
    for i, d in enumerate(broadcast_dimensions):
        entry = specs_in[0][i]
        if entry is not None and operand.shape[i] != shape[d]:
            raise ShardingTypeError(f"broadcast_in_dim: dimension {i} of the operand is sharded {entry!r} but is "
                                    f"broadcast from size {operand.shape[i]} to {shape[d]}")
        out[d] = entry
    return [tuple(out)]


def _reshape_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list[int], list[int]]] | None:
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i] == 1:
            groups.append(([i], []))
            i += 1
            continue
        if j < len(new) and new[j] == 1:
            groups.append(([], [j]))
            j += 1
            continue
        if i >= len(old) or j >= len(new):
            return None
        gi, gj, po, pn = [i], [j], old[i], new[j]
        i, j = i + 1, j + 1
        while po != pn:
            if po < pn:
                if i >= len(old):
                    return None
                po *= old[i]
                gi.append(i)
                i += 1
            else:
                if j >= len(new):
                    return None
                pn *= new[j]
                gj.append(j)
                j += 1
        groups.append((gi, gj))
    return groups


def _axes_size(entry: Any, mesh_sizes: dict | None) -> int:
    if entry is None or mesh_sizes is None:
        return 1
    size = 1
    for n in entry if isinstance(entry, tuple) else (entry,):
        size *= mesh_sizes[n]
    return size


def _mesh_sizes(avals: Sequence[Any]) -> dict | None:
    for a in avals:
        if getattr(a, "sharding", None) is not None:
            mesh = a.sharding.mesh
            return dict(zip(mesh.axis_names, mesh.axis_sizes))
    return None


@register_sharding_rule(structural.reshape_p)
def _reshape_rule(specs_in, avals_in, avals_out, *, new_sizes, **params):
    spec, operand = specs_in[0], avals_in[0]
    if all(e is None for e in spec):
        return [(None,) * len(new_sizes)]

    def unsupported() -> ShardingTypeError:
        return ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` "
            f"argument of toolkit.lax.reshape. Got operand type: {operand}, new sizes: {tuple(new_sizes)}")

    if not all(type(d) is int for d in operand.shape + tuple(new_sizes)) or 0 in operand.shape:
        raise unsupported()
    groups = _reshape_groups(operand.shape, new_sizes)
    if groups is None:
        raise unsupported()
    sizes = _mesh_sizes(avals_in)
    out: list[Any] = [None] * len(new_sizes)
    for gi, gj in groups:
        entries = [spec[i] for i in gi]
        if all(e is None for e in entries):
            continue
        if not gj or any(e is not None for e in entries[1:]):
            raise unsupported()
        if len(gi) > 1 and len(gj) > 1:
            raise unsupported()
        if new_sizes[gj[0]] % _axes_size(entries[0], sizes):
            raise unsupported()
        out[gj[0]] = entries[0]
    return [tuple(out)]


@register_sharding_rule(structural.transpose_p)
def _transpose_rule(specs_in, avals_in, avals_out, *, permutation, **params):
    return [tuple(specs_in[0][p] for p in permutation)]


def _same_as_operand(specs_in, avals_in, avals_out, **params):
    return [specs_in[0] for _ in avals_out]


for _p in (structural.rev_p, structural.pad_p, structural.slice_p, structural.dynamic_update_slice_p):
    register_sharding_rule(_p)(_same_as_operand)


@register_sharding_rule(structural.dynamic_slice_p)
def _dynamic_slice_rule(specs_in, avals_in, avals_out, *, slice_sizes, **params):
    spec, operand = specs_in[0], avals_in[0]
    for i, (entry, size) in enumerate(zip(spec, slice_sizes)):
        if entry is not None and size != operand.shape[i]:
            raise ShardingTypeError(f"dynamic_slice: dimension {i} is sharded {entry!r} and sliced from size "
                                    f"{operand.shape[i]} to {size}; reshard it to replicated first")
    return [spec]


@register_sharding_rule(structural.concatenate_p)
def _concatenate_rule(specs_in, avals_in, avals_out, *, dimension, **params):
    specs = [tuple(s) for s in specs_in]
    if any(s != specs[0] for s in specs[1:]):
        raise ShardingTypeError(f"All operands should have the same sharding. Got {_specs_text(specs)}")
    return [specs[0]]


# -- contractions ------------------------------------------------------------------------------------

@register_sharding_rule(linalg.dot_general_p)
def _dot_general_rule(specs_in, avals_in, avals_out, *, dimension_numbers, **params):
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = specs_in
    lcs, rcs = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    lbs, rbs = tuple(ls[i] for i in lb), tuple(rs[i] for i in rb)
    for mine, theirs, msg in ((lbs, rbs, "dot_general requires lhs batch dimensions and rhs batch dimensions to "
                                         f"have the consistent sharding, got {lbs} and {rbs}."),
                              (lcs, rcs, "dot_general requires contracting dimensions to have consistent sharding, "
                                         f"got {lcs} and {rcs}.")):
        for a, b in zip(mine, theirs):
            if a is not None and b is not None and a != b:
                raise ShardingTypeError(msg)
    for a, b in zip(lcs, rcs):
        if a is not None and b is not None:
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please "
                "specify the output sharding via the `out_sharding` parameter."
                f" Got lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}")
    batch = tuple(a if a is not None else b for a, b in zip(lbs, rbs))
    lfree = tuple(e for i, e in enumerate(ls) if i not in lc and i not in lb)
    rfree = tuple(e for i, e in enumerate(rs) if i not in rc and i not in rb)
    return [batch + lfree + rfree]


# -- reductions ---------------------------------------------------------------------------------------

def _drop(spec: tuple, axes: Sequence[int]) -> tuple:
    return tuple(e for i, e in enumerate(spec) if i not in axes)


def _reduction_rule(specs_in, avals_in, avals_out, *, axes, **params):
    return [_drop(specs_in[0], axes)]


for _p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p, reductions.reduce_min_p,
           reductions.reduce_and_p, reductions.reduce_or_p, reductions.reduce_xor_p):
    register_sharding_rule(_p)(_reduction_rule)


@register_sharding_rule(reductions.argmax_p, reductions.argmin_p)
def _arg_rule(specs_in, avals_in, avals_out, *, axis, **params):
    return [_drop(specs_in[0], (axis,))]


@register_sharding_rule(windowed.reduce_p)
def _reduce_rule(specs_in, avals_in, avals_out, *, dimensions, **params):
    n = len(avals_in) // 2
    specs = [tuple(s) for s in specs_in[:n]]
    if any(s != specs[0] for s in specs[1:]):
        raise ShardingTypeError(f"reduce: the operands must be sharded alike, got {_specs_text(specs)}")
    return [_drop(specs[0], dimensions) for _ in avals_out]


@register_sharding_rule(windowed.reduce_window_p)
def _reduce_window_rule(specs_in, avals_in, avals_out, *, window_dimensions, **params):
    n = len(avals_in) // 2
    spec, operand = specs_in[0], avals_in[0]
    for i, (entry, w) in enumerate(zip(spec, window_dimensions)):
        if entry is not None and w != 1:
            raise ShardingTypeError(f"Input should be unsharded over the axis being reduced. Got input type="
                                    f"{operand} and axis={i}")
    return [spec for _ in avals_out[:n]]


def _sharding_text(avals_in: Sequence[Any], spec: tuple) -> str:
    """``NamedSharding(mesh=..., spec=...)`` of ``spec`` over the inputs' mesh, for JAX's messages."""
    from toolkit.core.sharding_rules import hooks
    mesh = next(a.sharding.mesh for a in avals_in if getattr(a, "sharding", None) is not None)
    return str(hooks.make(mesh, tuple(spec)))


@register_sharding_rule(sorting.sort_p)
def _sort_rule(specs_in, avals_in, avals_out, *, dimension, **params):
    # JAX's _sort_abstract_eval: every operand unsharded over the sorting dimension, all sharded alike
    # (an untyped operand counts as replicated, as a JAX array on the current mesh does).
    specs = [tuple(s) for s in specs_in]
    for s in specs:
        if s[dimension] is not None:
            raise ShardingTypeError("Arguments to sort must be unsharded over the sorting dimension. "
                                    f"Got arg sharding={_sharding_text(avals_in, s)} and sorting "
                                    f"dimension={dimension}")
        if s != specs[0]:
            shardings = " ".join(_sharding_text(avals_in, t) for t in specs)
            raise ShardingTypeError(f"Arguments to sort must have equal shardings, got: {shardings}")
    return [specs[0] for _ in avals_out]


@register_sharding_rule(sorting.top_k_p)
def _top_k_rule(specs_in, avals_in, avals_out, **params):
    # toolkit's top_k works along the last axis (JAX's axis=-1, canonicalized).
    spec, operand = specs_in[0], avals_in[0]
    axis = len(operand.shape) - 1
    if spec[axis] is not None:
        raise ShardingTypeError("The input should be unsharded over the axis along which to compute the top_k "
                                f"values. Got input type={operand} and axis={axis}")
    return [spec, spec]


# -- sharding ---------------------------------------------------------------------------------------

@register_sharding_rule(sharding_constraint_p)
def _constraint_rule(specs_in, avals_in, avals_out, *, sharding, **params):
    from toolkit.core.sharding_rules import type_sharding
    return [type_sharding(sharding, len(avals_in[0].shape))]


# -- control flow ---------------------------------------------------------------------------------
# The bodies were traced with the typed inputs, so the shape rules' outputs (the bodies' output avals)
# already carry the types the bodies' own rules gave; the loop-carried and branch outputs keep them.

def _from_bodies(specs_in, avals_in, avals_out, **params):
    return [a.sharding for a in avals_out]


from toolkit.lax import control_flow  # noqa: E402

register_sharding_rule(control_flow.cond_p, control_flow.while_p)(_from_bodies)

from toolkit.lax import autodiff, calls  # noqa: E402

# Calls typed by their bodies: the shape rule already returns the body's output types.
register_sharding_rule(calls.custom_jvp_call_p, calls.custom_vjp_call_p, calls.checkpoint_p,
                       calls.jit_call_p)(_from_bodies)
register_sharding_rule(calls.name_p)(_same_as_operand)
register_sharding_rule(autodiff.stop_gradient_p)(_same_as_operand)


@register_sharding_rule(structural.dimension_size_p)
def _dimension_size_rule(specs_in, avals_in, avals_out, **params):
    return [()]  # a scalar: replicated


@register_sharding_rule(control_flow.scan_p)
def _scan_rule(specs_in, avals_in, avals_out, *, body, num_carry, num_consts, **params):
    for spec in specs_in[num_carry:len(avals_in) - num_consts]:
        if spec and spec[0] is not None:
            raise ValueError(f"0th dimension of all xs should be replicated. Got {_spec_text(spec)}")  # as JAX
    ys = [None if a.sharding is None else (None,) + tuple(a.sharding.spec) for a in body.out_avals[num_carry:]]
    return [a.sharding for a in avals_out[:num_carry]] + ys


def _spec_text(spec: tuple) -> str:
    return "P(" + ", ".join(repr(e) for e in spec) + ")"


# -- gather / scatter (JAX's _gather_spec_computation / _scatter_spec_computation) -----------------

from toolkit.lax import convolution, custom_call, indexing, parallel, random_bits  # noqa: E402


def _gather_spec(operand, indices, ospec: tuple, ispec: tuple, dn, slice_sizes) -> tuple | None:
    """The gather's output spec, or None when it is ambiguous (or would need collectives on the inputs).

    Operand dimensions indexed into (``start_index_map``) must be fully sliced or unsharded; paired batching
    dimensions must agree (or one side be unsharded); the indices' other dimensions (their queries and the
    index vector) must be unsharded. Offset dimensions then take the operand's spec, the others the indices'.
    """
    ispec = list(ispec)
    out_rank = len(dn.offset_dims) + len(indices.shape) - 1
    if all(e is None for e in ospec) and all(e is None for e in ispec):
        return (None,) * out_rank
    full_or_replicated = all(slice_sizes[i] == operand.shape[i] or ospec[i] is None for i in dn.start_index_map)
    batching_resolves = all(ispec[i] == ospec[o] or ospec[o] is None or ispec[i] is None
                            for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    non_batch_replicated = all(e is None for i, e in enumerate(ispec) if i not in dn.start_indices_batching_dims)
    if not (full_or_replicated and batching_resolves and non_batch_replicated):
        return None
    for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        ispec[i] = ispec[i] or ospec[o]
    slices = iter(i for i in range(len(slice_sizes))
                  if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims)
    queries = iter(ispec)
    return tuple(ospec[next(slices)] if d in dn.offset_dims else next(queries) for d in range(out_rank))


@register_sharding_rule(indexing.gather_p)
def _gather_rule(specs_in, avals_in, avals_out, *, dimension_numbers, slice_sizes, **params):
    operand, indices = avals_in
    spec = _gather_spec(operand, indices, tuple(specs_in[0]), tuple(specs_in[1]), dimension_numbers, slice_sizes)
    if spec is None:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as out "
            "sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}")
    return [spec]


def _resolvable(*entries: Any) -> bool:
    return len({e for e in entries if e is not None}) <= 1


def _updates_batching_dims(indices_batching_dims, update_window_dims, index_vector_dim: int) -> tuple:
    scatter_dim_in_updates: list[int | None] = list(range(index_vector_dim))
    for i in update_window_dims:
        scatter_dim_in_updates.insert(i, None)
    return tuple(scatter_dim_in_updates.index(i) for i in indices_batching_dims)


def _scatter_spec(operand, indices, updates, ospec: tuple, ispec: tuple, uspec: tuple, dn) -> tuple | None:
    """The scatter's output spec, or None when it is ambiguous (or would need collectives on the inputs).

    Batching dimensions must resolve between operand, indices and updates; window dimensions of operand and
    updates must be both unsharded, or full and sharded alike; inserted window dimensions of the operand, the
    unbatched query dimensions of indices and updates, and the index vector must be unsharded.
    """
    if all(e is None for e in ospec + ispec + uspec):
        return (None,) * len(operand.shape)
    index_vector_dim = len(indices.shape) - 1
    ubd = _updates_batching_dims(dn.scatter_indices_batching_dims, dn.update_window_dims, index_vector_dim)
    window = [i for i in range(len(operand.shape))
              if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
    ok = (all(_resolvable(ospec[o], ispec[i], uspec[u])
              for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubd))
          and all((updates.shape[u] == operand.shape[o] and uspec[u] == ospec[o])
                  or (uspec[u] is None and ospec[o] is None) for u, o in zip(dn.update_window_dims, window))
          and all(e is None for i, e in enumerate(ospec) if i in dn.inserted_window_dims)
          and all(e is None for i, e in enumerate(uspec) if i not in ubd and i not in dn.update_window_dims)
          and all(e is None for i, e in enumerate(ispec[:index_vector_dim])
                  if i not in dn.scatter_indices_batching_dims)
          and ispec[index_vector_dim] is None)
    if not ok:
        return None
    out = list(ospec)
    for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubd):
        if out[o] is None:
            out[o] = ispec[i] or uspec[u]
    for u, o in zip(dn.update_window_dims, window):
        if out[o] is None:
            out[o] = uspec[u]
    return tuple(out)


@register_sharding_rule(indexing.scatter_p, indexing.scatter_add_p, indexing.scatter_mul_p, indexing.scatter_min_p,
                        indexing.scatter_max_p)
def _scatter_rule(specs_in, avals_in, avals_out, *, dimension_numbers, **params):
    operand, indices, updates = avals_in
    spec = _scatter_spec(operand, indices, updates, *(tuple(s) for s in specs_in), dimension_numbers)
    if spec is None:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter update "
            "as out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand!r}, indices={indices!r}, updates={updates!r}")
    return [spec]


# -- convolution ----------------------------------------------------------------------------------

@register_sharding_rule(convolution.conv_general_dilated_p)
def _conv_rule(specs_in, avals_in, avals_out, *, dimension_numbers, **params):
    # JAX's _conv_general_dilated_sharding_rule: the rhs replicated and the lhs's feature dimension unsharded;
    # the output then has the lhs's spec position by position (the batch dimension's sharding carries over),
    # a dimension whose size changes keeping its axes only if they divide the new size.
    lhs_spec, rhs_spec = specs_in
    lhs, out = avals_in[0], avals_out[0]
    if any(e is not None for e in rhs_spec) or lhs_spec[dimension_numbers[0][1]] is not None:
        raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of "
                                "`conv_general_dilated`")
    sizes = _mesh_sizes(avals_in)
    for in_size, out_size, entry in zip(lhs.shape, out.shape, lhs_spec):
        if in_size != out_size and entry is not None and out_size % _axes_size(entry, sizes):
            raise ShardingTypeError(
                f"conv_general_dilated on sharded dims where out dim ({out_size}) is not divisible by mesh axes "
                f"({_axes_size(entry, sizes)}) with spec ({entry}) is not implemented. Got input "
                f"type={lhs.str_short()} and output shape={tuple(out.shape)}")
    return [tuple(lhs_spec)]


# -- random bits ------------------------------------------------------------------------------------

@register_sharding_rule(random_bits.rng_bit_generator_p)
def _rng_bit_generator_rule(specs_in, avals_in, avals_out, **params):
    # JAX: the new key keeps the key's sharding, the bits are replicated over the mesh (no out_sharding here).
    return [specs_in[0], (None,) * len(avals_out[1].shape)]


# -- primitives without a rule, and why (tests/test_rule_coverage.py reads this) ------------------------

for _p in (parallel.psum_p, parallel.psum_invariant_p, parallel.pmax_p, parallel.pmin_p, parallel.all_gather_p,
           parallel.psum_scatter_p, parallel.ppermute_p, parallel.all_to_all_p, parallel.axis_index_p,
           parallel.pvary_p):
    NO_SHARDING_RULE[_p] = ("a collective runs only inside shard_map, whose axes are Manual there: explicit "
                            "types never reach it")
NO_SHARDING_RULE[structural.iota_p] = ("no operands: rules are consulted only when an operand is typed; an iota is "
                                       "typed by out_sharding= of lax.broadcasted_iota / numpy.arange")
for _p in (custom_call.custom_call_p, custom_call.effectful_custom_call_p):
    NO_SHARDING_RULE[_p] = "an opaque target: no layout of its results can be derived from its operands"
