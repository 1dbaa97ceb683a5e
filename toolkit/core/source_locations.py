"""Where an equation comes from: the user's stack frames and the name stack, as JAX's ``source_info_util``.

Every traced equation records a ``SourceInfo``: the innermost frame outside toolkit itself (and the standard
library), its user callers up to the start of the trace (then the frames outside the trace, where the traced
function was called), and the name stack of transformations and scopes it was made under. Lowering prints them
as MLIR locations (``Lowered.as_text(debug_info=True)``). ``toolkit.core.tracing`` records them; this module
only computes and interns them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import sysconfig
from types import CodeType, FrameType
from typing import TYPE_CHECKING, NamedTuple, Sequence

from toolkit.core.program import SourceInfo

if TYPE_CHECKING:
    from toolkit.core.tracing import ProgramBuilder


_TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Programs shipped with toolkit (the demo, command-line tools) count as user code.
_USER_CODE_INSIDE_TOOLKIT = _TOOLKIT_DIR + "tools" + os.sep
# Frames never shown as the user's, as JAX's source_info_util excludes its own package and the standard library.
_LIBRARY_PREFIXES = tuple(dict.fromkeys([_TOOLKIT_DIR, sysconfig.get_path("stdlib") + os.sep,
                                         os.path.dirname(contextlib.__file__) + os.sep]))


#: file name -> whether its frames are the user's. Every equation walks ~10 frames, most of them toolkit's: a
#: dictionary hit on the (hash-cached) name costs a tenth of the prefix tests.
_USER_FILES: dict[str, bool] = {}


def _is_user_file(filename: str) -> bool:
    user = _USER_FILES.get(filename)
    if user is None:
        user = not filename.startswith(_LIBRARY_PREFIXES) or filename.startswith(_USER_CODE_INSIDE_TOOLKIT)
        if len(_USER_FILES) >= 10_000:  # names of exec'd or generated code are unbounded in principle
            _USER_FILES.clear()
        _USER_FILES[filename] = user
    return user


# --- name stacks ---------------------------------------------------------------------------------------------


class Scope(NamedTuple):
    """A name-stack entry naming a scope (``jit(g)``): rendered as itself."""

    name: str


class Transform(NamedTuple):
    """A name-stack entry naming a transformation (``jvp``, ``transpose``, ``vmap``): it wraps what follows it."""

    name: str


#: name stack -> its text (stacks are few and immutable).
_RENDERED: dict[tuple, str] = {}


def render_name_stack(stack: tuple) -> str:
    """A name stack as JAX prints it: ``(Transform("transpose"), Transform("jvp"))`` is ``transpose(jvp())``,
    ``(Transform("jvp"), Scope("jit(g)"))`` is ``jvp(jit(g))``, scopes are joined by ``/``."""
    text = _RENDERED.get(stack)
    if text is None:
        parts: list[str] = []
        for entry in reversed(stack):
            if type(entry) is Transform:
                if parts:
                    parts[-1] = f"{entry.name}({parts[-1]})"
                else:
                    parts.append(f"{entry.name}()")
            else:
                parts.append(entry.name)
        text = "/".join(reversed(parts))
        if len(_RENDERED) < 10_000:
            _RENDERED[stack] = text
    return text


def user_source_info(builder: "ProgramBuilder | None" = None) -> SourceInfo | None:
    """Where the user called us: the innermost stack frame outside toolkit itself, with its callers.

    The callers are the user's frames up to the start of ``builder``'s trace (the root trace, or the nearest
    enclosing ``jit``'s), followed, for a root trace, by the user's frames outside it (where the traced
    function was called, as JAX keeps them), at most 100 frames in all. Library frames (toolkit's, the
    standard library's) are left out. When the trace itself runs no user code (a function of toolkit's own,
    jitted), the user's frames outside it are taken. Without a builder: the first user frame, without
    callers. Each frame's description is cached per (code, instruction): a repeated call site costs one
    dictionary look-up per frame. The result is interned: equal call sites give the same object."""
    frame: FrameType | None = sys._getframe(2)
    root = builder.frames_root if builder is not None else None
    stop = root.entry_frame if root is not None else None
    frames: list[SourceInfo] = []
    while frame is not None:
        if id(frame) == stop:
            assert root is not None
            outer = root.outer_frames if root.outer_frames is not None else collect_outer(root, frame)
            if frames or outer:
                return chain(frames, outer)
            stop = None  # only toolkit inside a nested jit's trace: the first user frame outside it, as before
        code = frame.f_code
        if _is_user_file(code.co_filename):
            entry = _FRAME_INFO.get((id(code), frame.f_lasti))
            frames.append(entry[1] if entry is not None and entry[0] is code else _describe_frame(code, frame.f_lasti))
            if stop is None or len(frames) == _MAX_FRAMES:
                break
        frame = frame.f_back
    if not frames:
        return None
    return chain(frames, ())


def collect_outer(root: "ProgramBuilder", entry: FrameType) -> tuple[SourceInfo, ...]:
    """The user's frames outside ``root``'s trace (whose function runs in ``entry``), innermost first; cached."""
    frames: list[SourceInfo] = []
    frame = entry.f_back
    while frame is not None and len(frames) < _MAX_FRAMES - 1:
        code = frame.f_code
        if _is_user_file(code.co_filename):
            entry_info = _FRAME_INFO.get((id(code), frame.f_lasti))
            frames.append(entry_info[1] if entry_info is not None and entry_info[0] is code
                          else _describe_frame(code, frame.f_lasti))
        frame = frame.f_back
    outer = _intern_frames(frames)
    root.outer_frames = outer
    return outer


def _intern_frames(frames: Sequence[SourceInfo]) -> tuple[SourceInfo, ...]:
    """One tuple object per sequence of (cached) frames: chains key on its id."""
    key = tuple(map(id, frames))
    interned = _FRAME_TUPLES.get(key)
    if interned is None:
        interned = _FRAME_TUPLES[key] = tuple(frames)
    return interned


def chain(frames: list[SourceInfo], outer: tuple[SourceInfo, ...]) -> SourceInfo:
    """``frames[0]`` with ``frames[1:]`` then ``outer`` as its callers (at most 100 frames), interned."""
    if not frames:
        frames, outer = [outer[0]], _intern_frames(outer[1:])
    if not outer and len(frames) == 1:
        return frames[0]
    key = (id(outer), *map(id, frames))  # frames are _FRAME_INFO's, outer _FRAME_TUPLES': ids stable while cached
    chain = _CHAINS.get(key)
    if chain is None:
        if len(_CHAINS) > 100_000:
            _CHAINS.clear()
        first = frames[0]
        callers = tuple(frames[1:]) + outer if len(frames) > 1 else outer
        chain = _CHAINS[key] = SourceInfo(first.file, first.line, first.function, first.column, first.end_line,
                                          first.end_column, callers[:_MAX_FRAMES - 1])
    return chain


#: (id(code), instruction offset) -> (code, the user's frame there as a SourceInfo without callers).
#: Keyed by id: a code object hashes its whole contents. The entry keeps the code alive, so its id is
#: not reused while cached.
_FRAME_INFO: dict[tuple[int, int], tuple[CodeType, SourceInfo]] = {}
#: (ids of the frames' SourceInfos, and of the outer frames' tuple) -> the SourceInfo of that call chain
#: (cleared with _FRAME_INFO).
_CHAINS: dict[tuple[int, ...], SourceInfo] = {}
#: (ids of frames) -> the tuple of those frames (the frames outside a trace), cleared with _FRAME_INFO.
_FRAME_TUPLES: dict[tuple[int, ...], tuple[SourceInfo, ...]] = {}
#: (id(SourceInfo), name stack) -> (that SourceInfo, the same with that name stack), cleared with _FRAME_INFO.
_NAMED: dict[tuple, tuple[SourceInfo | None, SourceInfo]] = {}
_MAX_FRAMES = 100  # as JAX's default jax_traceback_in_locations_limit
#: What an equation made with a name stack but no user frame records (lowered as a name without frames).
_NO_FRAMES = SourceInfo("", 0, "")


def with_name_stack(info: SourceInfo | None, stack: tuple, compute_type: str | None = None) -> SourceInfo:
    """``info`` (frames) under the name stack ``stack`` and ``compute_type``, interned."""
    key = (id(info), stack, compute_type)
    entry = _NAMED.get(key)
    if entry is not None and entry[0] is info:
        return entry[1]
    named = (info or _NO_FRAMES)._replace(name_stack=stack, compute_type=compute_type)
    if len(_NAMED) > 100_000:
        _NAMED.clear()
    _NAMED[key] = (info, named)
    return named


def _describe_frame(code: CodeType, lasti: int) -> SourceInfo:
    """A user's frame (``code`` running the instruction at ``lasti``) as a ``SourceInfo``, cached."""
    # co_positions has one entry per 2-byte code unit; lasti is the offset of the running instruction.
    position = next(itertools.islice(code.co_positions(), lasti // 2, None), None) if lasti >= 0 else None
    line, end_line, column, end_column = position or (None, None, None, None)
    if line is None:
        line = code.co_firstlineno if lasti < 0 else _line_of(code, lasti)
    info = SourceInfo(code.co_filename, line, code.co_qualname, column or 0, end_line or line, end_column or 0)
    if len(_FRAME_INFO) > 100_000:  # code made at run time (exec) must not grow it without bound
        _FRAME_INFO.clear()
        _CHAINS.clear()
        _FRAME_TUPLES.clear()
        _NAMED.clear()
    _FRAME_INFO[(id(code), lasti)] = (code, info)
    return info


def _line_of(code: CodeType, lasti: int) -> int:
    """The line of the instruction at ``lasti`` (when co_positions has none)."""
    line = code.co_firstlineno
    for start, end, number in code.co_lines():
        if start <= lasti < end and number is not None:
            return number
    return line
