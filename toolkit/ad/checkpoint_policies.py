"""Checkpoint policies (``toolkit.checkpoint_policies``, JAX's ``jax.checkpoint_policies``).

A policy is ``policy(prim, *in_avals, **params) -> bool``: may reverse mode
save the result of this equation of a ``toolkit.checkpoint`` body (True) or must
it recompute it (False)? Names come from ``toolkit.ad.checkpoint_name``.

Example::

    f = toolkit.checkpoint(layer, policy=toolkit.checkpoint_policies.dots_saveable)
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from toolkit.lax import calls, linalg

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims", "save_anything_except_these_names",
           "save_any_names_but_these", "save_only_these_names", "save_from_both_policies", "Offloadable",
           "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"]


class Offloadable(NamedTuple):
    """A policy's answer "save this, moved from memory ``src`` to memory ``dst``" (JAX's ``Offloadable``).

    toolkit's ``checkpoint`` saves such a residual where it is: on CPU that is
    what JAX's compiled program does too (its host transfers vanish in the CPU
    lowering); no transfer to ``dst`` is emitted for other platforms.
    """

    src: str
    dst: str


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Callable[..., Any]:
    """As :func:`dots_with_no_batch_dims_saveable`, but those results are to be offloaded from memory kind
    ``offload_src`` to ``offload_dst`` (e.g. ``"device"`` → ``"pinned_host"``) instead of kept.

    Differentiating a ``checkpoint`` with this policy saves those results (see :class:`Offloadable`): the
    gradient and, on CPU, the compiled program are JAX's.
    """
    offload = Offloadable(_memory_kind(offload_src, "offload_src"), _memory_kind(offload_dst, "offload_dst"))

    def policy(prim: Any, *_: Any, **params: Any) -> Any:
        if prim is linalg.dot_general_p:
            (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
            if not lhs_batch and not rhs_batch:
                return offload
        return False
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved: Any, names_which_can_be_offloaded: Any,
                                      offload_src: str, offload_dst: str) -> Callable[..., Any]:
    """As :func:`save_only_these_names` for ``names_which_can_be_saved``; the values named by one of
    ``names_which_can_be_offloaded`` are to be offloaded from ``offload_src`` to ``offload_dst``.

    ``ValueError`` if a name is in both sets (as JAX). An offloaded name is saved where it is when
    differentiating (see :class:`Offloadable`).
    """
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError("The names should be exclusive and should not intersect in `names_which_can_be_saved` "
                         f"and `names_which_can_be_offloaded`. Got names_which_can_be_saved={saved}, "
                         f"names_which_can_be_offloaded={offloaded} and the intersection={both}")
    offload = Offloadable(_memory_kind(offload_src, "offload_src"), _memory_kind(offload_dst, "offload_dst"))

    def policy(prim: Any, *_: Any, **params: Any) -> Any:
        if prim is calls.name_p and params["name"] in saved:
            return True
        if prim is calls.name_p and params["name"] in offloaded:
            return offload
        return False
    return policy


def _memory_kind(kind: Any, what: str) -> str:
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"{what} must be a memory kind name such as 'device' or 'pinned_host', got {kind!r}")
    return kind


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every intermediate value (no recomputation)."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing: recompute every intermediate value (the default)."""
    return False


def dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
    """Save the results of matrix products (``dot_general``), recompute the rest."""
    return prim is linalg.dot_general_p


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
    """Save the results of ``dot_general``s without batch dimensions."""
    if prim is not linalg.dot_general_p:
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_anything_except_these_names(*names_not_to_save: str) -> Callable[..., bool]:
    """Save everything except the values named (``checkpoint_name``) by one of ``names_not_to_save``."""
    names = set(names_not_to_save)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return not (prim is calls.name_p and params["name"] in names)
    return policy


def save_any_names_but_these(*names_not_to_save: str) -> Callable[..., bool]:
    """Save the named values except those named by one of ``names_not_to_save``."""
    names = set(names_not_to_save)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is calls.name_p and params["name"] not in names
    return policy


def save_only_these_names(*names_which_can_be_saved: str) -> Callable[..., bool]:
    """Save only the values named by one of ``names_which_can_be_saved``."""
    names = set(names_which_can_be_saved)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is calls.name_p and params["name"] in names
    return policy


def save_from_both_policies(policy_1: Callable[..., bool], policy_2: Callable[..., bool]) -> Callable[..., bool]:
    """Save what either policy saves."""
    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        out_1, out_2 = policy_1(prim, *avals, **params), policy_2(prim, *avals, **params)
        if isinstance(out_1, Offloadable) or isinstance(out_2, Offloadable):
            # As JAX: combining needs yes/no answers.
            raise ValueError(f"The return value of the policies should be a boolean. Got: {out_1} and {out_2}. "
                             "Please write a custom policy function directly, rather than using this helper function.")
        return bool(out_1) or bool(out_2)
    return policy
