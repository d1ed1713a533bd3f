"""`gpufeed.analyze(...)` (issue 40): every stage of `gpufeed analyze` run in-process through
the library layer (`gpufeed-app`), returning the report's document and writing the same
three files as the CLI."""

from __future__ import annotations

import json
import os
import stat

import pytest

import gpufeed


def _no_gpu_no_frameworks(monkeypatch, tmp_path):
    """No NVML, and a fake interpreter that answers every framework probe with "not
    installed", as the CLI's tests do: the run is fast and the same on any machine."""
    python = tmp_path / "python3"
    python.write_text("#!/bin/sh\necho 'GPUFEED_PROBE {\"installed\": false}'\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("GPUFEED_PYTHON", str(python))
    monkeypatch.setenv("GPUFEED_NVML_LIB", str(tmp_path / "no-libnvidia-ml.so.1"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _oscillating_log(path) -> None:
    """A minute of one GPU swinging between 3 % and 45 % every 2.5 s, sampled every 100 ms,
    as nvidia-smi's CSV writes it."""
    lines = ["timestamp, index, utilization.gpu [%], memory.used [MiB]"]
    for i in range(600):
        t = i * 0.1
        util = 45 if (t % 2.5) < 1.25 else 3
        secs = 30 + t
        lines.append(
            f"2026/11/21 23:{int(secs // 60):02d}:{secs % 60:06.3f}, 0, {util} %, 20486 MiB"
        )
    path.write_text("\n".join(lines) + "\n")


def test_analyze_returns_the_report_document_and_writes_its_files(monkeypatch, tmp_path, capfd):
    _no_gpu_no_frameworks(monkeypatch, tmp_path)
    log = tmp_path / "gpu.csv"
    _oscillating_log(log)
    out = tmp_path / "report"
    doc = gpufeed.analyze(trace=log, out=out, progress=True)
    # The same document as the file, and the three files written.
    assert doc == json.loads((out / "report.json").read_text())
    assert (out / "summary.md").read_text().strip()
    assert "<html" in (out / "report.html").read_text().lower()
    assert doc["schema_version"]
    stages = {s["name"]: s for s in doc["stages"]}
    # The user's log was read as the telemetry; with an input of the user's, no demo ran.
    assert stages["telemetry"]["status"] == "ok", stages["telemetry"]
    assert stages["demo data"]["status"] == "skipped"
    assert stages["profile step"]["status"] == "skipped"
    assert doc["inputs"]["trace"] == os.fspath(log)
    # The oscillation is the ranked cause, as `gpufeed analyze --trace` ranks it.
    assert doc["causes"], doc["verdict"]
    assert "oscillat" in json.dumps(doc["causes"][0]).lower(), doc["causes"][0]
    # progress=True: each stage's outcome on stderr, as the CLI writes it off a terminal.
    err = capfd.readouterr().err
    assert "analyze: telemetry: ok" in err, err


def test_analyze_is_quiet_without_progress(monkeypatch, tmp_path, capfd):
    _no_gpu_no_frameworks(monkeypatch, tmp_path)
    log = tmp_path / "gpu.csv"
    _oscillating_log(log)
    gpufeed.analyze(trace=log, out=tmp_path / "report", progress=False)
    assert "analyze:" not in capfd.readouterr().err


def test_analyze_names_a_missing_input_in_python_terms(monkeypatch, tmp_path):
    _no_gpu_no_frameworks(monkeypatch, tmp_path)
    with pytest.raises(gpufeed.DataError) as e:
        gpufeed.analyze(data=tmp_path / "nowhere", out=tmp_path / "report", progress=False)
    message = str(e.value)
    assert "nowhere" in message and "no such file or folder" in message, message
    assert "--data" not in message, message
    # Nothing was written: bad usage is found before any work.
    assert not (tmp_path / "report").exists()


def test_analyze_raises_config_error_for_a_config_that_does_not_load(monkeypatch, tmp_path):
    _no_gpu_no_frameworks(monkeypatch, tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text("data: [unclosed\n")
    with pytest.raises(gpufeed.ConfigError) as e:
        gpufeed.analyze(config=config, out=tmp_path / "report", progress=False)
    assert "config.yaml:2" in str(e.value), str(e.value)
