"""Runs the lit golden tests (test/lit) so that `pytest` alone runs everything
and a lit failure fails CI."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

LIT_ROOT = pathlib.Path(__file__).resolve().parents[2] / "test" / "lit"


def test_lit_suite_passes() -> None:
    lit = shutil.which("lit", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("lit")
    if lit is None:
        pytest.skip("lit is not installed")
    result = subprocess.run([lit, "-q", "--no-progress-bar", str(LIT_ROOT)], capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
