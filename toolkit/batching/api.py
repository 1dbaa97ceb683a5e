"""``toolkit.vmap``: vectorizing map, with ``jax.vmap``'s signature, pytree conventions and errors.

``vmap(f)(*args)`` flattens the arguments, traces ``f`` once at the
*unbatched* avals (each mapped argument without its mapped axis) into a
``Program`` — nested in the enclosing trace when there is one, so outer
tracers ``f`` closes over become unbatched inputs — and evaluates that
program with ``batch_program`` on the batched values. The result is bound
into the current trace (so ``jit(vmap(f))``, ``vmap(jit(f))``, ``grad(vmap(f))``
and ``vmap(grad(f))`` all work) or runs eagerly.

Example::

    import toolkit, toolkit.numpy as tnp
    xs = np.ones((8, 3), np.float32)
    toolkit.vmap(lambda x, w: tnp.dot(x, w), in_axes=(0, None))(xs, np.ones((3, 2), np.float32))  # (8, 2)
"""

from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable
from typing import Any

from toolkit.batching.interpret import (
    AxisData,
    batch_program,
    broadcast_batched,
    moveaxis,
    unbatched_aval,
)
from toolkit.core import tracing, pytrees
from toolkit.core.avals import abstract_token, aval_of
from toolkit.lax import control_flow, parallel
from toolkit.numpy import reductions

__all__ = ["vmap"]


def _is_none(x: Any) -> bool:
    return x is None


def _check_axes_tree(axes: Any, what: str) -> None:
    for leaf in pytrees.tree_leaves(axes, is_leaf=_is_none):
        if leaf is not None and type(leaf) is not int:
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with those types as leaves, "
                            f"but got {axes}.")


def _flatten_axes(what: str, tree: pytrees.PyTreeDef, axes: Any) -> list[Any]:
    dummy = pytrees.structure_of(tree, [0] * tree.num_leaves)
    try:
        return pytrees.broadcast_prefix(axes, dummy, is_leaf=_is_none)
    except ValueError as error:
        raise ValueError(f"{what} specification must be a tree prefix of the corresponding value; "
                         f"\n  Mismatch details: {error}") from None


