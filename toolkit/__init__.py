"""toolkit: trace → StableHLO → Python MLIR passes → XLA, with JAX-compatible export and sharding.

Example::

    import numpy as np
    import toolkit
    import toolkit.numpy as tnp

    @toolkit.jit
    def f(x, w):
        return tnp.tanh(x @ w)

    print(f.lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).as_text())
"""

import os as _os

# XLA's C++ logs INFO lines (device counts) unless told otherwise; read when jaxlib loads.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from toolkit import lax, nn, numpy  # noqa: F401  (numpy installs the array methods)
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

from toolkit.version import __version__  # noqa: F401,E402


from toolkit.array import block_until_ready_tree as block_until_ready  # noqa: F401,E402
from toolkit.shard import AxisType, make_mesh, set_mesh, typeof  # noqa: F401,E402
from toolkit.resharding import auto_axes, explicit_axes, reshard  # noqa: F401,E402
from toolkit.core.sharding_types import ShardingTypeError  # noqa: F401,E402
from toolkit.ad import grad, jvp, linearize, value_and_grad, vjp  # noqa: F401,E402
from toolkit.ad import (checkpoint, checkpoint_policies, custom_jvp, custom_vjp, hessian, jacfwd,  # noqa: F401,E402
                        jacobian, jacrev, remat)
from toolkit.ad import closure_convert, custom_gradient, fwd_and_bwd, linear_transpose  # noqa: F401,E402
from toolkit.introspect import eval_shape, make_jaxpr  # noqa: F401,E402
from toolkit.shard_map import shard_map  # noqa: F401,E402
from toolkit.parallel_map import pmap, smap  # noqa: F401,E402  (jax.pmap, jax.smap: jit + shard_map)
from toolkit import distributed  # noqa: F401,E402
from toolkit.runtime.client import (device_count, local_device_count, local_devices, process_count,  # noqa: F401,E402
                                    process_index)
from toolkit.global_arrays import (make_array_from_callback, make_array_from_process_local_data,  # noqa: F401,E402
                                   make_array_from_single_device_arrays)
from toolkit import multihost  # noqa: F401,E402
from toolkit.batching import vmap  # noqa: F401,E402
from toolkit import random  # noqa: F401,E402
from toolkit import image  # noqa: F401,E402  (jax.image: resize, scale_and_translate)
from toolkit import compilation_cache  # noqa: F401,E402  (the persistent compilation cache)
from toolkit.environment import (clear_caches, copy_to_host_async, default_backend, device_get,  # noqa: F401,E402
                                 disable_jit, live_arrays, print_environment_info, process_indices)
from toolkit.array import Shard  # noqa: F401,E402  (jax.Shard)
from toolkit.runtime.client import Device  # noqa: F401,E402  (jax.Device: jaxlib's device class, as JAX's)
from toolkit import profiler  # noqa: F401,E402  (jax.profiler: XLA's profiler)
from toolkit.shard import NamedSharding, PartitionSpec as P  # noqa: F401,E402  (jax.NamedSharding, jax.P)
from toolkit.compute_on import compute_on  # noqa: F401,E402  (jax.experimental.compute_on.compute_on)
from toolkit import memory  # noqa: F401,E402  (jax.memory: the Space enum)
from toolkit import custom_batching  # noqa: F401,E402  (jax.custom_batching: custom_vmap, sequential_vmap)
from toolkit import debug, experimental  # noqa: F401,E402  (jax.debug; jax.experimental.io_callback)
from toolkit.callbacks import effects_barrier, pure_callback  # noqa: F401,E402  (jax's host callbacks)
from toolkit.runtime.debug_checks import debug_infs, debug_nans  # noqa: F401,E402  (jax.debug_nans)


def load_module(source: object, *, name: str | None = None, platform: str | None = None,
                platforms: "list[str] | tuple[str, ...] | None" = None) -> Lowered:
    """Any program in — MLIR text, bytecode, VHLO, a path, an ``ir.Module``, an ``Exported``, a JAX ``Lowered`` or
    ``Exported`` — as a :class:`Lowered` (see :func:`toolkit.lab.loading.load_module`)."""
    # function-level: toolkit.lab sits above export, which `import toolkit` does not load (start-up time)
    from toolkit.lab.loading import load_module as load

    return load(source, name=name, platform=platform, platforms=platforms)
from toolkit.core.config import (  # noqa: F401,E402  (JAX's config-flag context managers, each with its real effect)
    allow_f16_reductions, check_tracer_leaks, checking_leaks, default_device, default_matmul_precision,
    explain_cache_misses, log_compiles, no_execution, no_tracing, numpy_dtype_promotion, numpy_rank_promotion,
    softmax_custom_jvp, transfer_guard, transfer_guard_device_to_device, transfer_guard_device_to_host,
    transfer_guard_host_to_device, legacy_prng_key, enable_custom_prng, enable_checks, threefry_partitionable,
    jax2tf_associative_scan_reductions)
from toolkit import (  # noqa: F401,E402  (jax.dtypes, jax.typing, jax.monitoring, ...: made of modules loaded above)
    custom_derivatives, dlpack, dtypes, ffi, monitoring, ops, sharding, typing)
from toolkit.core.dtypes import float0  # noqa: F401,E402  (jax.float0: the dtype of integer values' tangents)


def host_count(backend: str | None = None) -> int:
    """``process_count()`` under its pre-rename name, with JAX's warning (``jax.host_count``)."""
    import warnings  # function-level: only these deprecated aliases warn
    warnings.warn("jax.host_count has been renamed to jax.process_count. This alias will eventually be removed; "
                  "please update your code.", stacklevel=2)
    return process_count(backend)


def host_id(backend: str | None = None) -> int:
    """``process_index()`` under its pre-rename name, with JAX's warning (``jax.host_id``)."""
    import warnings  # function-level: only these deprecated aliases warn
    warnings.warn("jax.host_id has been renamed to jax.process_index. This alias will eventually be removed; "
                  "please update your code.", stacklevel=2)
    return process_index(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """``process_indices()`` under its pre-rename name, with JAX's warning (``jax.host_ids``)."""
    import warnings  # function-level: only these deprecated aliases warn
    warnings.warn("jax.host_ids has been renamed to jax.process_indices. This alias will eventually be removed; "
                  "please update your code.", stacklevel=2)
    return list(process_indices(backend))
from toolkit.refs import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: F401,E402  (jax.new_ref, jax.Ref, ...)
from toolkit import ref  # noqa: F401,E402  (jax.ref: the mutable-array-reference namespace)
from toolkit.core.dynamic_slices import ds  # noqa: F401,E402  (jax.ds: a slice with a traced start)
