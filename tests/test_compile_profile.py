"""tests/compile_profile.py: the TOOLKIT_TEST_PROFILE plugin and its summary (docs/testing.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests import compile_profile

ROOT = Path(__file__).resolve().parent.parent


def test_the_recorder_counts_a_toolkit_compilation_and_keys_it_without_locations():
    import toolkit
    from toolkit.core import trace_cache
    from toolkit.runtime import executable as runtime_executable

    recorder = compile_profile._Recorder()
    original = runtime_executable.compile_module
    runtime_executable.compile_module = recorder.wrap("toolkit", original, compile_profile._toolkit_key)
    try:
        trace_cache.clear_caches()

        def first(x):
            return x * 3.0 + 1.0

        def second(x):  # another line, the same program (but another name: jit_second)
            return x * 3.0 + 1.0

        toolkit.jit(first)(np.ones(4, np.float32))
        toolkit.jit(first)(np.ones(4, np.float32))  # jit's own cache: no second compilation
        trace_cache.clear_caches()
        toolkit.jit(first)(np.ones(4, np.float32))  # compiled again: the same program
        toolkit.jit(second)(np.ones(4, np.float32))
    finally:
        runtime_executable.compile_module = original
    assert [side for side, _, _ in recorder.compiles] == ["toolkit"] * 3
    keys = [key for _, key, _ in recorder.compiles]
    assert keys[0] == keys[1] != keys[2] and not keys[0].startswith("unhashable")
    assert all(seconds >= 0 for _, _, seconds in recorder.compiles)


def _line(test: str, toolkit_keys: list[str], jax_keys: list[str], cpu: float = 1.0) -> str:
    return json.dumps({"test": test, "cpu": cpu, "wall": cpu, "toolkit": [[k, 0.1] for k in toolkit_keys],
                       "jax": [[k, 0.2] for k in jax_keys]})


def test_summary_counts_duplicates_per_process_and_across_the_run(tmp_path):
    (tmp_path / "p.gw0.jsonl").write_text("\n".join([
        _line("tests/a/test_x.py::t1", ["k1", "k2"], ["j1"]),
        _line("tests/a/test_x.py::t2", ["k1"], ["j1"]),
    ]) + "\n")
    (tmp_path / "p.gw1.jsonl").write_text(_line("tests/b.py::t3", ["k2"], [], cpu=2.5) + "\n")
    table = compile_profile.summarize(sorted(tmp_path.glob("p.*.jsonl")))
    rows = {line.split()[0]: line.split() for line in table.splitlines() if line.startswith("tests/")}
    # group tests CPU | tk n, tk s, dupP, dupR, dupR s | jax n, jax s, dupP, dupR, dupR s
    assert rows["tests/a/test_x.py"][1:3] == ["2", "2.0"]
    assert rows["tests/a/test_x.py"][4:8] == ["3", "0.3", "1", "1"]  # k1 again, in the same process
    assert rows["tests/a/test_x.py"][10:14] == ["2", "0.4", "1", "1"]
    assert rows["tests/b.py"][4:8] == ["1", "0.1", "0", "1"]  # k2: another process compiled it
    by_folder = compile_profile.summarize(sorted(tmp_path.glob("p.*.jsonl")), by="folder")
    assert any(line.startswith("tests/a ") for line in by_folder.splitlines())
    assert "total (2 groups)" in by_folder


def test_main_names_a_missing_profile(tmp_path, capsys):
    with pytest.raises(SystemExit):
        compile_profile.main([str(tmp_path / "nothing")])
    assert "no profile files" in capsys.readouterr().err


def test_a_profiled_pytest_run_writes_a_line_per_test_with_both_sides(tmp_path):
    pytest.importorskip("jax")
    test_file = tmp_path / "test_profiled.py"
    test_file.write_text(textwrap.dedent("""
        import numpy as np
        import jax
        import toolkit

        def test_both():
            x = np.arange(3, dtype=np.float32)
            assert np.allclose(toolkit.jit(lambda v: v + 2.5)(x), jax.jit(lambda v: v + 2.5)(x))

        def test_none():
            assert True
    """))
    prefix = tmp_path / "profile"
    env = dict(os.environ, TOOLKIT_TEST_PROFILE=str(prefix), PYTHONPATH=str(ROOT))
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.compile_profile",
                           "--rootdir", str(tmp_path), str(test_file)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(text) for text in (tmp_path / "profile.main.jsonl").read_text().splitlines()]
    assert [line["test"].split("::")[1] for line in lines] == ["test_both", "test_none"]
    assert len(lines[0]["toolkit"]) == 1 and len(lines[0]["jax"]) == 1
    assert lines[1]["toolkit"] == lines[1]["jax"] == [] and lines[0]["cpu"] > 0
