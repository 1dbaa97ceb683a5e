"""Reading and writing modules as MLIR text, MLIR bytecode or VHLO artifacts.

The reader auto-detects: bytes starting with ``ML\\xefR`` are bytecode, and
bytecode whose producer string starts with ``StableHLO_v`` is a portable
(VHLO) artifact; anything else is text.

Example::

    module = read_module(open("f.mlirbc", "rb").read(), context)
    data = write_module(module, "vhlo", target_version="1.15.0")

Untrusted binary input: jaxlib's bytecode and VHLO readers are not hardened;
some corrupted files make them segfault, never return, or silently corrupt
the heap. ``read_module(data, context, untrusted=True)`` (what the command
lines use) first reads binary data in a forked child process
(:func:`probe_untrusted_binary`) and raises :class:`UnreadableInputError`
when the child dies of a signal or does not finish within
``TOOLKIT_UNTRUSTED_READ_TIMEOUT`` seconds (default 10, plus 1 s per MB).
Otherwise the child sends back its clean error message, or the module
re-written as bytecode by MLIR's writer, which this process parses: the
untrusted bytes themselves are never parsed in-process (a file that corrupts
the heap without crashing corrupts only the child's). Text is always read
in-process.
"""

from __future__ import annotations

import faulthandler
import io
import os
import re
import select
import signal
import sys
import time
import warnings
from typing import Callable, Literal

import jaxlib.version
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.ir.context import make_context, shared_context

BYTECODE_MAGIC = b"ML\xefR"
PORTABLE_PRODUCER = b"StableHLO_v"

InputFormat = Literal["text", "bytecode", "vhlo"]


def detect_format(data: bytes) -> InputFormat:
    """``"vhlo"``, ``"bytecode"`` or ``"text"`` for the serialized module ``data``."""
    if data.startswith(BYTECODE_MAGIC):
        # The producer string follows the magic and the version varint.
        return "vhlo" if PORTABLE_PRODUCER in data[4:64] else "bytecode"
    return "text"


_PRODUCER_VERSION = re.compile(rb"StableHLO_v(\d+)\.(\d+)\.(\d+)")


def portable_artifact_version(data: bytes) -> str | None:
    """The StableHLO version a portable artifact names in its producer string (``"1.15.0"``), or None."""
    match = _PRODUCER_VERSION.search(data[4:64]) if data.startswith(BYTECODE_MAGIC) else None
    return None if match is None else ".".join(part.decode() for part in match.groups())


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def deserialize_portable_artifact(data: bytes, context: ir.Context) -> ir.Module:
    """Read a StableHLO portable (VHLO) artifact into ``context``.

    Raises ``ValueError`` saying why it cannot be read: for an artifact
    written by a newer StableHLO than this jaxlib's, the artifact's version
    and the newest one this jaxlib reads, then the first thing it could not
    read (e.g. an op version it does not know). A newer artifact whose ops
    are all known reads normally: VHLO op versions keep their meaning.
    """
    errors: list[str] = []

    def collect(diagnostic: ir.Diagnostic) -> bool:
        # The bindings' exception says only "failed to deserialize module"; the diagnostics say what.
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(diagnostic.message)
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        return stablehlo.deserialize_portable_artifact(context, data)
    except Exception as error:  # the bindings raise ValueError / MLIRError / RuntimeError
        reasons = [e for e in errors if not e.startswith("failed to deserialize portable artifact")]
        reason = reasons[0] if reasons else (errors[0] if errors else str(error))
        version, newest = portable_artifact_version(data), stablehlo.get_current_version()
        if version is not None and _version_key(version) > _version_key(newest):
            raise ValueError(f"cannot read the StableHLO portable artifact: it was written by StableHLO {version}, "
                             f"newer than {newest}, the newest version this jaxlib ({jaxlib.version.__version__}) "
                             f"reads; first unreadable part: {reason}") from None
        written = f" (written by StableHLO {version})" if version is not None else ""
        raise ValueError(f"cannot read the StableHLO portable artifact{written}: {reason}") from None
    finally:
        handler.detach()


