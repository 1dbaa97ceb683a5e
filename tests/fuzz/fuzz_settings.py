"""Hypothesis settings for the quick fuzz tests: small, deterministic, no deadline.

``TOOLKIT_FUZZ_EXAMPLES=N`` replaces every test's example count (and makes
the examples random instead of derandomized), to fuzz longer with pytest;
the standing run is ``bash scripts/fuzz.sh``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SCALED = "TOOLKIT_FUZZ_EXAMPLES" in os.environ


def fuzz_settings(default_examples: int) -> settings:
    examples = int(os.environ["TOOLKIT_FUZZ_EXAMPLES"]) if SCALED else default_examples
    return settings(max_examples=examples, deadline=None, derandomize=not SCALED, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True)