def _mapped_axis_size(fun: Callable[..., Any], tree: pytrees.PyTreeDef, leaves: list[Any], axes: list[Any],
                      axis_size: Any) -> Any:
    if not leaves:
        if axis_size is not None:
            return axis_size
        args, kwargs = pytrees.tree_unflatten(tree, leaves)
        raise ValueError("vmap wrapped function must be passed at least one argument containing an array or "
                         f"axis_size must be specified, got empty *args={args} and **kwargs={kwargs}")
    sizes: list[Any] = []
    for x, d in zip(leaves, axes):
        if d is None:
            sizes.append(None)
            continue
        shape = tuple(aval_of(x).shape)
        if not -len(shape) <= d < len(shape):
            min_rank = d + 1 if d >= 0 else -d
            raise ValueError(f"vmap was requested to map its argument along axis {d}, which implies that its rank "
                             f"should be at least {min_rank}, but is only {len(shape)} (its shape is {shape})")
        sizes.append(shape[d])
    present = [s for s in sizes if s is not None]
    distinct = list(dict.fromkeys(present + ([axis_size] if axis_size is not None else [])))
    if len(distinct) == 1:
        return distinct[0]
    if not distinct:
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")
    # JAX's message: the sizes seen, most common first, each with an example argument.
    args, kwargs = pytrees.tree_unflatten(tree, leaves)
    try:
        parameters = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        parameters = None
    names = []
    for path, x in pytrees.tree_flatten_with_path((args, kwargs))[0]:
        head, index, *rest = path
        try:
            kind = aval_of(x).str_short()
        except TypeError:
            kind = "unknown"
        if head.idx == 1:
            names.append(f"kwargs{pytrees.keystr((index, *rest))} of type {kind}")
        elif parameters is None or index.idx >= len(parameters):
            names.append(f"args{pytrees.keystr((index, *rest))} of type {kind}")
        else:
            names.append(f"argument {parameters[index.idx]}{pytrees.keystr(tuple(rest))} of type {kind}")
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    msg = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
    if axis_size is not None:
        msg.append(f"  * the `axis_size` argument was {axis_size};\n")
    for k, (size, count) in enumerate(counts):
        i = sizes.index(size)
        if count == 1:
            msg.append(f"  * one axis had size {size}: axis {axes[i]} of {names[i]};\n")
        elif k == 0:
            msg.append(f"  * most axes ({count} of them) had size {size}, e.g. axis {axes[i]} of {names[i]};\n")
        else:
            msg.append(f"  * some axes ({count} of them) had size {size}, e.g. axis {axes[i]} of {names[i]};\n")
    raise ValueError("".join(msg)[:-2])


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None, sum_match: bool = False) -> Callable[..., Any]:
    """Vectorize ``fun`` over an axis of its arguments (``jax.vmap``'s meaning).

    ``in_axes``: an int, ``None`` or a tuple with one entry per positional
    argument, each a pytree prefix of the argument with ints (the mapped
    axis, negative counts from the end) or ``None`` (not mapped) at the
    leaves; keyword arguments are always mapped over axis 0. ``out_axes``: a
    prefix of the output tree saying where the mapped axis goes (``None``: the
    output must not depend on the mapped axis). ``axis_size`` gives the size
    when no argument is mapped. ``spmd_axis_name`` (a mesh axis name or a
    tuple of them) shards the mapped axis over that mesh axis wherever the
    function constrains shardings (``with_sharding_constraint``,
    ``shard_map``). ``axis_name`` names the mapped axis for the collectives
    of ``toolkit.lax`` inside ``fun``: ``psum(x, name)`` sums over the batch
    (every element gets the total), ``pmean``/``pmax``/``pmin`` likewise,
    ``axis_index(name)`` is the element's position, ``axis_size(name)`` the
    batch size, ``all_gather``, ``psum_scatter``, ``ppermute`` and
    ``all_to_all`` move data between elements, as in JAX. ``sum_match=True``: an output whose ``out_axes``
    is ``None`` but that depends on the mapped axis is summed over it (``jnp.sum``'s types) instead of being
    an error, as JAX's.

    Example::

        batched_loss = toolkit.vmap(loss, in_axes=(None, 0))   # params shared, one example per row
        per_example_grads = toolkit.vmap(toolkit.grad(loss), in_axes=(None, 0))(params, batch)
    """
    if not callable(fun):
        raise TypeError(f"vmap requires a callable as its first argument, but got {fun!r} of type "
                        f"{type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                        f"arguments passed to the function, but got {in_axes}.")
    _check_axes_tree(in_axes, "in_axes")
    _check_axes_tree(out_axes, "out_axes")
    if spmd_axis_name is not None and isinstance(spmd_axis_name, list):
        spmd_axis_name = tuple(spmd_axis_name)

    @functools.wraps(fun)
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                             f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        leaves, in_tree = pytrees.tree_flatten((args, kwargs))
        for i, leaf in enumerate(leaves):
            try:
                aval_of(leaf)
            except TypeError:
                raise TypeError(f"vmap: argument leaf {i} of type {type(leaf).__name__} is not an array") from None
        args_tree, kwargs_tree = pytrees.treedef_children(in_tree)
        axes = _flatten_axes("vmap in_axes", args_tree, in_axes) + [0] * kwargs_tree.num_leaves
        size = _mapped_axis_size(fun, in_tree, leaves, axes, axis_size)
        axes = [None if d is None else d % len(aval_of(x).shape) for x, d in zip(leaves, axes)]
        in_avals = [unbatched_aval(aval_of(x), d) for x, d in zip(leaves, axes)]
        out_tree_box: list[pytrees.PyTreeDef] = []

        def flat_fun(*tracers: Any) -> list[Any]:
            a, k = pytrees.tree_unflatten(in_tree, list(tracers))
            out = fun(*a, **k)
            out_leaves, out_tree = pytrees.tree_flatten(out)
            out_tree_box.append(out_tree)
            for i, leaf in enumerate(out_leaves):
                try:
                    aval_of(leaf)
                except TypeError:
                    raise TypeError(f"vmap: output leaf {i} of type {type(leaf).__name__} is not an array") from None
            return out_leaves

        if axis_name is None:
            program, captured = tracing.trace_flat(flat_fun, in_avals, interpreted=True)
        else:
            with parallel.vmap_axis(axis_name, size):  # collectives in `fun` may name it
                program, captured = tracing.trace_flat(flat_fun, in_avals, interpreted=True)
        out_tree = out_tree_box[0]
        out_axes_flat = _flatten_axes("vmap out_axes", out_tree, out_axes)
        axis = AxisData(size, spmd_axis_name, axis_name)
        with tracing.transform_name_stack("vmap"):  # ops named vmap()/..., as JAX's
            outs, dims = batch_program(program, list(leaves) + list(captured), axes + [None] * len(captured), axis)
        result = []
        paths = None
        for i, (x, d, dst) in enumerate(zip(outs, dims, out_axes_flat)):
            if dst is None:
                if d is not None and sum_match:
                    result.append(reductions.sum(x, axis=d))
                    continue
                if d is not None:
                    if paths is None:
                        dummy = pytrees.structure_of(out_tree, [0] * out_tree.num_leaves)
                        paths = [pytrees.keystr(p) for p, _ in pytrees.tree_flatten_with_path(dummy)[0]]
                    raise ValueError(f"at vmap out_axes{paths[i]}, got axis spec None but output was batched on "
                                     f"axis {d}")
                result.append(x)
                continue
            if aval_of(x) is abstract_token:
                # A token has no axis to map (a batch of tokens is one token): JAX cannot return one from vmap.
                raise TypeError(f"vmap cannot return a token with out_axes={dst}: a token has no axes; give its "
                                "output out_axes None")
            ndim = len(aval_of(x).shape) + (d is None)
            if not -ndim <= dst < ndim:
                raise ValueError(f"axis {dst} is out of bounds for array of dimension {ndim}")
            dst %= ndim
            result.append(broadcast_batched(x, size, dst) if d is None else moveaxis(x, d, dst))
        return pytrees.tree_unflatten(out_tree, result)

    vmap_f.__wrapped__ = fun
    return vmap_f


# lax.map(batch_size=) vectorizes through this hook: batching imports lax, so lax never imports batching.
control_flow.set_vmap_handler(vmap)