_empty_artifact: bytes | None = None


def load_quant_dialect(context: ir.Context) -> None:
    """Load the quant dialect into ``context`` so ``!quant.uniform`` types parse.

    jaxlib exposes no direct loader; reading any portable artifact loads it,
    so this reads a tiny one (made once per process).
    """
    global _empty_artifact

    if _empty_artifact is None:
        with context, ir.Location.unknown():
            empty = ir.Module.parse("module {}")
        _empty_artifact = stablehlo.serialize_portable_artifact(empty, stablehlo.get_current_version())
    stablehlo.deserialize_portable_artifact(context, _empty_artifact)


class UnreadableInputError(ValueError):
    """Reading untrusted binary input crashed or hung the reader (in the probe's child process)."""


#: Seconds the child of :func:`probe_untrusted_binary` may take (plus 1 s per MB); env TOOLKIT_UNTRUSTED_READ_TIMEOUT.
DEFAULT_UNTRUSTED_READ_TIMEOUT = 10.0


def untrusted_read_timeout(size: int = 0) -> float:
    """The time limit for reading ``size`` bytes of untrusted binary input out of process."""
    try:
        base = float(os.environ.get("TOOLKIT_UNTRUSTED_READ_TIMEOUT", "") or DEFAULT_UNTRUSTED_READ_TIMEOUT)
    except ValueError:
        base = DEFAULT_UNTRUSTED_READ_TIMEOUT
    return max(base, 0.1) + size / 1e6


def _probe_child(data: bytes, out: int, allow_unregistered: bool) -> None:
    """In the forked child: read ``data`` in a fresh context and answer on ``out``. Never returns.

    Answers ``OK`` + the module re-written as MLIR bytecode, ``ER`` + the
    clean error message, or ``IN`` (read, but it cannot be re-written: the
    parent reads ``data`` itself).
    """
    code = 3
    try:
        # A crash must kill the child quietly: the parent reports it on one line.
        faulthandler.disable()
        for number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGFPE, signal.SIGILL):
            signal.signal(number, signal.SIG_DFL)
        try:
            import resource  # lazy: not on every platform (the ImportError is caught)

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)

        context = make_context()
        context.allow_unregistered_dialects = allow_unregistered
        context.attach_diagnostic_handler(lambda diagnostic: True)
        try:
            module = read_module(data, context)
        except Exception as error:  # noqa: BLE001 - a clean error: its message goes to the parent
            answer = b"ER" + str(error).encode("utf-8", "replace")
        else:
            try:
                buffer = io.BytesIO()
                module.operation.write_bytecode(buffer)
                answer = b"OK" + buffer.getvalue()
            except Exception:  # noqa: BLE001
                answer = b"IN"
            # Free everything now: glibc notices a heap the reader corrupted when it is freed.
            del module
        del context  # (no gc.collect(): it would touch, and copy, every page of the parent's heap)
        view = memoryview(answer)
        while view:
            view = view[os.write(out, view):]
        code = 0
    except BaseException:  # noqa: BLE001 - never return into the parent's code
        pass
    finally:
        os._exit(code)


