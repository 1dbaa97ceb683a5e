"""Compiling StableHLO with XLA and running the result."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import jaxlib
import numpy as np
from jaxlib import _jax, xla_client
from jaxlib._jax import LoadedExecutable  # imported (not assigned) so mypy accepts it as a type

from toolkit.core.config import flag_value
from toolkit.runtime import host_callbacks
from toolkit.runtime.client import backend
from toolkit.runtime.shardings import HloSharding

RuntimeError_ = _jax.JaxRuntimeError


def _register_cpu_custom_calls(program: str | bytes | None = None) -> None:
    """Register jaxlib's LAPACK CPU kernels, which StableHLO custom calls name; ready them if ``program`` calls one.

    Registering is cheap and happens once. The kernels call LAPACK through function pointers that
    ``initialize()`` fills in from scipy, which costs ~0.2 s of CPU (a third of a small script's first
    jit): it waits until a program naming a kernel (module text or bytecode, or an executable's
    bytes, which carry its HLO) is compiled or loaded. ``program=None`` readies them unconditionally.
    """
    global _kernel_names
    if _kernel_names is None:
        from jaxlib import lapack  # lazy: wanted only once something compiles
        names = []
        for platform, targets in lapack.registrations().items():
            for name, capsule, api_version in targets:
                xla_client.register_custom_call_target(name, capsule, platform=platform, api_version=api_version)
                names.append(name)
        # "lapack_" covers every kernel but a few (tridiagonal_solve_perturbed_ffi): those by full name.
        _kernel_names = (b"lapack_", *sorted({n.encode() for n in names if not n.startswith("lapack_")}))
    if not _lapack_ready and (program is None or names_lapack_kernel(program)):
        _ready_lapack()


def names_lapack_kernel(program: str | bytes) -> bool:
    """Whether ``program`` (module text or bytecode, serialized executable) names a jaxlib LAPACK kernel."""
    if _kernel_names is None:
        _register_cpu_custom_calls(b"")
    assert _kernel_names is not None
    data = program.encode() if isinstance(program, str) else bytes(program)
    return any(name in data for name in _kernel_names)


def _ready_lapack() -> None:
    global _lapack_ready
    from jaxlib import lapack
    # Without this the kernels call through null pointers: the process crashes at the first call.
    lapack._lapack.initialize()
    _lapack_ready = True


_kernel_names: tuple[bytes, ...] | None = None
_lapack_ready = False


def compile_module(module: Any, devices: Sequence[Any], *, num_partitions: int = 1,
                   num_replicas: int = 1, spmd: bool = False, use_shardy: bool = False,
                   compiler_options: Mapping[str, Any] | None = None,
                   propagate_output_shardings: Sequence[bool] | None = None,
                   dump_to: str | None = None, serialized: bytes | None = None) -> LoadedExecutable:
    """Compile a StableHLO module (text, bytecode or ``ir.Module``) for ``devices``.

    An ``ir.Module`` goes to XLA as it is, as JAX's ``backend_compile_and_load`` passes it (bytes
    are parsed again in a fresh context: ~2 ms more per small program); XLA leaves it unchanged.
    ``serialized``: the module's bytecode when the caller has it, so that checking it for host
    callbacks needs no serialization of its own.

    ``compiler_options`` are XLA debug options (``{"xla_cpu_enable_fast_math": True}``);
    a name XLA does not know raises ``ValueError``. ``propagate_output_shardings[i]``
    lets XLA's partitioner choose output ``i``'s sharding (outputs the user did not fix).
    ``dump_to``: a folder where XLA dumps its HLO as text before optimizations, after
    every pass that changed it, and optimized (``xla_dump_to``, ``xla_dump_hlo_pass_re=.*``).
    """
    if isinstance(module, (str, bytes)) or serialized is not None:
        program = serialized if serialized is not None else module
    else:  # an ir.Module: its bytecode (what the host-callback check below reads as well)
        program = serialized = module.operation.get_asm(binary=True)
    _register_cpu_custom_calls(program)
    options = compile_options(devices, num_partitions=num_partitions, num_replicas=num_replicas, spmd=spmd,
                              use_shardy=use_shardy, compiler_options=compiler_options,
                              propagate_output_shardings=propagate_output_shardings, dump_to=dump_to)
    client = backend(devices[0].platform)
    try:
        if host_callbacks.mentions_callbacks(module if serialized is None else serialized):  # toolkit.pure_callback, debug.print, ...: jaxlib's table
            return host_callbacks.compile_with_callbacks(client, module, devices, options)
        return client.compile_and_load(module, executable_devices=xla_client.DeviceList(tuple(devices)),
                                       compile_options=options)
    except _jax.JaxRuntimeError as exc:
        message = str(exc)
        named = [k for k in (compiler_options or {}) if k in message]
        if named:
            raise ValueError(f"XLA rejected the compiler option(s) {', '.join(named)}: {message}") from None
        raise


def compile_options(devices: Sequence[Any], *, num_partitions: int = 1, num_replicas: int = 1, spmd: bool = False,
                    use_shardy: bool = False, compiler_options: Mapping[str, Any] | None = None,
                    propagate_output_shardings: Sequence[bool] | None = None,
                    dump_to: str | None = None) -> Any:
    """The ``xla_client.CompileOptions`` :func:`compile_module` compiles (and a deserialized executable loads) with."""
    options = xla_client.CompileOptions()
    build = options.executable_build_options
    build.num_partitions = num_partitions
    build.num_replicas = num_replicas
    # Logical device i of the computation is devices[i] (an HLO sharding's positions index this list).
    build.device_assignment = xla_client.DeviceAssignment.create(
        np.array([d.id for d in devices]).reshape(num_replicas, num_partitions))
    if spmd:
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = use_shardy
        if propagate_output_shardings is not None:
            build.allow_spmd_sharding_propagation_to_output = list(propagate_output_shardings)
    if dump_to is not None:
        debug = build.debug_options  # a reference: the settings stick
        debug.xla_dump_to = dump_to
        debug.xla_dump_hlo_pass_re = ".*"
        debug.xla_dump_hlo_as_text = True
    if compiler_options:
        options.env_option_overrides = [(str(k), _option_text(v)) for k, v in compiler_options.items()]
    return options


def serialize_executable(executable: LoadedExecutable) -> bytes:
    """The executable's bytes (PJRT's serialization: what JAX's compilation cache stores)."""
    return bytes(executable.serialize())


