"""The one owner of jaxlib's private client APIs (``jaxlib._jax``, ``xla_client``).

Everything toolkit does with PJRT — clients, devices, device arrays, compiling
and executing — goes through this package, so a jaxlib upgrade touches only
these files.
"""

from toolkit.runtime.client import backend, default_device, devices, num_cpu_devices  # noqa: F401
from toolkit.runtime import transfer_guards
from jaxlib._jax import JaxRuntimeError  # noqa: F401  (jax.errors.JaxRuntimeError: XLA's and PJRT's errors)

transfer_guards.install()  # the jax_transfer_guard_* flags act on jaxlib's guards from the start
