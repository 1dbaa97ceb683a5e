"""toolkit: trace → StableHLO → Python MLIR passes → XLA, with JAX-compatible export and sharding.

Example::

    import numpy as np
    import toolkit
    import toolkit.numpy as tnp

    @toolkit.jit
    def f(x, w):
        return tnp.tanh(x @ w)

    print(f.lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).as_text())

``import toolkit`` itself loads almost nothing (start-up time: every ``toolkit-opt`` run is a new process). The
public names load on first use: the first ``toolkit.<name>`` (or ``from toolkit import <name>``), or the first import
of a module that traces (``import toolkit.numpy``, ``from toolkit.stages import jit``), loads what ``import toolkit``
used to load, all at once and in the same order, with the hooks those modules install (the eager handlers of
``toolkit.stages``, the array methods of ``toolkit.numpy``). The command-line tools import only the IR, pass and
runtime modules, which need none of it.
"""

import os as _os
import sys as _sys
from importlib import import_module as _import_module
from types import ModuleType as _ModuleType
import typing as _typing

# XLA's C++ logs INFO lines (device counts) unless told otherwise; read when jaxlib loads.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from toolkit.version import __version__  # noqa: F401,E402

#: Every public name but ``__version__`` and the functions defined below: ``"toolkit.x"`` is that submodule,
#: ``"toolkit.x:name"`` an attribute of it. In the order ``import toolkit`` imported them before they were lazy
#: (tests/test_lazy_import.py checks this table against the ``TYPE_CHECKING`` imports at the end of this file).
_PUBLIC: dict[str, str] = {
    "lax": "toolkit.lax", "nn": "toolkit.nn", "numpy": "toolkit.numpy", "Array": "toolkit.array:Array",
    "device_put": "toolkit.array:device_put", "tree_util": "toolkit.tree_util",
    "flatten_util": "toolkit.flatten_util", "tree": "toolkit.tree", "scipy": "toolkit.scipy",
    "errors": "toolkit.errors", "ShapedArray": "toolkit.core.avals:ShapedArray",
    "ShapeDtypeStruct": "toolkit.core.avals:ShapeDtypeStruct", "config": "toolkit.core.config:config",
    "enable_x64": "toolkit.core.config:enable_x64", "make_user_context": "toolkit.core.config:make_user_context",
    "ConcretizationTypeError": "toolkit.core.tracing:ConcretizationTypeError",
    "UnexpectedTracerError": "toolkit.core.tracing:UnexpectedTracerError",
    "ensure_compile_time_eval": "toolkit.core.tracing:ensure_compile_time_eval",
    "named_call": "toolkit.core.tracing:named_call", "named_scope": "toolkit.core.tracing:named_scope",
    "devices": "toolkit.runtime.client:devices", "Compiled": "toolkit.stages:Compiled",
    "Lowered": "toolkit.stages:Lowered", "Traced": "toolkit.stages:Traced", "Wrapped": "toolkit.stages:Wrapped",
    "deserialize_compiled": "toolkit.stages:deserialize_compiled", "jit": "toolkit.stages:jit",
    "block_until_ready": "toolkit.array:block_until_ready_tree", "AxisType": "toolkit.shard:AxisType",
    "make_mesh": "toolkit.shard:make_mesh", "set_mesh": "toolkit.shard:set_mesh", "typeof": "toolkit.shard:typeof",
    "auto_axes": "toolkit.resharding:auto_axes", "explicit_axes": "toolkit.resharding:explicit_axes",
    "reshard": "toolkit.resharding:reshard", "ShardingTypeError": "toolkit.core.sharding_types:ShardingTypeError",
    "grad": "toolkit.ad:grad", "jvp": "toolkit.ad.api:jvp", "linearize": "toolkit.ad:linearize",
    "value_and_grad": "toolkit.ad:value_and_grad", "vjp": "toolkit.ad.api:vjp", "checkpoint": "toolkit.ad:checkpoint",
    "checkpoint_policies": "toolkit.ad:checkpoint_policies", "custom_jvp": "toolkit.ad:custom_jvp",
    "custom_vjp": "toolkit.ad:custom_vjp", "hessian": "toolkit.ad:hessian", "jacfwd": "toolkit.ad:jacfwd",
    "jacobian": "toolkit.ad:jacobian", "jacrev": "toolkit.ad:jacrev", "remat": "toolkit.ad.remat:remat",
    "closure_convert": "toolkit.ad:closure_convert", "custom_gradient": "toolkit.ad:custom_gradient",
    "fwd_and_bwd": "toolkit.ad:fwd_and_bwd", "linear_transpose": "toolkit.ad:linear_transpose",
    "eval_shape": "toolkit.introspect:eval_shape", "make_jaxpr": "toolkit.introspect:make_jaxpr",
    "shard_map": "toolkit.shard_map:shard_map", "pmap": "toolkit.parallel_map:pmap",
    "smap": "toolkit.parallel_map:smap", "distributed": "toolkit.distributed",
    "device_count": "toolkit.runtime.client:device_count",
    "local_device_count": "toolkit.runtime.client:local_device_count",
    "local_devices": "toolkit.runtime.client:local_devices", "process_count": "toolkit.runtime.client:process_count",
    "process_index": "toolkit.runtime.client:process_index",
    "make_array_from_callback": "toolkit.global_arrays:make_array_from_callback",
    "make_array_from_process_local_data": "toolkit.global_arrays:make_array_from_process_local_data",
    "make_array_from_single_device_arrays": "toolkit.global_arrays:make_array_from_single_device_arrays",
    "multihost": "toolkit.multihost", "vmap": "toolkit.batching:vmap", "random": "toolkit.random",
    "image": "toolkit.image", "compilation_cache": "toolkit.compilation_cache",
    "clear_caches": "toolkit.environment:clear_caches",
    "copy_to_host_async": "toolkit.environment:copy_to_host_async",
    "default_backend": "toolkit.environment:default_backend", "device_get": "toolkit.environment:device_get",
    "disable_jit": "toolkit.environment:disable_jit", "live_arrays": "toolkit.environment:live_arrays",
    "print_environment_info": "toolkit.environment:print_environment_info",
    "process_indices": "toolkit.environment:process_indices", "Shard": "toolkit.array:Shard",
    "Device": "toolkit.runtime.client:Device", "profiler": "toolkit.profiler",
    "NamedSharding": "toolkit.shard:NamedSharding", "P": "toolkit.shard:PartitionSpec",
    "compute_on": "toolkit.compute_on:compute_on", "memory": "toolkit.memory",
    "custom_batching": "toolkit.custom_batching", "debug": "toolkit.debug", "experimental": "toolkit.experimental",
    "effects_barrier": "toolkit.callbacks:effects_barrier", "pure_callback": "toolkit.callbacks:pure_callback",
    "debug_infs": "toolkit.runtime.debug_checks:debug_infs", "debug_nans": "toolkit.runtime.debug_checks:debug_nans",
    "allow_f16_reductions": "toolkit.core.config:allow_f16_reductions",
    "check_tracer_leaks": "toolkit.core.config:check_tracer_leaks",
    "checking_leaks": "toolkit.core.config:checking_leaks", "default_device": "toolkit.core.config:default_device",
    "default_matmul_precision": "toolkit.core.config:default_matmul_precision",
    "explain_cache_misses": "toolkit.core.config:explain_cache_misses",
    "log_compiles": "toolkit.core.config:log_compiles", "no_execution": "toolkit.core.config:no_execution",
    "no_tracing": "toolkit.core.config:no_tracing",
    "numpy_dtype_promotion": "toolkit.core.config:numpy_dtype_promotion",
    "numpy_rank_promotion": "toolkit.core.config:numpy_rank_promotion",
    "softmax_custom_jvp": "toolkit.core.config:softmax_custom_jvp",
    "transfer_guard": "toolkit.core.config:transfer_guard",
    "transfer_guard_device_to_device": "toolkit.core.config:transfer_guard_device_to_device",
    "transfer_guard_device_to_host": "toolkit.core.config:transfer_guard_device_to_host",
    "transfer_guard_host_to_device": "toolkit.core.config:transfer_guard_host_to_device",
    "legacy_prng_key": "toolkit.core.config:legacy_prng_key",
    "enable_custom_prng": "toolkit.core.config:enable_custom_prng",
    "default_prng_impl": "toolkit.core.config:default_prng_impl",
    "enable_checks": "toolkit.core.config:enable_checks",
    "threefry_partitionable": "toolkit.core.config:threefry_partitionable",
    "jax2tf_associative_scan_reductions": "toolkit.core.config:jax2tf_associative_scan_reductions",
    "custom_derivatives": "toolkit.custom_derivatives", "dlpack": "toolkit.dlpack", "dtypes": "toolkit.dtypes",
    "ffi": "toolkit.ffi", "monitoring": "toolkit.monitoring", "ops": "toolkit.ops", "sharding": "toolkit.sharding",
    "typing": "toolkit.typing", "float0": "toolkit.core.dtypes:float0", "Ref": "toolkit.refs:Ref",
    "empty_ref": "toolkit.refs:empty_ref", "free_ref": "toolkit.refs:free_ref", "freeze": "toolkit.refs:freeze",
    "new_ref": "toolkit.refs:new_ref", "ref": "toolkit.ref", "ds": "toolkit.core.dynamic_slices:ds",
}
#: Public subpackages nothing else of toolkit imports, and which install no hooks: each loads on its own first use
#: (after the others), so a program that never names them does not pay for them.
_ON_FIRST_USE = frozenset({"nn", "scipy", "image", "profiler", "distributed", "multihost"})
#: toolkit's subpackages that import, at module level, only each other (tests/test_lazy_import.py checks it) and need
#: none of the hooks: importing them loads nothing else. ``tools`` (nothing imports it) is here so that the
#: command-line tools import the modules their path needs themselves.
_WITHOUT_TRACING = frozenset({"core", "ir", "passes", "runtime", "shard", "errors", "version", "compute_on",
                              "monitoring", "memory", "cluster_environments", "tools"})
