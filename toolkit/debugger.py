"""The interactive debugger behind ``toolkit.debug.breakpoint`` (JAX's ``jax._src.debugger``).

At trace time :func:`capture_frames` records the caller's Python frames (toolkit's own frames filtered out, as
JAX filters its own): file, line, source, globals, and locals split into the traced values (toolkit tracers,
which become the operands of a host callback) and the rest (kept as Python values). When the program runs, the
callback rebuilds the frames with the values computed and calls a debugger: by default :class:`CliDebugger`, a
small text debugger on ``cmd.Cmd`` with JAX's commands (``p``, ``pp``, ``u``/``up``, ``d``/``down``,
``l``/``list``, ``ll``, ``w``/``where``, ``c``/``continue``, ``q``/``quit``, ``h``/``help``; any other line is
an expression). ``stdin``/``stdout`` passed to ``toolkit.debug.breakpoint`` reach the debugger, as in JAX
(``breakpoint(stdin=io.StringIO("p x\\nc\\n"), stdout=out)``): tests drive it that way.
"""

from __future__ import annotations

import cmd
import dataclasses
import inspect
import os
import pprint
import sys
import threading
import traceback
import types
from typing import IO, Any, Callable, Protocol

from toolkit.core import pytrees
from toolkit.core.tracing import Tracer

__all__ = ["CliDebugger", "DebuggerFrame", "capture_frames", "get_debugger", "register_debugger", "run_frames"]

#: Frames from files under this directory are toolkit's own (``filter_frames``).
_TOOLKIT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame as the debugger shows it (JAX's ``DebuggerFrame``).

    ``source`` is the source of the frame's function (or module), ``offset`` the index of the current line in it
    (None when the source cannot be read, e.g. code from ``exec``).
    """

    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: str
    source: list[str]
    lineno: int
    offset: int | None


class _CantFlatten:
    """Stands for a local whose value cannot be flattened as a pytree (JAX's ``cant_flatten``)."""

    def __repr__(self) -> str:
        return "<cant_flatten>"


cant_flatten = _CantFlatten()


def _is_internal(frame: types.FrameType) -> bool:
    filename = os.path.abspath(frame.f_code.co_filename)
    return filename.startswith(_TOOLKIT_DIR) or "importlib._bootstrap" in filename


def _source_of(frame: types.FrameType) -> tuple[list[str], int | None]:
    """The source around ``frame`` and the current line's index in it (JAX's ``from_frameinfo``)."""
    try:
        lines, start = inspect.getsourcelines(frame)
    except (OSError, TypeError):
        return [], None
    source = "".join(lines).split("\n")
    offset = frame.f_lineno - max(start, 1)  # start is 0 for a module's frame (the whole file)
    if not 0 <= offset < len(source):
        return [], None
    return source, offset


class _FrameRecipe:
    """A frame captured at trace time: its traced locals as operands, everything else kept as it is."""

    def __init__(self, frame: types.FrameType):
        self.filename = frame.f_code.co_filename
        self.lineno = frame.f_lineno
        self.source, self.offset = _source_of(frame)
        self.code_context = self.source[self.offset] if self.offset is not None else ""
        self.globals = frame.f_globals
        self.names: list[str] = []
        self.trees: list[Any] = []
        self.static: list[list[Any]] = []  # the leaves, tracers replaced by None
        self.traced: list[list[int]] = []  # per local, the positions of its tracer leaves
        self.operands: list[Any] = []  # the tracers, in capture order
        for name, value in frame.f_locals.items():
            try:
                leaves, tree = pytrees.tree_flatten(value)
            except Exception:  # a value pytrees refuses: shown as <cant_flatten>, as JAX does
                leaves, tree = [cant_flatten], None
            positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tracer)]
            self.names.append(name)
            self.trees.append(tree)
            self.traced.append(positions)
            self.static.append([None if i in positions else leaf for i, leaf in enumerate(leaves)])
            self.operands.extend(leaves[i] for i in positions)

    def rebuild(self, values: Any) -> DebuggerFrame:
        """The frame with the traced locals replaced by ``values`` (an iterator, consumed in capture order)."""
        local_values = {}
        for name, tree, static, positions in zip(self.names, self.trees, self.static, self.traced):
            leaves = list(static)
            for i in positions:
                leaves[i] = next(values)
            local_values[name] = cant_flatten if tree is None else pytrees.tree_unflatten(tree, leaves)
        return DebuggerFrame(self.filename, local_values, self.globals, self.code_context, self.source,
                             self.lineno, self.offset)


def capture_frames(frame: types.FrameType | None, *, filter_frames: bool = True,
                   num_frames: int | None = None) -> tuple[list[Any], Callable[[Any], list[DebuggerFrame]]]:
    """The frames from ``frame`` outwards: the traced values among their locals, and a function rebuilding them.

    ``filter_frames`` drops toolkit's own frames; ``num_frames`` keeps that many innermost frames. The function
    takes the values computed for the operands (same order) and returns the frames, innermost first.
    """
    recipes = []
    while frame is not None:
        if not (filter_frames and _is_internal(frame)):
            recipes.append(_FrameRecipe(frame))
        frame = frame.f_back
    if num_frames is not None:
        recipes = recipes[:num_frames]
    operands = [x for recipe in recipes for x in recipe.operands]

    def rebuild(values: Any) -> list[DebuggerFrame]:
        iterator = iter(values)
        return [recipe.rebuild(iterator) for recipe in recipes]
    return operands, rebuild


