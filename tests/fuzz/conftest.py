"""Fixtures of the fuzz tests: one worker process per session (restarted after a crash)."""

from __future__ import annotations

import pytest

import fuzz_worker


@pytest.fixture(scope="session")
def worker():
    w = fuzz_worker.Worker(timeout=60.0)
    yield w
    w.close()
