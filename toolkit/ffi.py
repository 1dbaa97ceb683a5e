"""``toolkit.ffi``: call C++ functions through XLA's typed foreign-function interface (``jax.ffi``).

:func:`register_ffi_target` puts a handler (a PyCapsule from a compiled library, see :func:`pycapsule` and
:func:`include_dir` for XLA's headers) in jaxlib's custom-call registry — the registry JAX uses, so a target
registered by either is callable from both. :func:`ffi_call` returns a function that emits a
``stablehlo.custom_call`` to the target (``api_version = 4``; keyword arguments become the call's attributes),
traced, lowered and compiled like any other toolkit operation (``toolkit.lax.custom_call`` underneath).

Differences from JAX's (docs/differences-from-jax.md): under ``vmap`` the call runs once per batch element
(JAX's ``vmap_method="sequential"``) also when ``vmap_method`` is None (JAX raises); ``"expand_dims"`` and
``"broadcast_all"`` and ``input_output_aliases`` are refused; JAX's lowering-rule helpers
(``ffi_lowering``, ``build_ffi_lowering_function``) and FFI type registration are absent.

Example — LAPACK's Cholesky, a target jaxlib ships::

    factor, info = toolkit.ffi.ffi_call(
        "lapack_spotrf_ffi", (toolkit.ShapeDtypeStruct((3, 3), np.float32),
                              toolkit.ShapeDtypeStruct((), np.int32)),
        input_layouts=[(1, 0)], output_layouts=[(1, 0), ()])(a, uplo=np.uint8(ord("L")))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolkit.core.avals import ShapedArray, ShapeDtypeStruct
from toolkit.lax.custom_call import custom_call
from toolkit.runtime import ffi_targets

__all__ = ["ffi_call", "include_dir", "pycapsule", "register_ffi_target"]

_VMAP_METHODS = (None, "sequential", "sequential_unrolled")


def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1, **kwargs: Any) -> None:
    """Register ``fn`` as the FFI target ``name`` (``jax.ffi.register_ffi_target``).

    ``fn`` is a PyCapsule holding the handler, or a dict of FFI stage names to PyCapsules; ``api_version`` 1 is
    the typed FFI, 0 the older custom-call API. Other keyword arguments go to jaxlib's registration.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_ffi_target: name must be a non-empty string, got {name!r}")
    if platform != "cpu":
        raise ValueError(f"register_ffi_target: toolkit runs on the CPU; got platform {platform!r}")
    ffi_targets.register_target(name, fn, platform, api_version, **kwargs)


def pycapsule(funcptr: Any) -> Any:
    """Wrap a ctypes function pointer (``ctypes.cdll.LoadLibrary(...).name``) in a PyCapsule (``jax.ffi.pycapsule``)."""
    return ffi_targets.pycapsule(funcptr)


def include_dir() -> str:
    """The folder with XLA's FFI headers, to compile handlers against (``jax.ffi.include_dir``)."""
    return ffi_targets.include_dir()


def _minor_to_major(layout: Any, aval: Any, what: str) -> tuple[int, ...]:
    # JAX's layouts are major-to-minor (None: row-major); custom_call's are minor-to-major.
    ndim = len(aval.shape)
    if layout is None:
        return tuple(range(ndim - 1, -1, -1))
    order = tuple(int(d) for d in layout)
    if sorted(order) != list(range(ndim)):
        raise ValueError(f"ffi_call: {what} layout {layout} is not a permutation of the {ndim} dimensions")
    return order[::-1]


def ffi_call(target_name: str, result_shape_dtypes: Any, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts: Sequence[Any] | None = None,
             output_layouts: Any = None, input_output_aliases: dict[int, int] | None = None,
             custom_call_api_version: int = 4, legacy_backend_config: str | None = None) -> Callable[..., Any]:
    """A function calling the FFI target ``target_name`` (``jax.ffi.ffi_call``).

    ``result_shape_dtypes`` is one ``ShapeDtypeStruct`` (the function returns one array) or a sequence of them
    (it returns a list). The returned function takes the operands positionally and the call's attributes as
    keyword arguments (numpy or Python scalars, strings). Layouts are JAX's major-to-minor orders.
    """
    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(f"ffi_call: vmap_method={vmap_method!r} is not supported by toolkit (it runs the "
                                  "call once per batch element: 'sequential')")
    if input_output_aliases:
        raise NotImplementedError("ffi_call: input_output_aliases is not supported by toolkit yet")
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires custom_call_api_version < 4.")
    single = isinstance(result_shape_dtypes, (ShapeDtypeStruct, ShapedArray)) or hasattr(result_shape_dtypes,
                                                                                          "dtype")
    results = [result_shape_dtypes] if single else list(result_shape_dtypes)
    specs = [r if isinstance(r, (ShapeDtypeStruct, ShapedArray)) else ShapeDtypeStruct(r.shape, r.dtype)
             for r in results]
    if output_layouts is None or (single and not isinstance(output_layouts, (list, tuple))
                                  or single and output_layouts and isinstance(output_layouts[0], int)):
        output_layouts = [output_layouts]
    out_layouts = [_minor_to_major(layout, spec, f"output {i}")
                   for i, (layout, spec) in enumerate(zip(list(output_layouts) * (len(specs) if
                                                      len(output_layouts) == 1 else 1), specs))]

    def call(*args: Any, **attributes: Any) -> Any:
        if input_layouts is not None and len(input_layouts) != len(args):
            raise ValueError(f"ffi_call {target_name!r}: {len(input_layouts)} input layouts for {len(args)} inputs")
        in_layouts = [_minor_to_major(None if input_layouts is None else input_layouts[i], arg, f"input {i}")
                      for i, arg in enumerate(args)]
        if custom_call_api_version >= 4:
            config: Any = attributes
        else:
            if attributes:
                raise ValueError("ffi_call: keyword attributes need custom_call_api_version 4")
            config = legacy_backend_config or ""
        outs = custom_call(target_name, specs, *args, has_side_effect=has_side_effect, backend_config=config,
                           api_version=custom_call_api_version, operand_layouts=in_layouts,
                           result_layouts=out_layouts)
        return outs[0] if single else outs
    return call
