"""Batching rules, one file per ``toolkit.lax`` family; importing this package fills ``BATCHING_RULES``."""

from toolkit.batching.rules import (  # noqa: F401
    autodiff,
    calls,
    control_flow,
    convolution,
    custom_call,
    elementwise,
    indexing,
    linalg,
    parallel,
    random_bits,
    reductions,
    sharding,
    sorting,
    structural,
    windowed,
)
