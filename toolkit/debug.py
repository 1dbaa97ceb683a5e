"""``toolkit.debug``: print and call back from inside compiled programs (``jax.debug``).

:func:`print` and :func:`callback` work eagerly and under ``jit``, ``vmap``
(once per batch element), ``grad`` (the forward values, once), ``lax.scan`` /
``while_loop`` (once per iteration) and ``shard_map`` (once per device, with
its block). Inside a program they are host callbacks on jaxlib's mechanism
(``toolkit/lax/callbacks.py``). ``ordered=True`` keeps them in program order
with the other ordered callbacks; unordered ones may run in any order XLA
picks. A call returns after its program has run, prints included.

:func:`log` is :func:`print` to the ``toolkit.debug`` logger. :func:`breakpoint` stops the program where
it is called and runs a text debugger on the caller's frames with the values computed (``toolkit/debugger.py``).

:func:`visualize_sharding` / :func:`visualize_array_sharding` print how an array's elements are laid
out over devices, as the plain-text table JAX's ``rich`` output shows without colour;
:func:`inspect_array_sharding` calls back with a value's sharding (at once for arrays; inside ``jit``
only for values whose sharding is in their type — explicit mesh axes — see its docstring).
"""

from __future__ import annotations

import builtins
import logging
import string
import sys
from typing import Any, Callable

import numpy as np

from toolkit import debugger as _debugger
from toolkit import numpy as tnp
from toolkit.core import pytrees
from toolkit.core.avals import aval_of
from toolkit.lax.autodiff import stop_gradient
from toolkit.lax.callbacks import bind_debug_callback, pure_callback

