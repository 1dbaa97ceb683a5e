"""Differentiation rules for ``toolkit/shard_map.py``.

Forward mode maps the JVP of the body (tangents with their primal's specs);
reverse mode is a VJP rule whose backward pass is another ``shard_map`` running
the body's VJP on each shard (recomputing the forward pass there), with JAX's
``check_vma=False`` corrections: output cotangents are divided by the number of
devices an output is replicated over, input cotangents are summed over the axes
an input is replicated over. Before a program inside a ``shard_map`` body is
differentiated, the varying-manual-axes analysis inserts its ``pvary``s
(``PREPARE_FOR_DIFFERENTIATION``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from toolkit.ad.api import PREPARE_FOR_DIFFERENTIATION
from toolkit.ad.jvp import jvp_program
from toolkit.ad.registry import JVP_RULES, VJP_RULES
from toolkit.ad.values import Zero, instantiate, is_differentiable, tangent_aval, value_aval
from toolkit.ad.vjp import vjp_program
from toolkit.core import tracing
from toolkit.lax import elementwise, parallel
from toolkit.shard_map import _spec_axes, _vma_before_differentiation, shard_map_p
from toolkit.shard import PartitionSpec

# grad inside a check_vma shard_map body: make pvary explicit before differentiating, as JAX's types do.
PREPARE_FOR_DIFFERENTIATION.append(_vma_before_differentiation)



def _unmentioned(spec: Any, manual: Sequence[Any]) -> tuple:
    mentioned = _spec_axes(spec)
    return tuple(a for a in manual if a not in mentioned)


def _shard_map_jvp(primals, tangents, *, body, mesh, in_specs, out_specs, manual_axes, check_vma):
    nonzero = [not isinstance(t, Zero) for t in tangents]
    local_in = list(body.in_avals)
    num_out = len(body.outvars)
    out_nonzero = [is_differentiable(a) for a in body.out_avals]

    def fun(*args: Any) -> list[Any]:
        xs, ts = list(args[:len(primals)]), list(args[len(primals):])
        it = iter(ts)
        tangents_in = [next(it) if m else Zero(tangent_aval(a)) for m, a in zip(nonzero, local_in)]
        outs, out_ts = jvp_program(body, xs, tangents_in)
        return list(outs) + [instantiate(t) if not isinstance(t, Zero) else instantiate(Zero(tangent_aval(a)))
                             for t, a, m in zip(out_ts, body.out_avals, out_nonzero) if m]

    t_avals = [tangent_aval(a) for a, m in zip(local_in, nonzero) if m]
    new_body, captured = tracing.trace_flat(fun, local_in + t_avals)
    t_specs = [s for s, m in zip(in_specs, nonzero) if m]
    o_specs = tuple(out_specs) + tuple(s for s, m in zip(out_specs, out_nonzero) if m)
    outs = shard_map_p.bind(*primals, *[t for t in tangents if not isinstance(t, Zero)], *captured, body=new_body,
                            mesh=mesh, in_specs=tuple(in_specs) + tuple(t_specs) + tuple(_replicated(captured)),
                            out_specs=o_specs, manual_axes=manual_axes, check_vma=check_vma)
    primal_outs, it = outs[:num_out], iter(outs[num_out:])
    out_ts = [next(it) if m else Zero(tangent_aval(value_aval(o))) for o, m in zip(primal_outs, out_nonzero)]
    return primal_outs, out_ts


def _replicated(values: Sequence[Any]) -> list[Any]:
    return [PartitionSpec()] * len(values)


def _shard_map_vjp_forward(primals, active, **params):
    return shard_map_p.bind(*primals, **params), list(primals)


def _shard_map_vjp_backward(residuals, active, cotangents, *, body, mesh, in_specs, out_specs, manual_axes,
                            check_vma):
    primals = residuals
    in_diff = [a and is_differentiable(v) for a, v in zip(active, body.in_avals)]
    ct_mask = [not isinstance(ct, Zero) and is_differentiable(a) for ct, a in zip(cotangents, body.out_avals)]
    cts = []
    for ct, spec, m in zip(cotangents, out_specs, ct_mask):
        if not m:
            continue
        n = math.prod(mesh.shape[a] for a in _unmentioned(spec, manual_axes))
        if not check_vma and n != 1:
            ct = elementwise.div(ct, parallel._full_like(ct, n))
        cts.append(ct)
    ct_specs = [s for s, m in zip(out_specs, ct_mask) if m]
    local_in = list(body.in_avals)
    local_out = list(body.out_avals)

    def fun(*args: Any) -> list[Any]:
        xs, ct_local = list(args[:len(primals)]), list(args[len(primals):])
        _, backward = vjp_program(body, xs, in_diff)
        it = iter(ct_local)
        full = [next(it) if m else Zero(tangent_aval(a)) for m, a in zip(ct_mask, local_out)]
        cts_in = backward(full)
        result = []
        for ct, spec, d, a in zip(cts_in, in_specs, in_diff, local_in):
            if not d:
                continue
            ct = instantiate(ct) if not isinstance(ct, Zero) else instantiate(Zero(tangent_aval(a)))
            unmentioned = _unmentioned(spec, manual_axes)
            if not check_vma and unmentioned:
                env = parallel.AxisEnv(tuple(mesh.axis_names), tuple(mesh.axis_sizes), tuple(manual_axes))
                ct = parallel.psum_p.bind(ct, axes=unmentioned, env=env)
            result.append(ct)
        return result

    ct_avals = [tangent_aval(a) for a, m in zip(local_out, ct_mask) if m]
    new_body, captured = tracing.trace_flat(fun, local_in + ct_avals)
    outs = shard_map_p.bind(*primals, *cts, *captured, body=new_body, mesh=mesh,
                            in_specs=tuple(in_specs) + tuple(ct_specs) + tuple(_replicated(captured)),
                            out_specs=tuple(s for s, d in zip(in_specs, in_diff) if d), manual_axes=manual_axes,
                            check_vma=check_vma)
    it = iter(outs)
    return [next(it) if d else None for d in in_diff]


JVP_RULES[shard_map_p] = _shard_map_jvp
VJP_RULES[shard_map_p] = (_shard_map_vjp_forward, _shard_map_vjp_backward)