def _wait_for(pid: int, timeout: float) -> int | None:
    """The wait status of child ``pid``, or None when it has not exited within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
    try:
        delay = 0.0005
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return status
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if pidfd is not None:
                select.select([pidfd], [], [], remaining)
            else:
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.05)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _read_in_child(data: bytes, allow_unregistered: bool, timeout: float | None) -> bytes:
    """Fork a child that reads ``data``; its answer (see :func:`_probe_child`), or UnreadableInputError."""
    kind = detect_format(data)
    what = "the StableHLO portable artifact" if kind == "vhlo" else "MLIR bytecode"
    limit = untrusted_read_timeout(len(data)) if timeout is None else timeout
    for stream in (sys.stdout, sys.stderr):  # the child must not flush the parent's buffers
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "use of fork() may lead to deadlocks"
        pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _probe_child(bytes(data), write_end, allow_unregistered)
    os.close(write_end)
    deadline = time.monotonic() + limit
    chunks: list[bytes] = []
    timed_out = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_end], [], [], remaining)
            if not ready:
                timed_out = True
                break
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
    status = None if timed_out else _wait_for(pid, max(deadline - time.monotonic(), 0.5))
    if status is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        raise UnreadableInputError(f"cannot read {what}: the reader did not finish within {limit:.3g} s "
                                   "(the file is probably corrupted; TOOLKIT_UNTRUSTED_READ_TIMEOUT sets the limit)")
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        raise UnreadableInputError(f"cannot read {what}: the reader crashed ({name}); the file is corrupted")
    answer = b"".join(chunks)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    if code != 0 or answer[:2] not in (b"OK", b"ER", b"IN"):
        raise UnreadableInputError(f"cannot read {what}: the reader failed unexpectedly (exit status {code})")
    return answer


def probe_untrusted_binary(data: bytes, *, timeout: float | None = None) -> None:
    """Read the binary module ``data`` in a forked child; raise if that crashes or hangs.

    Returns when the child read ``data`` or rejected it with a clean error.
    Raises :class:`UnreadableInputError` when the child died of a signal or
    did not finish within ``timeout`` seconds (default
    :func:`untrusted_read_timeout`; the child is killed). Does nothing where
    ``os.fork`` does not exist.

    The child only parses (in a fresh context) and leaves with ``os._exit``:
    safe to fork from a process with other threads (a PJRT client).
    """
    if hasattr(os, "fork"):
        _read_in_child(bytes(data), False, timeout)


def _read_untrusted_binary(data: bytes, context: ir.Context) -> ir.Module | None:
    """The module in binary ``data``, read without parsing ``data`` in this process (None: read it here)."""
    answer = _read_in_child(data, bool(context.allow_unregistered_dialects), None)
    if answer[:2] == b"ER":
        raise ValueError(answer[2:].decode("utf-8", "replace"))
    if answer[:2] == b"IN":
        return None
    # Bytecode MLIR's own writer made from the module: not the untrusted bytes.
    load_quant_dialect(context)
    with context:
        try:
            return ir.Module.parse(answer[2:])
        except ir.MLIRError as error:
            raise ValueError(f"cannot read the MLIR bytecode: {error}") from None


def read_module(data: bytes | str, context: ir.Context, *, untrusted: bool = False) -> ir.Module:
    """Parse ``data`` (any supported format) in ``context``.

    Raises ``ir.MLIRError`` for text the parser rejects (its diagnostics name
    the line) and ``ValueError`` for bad binary data (for portable artifacts,
    see :func:`deserialize_portable_artifact`).

    ``untrusted=True``: binary data (bytecode, VHLO) is read in a forked
    child, so that a file that would crash or hang jaxlib's reader raises
    :class:`UnreadableInputError` (a ``ValueError``) instead; this process
    parses only the child's re-written bytecode (see the module docstring).
    The command-line tools pass it.
    """
    if untrusted and hasattr(os, "fork") and isinstance(data, (bytes, bytearray, memoryview)) \
            and detect_format(bytes(data)) != "text":
        module = _read_untrusted_binary(bytes(data), context)
        if module is not None:
            return module
    if isinstance(data, str):
        if "!quant." in data:
            load_quant_dialect(context)
        with context:
            return ir.Module.parse(data)
    kind = detect_format(data)
    if kind == "vhlo":
        return deserialize_portable_artifact(data, context)
    if kind == "bytecode":
        load_quant_dialect(context)
        with context:
            try:
                return ir.Module.parse(data)
            except ir.MLIRError as error:
                raise ValueError(f"cannot read the MLIR bytecode: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("input is neither MLIR text (UTF-8), MLIR bytecode nor a portable artifact") from None
    return read_module(text, context)


def parse_module(data: str | bytes | bytearray | memoryview | os.PathLike, *,
                 context: ir.Context | None = None) -> ir.Module:
    """Parse MLIR text, MLIR bytecode or a portable (VHLO) artifact into a module passes can run on.

    ``data`` is the module itself (``str`` or bytes), or a path
    (``pathlib.Path``, any ``os.PathLike``) to a file holding it: then the
    locations of text carry the file name (``f.mlir:3:8``, where text given
    as a string says ``-:3:8``), and so do the diagnostics passes emit at them.

    The module lives in toolkit's shared context
    (:func:`toolkit.ir.context.shared_context`: every dialect toolkit reads or
    writes is loaded, and toolkit's passes are registered), unless
    ``context`` is given. Plain ``ir.Module.parse(text)`` needs such a
    context around it; this is the one-call way. Raises ``TypeError`` for
    anything but ``str``/bytes-like data and ``ValueError`` for input that
    cannot be read, with the parser's messages and where they point
    (``cannot parse the MLIR module: loc("-":1:18): custom op 'x.y' is unknown``).

    Example::

        from toolkit.ir import parse_module
        from toolkit.passes import run_pipeline
        module = parse_module(open("f.mlir").read())
        report = run_pipeline(module, "builtin.module(canonicalize)")
    """
    path: str | None = None
    if isinstance(data, os.PathLike):
        path = os.fspath(data)
        if not isinstance(path, str):
            path = os.fsdecode(path)
        try:
            with open(path, "rb") as stream:
                data = stream.read()
        except OSError as error:
            raise ValueError(f"cannot read the MLIR module '{path}': {error.strerror or error}") from None
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"parse_module needs MLIR text (str), bytes or a path, got {type(data).__name__}")
    context = context if context is not None else shared_context()
    if path is not None and isinstance(data, bytes) and detect_format(data) == "text" and b"!quant." not in data:
        # MLIR's file parser names the file in every location (the string parser says "-").
        return _parse_collecting_errors(lambda: ir.Module.parseFile(path, context), context)
    return _parse_collecting_errors(lambda: read_module(data, context), context)


def _parse_collecting_errors(parse: Callable[[], ir.Module], context: ir.Context) -> ir.Module:
    """``parse()``, its parser errors raised as one ``ValueError`` rather than printed by MLIR."""
    errors: list[str] = []

    def collect(diagnostic: ir.Diagnostic) -> bool:
        # Handled here: the messages go into the exception, not to stderr.
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(f"{diagnostic.location}: {diagnostic.message}")
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        return parse()
    except ir.MLIRError as error:
        raise ValueError(f"cannot parse the MLIR module: {'; '.join(errors) or error}") from None
    finally:
        handler.detach()


def write_module(module: ir.Module, kind: Literal["text", "bytecode", "vhlo"] = "text", *,
                 target_version: str | None = None, debug_info: bool = False) -> bytes:
    """Serialize ``module``. ``vhlo`` targets ``target_version`` (default: current).

    ``vhlo`` works on a copy: ``module`` itself stays StableHLO.
    """
    if kind == "text":
        return module.operation.get_asm(enable_debug_info=debug_info).encode()
    if kind == "bytecode":
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        return buffer.getvalue()
    if kind == "vhlo":
        target = target_version or stablehlo.get_current_version()
        copy = ir.Module.parse(write_module(module, "bytecode"), module.context)
        try:
            return stablehlo.serialize_portable_artifact(copy, target)
        except Exception as error:
            raise ValueError(f"cannot serialize for StableHLO {target}: {error}") from None
    raise ValueError(f"unknown output format {kind!r} (text, bytecode, vhlo)")
