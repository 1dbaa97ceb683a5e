"""The one owner of jaxlib's private client APIs (``jaxlib._jax``, ``xla_client``).

Everything toolkit does with PJRT — clients, devices, device arrays, compiling
and executing — goes through this package, so a jaxlib upgrade touches only
these files.
"""

from toolkit.runtime.client import backend, default_device, devices, num_cpu_devices  # noqa: F401
