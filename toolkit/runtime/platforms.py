"""Which PJRT platform is the default, as JAX chooses (``jax._src.xla_bridge.backends``).

* Without ``TOOLKIT_PLATFORMS``: every platform present is a candidate and the
  one with the highest priority is the default — a CUDA PJRT plugin
  (``jax_plugins.xla_cuda13``/``xla_cuda12`` with its ``xla_cuda_plugin.so``)
  with a visible NVIDIA GPU (priority 400, a plugin's default in JAX) beats
  the CPU (priority 0). As in JAX, "a visible GPU" means one of the device
  files ``/dev/nvidia0``, ``/dev/nvidiactl`` (containers), ``/dev/dxg`` (WSL2)
  exists.
* ``TOOLKIT_PLATFORMS`` (JAX's ``JAX_PLATFORMS``): a comma list such as
  ``cpu`` or ``cuda,cpu`` restricts toolkit to those platforms, first = default.
  ``gpu`` means ``cuda``. A platform named there but not present is an error,
  never a silent fall-back (JAX: "Unable to initialize backend").

Nothing here makes a PJRT client, so asking for the default platform (for
example ``toolkit.export.default_export_platform()``) does not stop a later
``toolkit.distributed.initialize``.
"""

from __future__ import annotations

import importlib
import os

#: Platforms toolkit can make clients for, with JAX's priorities (higher wins).
PRIORITIES = {"cuda": 400, "cpu": 0}
#: Names ``TOOLKIT_PLATFORMS`` accepts besides the platforms themselves.
ALIASES = {"gpu": ("cuda",)}
#: The CUDA plugin's Python packages, newest first (jaxlib's plugin discovery).
CUDA_PLUGIN_MODULES = ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12")
_NVIDIA_GPU_DEVICES = ("/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg")

ENV = "TOOLKIT_PLATFORMS"


def canonical(platform: str) -> str:
    """``platform`` lower-cased with ``gpu`` read as ``cuda``; ``ValueError`` for a platform toolkit does not know."""
    name = platform.strip().lower()
    expanded = ALIASES.get(name, (name,))
    for p in expanded:
        if p not in PRIORITIES:
            raise ValueError(f"unknown platform {platform!r}; toolkit knows {', '.join(sorted(PRIORITIES))} "
                             f"(and 'gpu' for 'cuda')")
    return expanded[0]


def requested_platforms() -> list[str] | None:
    """``TOOLKIT_PLATFORMS`` as a list of platforms in order (aliases expanded), or ``None`` when unset/empty."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    result: list[str] = []
    for item in text.split(","):
        if not item.strip():
            raise ValueError(f"{ENV}={text!r} has an empty entry; write a comma list such as 'cpu' or 'cuda,cpu'")
        try:
            names = ALIASES.get(item.strip().lower(), (canonical(item),))
        except ValueError as error:
            raise ValueError(f"{ENV}={text!r}: {error}") from None
        result += [n for n in names if n not in result]
    return result


def cuda_plugin_path() -> str | None:
    """The path of jaxlib's CUDA PJRT plugin library, or ``None`` when no plugin package is installed."""
    for module_name in CUDA_PLUGIN_MODULES:
        try:
            plugin = importlib.import_module(module_name)
        except ImportError:
            continue
        assert plugin.__file__ is not None  # jaxlib's plugin modules are regular packages (with __init__.py)
        path = os.path.join(os.path.dirname(plugin.__file__), "xla_cuda_plugin.so")
        if os.path.exists(path):
            return path
    return None


def has_visible_nvidia_gpu() -> bool:
    """Whether an NVIDIA GPU device file exists (JAX's check, ``hardware_utils.has_visible_nvidia_gpu``)."""
    return any(os.path.exists(d) for d in _NVIDIA_GPU_DEVICES)


def missing_reason(platform: str) -> str | None:
    """Why ``platform`` cannot be used here, or ``None`` when it can."""
    platform = canonical(platform)
    if platform == "cpu":
        return None
    if cuda_plugin_path() is None:
        return (f"no jaxlib CUDA PJRT plugin is installed (none of {', '.join(CUDA_PLUGIN_MODULES)} "
                f"with xla_cuda_plugin.so)")
    if not has_visible_nvidia_gpu():
        return f"the CUDA plugin is installed but no NVIDIA GPU is visible (none of {', '.join(_NVIDIA_GPU_DEVICES)})"
    return None


def available(platform: str) -> bool:
    """Whether ``platform`` is present (CPU always; CUDA with its plugin and a visible GPU)."""
    return missing_reason(platform) is None


def platforms() -> list[str]:
    """The platforms toolkit may use, default first.

    ``TOOLKIT_PLATFORMS`` when set (every one must be present: ``RuntimeError``
    naming the missing one and why); otherwise every present platform by priority.
    """
    requested = requested_platforms()
    if requested is None:
        return sorted((p for p in PRIORITIES if available(p)), key=lambda p: -PRIORITIES[p])
    for p in requested:
        reason = missing_reason(p)
        if reason is not None:
            raise RuntimeError(f"{ENV}={os.environ.get(ENV)!r} asks for platform {p!r}, but {reason} "
                               f"(unset {ENV} to choose an available platform automatically)")
    return requested


def default_platform() -> str:
    """The platform of the default backend: the first of :func:`platforms` (``"cpu"`` or ``"cuda"``)."""
    return platforms()[0]


def check_allowed(platform: str) -> str:
    """``platform`` made canonical; ``RuntimeError`` when ``TOOLKIT_PLATFORMS`` excludes it."""
    name = canonical(platform)
    requested = requested_platforms()
    if requested is not None and name not in requested:
        raise RuntimeError(f"platform {name!r} is not enabled: {ENV}={os.environ.get(ENV)!r} "
                           f"(add it to {ENV}, or unset {ENV})")
    return name
