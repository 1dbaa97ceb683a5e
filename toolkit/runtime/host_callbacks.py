"""Compiling and running modules that call back into Python: jaxlib's host-callback mechanism.

A module with ``xla_ffi_python_cpu_callback`` custom calls (``toolkit.lowering.rules.callbacks``)
compiles through ``Client.compile_and_load(module, ..., host_callbacks=[...])``, as JAX's
``compiler.backend_compile_and_load`` does: jaxlib's typed-FFI handler calls entry
``index`` of that list with the operands as numpy arrays and takes numpy arrays back.
jaxlib accepts ``host_callbacks`` only with an ``ir.Module`` (not bytes or text), so
the module is parsed here when it came as bytes.

The executable is wrapped (:class:`HostCallbackExecutable`) so that each run waits
until the run has finished: a callback's effects (a print, an ``io_callback``) have
happened when the call returns, and runs of ordered callbacks never overlap — what
JAX's runtime tokens give across calls. Such an executable refuses to be serialized:
its code holds this process's callbacks.
"""

from __future__ import annotations

from typing import Any, Sequence

from jaxlib import xla_client
from jaxlib.mlir import ir

from toolkit.core import host_callbacks
from toolkit.ir.context import shared_context

__all__ = ["HOST_CALLBACK_TARGETS", "HostCallbackExecutable", "callback_indices", "compile_with_callbacks",
           "calls_back", "mentions_callbacks"]

_MARKER = host_callbacks.CALLBACK_TARGET.encode()
MARK = host_callbacks.MARK_ATTRIBUTE


#: Custom call targets of host callbacks, toolkit's and those of a loaded JAX module (``jax.pure_callback``,
#: ``debug.print``): an executable calling one holds this process's callbacks in its code.
HOST_CALLBACK_TARGETS = (b"xla_python_cpu_callback", b"xla_python_gpu_callback", b"xla_ffi_python_cpu_callback",
                         b"xla_ffi_python_gpu_callback", b"xla_ffi_partitioned_python_cpu_callback")


def calls_back(bytecode: bytes) -> bool:
    """Whether a module's bytecode (or text) names any host-callback target of :data:`HOST_CALLBACK_TARGETS`."""
    return any(target in bytecode for target in HOST_CALLBACK_TARGETS)


def mentions_callbacks(module: Any) -> bool:
    """Whether ``module`` (``ir.Module``, text or bytecode) names the host-callback custom call target."""
    if isinstance(module, ir.Module):
        module = module.operation.get_asm(binary=True)
    if isinstance(module, str):
        return host_callbacks.CALLBACK_TARGET in module
    return _MARKER in bytes(module)


def callback_indices(module: ir.Module) -> list[int]:
    """The ``index`` of every host-callback custom call in ``module``, in order of appearance.

    ``ValueError`` when a call names no callback, or one this process did not
    number (its ``toolkit.host_callback`` mark is missing or another process's).
    """
    found: list[int] = []
    problems: list[str] = []

    def visit(op: Any) -> ir.WalkResult:
        if op.name == "stablehlo.custom_call" and \
                ir.StringAttr(op.attributes["call_target_name"]).value == host_callbacks.CALLBACK_TARGET:
            config = op.attributes["mhlo.backend_config"] if "mhlo.backend_config" in op.attributes else None
            if not isinstance(config, ir.DictAttr) or "index" not in config:
                problems.append(f"a {host_callbacks.CALLBACK_TARGET} custom call without "
                                "mhlo.backend_config = {index = N : ui64} names no callback")
                return ir.WalkResult.ADVANCE
            index = int(ir.IntegerAttr(config["index"]).value)
            mark = op.attributes[MARK] if MARK in op.attributes else None
            if not isinstance(mark, ir.StringAttr) or mark.value != host_callbacks.mark_of(index):
                problems.append(f"host callback #{index} at {op.location} was not lowered by this process (JAX's "
                                "or another process's callbacks are Python functions of that process)")
                return ir.WalkResult.ADVANCE
            found.append(index)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if problems:
        raise ValueError("cannot compile this module's host callbacks here: " + "; ".join(problems))
    return found


def compile_with_callbacks(client: Any, module: Any, devices: Sequence[Any], options: Any) -> "HostCallbackExecutable":
    """Compile ``module`` (``ir.Module``, text or bytecode) with the process's host-callback table."""
    if not isinstance(module, ir.Module):
        with shared_context():
            module = ir.Module.parse(module)
    indices = callback_indices(module)
    callbacks = host_callbacks.table(indices)
    executable = client.compile_and_load(module, executable_devices=xla_client.DeviceList(tuple(devices)),
                                         compile_options=options, host_callbacks=callbacks)
    return HostCallbackExecutable(executable, tuple(indices))


class HostCallbackExecutable:
    """A loaded executable that calls back into Python: runs wait for their end; never serialized.

    Everything else is the wrapped ``LoadedExecutable``'s (attribute access passes through).
    """

    __slots__ = ("_executable", "callback_indices")

    def __init__(self, executable: Any, indices: tuple[int, ...]):
        self._executable = executable
        #: The numbers of the callbacks the executable calls.
        self.callback_indices = indices

    def execute_sharded(self, arguments: Sequence[Any], with_tokens: bool = False) -> Any:
        """Run, and wait until the run (and so every callback in it) has finished."""
        results = self._executable.execute_sharded(arguments, with_tokens=True)
        results.consume_token().block_until_ready()
        return results

    def serialize(self) -> bytes:
        raise ValueError("cannot serialize an executable with host callbacks (toolkit.pure_callback, io_callback, "
                         "debug.print, debug.callback): its code calls functions of this process")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executable, name)