def deserialize_executable(data: bytes, devices: Sequence[Any], options: Any) -> LoadedExecutable:
    """Load bytes of :func:`serialize_executable` onto ``devices``; ``ValueError`` when jaxlib cannot parse them.

    jaxlib's warning holds: loading an executable may run its code, so pass only bytes you
    produced (the container of ``toolkit.deserialize_compiled`` checks a checksum first).
    The bytes carry the executable's HLO, custom call targets by name: LAPACK's kernels are
    readied only when it calls one.
    """
    _register_cpu_custom_calls(data)
    client = backend(devices[0].platform)
    try:
        return client.deserialize_executable(bytes(data), xla_client.DeviceList(tuple(devices)), options)
    except Exception as error:  # jaxlib raises its own error types
        raise ValueError(f"jaxlib cannot load the executable: {error}") from None


def compile_options_fingerprint(options: Any) -> bytes:
    """``options`` (a :func:`compile_options` result) serialized: the XLA settings part of a compilation cache key.

    Protobuf bytes, stable for one jaxlib build (JAX's persistent cache keys on the same bytes).
    """
    return bytes(options.SerializeAsString())


def devices_fingerprint(devices: Sequence[Any]) -> str:
    """What an executable for ``devices`` depends on of them: platform, kinds, ids, processes and topology.

    The topology's fingerprint is PJRT's (it covers the chips' layout); platforms without
    one are described by their devices alone.
    """
    parts = [f"count={len(devices)}",
             "kinds=" + ",".join(str(d.device_kind) for d in devices),
             "ids=" + ",".join(str(d.id) for d in devices),
             "processes=" + ",".join(str(getattr(d, "process_index", 0)) for d in devices)]
    client = backend(devices[0].platform)
    parts.append(f"platform={client.platform}/{client.platform_version}")
    parts.append(f"process_count={1 + max(d.process_index for d in client.devices())}")
    try:
        parts.append(f"topology={xla_client.get_topology_for_devices(list(devices)).fingerprint()}")
    except Exception:  # noqa: BLE001 - jaxlib raises its own error types for platforms without a topology
        parts.append("topology=none")
    return ";".join(parts)


