"""``toolkit.experimental``: JAX's ``jax.experimental`` names toolkit has — ``io_callback``."""

from __future__ import annotations

from toolkit.callbacks import io_callback

__all__ = ["io_callback"]
