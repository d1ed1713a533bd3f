"""The shape of the Python API (issue 41): options keyword-only, one exception base with a
class per domain (each keeping its old builtin base), one return type per function,
`attach` through the library, and messages in Python terms."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import gpufeed
from gpufeed import errors

from test_cache_features import tiny_dataset

# Keyword-only options ---------------------------------------------------------------------


def test_options_after_the_first_argument_are_keyword_only(demo_cache, tmp_path):
    with pytest.raises(TypeError):
        gpufeed.Loader(demo_cache, 4)  # batch_size by position
    with pytest.raises(TypeError):
        gpufeed.precompute(tmp_path / "data", tmp_path / "cache")
    with pytest.raises(TypeError):
        gpufeed.precompute_shard(tmp_path / "data", "0/2")
    with pytest.raises(TypeError):
        gpufeed.Monitor(0.1, "synthetic:stable")
    with pytest.raises(TypeError):
        gpufeed.attach(1, 5.0)
    with pytest.raises(TypeError):
        gpufeed.mel(np.zeros(4096, np.float32), 22050, "librosa")
    timer = gpufeed.StepTimer()
    with pytest.raises(TypeError):
        timer.record(10.0, [("forward", 5.0)], 32)
    # The same calls with keywords work.
    assert len(gpufeed.Loader(demo_cache, batch_size=4)) > 0
    timer.record(10.0, [("forward", 5.0)], items=32)


# Exceptions ------------------------------------------------------------------------------


def test_the_exception_classes_keep_their_builtin_bases():
    assert gpufeed.Error is errors.Error and issubclass(gpufeed.Error, Exception)
    for cls, builtin in [
        (gpufeed.DataError, ValueError),
        (gpufeed.DataNotFoundError, FileNotFoundError),
        (gpufeed.DataIOError, OSError),
        (gpufeed.ConfigError, ValueError),
        (gpufeed.ConfigNotFoundError, FileNotFoundError),
        (gpufeed.TraceError, ValueError),
        (gpufeed.AttachError, RuntimeError),
    ]:
        assert issubclass(cls, gpufeed.Error) and issubclass(cls, builtin), cls
    assert issubclass(gpufeed.DataNotFoundError, gpufeed.DataError)
    assert issubclass(gpufeed.ConfigNotFoundError, gpufeed.ConfigError)


def test_data_errors(tmp_path, demo_dir):
    with pytest.raises(gpufeed.DataNotFoundError, match="no such dataset"):
        gpufeed.precompute(tmp_path / "nowhere")
    with pytest.raises(gpufeed.DataNotFoundError):
        gpufeed.Cache(tmp_path)
    # A dataset in no layout: the fix names the keyword arguments, not the CLI's flags.
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "notes.txt").write_text("nothing here\n")
    with pytest.raises(gpufeed.DataError) as e:
        gpufeed.precompute(odd, cache=tmp_path / "c")
    assert "--" not in str(e.value), str(e.value)
    # A damaged cache.
    cache = gpufeed.precompute(demo_dir, cache=tmp_path / "damaged")
    shard = sorted(cache.path.glob("shard-*"))[0]
    raw = bytearray(shard.read_bytes())
    raw[-1] ^= 0xFF
    shard.write_bytes(bytes(raw))
    with pytest.raises(gpufeed.DataError, match="shard"):
        gpufeed.Cache(cache.path).verify()


def test_config_errors(tmp_path, demo_dir):
    with pytest.raises(gpufeed.ConfigNotFoundError, match="config"):
        gpufeed.load_config(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("data:\n  batch_size: 32x\n")
    with pytest.raises(gpufeed.ConfigError, match="batch_size"):
        gpufeed.load_config(bad)
    with pytest.raises(gpufeed.ConfigError, match="n_mel"):
        gpufeed.mel(np.zeros(4096, np.float32), 22050, n_mel=80)
    with pytest.raises(gpufeed.ConfigError, match="shard"):
        gpufeed.precompute_shard(tmp_path, shard="3/2")
    with pytest.raises(gpufeed.ConfigError) as e:
        gpufeed.precompute(demo_dir, cache=tmp_path / "c", features=["mel", "nonsense"])
    assert 'features=["mel", "energy", "f0"]' in str(e.value), str(e.value)
    assert "--features" not in str(e.value)


def test_shard_auto_reads_the_array_job_and_names_the_keyword_outside_one(monkeypatch, tmp_path):
    for var in ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
                "SLURM_ARRAY_TASK_MAX", "JOB_COMPLETION_INDEX", "JOB_COMPLETIONS",
                "SLURM_PROCID", "SLURM_NTASKS"):
        monkeypatch.delenv(var, raising=False)
    data = tiny_dataset(tmp_path / "data", 4)
    with pytest.raises(gpufeed.ConfigError) as e:
        gpufeed.precompute_shard(data, shard="auto", cache=tmp_path / "c")
    message = str(e.value)
    assert message.startswith('shard="auto": '), message
    assert "shard=(I, N)" in message and "--shard" not in message, message
    # In a Slurm array task, "auto" is that task's slice (it was refused as not "I/N").
    data = tiny_dataset(tmp_path / "many", 300)
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "2")
    report = gpufeed.precompute_shard(data, shard="auto", cache=tmp_path / "c2")
    assert report["shards_total"] == 2 and report["shards_built"] == 1, report


def test_trace_error_for_a_recording_that_cannot_be_replayed(tmp_path):
    bad = tmp_path / "steps.txt"
    bad.write_text("0.31\n0.29\n0.30\n")
    m = gpufeed.Monitor(source=f"replay:{bad}")
    m.start()
    with pytest.raises(gpufeed.TraceError):
        m.stop()


def test_monitor_without_a_gpu_names_the_keyword_arguments(monkeypatch, tmp_path):
    # No NVIDIA library where gpufeed looks: the state of a machine without a driver.
    monkeypatch.setenv("GPUFEED_NVML_LIB", str(tmp_path / "libnvidia-ml.so.1"))
    m = gpufeed.Monitor()
    m.start()
    with pytest.raises(gpufeed.ConfigError) as e:
        m.stop()
    message = str(e.value)
    assert 'source="synthetic:oscillating"' in message, message
    assert "--synthetic" not in message and "--replay" not in message, message


# One return type per function ------------------------------------------------------------


def test_precompute_returns_a_cache_and_precompute_shard_its_report(tmp_path):
    data = tiny_dataset(tmp_path / "data", 300)
    first = gpufeed.precompute_shard(data, shard="0/2", cache=tmp_path / "c")
    assert isinstance(first, dict) and not first["complete"]
    # The summary speaks Python: the keyword, not the CLI's `--shard`.
    assert "other `shard=` slices are missing" in first["summary"], first["summary"]
    assert "--" not in first["summary"], first["summary"]
    assert first["shards_built"] == 1 and first["shards_total"] == 2
    last = gpufeed.precompute_shard(data, shard=(1, 2), cache=tmp_path / "c")
    assert isinstance(last, dict) and last["complete"]
    cache = gpufeed.Cache(last["cache_dir"])
    assert len(cache) == 300
    # precompute itself always returns the Cache (here, the one the shards completed).
    again = gpufeed.precompute(data, cache=tmp_path / "c")
    assert isinstance(again, gpufeed.Cache) and again.report["was_complete"]
    with pytest.raises(TypeError):
        gpufeed.precompute(data, cache=tmp_path / "c", shard="0/2")


# attach through the library --------------------------------------------------------------


def test_attach_runs_in_process_and_raises_attach_error(monkeypatch):
    def no_subprocess(*args, **kwargs):
        raise AssertionError("gpufeed.attach started a process")

    monkeypatch.setattr(subprocess, "run", no_subprocess)
    monkeypatch.setattr(subprocess, "Popen", no_subprocess)
    with pytest.raises(gpufeed.AttachError, match="no process 999999999"):
        gpufeed.attach(999999999, duration=1)
    with pytest.raises(ValueError, match="StepTimer"):
        gpufeed.attach(os.getpid())


def test_attach_bad_arguments_name_the_keyword():
    with pytest.raises(ValueError) as e:
        gpufeed.attach(999999999, duration=1, rate=5000)
    assert "rate=5000" in str(e.value) and "--rate" not in str(e.value)
    with pytest.raises(ValueError, match="duration=0"):
        gpufeed.attach(999999999, duration=0)
