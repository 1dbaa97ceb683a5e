"""Checkpoint policies (``toolkit.checkpoint_policies``, JAX's ``jax.checkpoint_policies``).

A policy is ``policy(prim, *in_avals, **params) -> bool``: may reverse mode
save the result of this equation of a ``toolkit.checkpoint`` body (True) or must
it recompute it (False)? Names come from ``toolkit.ad.checkpoint_name``.

Example::

    f = toolkit.checkpoint(layer, policy=toolkit.checkpoint_policies.dots_saveable)
"""

from __future__ import annotations

from typing import Any, Callable

from toolkit.lax import calls, linalg

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims", "save_anything_except_these_names",
           "save_any_names_but_these", "save_only_these_names", "save_from_both_policies"]


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
        return bool(policy_1(prim, *avals, **params)) or bool(policy_2(prim, *avals, **params))
    return policy