#: Names whose first use loads the public names although they live in a package :data:`_WITHOUT_TRACING`:
#: ``toolkit.config`` knows every flag after ``import toolkit``, as ``jax.config`` does after ``import jax``, and
#: some flags are defined by modules that trace (the persistent compilation cache's, ``jax_debug_nans``).
_LOADS_EVERYTHING = frozenset({"config"})

_NOT_LOADED, _LOADING, _LOADED = 0, 1, 2
_MISSING = object()
_state = _NOT_LOADED


def _resolve(target: str) -> _typing.Any:
    module, _, attribute = target.partition(":")
    value = _import_module(module)
    return getattr(value, attribute) if attribute else value


def _load() -> None:
    """Import what ``import toolkit`` used to import (but :data:`_ON_FIRST_USE`), in its order, and bind the names."""
    global _state
    if _state != _NOT_LOADED:  # loaded, or loading (this thread, or another one that runs the same imports)
        return
    _state = _LOADING
    _uninstall_finder()
    try:
        values = {name: _resolve(target) for name, target in _PUBLIC.items() if name not in _ON_FIRST_USE}
    except BaseException:
        _state = _NOT_LOADED  # the next use raises the same error, instead of finding half the names
        _install_finder()
        raise
    # Bound last: importing ``toolkit.shard_map`` (the module) sets ``toolkit.shard_map``, which is the function.
    globals().update(values)
    _state = _LOADED


