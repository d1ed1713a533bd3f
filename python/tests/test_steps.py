"""`gpufeed.StepTimer`: verdicts with known truth (sleeps), the saved file read by
`gpufeed trace`, any iterable, bad usage, the Keras callback."""

from __future__ import annotations

import json
import time

import pytest

import gpufeed

from conftest import run_cli

STEPS = 40


def slow_data(n: int, wait_s: float):
    for i in range(n):
        time.sleep(wait_s)
        yield i


def run(timer, data, phases):
    """One loop: for each step, `phases(i)` gives [(name, seconds)] to sleep in turn."""
    for i in timer.iter(data):
        for name, s in phases(i):
            with timer.phase(name):
                time.sleep(s)


def test_input_bound_when_the_loop_waits_for_data():
    timer = gpufeed.StepTimer()
    run(timer, slow_data(STEPS, 0.006), lambda i: [("forward", 0.002), ("backward", 0.002)])
    r = timer.report()
    assert r.verdict == "input-bound" and r.level == "high", str(r)
    d = r.to_dict()
    assert d["phases"]["data_wait"]["share"] == pytest.approx(0.6, abs=0.1)
    assert "data wait" in " ".join(r.evidence)
    # A loop gpufeed knows nothing of: the fix quotes no setting of gpufeed's demo.
    assert "now 2" not in r.fix and "(now" not in r.fix
    assert "input-bound" in str(r).splitlines()[0], "the text leads with the verdict"


def test_the_report_is_the_published_phase_steps_document():
    jsonschema = pytest.importorskip("jsonschema")
    schema = gpufeed.schema("phase-steps")
    assert schema["properties"]["schema_version"]["const"] == 2
    timer = gpufeed.StepTimer(batch_size=8)
    run(timer, slow_data(STEPS, 0.004), lambda i: [("h2d_copy", 0.001), ("forward", 0.002)])
    d = timer.report().to_dict()
    jsonschema.Draft202012Validator(schema).validate(d)
    # The schema is no formality: a renamed or an extra field fails.
    bad = dict(d)
    bad["verdict_name"] = bad.pop("verdict")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)
    with pytest.raises(ValueError, match="no document named `nope`"):
        gpufeed.schema("nope")


def test_compute_bound_when_the_step_is_the_work():
    timer = gpufeed.StepTimer()
    run(timer, range(STEPS), lambda i: [("forward", 0.003), ("backward", 0.004)])
    r = timer.report()
    assert r.verdict == "compute-bound", str(r)
    assert r.level is None


def test_transfer_bound_when_copies_dominate_the_input():
    timer = gpufeed.StepTimer()
    run(timer, range(STEPS), lambda i: [("h2d_copy", 0.004), ("forward", 0.003)])
    r = timer.report()
    assert r.verdict == "transfer-bound", str(r)
    assert r.to_dict()["phases"]["h2d_copy"]["category"] == "copy"


def test_oscillating_when_every_fifth_step_stalls():
    timer = gpufeed.StepTimer()
    run(timer, range(60), lambda i: [("forward", 0.012 if i % 5 == 0 else 0.002)])
    r = timer.report()
    assert r.verdict == "oscillating", str(r)
    assert r.to_dict()["step"]["period_steps"] == 5


def test_sync_is_called_at_each_boundary_and_warmup_left_out():
    calls = []
    timer = gpufeed.StepTimer(sync=lambda: calls.append(1), warmup=3)
    run(timer, range(20), lambda i: [("forward", 0.001), ("backward", 0.001)])
    # Before each of the 21 batch requests (the last one ends the loop), after each phase.
    assert len(calls) == 21 + 40
    assert timer.steps == 20
    d = timer.report().to_dict()
    assert d["sync"] is True and d["warmup"] == 3
    assert d["step"]["samples"] == 17


def test_saved_steps_are_read_by_gpufeed_trace(tmp_path):
    timer = gpufeed.StepTimer(batch_size=16)
    run(timer, slow_data(STEPS, 0.005), lambda i: [("forward", 0.002)])
    report = timer.report()
    path = tmp_path / "steps.jsonl"
    timer.save(path)
    code, out, err = run_cli("trace", str(path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == report.verdict == "input-bound"
    assert doc["phases"].keys() == report.to_dict()["phases"].keys()
    code, text, _ = run_cli("trace", str(path))
    assert code == 0 and "input-bound" in text


def test_any_iterable_and_the_items_of_a_batch():
    np = pytest.importorskip("numpy")
    timer = gpufeed.StepTimer()
    data = [(np.zeros((8, 3)), np.zeros(8)) for _ in range(STEPS)]
    run(timer, data, lambda i: [("forward", 0.002)])
    d = timer.report().to_dict()
    assert d["samples_per_s"] is not None and d["samples_per_s"] > 0


def test_a_gpufeed_loader_counts_real_rows(demo_cache):
    loader = gpufeed.Loader(demo_cache, batch_size=5, workers=1)  # 64 items: last batch 4
    timer = gpufeed.StepTimer(warmup=0)
    for _ in timer.iter(loader):
        pass
    assert timer.steps == len(loader)
    assert [items for _, _, items in timer._steps][-1] in (4, 5)
    assert sum(items for _, _, items in timer._steps) == 64


def test_a_loop_left_early_drops_the_unfinished_step():
    timer = gpufeed.StepTimer()
    for i in timer.iter(range(10)):
        with timer.phase("forward"):
            pass
        if i == 4:
            break
    assert timer.steps == 4


def test_bad_usage_says_what_to_do():
    timer = gpufeed.StepTimer()
    with pytest.raises(RuntimeError, match="outside a step"):
        with timer.phase("forward"):
            pass
    with pytest.raises(RuntimeError, match="do not nest"):
        for _ in timer.iter(range(2)):
            with timer.phase("forward"):
                with timer.phase("inner"):
                    pass
    with pytest.raises(ValueError, match="non-empty string"):
        timer.phase("")
    with pytest.raises(TypeError, match="not callable"):
        gpufeed.StepTimer(sync=3)
    with pytest.raises(ValueError, match="warmup"):
        gpufeed.StepTimer(warmup=-1)
    few = gpufeed.StepTimer()
    run(few, range(3), lambda i: [("forward", 0.001)])
    with pytest.raises(ValueError, match="step"):
        few.report()
    with pytest.raises(ValueError, match="not negative"):
        few.record(-1.0, [])


def test_keras_callback_records_fit(tmp_path):
    tf = pytest.importorskip("tensorflow")
    from gpufeed.keras import StepTimerCallback

    import numpy as np

    x = np.random.default_rng(0).standard_normal((320, 8)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    cb = StepTimerCallback(batch_size=16)
    model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[cb])
    assert cb.timer.steps == 40
    r = cb.timer.report()
    assert "train_step" in r.to_dict()["phases"]
    # Keras fetches the batch inside its train function: no data wait is timed, and the
    # report says it cannot tell input-bound from compute-bound rather than guess. A cycle
    # in the measured step times (the machine's load can make one in 40 steps) is still
    # reported as `oscillating`: that verdict needs no data wait.
    assert r.verdict in ("undetermined", "oscillating"), str(r)
    assert any("no `data_wait` phase was recorded" in e for e in r.evidence), str(r)
    if r.verdict == "undetermined":
        assert "data_wait" in r.fix
