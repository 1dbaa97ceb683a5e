"""``toolkit.make_jaxpr`` and ``toolkit.eval_shape``: see what tracing (and each transformation) produces.

``make_jaxpr(f)(*args)`` traces ``f`` at the arguments' shapes and dtypes and
returns the ``Program`` it becomes (printed like a jaxpr); since
transformations are functions too, ``make_jaxpr(toolkit.grad(f))``,
``make_jaxpr(toolkit.checkpoint(f))`` or ``make_jaxpr(toolkit.jit(f))`` show
what each one did. ``eval_shape(f, *args)`` runs nothing: it returns the
``ShapeDtypeStruct``s of ``f``'s outputs.

Example::

    >>> print(toolkit.make_jaxpr(toolkit.grad(lambda x: tnp.sin(x)))(1.0))
    { lambda ; a:f32[]. let
        b:f32[] = sin a
        c:f32[] = sin a
        d:f32[] = cos a
        e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
        f:f32[] = mul 1.0:f32[] e
      in (f,) }

(the second ``sin`` is the linearized equation's own primal, which XLA's CSE
merges with the first; see ``docs/autodiff.md``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from toolkit.core import tracing, pytrees
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct, abstract_token
from toolkit.core.program import ClosedProgram, Program
from toolkit.lax import parallel

__all__ = ["make_jaxpr", "eval_shape", "ClosedProgram"]


def _static_tuple(static_argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)


def _trace(fun: Callable[..., Any], args: tuple, kwargs: dict, static: tuple[int, ...],
           what: str) -> tuple[Program, Any, list[Any]]:
    program, out_tree, captured, _ = tracing.trace_with_static_args(fun, args, kwargs, static, what)
    return program, out_tree, captured


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[Any, int]] | None = None,
               return_shape: bool = False) -> Callable[..., Any]:
    """A function returning the traced program of ``fun`` at the given arguments (``jax.make_jaxpr``).

    Arguments may be arrays, numpy values, Python scalars or ``ShapeDtypeStruct``s.
    With ``return_shape=True`` it returns ``(program, output ShapeDtypeStructs)``.
    Values ``fun`` closes over from an enclosing trace become trailing inputs.
    ``axis_env``: ``(name, size)`` pairs binding axis names while ``fun`` is traced, so that its collectives
    (``lax.psum(x, name)``, ``axis_index``, ``axis_size``...) trace as inside a ``shard_map`` over such axes.
    """
    if not callable(fun):
        raise TypeError(f"make_jaxpr: expected a callable function, got {type(fun).__name__}")
    static = _static_tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> Any:
        if axis_env:
            # JAX's extend_axis_env_nd: the names are bound (as a shard_map body's manual axes) for the trace only.
            names, sizes = zip(*((name, size) for name, size in axis_env))
            with parallel.axis_frame(parallel.AxisEnv(tuple(names), tuple(sizes), tuple(names)), False,
                                     shadowable=True):
                program, out_tree, _ = _trace(fun, args, kwargs, static, "make_jaxpr")
        else:
            program, out_tree, _ = _trace(fun, args, kwargs, static, "make_jaxpr")
        closed = ClosedProgram(program)
        if not return_shape:
            return closed
        shapes = [_shape_of(a) for a in program.out_avals]
        return closed, pytrees.tree_unflatten(out_tree, shapes)

    make.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return make


def _shape_of(aval: ShapedArray) -> Any:
    """A result's ``ShapeDtypeStruct``; a token's is the token type itself, as JAX's ``eval_shape`` gives it."""
    return aval if aval is abstract_token else ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as ``ShapeDtypeStruct``s, computing nothing.

    Example::

        toolkit.eval_shape(lambda x, w: x @ w, toolkit.ShapeDtypeStruct((8, 3), "float32"), np.ones((3, 4)))
    """
    if not callable(fun):
        raise TypeError(f"eval_shape: expected a callable function, got {type(fun).__name__}")
    program, out_tree, _ = _trace(fun, args, kwargs, (), "eval_shape")
    shapes = [_shape_of(a) for a in program.out_avals]
    return pytrees.tree_unflatten(out_tree, shapes)