def _getattr(name: str) -> _typing.Any:
    """``toolkit.<name>`` when not loaded yet (the module's ``__getattr__``, PEP 562)."""
    if name == "__all__" and _state == _NOT_LOADED:
        # `from toolkit import *` asks first: load every name, for it to find them all in the module's namespace
        _load()
        _load_on_first_use()
    if name.startswith("__"):  # probes of dunders (pickle, inspect, pytest) load nothing
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    target = _PUBLIC.get(name)
    if target is None:
        if name in _WITHOUT_TRACING:  # `from toolkit import ir`, `toolkit.ir`: that submodule, and nothing else
            return _import_module(f"toolkit.{name}")
        if _state == _LOADING:  # `from toolkit import x` in a module _load imports: the import system imports it
            raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
        # Maybe a submodule ``import toolkit`` used to import on the way, an attribute since (``toolkit.dispatch``,
        # ``toolkit.cluster_environments``): import all it imported, as it did.
        _load()
        _load_on_first_use()
        value = globals().get(name, _MISSING)
        if value is _MISSING:
            raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
        return value
    if target.split(":")[0].split(".")[1] not in _WITHOUT_TRACING or name in _LOADS_EVERYTHING:
        _load()
    value = globals().get(name, _MISSING)
    if value is _MISSING:  # _ON_FIRST_USE, a name of a module _WITHOUT_TRACING, or one another thread is loading
        value = globals()[name] = _resolve(target)
    return value