__all__ = ["breakpoint", "callback", "inspect_array_sharding", "log", "print", "visualize_array_sharding",
           "visualize_sharding"]


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

    Array arguments arrive as arrays on the CPU device (JAX's ``jax.Array``s); other leaves (strings, ...) as
    given.
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

    Formatting is ``str.format`` on the values (CPU arrays) under the numpy print options
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


def breakpoint(*, backend: str | None = None, filter_frames: bool = True, num_frames: int | None = None,
               ordered: bool = False, token: Any = None, **kwargs: Any) -> Any:
    """Stop where this is called and run an interactive debugger on the caller's frames (``jax.debug.breakpoint``).

    At trace time the caller's Python frames are captured (toolkit's own dropped when ``filter_frames``; the
    ``num_frames`` innermost kept); their traced locals become the operands of a host callback, the rest stay
    as they are. When the program runs, the debugger (``backend``; by default and for unknown names the CLI,
    prompt ``(jdb)``) shows those frames with the values computed: ``p``/``pp`` an expression in the selected
    frame, ``u``/``d`` move, ``l``/``ll`` list, ``w`` where, ``c`` continue, ``q`` quit (``SystemExit``),
    ``h`` help. Eagerly it stops at once; under ``vmap`` once per batch element; under ``grad`` with the
    primal values; in ``scan``/loops once per iteration. ``ordered=True`` orders it with the other ordered
    effects. ``token``: a pytree of arrays the stop waits for, returned (pass it on: a stop whose token is
    unused may be dropped); exclusive with ``ordered``. Other keywords go to the debugger (the CLI's:
    ``stdin``, ``stdout``, ``completekey``). ``toolkit.export`` refuses a program with a breakpoint (a host
    callback), as JAX's. Returns ``token`` (None without one).
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    _debugger.check_debugger_kwargs(backend, kwargs)
    operands, rebuild = _debugger.capture_frames(sys._getframe(1), filter_frames=filter_frames,
                                                 num_frames=num_frames)

    def stop(*values: Any) -> None:
        # the host callback hands numpy values; the frames show arrays, as JAX's debugger does
        _debugger.run_frames(rebuild([tnp.asarray(v) for v in values]), backend, kwargs)
    stop.__qualname__ = "debug.breakpoint"
    if token is None:
        bind_debug_callback(stop, operands, ordered=ordered, kind="debug.breakpoint")
        return None

    def stop_then_token(token_value: Any, *values: Any) -> Any:
        stop(*values)
        return token_value
    token, operands = stop_gradient((token, operands))
    return pure_callback(stop_then_token, token, token, *operands)


# --- sharding inspection and visualization (jax.debug.inspect_array_sharding, visualize_*) ----------------------


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call ``callback(sharding)`` for every array in the pytree ``value`` (``jax.debug.inspect_array_sharding``).

    Arrays: at once, with their ``sharding``. Inside ``jit``: at trace time, for values whose sharding is part
    of their type (explicit mesh axes, ``toolkit.typeof``). JAX also reports the sharding XLA's partitioner
    chooses for other intermediate values (at compile time); toolkit cannot yet, and raises
    ``NotImplementedError`` for them rather than guessing (docs/differences-from-jax.md).
    """
    if not callable(callback):
        raise TypeError(f"inspect_array_sharding: callback must be callable, got {type(callback).__name__}")
    for leaf in pytrees.tree_leaves(value):
        sharding = getattr(leaf, "sharding", None)
        if sharding is None:
            aval = getattr(leaf, "aval", None)
            sharding = getattr(aval, "sharding", None)
        if sharding is None:
            if hasattr(leaf, "aval"):
                raise NotImplementedError(
                    "inspect_array_sharding of a traced value whose sharding is not in its type: toolkit cannot "
                    "report the sharding XLA's partitioner chooses inside jit yet. Inspect explicitly sharded "
                    "values (toolkit.typeof), or the compiled function's input_shardings/output_shardings.")
            raise TypeError(f"inspect_array_sharding: {type(leaf).__name__} is not an array")
        callback(sharding)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print ``arr``'s sharding as :func:`visualize_sharding` does (``jax.debug.visualize_array_sharding``)."""
    inspect_array_sharding(arr, callback=lambda sharding: visualize_sharding(arr.shape, sharding, **kwargs))


def _chunk_index(size: int, index: Any) -> int:
    start, stop, _ = index.indices(size) if isinstance(index, slice) else (index, index + 1, 1)
    if (start, stop) == (0, size):
        return 0
    return start // (stop - start)


def visualize_sharding(shape: Any, sharding: Any, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map: Any = None) -> None:
    """Print which devices hold which block of an array of ``shape`` (1 or 2 dimensions) laid out by ``sharding``.

    The table is JAX's (``jax.debug.visualize_sharding``) as ``rich`` prints it without colour: one cell per
    block, sized by the block's share of the array (``scale``, ``min_width``, ``max_width`` as JAX's), labelled
    with the platform and the ids of the devices holding it. ``use_color`` and ``color_map`` are accepted for
    JAX's signature; the output is always plain text.
    """
    del use_color, color_map  # plain text only (what rich prints to a file or a pipe)
    shape = tuple(int(d) for d in shape)
    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    indices = sharding.devices_indices_map(shape)
    kind = next(iter(sharding.device_set)).platform.upper()
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    cells: dict[tuple[int, int], set[int]] = {}
    sizes: dict[tuple[int, int], tuple[float, float | None]] = {}
    for device, index in indices.items():
        index = tuple(index) + (slice(None),) * (len(shape) - len(tuple(index)))
        spans = [index[d].indices(shape[d]) if isinstance(index[d], slice) else (index[d], index[d] + 1, 1)
                 for d in range(len(shape))]
        chunks = [_chunk_index(shape[d], index[d]) for d in range(len(shape))]
        chunk: tuple[int, int]
        if len(shape) == 2:
            chunk = (chunks[0], chunks[1])
            sizes[chunk] = ((spans[1][1] - spans[1][0]) / shape[1], (spans[0][1] - spans[0][0]) / shape[0])
        else:
            chunk = (0, chunks[0])
            sizes[chunk] = ((spans[0][1] - spans[0][0]) / shape[0], None)
        cells.setdefault(chunk, set()).add(device.id)
    rows = max(r for r, _ in cells) + 1
    cols = max(c for _, c in cells) + 1
    grid: list[list[list[str]]] = []  # rows of cells, each a list of text lines
    for i in range(rows):
        row = []
        for j in range(cols):
            entry = f"{kind} " + ",".join(str(d) for d in sorted(cells[i, j]))
            width_share, height_share = sizes[i, j]
            width = min(max(int(width_share * base_width * 2.5), min_width), max_width)
            height = 1 if height_share is None else int(height_share * base_height)
            left, extra = divmod(width - len(entry) - 2, 2)
            right = left + extra
            top, extra = divmod(height - 2, 2)
            bottom = top + extra
            line = " " * max(left, 0) + entry + " " * max(right, 0)
            blank = " " * len(line)
            row.append([blank] * max(top, 0) + [line] + [blank] * max(bottom, 0))
        grid.append(row)
    widths = [max(len(grid[i][j][0]) for i in range(rows)) for j in range(cols)]
    heights = [max(len(cell) for cell in row) for row in grid]

    def rule(left: str, middle: str, right: str) -> str:
        return left + middle.join("─" * w for w in widths) + right

    out = [rule("┌", "┬", "┐")]
    for i, row in enumerate(grid):
        for k in range(heights[i]):
            out.append("│" + "│".join((cell[k] if k < len(cell) else "").center(widths[j])
                                      for j, cell in enumerate(row)) + "│")
        out.append(rule("├", "┼", "┤") if i < rows - 1 else rule("└", "┴", "┘"))
    builtins.print("\n".join(out))