class Debugger(Protocol):
    """A debugger backend: called with the frames (innermost first), the thread id off the main thread, and the
    keyword arguments given to ``toolkit.debug.breakpoint``."""

    def __call__(self, frames: list[DebuggerFrame], thread_id: int | None, **kwargs: Any) -> None:
        ...


_debugger_registry: dict[str, tuple[int, Debugger]] = {}


def get_debugger(backend: str | None = None) -> Debugger:
    """The debugger registered as ``backend``, else the one with the highest priority (JAX's fallback)."""
    if backend is not None and backend in _debugger_registry:
        return _debugger_registry[backend][1]
    debuggers = sorted(_debugger_registry.values(), key=lambda entry: -entry[0])
    if not debuggers:
        raise ValueError("No debuggers registered!")
    return debuggers[0][1]


def register_debugger(name: str, debugger: Debugger, priority: int) -> None:
    """Make ``debugger`` available as ``backend=name``; the highest ``priority`` is the default (CLI: -1)."""
    if name in _debugger_registry:
        raise ValueError(f"Debugger with name \"{name}\" already registered.")
    _debugger_registry[name] = (priority, debugger)


debug_lock = threading.Lock()


def run_frames(frames: list[DebuggerFrame], backend: str | None, kwargs: dict[str, Any]) -> None:
    """Run the debugger on ``frames`` (one stop), one stop at a time across threads."""
    thread_id = None if threading.current_thread() is threading.main_thread() else threading.get_ident()
    debugger = get_debugger(backend)
    with debug_lock:  # callbacks may run on several threads at once (vmap, shard_map)
        debugger(frames, thread_id, **kwargs)


class CliDebugger(cmd.Cmd):
    """A text debugger over the captured frames (JAX's ``CliDebugger``; prompt ``(jdb)``).

    ``stdin``/``stdout`` default to the terminal; given, the commands are read from ``stdin`` (what tests do).
    """

    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, completekey: str = "tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def current_frame(self) -> DebuggerFrame:
        """The selected frame (0 is where ``breakpoint`` was called)."""
        return self.frames[self.frame_index]

    def evaluate(self, expr: str) -> Any:
        """``expr`` evaluated in the selected frame's globals and locals (locals win), as JAX's."""
        frame = self.current_frame()
        env = {**frame.globals, **frame.locals}
        return eval(expr, env)  # noqa: S307 - the user's own expression at their own prompt, as pdb's

    def _print(self, text: str) -> None:
        print(text, file=self.stdout)

    def default(self, line: str) -> None:
        """Any other line: evaluate it and print its ``repr``."""
        self.do_p(line)

    def _error_message(self) -> None:
        exc_type, exc_value = sys.exc_info()[:2]
        assert exc_type is not None
        self._print("*** " + traceback.format_exception_only(exc_type, exc_value)[-1].strip())

    def print_backtrace(self) -> None:
        """The frames, outermost first (``where``)."""
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None else f"    {frame.source[frame.offset].strip()}")
        self._print("\n".join(lines))

    def print_context(self, num_lines: int | None = 2) -> None:
        """The selected frame's position and ``num_lines`` lines around it (all of them when None)."""
        frame = self.current_frame()
        context = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is None:
            context.append("    <no source>")
        for i, line in enumerate(frame.source if frame.offset is not None else []):
            assert frame.offset is not None
            if num_lines is None or frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                context.append(("->  " if i == frame.offset else "    ") + line)
        self._print("\n".join(context))

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression
        """
        try:
            self._print(repr(self.evaluate(arg)))
        except Exception:
            self._error_message()

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression
        """
        try:
            self._print(pprint.pformat(self.evaluate(arg)))
        except Exception:
            self._error_message()

    def do_up(self, arg: str) -> None:
        """u(p)
        Move up a stack frame.
        """
        if self.frame_index == len(self.frames) - 1:
            self._print("At topmost frame.")
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own)
        Move down a stack frame.
        """
        if self.frame_index == 0:
            self._print("At bottommost frame.")
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file.
        """
        self.print_context(num_lines=5)
    do_l = do_list

    def do_ll(self, arg: str) -> None:
        """ll | longlist
        List the whole source of the current function or module.
        """
        self.print_context(num_lines=None)
    do_longlist = do_ll

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution.
        """
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> None:
        """q(uit)
        (exit)
        Quit the debugger. The program is given an exit command.
        """
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command.
        """
        self.print_backtrace()
    do_w = do_bt = do_where

    def do_h(self, arg: str) -> bool | None:
        """h(elp)
        Without argument, list the commands; with one, its help.
        """
        return self.do_help(arg)

    def run(self) -> None:
        """Read commands until ``c`` (or ``q``); Ctrl-C prints a notice and goes on, as JAX's."""
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


_CLI_KEYWORDS = frozenset({"stdin", "stdout", "completekey"})


def run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None, **kwargs: Any) -> None:
    """The CLI backend: a :class:`CliDebugger` on the frames, until ``c``."""
    CliDebugger(frames, thread_id, **kwargs).run()


def check_debugger_kwargs(backend: str | None, kwargs: dict[str, Any]) -> None:
    """At the ``breakpoint`` call: keyword arguments the CLI debugger would refuse when the program runs."""
    debugger = get_debugger(backend)
    if debugger is run_cli_debugger:
        unknown = sorted(set(kwargs) - _CLI_KEYWORDS)
        if unknown:
            raise TypeError(f"toolkit.debug.breakpoint: unexpected keyword argument(s) {unknown}; the cli debugger "
                            f"takes {sorted(_CLI_KEYWORDS)}")


register_debugger("cli", run_cli_debugger, -1)