def _dir() -> list[str]:
    """``dir(toolkit)``: every name ``import toolkit`` used to define (the names loaded on first use too)."""
    _load()
    _load_on_first_use()
    return sorted(globals())


if not _typing.TYPE_CHECKING:  # hidden from type checkers: they check `toolkit.<name>` against the imports below
    __getattr__, __dir__ = _getattr, _dir


def _load_on_first_use() -> None:
    for name in _ON_FIRST_USE:
        if name not in globals():
            globals()[name] = _resolve(_PUBLIC[name])


class _LoadFirstLoader:
    """The loader of the first module outside :data:`_WITHOUT_TRACING` imported before ``toolkit.<name>`` was used:
    it loads the public names first, from a clean start (no toolkit module half-initialized), as ``import toolkit``
    did; the module itself is usually among them, and is then returned as it is."""

    def __init__(self, loader: _typing.Any):
        self.loader = loader
        self.spec: _typing.Any = None

    def create_module(self, spec: _typing.Any) -> _ModuleType | None:
        _load()
        module = _sys.modules.get(spec.name)
        if module is None:  # not among the public names: its own loader runs it (exec_module below is not called)
            spec.loader = self.loader
            return self.loader.create_module(spec)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: _ModuleType) -> None:
        # only for a module _load imported: the import system set its __spec__ to this loader's; put the real one back
        module.__spec__ = self.spec

    def __getattr__(self, name: str) -> _typing.Any:  # get_code, get_source, is_package, ... (runpy, inspect)
        return getattr(self.loader, name)


class _LoadFirstFinder:
    """On ``sys.meta_path`` until the public names are loaded: wraps the loader of the first toolkit module outside
    :data:`_WITHOUT_TRACING` (``toolkit.numpy``, ``toolkit.stages``, ...) in a :class:`_LoadFirstLoader`."""

    @classmethod
    def find_spec(cls, fullname: str, path: _typing.Any = None, target: _typing.Any = None) -> _typing.Any:
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "toolkit" or parts[1] in _WITHOUT_TRACING or _state != _NOT_LOADED:
            return None
        for finder in _sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if finder is cls or find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _LoadFirstLoader(spec.loader)
                return spec
        return None


def _install_finder() -> None:
    if _LoadFirstFinder not in _sys.meta_path:
        _sys.meta_path.insert(0, _LoadFirstFinder)


def _uninstall_finder() -> None:
    if _LoadFirstFinder in _sys.meta_path:
        _sys.meta_path.remove(_LoadFirstFinder)