def runtime_versions(platform: str) -> dict[str, str]:
    """What a serialized executable depends on besides its compile options: jaxlib and the platform's versions."""
    client = backend(platform)
    return {"jaxlib": jaxlib.__version__, "platform": client.platform, "platform_version": client.platform_version}


def _option_text(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, str)):
        return value
    raise TypeError(f"compiler option values must be bool, int, float or str, got {value!r}")


def execute(executable: LoadedExecutable, arguments: Sequence[Any], handlers: Sequence[Any]) -> list[Any]:
    """Run ``executable`` on global device arrays; ``handlers`` assemble the outputs.

    ``RuntimeError`` while ``jax_no_execution`` is on (``toolkit.no_execution``), as JAX's.
    """
    if flag_value("jax_no_execution"):
        raise RuntimeError(f"toolkit tried to execute function {_executable_name(executable)}, but the "
                           "no_execution config option is set")
    return executable.execute_sharded(arguments).consume_with_handlers(handlers)


def _executable_name(executable: Any) -> str:
    # jit_f -> jit(f), as JAX's message names it; only read on the error path (hlo_modules() copies the HLO).
    try:
        name = executable.hlo_modules()[0].name
    except (AttributeError, IndexError):
        return "fun"
    return f"jit({name[4:]})" if name.startswith("jit_") else name


def optimized_hlo_text(executable: LoadedExecutable) -> str:
    return "\n".join(m.to_string() for m in executable.hlo_modules())


def cost_analysis(executable: LoadedExecutable) -> dict[str, float]:
    return dict(executable.cost_analysis())


def memory_analysis(executable: LoadedExecutable) -> Any:
    return executable.get_compiled_memory_stats()


def parameter_shardings(executable: LoadedExecutable) -> list[HloSharding] | None:
    shardings = executable.get_parameter_shardings()
    return None if shardings is None else [HloSharding.from_proto(s) for s in shardings]


def output_shardings(executable: LoadedExecutable) -> list[HloSharding] | None:
    shardings = executable.get_output_shardings()
    return None if shardings is None else [HloSharding.from_proto(s) for s in shardings]


def mlir_to_hlo_text(module: bytes | str) -> str:
    """The HLO text XLA makes from a StableHLO module (bytecode or text), for ``as_text(dialect="hlo")``.

    Raises ``ValueError`` when XLA cannot convert the module.
    """
    try:
        computation = _jax.mlir.mlir_module_to_xla_computation(module, use_tuple_args=False, return_tuple=False)
    except Exception as error:  # jaxlib raises its own error types here
        raise ValueError(f"cannot convert the module to HLO: {error}") from None
    return computation.as_hlo_text()


def hlo_cost_analysis(module_bytecode: bytes, platform: str = "cpu") -> dict[str, float]:
    """XLA's cost analysis of an unoptimized module (``Lowered.cost_analysis``)."""
    computation = _jax.mlir.mlir_module_to_xla_computation(module_bytecode, use_tuple_args=False, return_tuple=False)
    return dict(_jax.hlo_module_cost_analysis(backend(platform), computation.as_hlo_module()))
