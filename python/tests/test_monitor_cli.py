"""`gpufeed.Monitor` (synthetic and fake-NVML sources) and the `gpufeed` command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
    script = shutil.which("gpufeed", path=str(REPO / ".venv" / "bin")) or shutil.which("gpufeed")
    if script is not None:  # the console script pip installed
        p = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and p.stdout.startswith("gpufeed ")


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
