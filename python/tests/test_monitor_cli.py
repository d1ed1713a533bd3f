"""`gpufeed.Monitor` (synthetic and fake-NVML sources) and the `gpufeed` command."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest

import gpufeed

from conftest import REPO, run_cli, threads


def test_monitor_finds_the_synthetic_cycle():
    # A square wave of period 2 s, 0 % / 50 %, half busy; 20 s of it at 10x real time.
    pattern = "oscillating:period=2,low=0,high=50,noise=0"
    base = threads()
    with gpufeed.Monitor(interval=0.1, source=f"synthetic:{pattern}", speed=10) as m:
        assert m.running and threads() == base + 1
        time.sleep(2.0)
    assert not m.running and threads() == base
    r = m.report()
    gpu = r["gpus"][0]
    assert gpu["verdict"] == "oscillating"
    assert gpu["period_s"] == pytest.approx(2.0, rel=0.05)
    assert gpu["idle_fraction"] == pytest.approx(0.5, abs=0.06)
    assert r["interval_s"] == pytest.approx(0.1, rel=0.05)
    assert "oscillating" in m.text()


def test_monitor_report_is_the_cli_document():
    with gpufeed.Monitor(source="synthetic:stable", speed=20) as m:
        time.sleep(1.0)
    code, out, err = run_cli("monitor", "--synthetic", "stable", "--duration", "2", "--format", "json")
    assert code == 0, err
    cli = json.loads(out)
    ours = m.report()
    assert set(ours) == set(cli)
    assert set(ours["gpus"][0]) == set(cli["gpus"][0])
    assert ours["gpus"][0]["verdict"] == cli["gpus"][0]["verdict"] == "stable"


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("a C compiler is needed to build the fake NVML library (.ci/run installs gcc)")
    src = REPO / "crates" / "gpufeed-telemetry" / "tests" / "fake_nvml" / "fake_nvml.c"
    lib = tmp_path_factory.mktemp("nvml") / "libnvidia-ml.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src)], check=True)
    return lib


def test_monitor_samples_the_fake_nvml_gpus(fake_nvml, monkeypatch):
    # GPU 0 of the fake is busy in a 2 s square wave (95 % / 5 %), GPU 1 is idle.
    monkeypatch.setenv("GPUFEED_NVML_LIB", str(fake_nvml))
    with gpufeed.Monitor(interval=0.1) as m:
        time.sleep(8.5)
    r = m.report()
    assert [g["gpu"] for g in r["gpus"]] == [0, 1]
    gpu0 = r["gpus"][0]
    assert gpu0["verdict"] == "oscillating"
    assert gpu0["period_s"] == pytest.approx(2.0, rel=0.1)
    # A live source: the host is sampled beside the GPUs, about once per tick.
    assert r["host"]["samples"] >= 70
    assert 0.0 <= r["host"]["cpu_pct"]["mean"] <= 100.0
    assert r["host"]["sampler"]["interval_s"] == pytest.approx(0.1)


def test_monitor_bad_input():
    with pytest.raises(ValueError, match="interval"):
        gpufeed.Monitor(interval=0)
    with pytest.raises(ValueError, match="source='gpu0'"):
        gpufeed.Monitor(source="gpu0")
    with pytest.raises(ValueError, match="speed"):
        gpufeed.Monitor(speed=2)
    m = gpufeed.Monitor(source="synthetic:nonsense")
    m.start()
    with pytest.raises(ValueError, match="nonsense"):
        m.stop()
    with pytest.raises(RuntimeError, match="no report yet"):
        m.report()
    with pytest.raises(RuntimeError, match="not running"):
        gpufeed.Monitor().stop()


def test_the_gpufeed_command_is_the_rust_cli():
    code, out, _ = run_cli("--version")
    assert code == 0 and out.startswith("gpufeed ")
    example = REPO / "examples" / "nvidia-smi-2gpu.csv"
    code, out, err = run_cli("trace", str(example), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["gpus"][0]["verdict"] == "oscillating"
    code, _, err = run_cli("trace", "/nonexistent.csv")
    assert code == 2 and "nonexistent" in err


def test_the_wheel_ships_the_binary_as_its_command():
    """The `gpufeed` command pip installed is the Rust binary itself (as ruff's and uv's
    are), beside this environment's python, not a Python script that imports the
    extension; `python -m gpufeed` and `find_gpufeed_bin` name the same file."""
    binary = gpufeed.find_gpufeed_bin()
    assert pathlib.Path(binary).parent == pathlib.Path(sysconfig.get_path("scripts"))
    with open(binary, "rb") as f:
        assert f.read(4) == b"\x7fELF", f"{binary} is not a native executable"
    p = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["gpufeed", gpufeed.__version__]
    # The extension links library crates only: the CLI is not in it.
    assert not hasattr(gpufeed._gpufeed, "main")


def test_ctrl_c_ends_the_command(tmp_path):
    p = subprocess.Popen(
        [sys.executable, "-m", "gpufeed", "monitor", "--synthetic", "oscillating", "--plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.0)
    p.send_signal(2)  # SIGINT
    out, err = p.communicate(timeout=30)
    assert p.returncode in (0, -2, 130), (p.returncode, err)


def test_a_missing_binary_is_named_with_the_fix(tmp_path, monkeypatch):
    """A package installed without its binary (`maturin develop`, say) says where it
    looked and how to get the command, in one message."""
    from gpufeed import _bin

    monkeypatch.setattr(_bin, "_candidates", lambda: [tmp_path / "bin", tmp_path / "scripts"])
    with pytest.raises(FileNotFoundError) as e:
        gpufeed.find_gpufeed_bin()
    msg = str(e.value)
    assert str(tmp_path / "bin") in msg and str(tmp_path / "scripts") in msg
    assert "pip install ." in msg and "cargo install --path crates/gpufeed" in msg


def test_the_source_distribution_can_build_the_binary(tmp_path):
    """The sdist holds the backend and the two crates only the binary needs, so that a
    wheel built from it ships the command too."""
    maturin = pathlib.Path(sys.executable).parent / "maturin"
    if not maturin.exists():
        pytest.skip("maturin is not installed in this environment")
    p = subprocess.run(
        [str(maturin), "sdist", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    (sdist,) = tmp_path.glob("gpufeed-*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in [
        "pyproject.toml",
        "python/backend/gpufeed_build.py",
        "crates/gpufeed/src/main.rs",
        "crates/gpufeed/benches/trace_throughput.rs",
        "crates/gpufeed-live/src/lib.rs",
    ]:
        assert needed in names, f"the sdist lacks {needed}"