class _Toolkit(_ModuleType):
    """The ``toolkit`` module's class: the import system sets ``toolkit.x`` to the submodule ``toolkit.x`` when it
    first imports it; ``toolkit.shard_map`` and ``toolkit.compute_on`` are functions of a submodule's name (as
    JAX's), and stay the functions."""

    def __setattr__(self, name: str, value: _typing.Any) -> None:
        if isinstance(value, _ModuleType) and ":" in _PUBLIC.get(name, ""):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Toolkit
_install_finder()


def _public(name: str) -> _typing.Any:
    return globals()[name] if name in globals() else _getattr(name)


def load_module(source: object, *, name: str | None = None, platform: str | None = None,
                platforms: "list[str] | tuple[str, ...] | None" = None) -> "Lowered":
    """Any program in — MLIR text, bytecode, VHLO, a path, an ``ir.Module``, an ``Exported``, a JAX ``Lowered`` or
    ``Exported`` — as a :class:`Lowered` (see :func:`toolkit.lab.loading.load_module`)."""
    # function-level: toolkit.lab sits above export, which `import toolkit` does not load (start-up time)
    from toolkit.lab.loading import load_module as load

    return load(source, name=name, platform=platform, platforms=platforms)


def host_count(backend: str | None = None) -> int:
    """``process_count()`` under its pre-rename name, with JAX's warning (``jax.host_count``)."""
    import warnings  # function-level: only these deprecated aliases warn
    warnings.warn("jax.host_count has been renamed to jax.process_count. This alias will eventually be removed; "
                  "please update your code.", stacklevel=2)
    return _public("process_count")(backend)


