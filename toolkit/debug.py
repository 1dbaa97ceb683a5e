"""``toolkit.debug``: print and call back from inside compiled programs (``jax.debug``).

:func:`print` and :func:`callback` work eagerly and under ``jit``, ``vmap``
(once per batch element), ``grad`` (the forward values, once), ``lax.scan`` /
``while_loop`` (once per iteration) and ``shard_map`` (once per device, with
its block). Inside a program they are host callbacks on jaxlib's mechanism
(``toolkit/lax/callbacks.py``). ``ordered=True`` keeps them in program order
with the other ordered callbacks; unordered ones may run in any order XLA
picks. A call returns after its program has run, prints included.

:func:`log` is :func:`print` to the ``toolkit.debug`` logger. ``jax.debug.breakpoint``
is absent (see docs/debugging.md for why).
"""

from __future__ import annotations

import builtins
import logging
import string
import sys
from typing import Any, Callable

import numpy as np

from toolkit.core import pytrees
from toolkit.core.avals import aval_of
from toolkit.lax.callbacks import bind_debug_callback

__all__ = ["callback", "log", "print"]


def _split(args: tuple, kwargs: dict) -> tuple[Any, list[Any], dict[int, Any]]:
    """Flatten ``(args, kwargs)``: the array leaves (traced) and the others (kept as Python values)."""
    leaves, tree = pytrees.tree_flatten((args, kwargs))
    dynamic, static = [], {}
    for i, leaf in enumerate(leaves):
        try:
            aval_of(leaf)
        except TypeError:
            static[i] = leaf
        else:
            dynamic.append(leaf)
    return tree, dynamic, static


def _merge(tree: Any, dynamic: Any, static: dict[int, Any]) -> tuple[tuple, dict]:
    values = iter(dynamic)
    leaves = [static[i] if i in static else next(values) for i in range(len(static) + len(dynamic))]
    args, kwargs = pytrees.tree_unflatten(tree, leaves)
    return args, kwargs


def callback(callback: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Call ``callback(*args, **kwargs)`` on the host when the program runs (``jax.debug.callback``).

    Array arguments arrive as numpy arrays; other leaves (strings, ...) as given.
    The callback's return value is ignored. Two forms, as JAX's:
    ``callback(f, *args, ordered=...)`` and ``callback(ordered=...)(f, *args)``.
    ``partitioned`` is accepted for JAX's signature; inside ``shard_map`` each
    device already calls back with its block. A non-callable is a ``TypeError``.
    """
    def debug_callback(function: Callable[..., Any], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(function):
            raise TypeError("first argument to toolkit.debug.callback must be callable, "
                            f"but got an object of type {type(function)}")
        tree, dynamic, static = _split(c_args, c_kwargs)

        def flat(*values: Any) -> None:
            f_args, f_kwargs = _merge(tree, values, static)
            function(*f_args, **f_kwargs)
        flat.__qualname__ = getattr(function, "__qualname__", type(function).__name__)
        bind_debug_callback(flat, dynamic, ordered=ordered, kind="debug.callback")

    if callback is not None:
        debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return debug_callback


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting (JAX's ``_DebugPrintFormatChecker``)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `toolkit.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `toolkit.debug.print`: {unused_kwargs}. "
                "You may be passing an f-string (i.e, `f\"{x}\"`) into "
                "`toolkit.debug.print` and instead should pass in a regular string.")


_checker = _FormatChecker()


def _format(fmt: str, printoptions: dict, has_placeholders: bool, args: tuple, kwargs: dict) -> str:
    if has_placeholders:
        with np.printoptions(**printoptions):
            return fmt.format(*args, **kwargs)
    return " ".join((fmt, *(builtins.str(a) for a in args)))


def print(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
          skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` when the program runs, with the values it computes (``jax.debug.print``).

    Formatting is ``str.format`` on numpy values under the numpy print options
    in force at the call; a format without placeholders prints its arguments
    after it, space-separated. Unused arguments are a ``ValueError`` (an
    f-string is the usual cause) unless ``skip_format_check``. Writes to
    ``sys.stdout``. Two forms, as JAX's: ``print("x={x}", x=x, ordered=True)``
    and ``print(ordered=True)("x={x}", x=x)``.
    """
    return _print_to(None, fmt, args, kwargs, ordered=ordered, skip_format_check=skip_format_check)


def log(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """:func:`print`, but the message goes to the ``toolkit.debug`` logger at INFO (``jax.debug.log``).

    The record names the file and line of the ``log`` call (where the program was traced).
    """
    caller = sys._getframe(1)
    return _print_to((caller.f_code.co_filename, caller.f_lineno), fmt, args, kwargs, ordered=ordered,
                     skip_format_check=skip_format_check)


_logger = logging.getLogger("toolkit.debug")


def _print_to(log_site: tuple[str, int] | None, fmt: str | None, args: tuple, kwargs: dict, *, ordered: bool,
              skip_format_check: bool) -> Callable[..., None] | None:
    """``print``/``log``: to stdout (``log_site`` None) or as a log record made at ``log_site`` (file, line)."""
    api = "toolkit.debug.print" if log_site is None else "toolkit.debug.log"

    def debug_print(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(f"{api}: the format must be a string, got {type(fmt).__name__}")
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        tree, dynamic, static = _split(c_args, c_kwargs)
        printoptions = dict(np.get_printoptions())

        def flat(*values: Any) -> None:
            f_args, f_kwargs = _merge(tree, values, static)
            message = _format(fmt, printoptions, has_placeholders, f_args, f_kwargs)
            if log_site is None:
                sys.stdout.write(message + "\n")
            else:
                _logger.handle(_logger.makeRecord(_logger.name, logging.INFO, log_site[0], log_site[1], message, (),
                                                None))
        flat.__qualname__ = "debug.print" if log_site is None else "debug.log"
        bind_debug_callback(flat, dynamic, ordered=ordered, kind=flat.__qualname__)

    if fmt is not None:
        debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return debug_print
