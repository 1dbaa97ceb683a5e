"""Call primitives: a sub-program applied to operands, with a transformation-specific meaning.

Each of these computes exactly its sub-program; what differs is how
transformations treat it (the rules sit in ``toolkit/ad/rules/calls.py``):

* ``custom_jvp_call``: ``call`` with a user-given JVP rule
  (``toolkit.custom_jvp``);
* ``custom_vjp_call``: ``call`` with user-given forward/backward functions
  (``toolkit.custom_vjp``);
* ``checkpoint``: ``jaxpr`` whose intermediate values reverse mode recomputes
  instead of saving, except those its ``policy`` allows (``toolkit.checkpoint``);
  when ``differentiated`` and ``prevent_cse`` it lowers behind an
  ``optimization_barrier`` so XLA cannot merge the recomputation with the
  forward pass;
* ``name``: the identity, naming a value for checkpoint policies
  (``toolkit.ad.checkpoint_name``);
* ``jit``: a call of a nested ``toolkit.jit`` function (JAX's ``pjit``, printed
  ``jit`` as JAX 0.10 prints it): ``jaxpr`` is the function's traced program
  (one object per function and signature, so calling it twice gives one
  private function), ``name`` the function's name. It lowers to
  ``func.call @<name>`` of a ``func.func private @<name>`` (one per distinct
  sub-program in the module, named as JAX names them: ``g``, then ``g_0``, ...).
  Its derivatives and batching are ``jit`` calls again (``jvp(g)``,
  ``transpose(jvp(g))``, as JAX names them).

Outside differentiation the others lower as their sub-program, inline.

Example (what ``toolkit.make_jaxpr(toolkit.checkpoint(f))`` shows)::

    b:f32[3] = checkpoint[jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }
                          prevent_cse=True differentiated=False policy=None] a

and of ``toolkit.jit(lambda x: toolkit.jit(g)(x))`` with ``g = lambda x: sin(x)``::

    b:f32[3] = jit[name=g jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }] a
"""

from __future__ import annotations

from typing import Any, Callable

from toolkit.core.avals import ShapedArray
from toolkit.core.families import Family
from toolkit.core.program import Program

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("calls")

__all__ = ["custom_jvp_call_p", "custom_vjp_call_p", "checkpoint_p", "name_p", "jit_call_p", "JVPRule"]


class JVPRule:
    """The JVP rule a ``custom_jvp_call`` carries (its ``jvp`` parameter): a traced program, or the user's
    function (symbolic zeros). Here beside the primitive so that lax's own custom-JVP functions (``logaddexp``)
    make it as ``toolkit.ad.custom_jvp`` does."""

    def __init__(self, name: str, program: Any, fun: Callable[..., Any] | None):
        self.__name__ = name
        self.program = program          # (*args, *tangents, *consts) -> (*outs, *out_tangents)
        self.fun = fun                  # (arg_values, tangents with Zero) -> (outs, out_tangents), lazily

    def __repr__(self) -> str:
        return self.__name__


def _check_operands(what: str, operands: tuple[ShapedArray, ...], program: Program) -> None:
    if len(operands) != len(program.invars):
        raise TypeError(f"{what}: the sub-program takes {len(program.invars)} inputs, got {len(operands)} operands")
    for i, (a, b) in enumerate(zip(operands, program.in_avals)):
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            raise TypeError(f"{what}: operand {i} is {a.str_short()} but the sub-program takes {b.str_short()}")


def _custom_jvp_call_rule(*operands: ShapedArray, call: Program, jvp: Any, num_consts: int,
                          symbolic_zeros: bool) -> list[ShapedArray]:
    _check_operands("custom_jvp_call", operands, call)
    return list(call.out_avals)


def _custom_vjp_call_rule(*operands: ShapedArray, call: Program, fwd: Any, bwd: Any, num_consts: int,
                          symbolic_zeros: bool) -> list[ShapedArray]:
    _check_operands("custom_vjp_call", operands, call)
    return list(call.out_avals)


def _checkpoint_rule(*operands: ShapedArray, jaxpr: Program, prevent_cse: bool, differentiated: bool,
                     policy: Any) -> list[ShapedArray]:
    _check_operands("checkpoint", operands, jaxpr)
    return list(jaxpr.out_avals)


def _jit_call_rule(*operands: ShapedArray, name: str, jaxpr: Program) -> list[ShapedArray]:
    _check_operands(f"jit({name})", operands, jaxpr)
    return list(jaxpr.out_avals)


custom_jvp_call_p = family.primitive("custom_jvp_call", shape_rule=_custom_jvp_call_rule, multiple_results=True)
custom_vjp_call_p = family.primitive("custom_vjp_call", shape_rule=_custom_vjp_call_rule, multiple_results=True)
checkpoint_p = family.primitive("checkpoint", shape_rule=_checkpoint_rule, multiple_results=True)
name_p = family.primitive("name", shape_rule=lambda x, *, name: x)
jit_call_p = family.primitive("jit", shape_rule=_jit_call_rule, multiple_results=True)