def host_id(backend: str | None = None) -> int:
    """``process_index()`` under its pre-rename name, with JAX's warning (``jax.host_id``)."""
    import warnings  # function-level: only these deprecated aliases warn
    warnings.warn("jax.host_id has been renamed to jax.process_index. This alias will eventually be removed; "
                  "please update your code.", stacklevel=2)
    return _public("process_index")(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """``process_indices()`` under its pre-rename name, with JAX's warning (``jax.host_ids``)."""
    import warnings  # function-level: only these deprecated aliases warn
    warnings.warn("jax.host_ids has been renamed to jax.process_indices. This alias will eventually be removed; "
                  "please update your code.", stacklevel=2)
    return list(_public("process_indices")(backend))


if _typing.TYPE_CHECKING:  # what _PUBLIC names, for type checkers and readers (not run)
    from toolkit import lax, nn, numpy  # noqa: F401
    from toolkit.array import Array, device_put  # noqa: F401
    from toolkit import tree_util  # noqa: F401  (the public pytree API, jax.tree_util)
    from toolkit import flatten_util, tree  # noqa: F401  (jax.flatten_util, jax.tree)
    from toolkit import scipy  # noqa: F401  (jax.scipy: special functions, distributions)
    from toolkit import errors  # noqa: F401  (jax.errors: the tracer and promotion exception classes)
    from toolkit.core.avals import ShapedArray, ShapeDtypeStruct  # noqa: F401
    from toolkit.core.config import config, enable_x64, make_user_context  # noqa: F401  (jax.config, jax.enable_x64)
    from toolkit.core.tracing import ConcretizationTypeError, UnexpectedTracerError  # noqa: F401
    from toolkit.core.tracing import ensure_compile_time_eval, named_call, named_scope  # noqa: F401  (jax's)
    from toolkit.runtime.client import devices  # noqa: F401
    from toolkit.stages import Compiled, Lowered, Traced, Wrapped, deserialize_compiled, jit  # noqa: F401
    from toolkit.array import block_until_ready_tree as block_until_ready  # noqa: F401
    from toolkit.shard import AxisType, make_mesh, set_mesh, typeof  # noqa: F401
    from toolkit.resharding import auto_axes, explicit_axes, reshard  # noqa: F401
    from toolkit.core.sharding_types import ShardingTypeError  # noqa: F401
    from toolkit.ad import grad, linearize, value_and_grad  # noqa: F401
    # jvp, vjp, remat: from the modules defining them (mypy takes ``toolkit.ad.jvp`` in an ``if`` for the submodule)
    from toolkit.ad.api import jvp, vjp  # noqa: F401
    from toolkit.ad.remat import remat  # noqa: F401
    from toolkit.ad import (checkpoint, checkpoint_policies, custom_jvp, custom_vjp, hessian, jacfwd,  # noqa: F401
                            jacobian, jacrev)
    from toolkit.ad import closure_convert, custom_gradient, fwd_and_bwd, linear_transpose  # noqa: F401
    from toolkit.introspect import eval_shape, make_jaxpr  # noqa: F401
    from toolkit.shard_map import shard_map  # noqa: F401
    from toolkit.parallel_map import pmap, smap  # noqa: F401  (jax.pmap, jax.smap: jit + shard_map)
    from toolkit import distributed  # noqa: F401
    from toolkit.runtime.client import (device_count, local_device_count, local_devices, process_count,  # noqa: F401
                                        process_index)
    from toolkit.global_arrays import (make_array_from_callback, make_array_from_process_local_data,  # noqa: F401
                                       make_array_from_single_device_arrays)
    from toolkit import multihost  # noqa: F401
    from toolkit.batching import vmap  # noqa: F401
    from toolkit import random  # noqa: F401
    from toolkit import image  # noqa: F401  (jax.image: resize, scale_and_translate)
    from toolkit import compilation_cache  # noqa: F401  (the persistent compilation cache)
    from toolkit.environment import (clear_caches, copy_to_host_async, default_backend, device_get,  # noqa: F401
                                     disable_jit, live_arrays, print_environment_info, process_indices)
    from toolkit.array import Shard  # noqa: F401  (jax.Shard)
    from toolkit.runtime.client import Device  # noqa: F401  (jax.Device: jaxlib's device class, as JAX's)
    from toolkit import profiler  # noqa: F401  (jax.profiler: XLA's profiler)
    from toolkit.shard import NamedSharding, PartitionSpec as P  # noqa: F401  (jax.NamedSharding, jax.P)
    from toolkit.compute_on import compute_on  # noqa: F401  (jax.experimental.compute_on.compute_on)
    from toolkit import memory  # noqa: F401  (jax.memory: the Space enum)
    from toolkit import custom_batching  # noqa: F401  (jax.custom_batching: custom_vmap, sequential_vmap)
    from toolkit import debug, experimental  # noqa: F401  (jax.debug; jax.experimental.io_callback)
    from toolkit.callbacks import effects_barrier, pure_callback  # noqa: F401  (jax's host callbacks)
    from toolkit.runtime.debug_checks import debug_infs, debug_nans  # noqa: F401  (jax.debug_nans)
    from toolkit.core.config import (  # noqa: F401  (JAX's config-flag context managers, each with its real effect)
        allow_f16_reductions, check_tracer_leaks, checking_leaks, default_device, default_matmul_precision,
        explain_cache_misses, log_compiles, no_execution, no_tracing, numpy_dtype_promotion, numpy_rank_promotion,
        softmax_custom_jvp, transfer_guard, transfer_guard_device_to_device, transfer_guard_device_to_host,
        transfer_guard_host_to_device, legacy_prng_key, enable_custom_prng, default_prng_impl, enable_checks,
        threefry_partitionable, jax2tf_associative_scan_reductions)
    from toolkit import (  # noqa: F401  (jax.dtypes, jax.typing, jax.monitoring, ...)
        custom_derivatives, dlpack, dtypes, ffi, monitoring, ops, sharding, typing)
    from toolkit.core.dtypes import float0  # noqa: F401  (jax.float0: the dtype of integer values' tangents)
    from toolkit.refs import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: F401  (jax.new_ref, jax.Ref, ...)
    from toolkit import ref  # noqa: F401  (jax.ref: the mutable-array-reference namespace)
    from toolkit.core.dynamic_slices import ds  # noqa: F401  (jax.ds: a slice with a traced start)
