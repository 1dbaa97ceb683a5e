"""Default platform selection (runtime/platforms.py): JAX's rule, with the CUDA plugin absent or faked."""

import subprocess
import sys
import types

import pytest

from toolkit.runtime import client, platforms


@pytest.fixture
def no_plugin(monkeypatch, tmp_path):
    """No CUDA plugin installed, though a GPU device file exists."""
    monkeypatch.delenv("TOOLKIT_PLATFORMS", raising=False)
    monkeypatch.setattr(platforms, "CUDA_PLUGIN_MODULES", ("toolkit_test_no_such_plugin.xla_cuda12",))
    gpu = tmp_path / "nvidia0"
    gpu.write_text("")
    monkeypatch.setattr(platforms, "_NVIDIA_GPU_DEVICES", (str(gpu),))


@pytest.fixture
def fake_plugin(monkeypatch, tmp_path):
    """A fake ``jax_plugins.xla_cuda12`` package with its library file; returns a switch for the GPU device file."""
    monkeypatch.delenv("TOOLKIT_PLATFORMS", raising=False)
    package = tmp_path / "xla_cuda12"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "xla_cuda_plugin.so").write_text("not a real plugin")
    module = types.ModuleType("jax_plugins.xla_cuda12")
    module.__file__ = str(package / "__init__.py")
    monkeypatch.setitem(sys.modules, "jax_plugins.xla_cuda12", module)
    monkeypatch.setattr(platforms, "CUDA_PLUGIN_MODULES", ("jax_plugins.xla_cuda12",))
    gpu = tmp_path / "nvidia0"
    monkeypatch.setattr(platforms, "_NVIDIA_GPU_DEVICES", (str(gpu),))

    def set_gpu(visible: bool):
        if visible:
            gpu.write_text("")
        elif gpu.exists():
            gpu.unlink()
    return set_gpu


def test_without_the_plugin_cpu_is_the_default(no_plugin, monkeypatch):
    assert platforms.cuda_plugin_path() is None
    assert platforms.platforms() == ["cpu"]
    assert platforms.default_platform() == "cpu"
    assert "no jaxlib CUDA PJRT plugin" in platforms.missing_reason("gpu")
    monkeypatch.setenv("TOOLKIT_PLATFORMS", "cuda")
    with pytest.raises(RuntimeError, match="TOOLKIT_PLATFORMS='cuda' asks for platform 'cuda'.*no jaxlib CUDA"):
        platforms.default_platform()
    monkeypatch.setenv("TOOLKIT_PLATFORMS", "gpu,cpu")
    with pytest.raises(RuntimeError, match="unset TOOLKIT_PLATFORMS"):
        platforms.platforms()


def test_plugin_with_a_visible_gpu_beats_cpu(fake_plugin, monkeypatch):
    fake_plugin(True)
    assert platforms.cuda_plugin_path().endswith("xla_cuda_plugin.so")
    assert platforms.platforms() == ["cuda", "cpu"]
    assert platforms.default_platform() == "cuda"
    # TOOLKIT_PLATFORMS restricts and orders, as JAX_PLATFORMS does.
    monkeypatch.setenv("TOOLKIT_PLATFORMS", "cpu")
    assert platforms.platforms() == ["cpu"] and platforms.default_platform() == "cpu"
    with pytest.raises(RuntimeError, match="platform 'cuda' is not enabled: TOOLKIT_PLATFORMS='cpu'"):
        platforms.check_allowed("gpu")
    monkeypatch.setenv("TOOLKIT_PLATFORMS", "cpu,gpu")
    assert platforms.platforms() == ["cpu", "cuda"]
    monkeypatch.setenv("TOOLKIT_PLATFORMS", " GPU ")
    assert platforms.platforms() == ["cuda"]
    with pytest.raises(RuntimeError, match="platform 'cpu' is not enabled"):
        platforms.check_allowed("cpu")


def test_plugin_without_a_visible_gpu_falls_back_to_cpu(fake_plugin, monkeypatch):
    fake_plugin(False)
    assert platforms.default_platform() == "cpu"
    monkeypatch.setenv("TOOLKIT_PLATFORMS", "cuda")
    with pytest.raises(RuntimeError, match="no NVIDIA GPU is visible"):
        platforms.default_platform()


@pytest.mark.parametrize("text, words", [("tpu", "unknown platform 'tpu'"), ("cpu,", "empty entry"),
                                         ("cpu,,cuda", "empty entry")])
def test_bad_platform_lists_are_errors(monkeypatch, text, words):
    monkeypatch.setenv("TOOLKIT_PLATFORMS", text)
    with pytest.raises(ValueError, match=words):
        platforms.requested_platforms()


def test_default_export_platform_follows_the_default_backend(fake_plugin, monkeypatch):
    from toolkit import export
    monkeypatch.setattr(client, "_default_platform", None)  # restored afterwards
    fake_plugin(True)
    assert export.default_export_platform() == "cuda"
    monkeypatch.setattr(client, "_default_platform", None)
    monkeypatch.setenv("TOOLKIT_PLATFORMS", "cpu")
    assert export.default_export_platform() == "cpu"


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    import os
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120)


def test_toolkit_platforms_in_a_fresh_process():
    code = ("import toolkit\n"
            "from toolkit import export\n"
            "print(toolkit.devices()[0].platform, export.default_export_platform())\n"
            "try:\n"
            "    toolkit.devices('cuda')\n"
            "except RuntimeError as e:\n"
            "    print('refused:', e)\n")
    done = _run(code, TOOLKIT_PLATFORMS="cpu", TOOLKIT_NUM_CPU_DEVICES="2")
    assert done.returncode == 0, done.stderr
    first, refused = done.stdout.strip().splitlines()
    assert first == "cpu cpu"
    assert refused.startswith("refused: platform 'cuda' is not enabled")
    if not platforms.available("cuda"):
        done = _run("import toolkit\ntoolkit.devices()\n", TOOLKIT_PLATFORMS="cuda")
        assert done.returncode != 0 and "asks for platform 'cuda'" in done.stderr, done.stderr


@pytest.mark.gpu
@pytest.mark.skipif(not platforms.available("cuda"), reason="needs the CUDA plugin and an NVIDIA GPU")
def test_gpu_is_the_default_backend_when_present():
    done = _run("import toolkit, numpy as np\n"
                "from toolkit import export\n"
                "x = toolkit.jit(lambda a: a * 2)(np.ones(3, np.float32))\n"
                "print(toolkit.devices()[0].platform, export.default_export_platform(), list(x.devices())[0].platform)\n")
    assert done.returncode == 0, done.stderr
    device_platform, export_platform, result_platform = done.stdout.split()
    assert export_platform == "cuda" and device_platform in ("gpu", "cuda") and result_platform == device_platform
