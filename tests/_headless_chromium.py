"""Headless Chromium for the tests that render toolkit's HTML pages (pipeline report, lab report, API site).

Skips the calling test when no Chromium is installed (.ci/run installs it when it can).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def chromium_path() -> str | None:
    """The Chromium (or Chrome) executable on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_command(tmp_path: Path) -> list[str]:
    """The command line of a headless Chromium with its own profile in ``tmp_path``; skips without Chromium."""
    browser = chromium_path()
    if browser is None:
        pytest.skip("no Chromium (apt-get install -y chromium)")
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}"]


def run_chromium(tmp_path: Path, *flags: str, url: str) -> subprocess.CompletedProcess:
    """Chromium run headless on ``url`` with ``flags`` (``--dump-dom``, ``--screenshot=...``), output captured."""
    return subprocess.run([*chromium_command(tmp_path), *flags, url], capture_output=True, text=True, timeout=120)
