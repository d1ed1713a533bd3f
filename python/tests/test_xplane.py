"""`gpufeed trace` on TensorFlow's `*.xplane.pb`, checked against TensorFlow itself.

- A real TensorFlow profile recorded here is read (CPU only with tensorflow-cpu: no GPU
  events, a warning, exit 0; with a TensorFlow that sees a GPU, its kernels and a verdict),
  its steps are the `step_num` markers written, and its report equals that of the JSON
  TensorFlow's own converter makes of the same file.
- Generated xplanes with a GPU plane (`gpufeed synth-trace`, the known-truth generator of
  the Rust tests) get the same report, figure for figure, as TensorFlow's converter's JSON of
  them: the reader maps planes, lines, times and stats as TensorFlow does.
- Bad input: not a protobuf, cut off, an empty XSpace: exit 2 naming the file, or a warning.

TensorFlow's converter: `_pywrap_profiler_plugin.xspace_to_tools_data([PATH], TOOL, {})`
returns `(bytes, ok)`. On TensorFlow 2.21 the tool `trace_viewer` returns a serialized
`Trace` proto (TensorBoard's profile plugin turns it into JSON in Python), and
`trace_viewer@` (the streaming trace viewer) returns the trace viewer JSON itself, which is
what these tests compare with.
"""

from __future__ import annotations

import json
import math
import pathlib

import pytest

from conftest import run_cli

tf = pytest.importorskip(
    "tensorflow",
    reason="TensorFlow is not installed: the xplane tests record a TensorFlow profile and use "
    "TensorFlow's converter (pip install -r python/requirements-test.txt)",
)

# The generated cases with one rank (the straggler case has four; TensorFlow writes one
# file per host, without a rank, so a folder of four would be four rank 0s).
CASES = ["compute-bound", "input-bound", "transfer-bound", "sync-bound", "launch-bound", "host-bound", "oscillating"]

STEPS = 6


def converter():
    from tensorflow.python.profiler.internal import _pywrap_profiler_plugin

    return _pywrap_profiler_plugin


def to_trace_viewer_json(xplane: pathlib.Path, out: pathlib.Path) -> dict:
    """TensorFlow's own conversion of `xplane` to trace viewer JSON, written to `out`."""
    data, ok = converter().xspace_to_tools_data([str(xplane)], "trace_viewer@", {})
    assert ok, f"TensorFlow's converter failed on {xplane}: {data!r}"
    out.write_bytes(data)
    return json.loads(data)


def trace(path: pathlib.Path, *extra: str):
    code, out, err = run_cli("trace", str(path), "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out), err


def assert_same(a, b, at="report"):
    """Equal documents, numbers to 1e-9 relative, the file names aside."""
    if isinstance(a, dict):
        keys = sorted(k for k in a if k not in ("file", "path"))
        assert keys == sorted(k for k in b if k not in ("file", "path")), at
        for k in keys:
            assert_same(a[k], b[k], f"{at}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{at}: {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{at}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), f"{at}: {a} vs {b}"
    else:
        assert a == b, f"{at}: {a!r} vs {b!r}"


@pytest.fixture(scope="module")
def real_profile(tmp_path_factory) -> pathlib.Path:
    """A TensorFlow log folder with one real profile of STEPS steps of a tiny tf.function."""
    logdir = tmp_path_factory.mktemp("tflog")

    @tf.function
    def step(x):
        return tf.reduce_sum(tf.matmul(x, x))

    x = tf.random.normal((64, 64))
    step(x)
    tf.profiler.experimental.start(str(logdir))
    for i in range(STEPS):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            step(x)
    tf.profiler.experimental.stop()
    return logdir


def test_a_real_tensorflow_profile_is_read_from_its_xplane(real_profile, tmp_path):
    files = sorted(real_profile.glob("plugins/profile/*/*"))
    assert [f.name.endswith(".xplane.pb") for f in files] == [True], files
    # The log folder, as a user would give it: its latest run, the xplane in it.
    doc, err = trace(real_profile)
    assert doc["format"] == "tensorflow"
    rank = doc["ranks"][0]
    assert rank["file"] == str(files[0])
    if tf.config.list_physical_devices("GPU"):
        # A TensorFlow that sees a GPU records its kernels: a real GPU profile, judged.
        assert rank["temporal"] is not None and doc["verdict"] is not None, err
    else:
        assert "a CPU-only profile?" in err
        assert rank["temporal"] is None and doc["verdict"] is None
    assert [s["step"] for s in rank["steps"]] == list(range(STEPS))
    assert rank["window"]["steps_in_file"] == STEPS
    assert all(s["dur_us"] > 0 for s in rank["steps"])
    # TensorFlow's own JSON of the same profile gives the same report. (The converter
    # writes a cache file beside its input: a copy keeps the log folder as recorded.)
    copy = tmp_path / files[0].name
    copy.write_bytes(files[0].read_bytes())
    converted = tmp_path / "host.trace.json"
    to_trace_viewer_json(copy, converted)
    from_json, _ = trace(converted)
    assert_same(doc["ranks"], from_json["ranks"])


def test_a_keras_fit_profile_is_found_from_the_callbacks_log_folder(tmp_path):
    # The usual way to profile Keras: `TensorBoard(LOGDIR, profile_batch=(3, 8))`, which
    # writes `LOGDIR/train/plugins/profile/RUN/HOST.xplane.pb`; the user gives LOGDIR.
    pytest.importorskip(
        "tensorboard",
        reason="TensorBoard is not installed: Keras' TensorBoard callback needs it "
        "(pip install -r python/requirements-test.txt)",
    )
    import numpy as np

    log = tmp_path / "logs"
    rng = np.random.default_rng(0)
    x = rng.random((512, 32), dtype=np.float32)
    y = rng.integers(0, 4, 512)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).prefetch(2)
    model = tf.keras.Sequential(
        [tf.keras.Input((32,)), tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(4)]
    )
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(data, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.TensorBoard(str(log), profile_batch=(3, 8))])
    (xplane,) = log.glob("train/plugins/profile/*/*.xplane.pb")
    doc, err = trace(log)
    rank = doc["ranks"][0]
    assert rank["file"] == str(xplane)
    # Batches 3 to 8 of the epoch are Keras' steps 2 to 7, each starting with the
    # iterator's GetNext (the data wait).
    assert [s["step"] for s in rank["steps"]] == list(range(2, 8)), err
    assert all(0 < s["data_wait_us"] < s["dur_us"] for s in rank["steps"]), rank["steps"]
    if not tf.config.list_physical_devices("GPU"):
        assert "a CPU-only profile?" in err


def test_a_real_jax_profile_reads_the_same_from_its_xplane_as_from_its_json(tmp_path):
    # JAX's profiler is TensorFlow's (TSL): `jax.profiler.trace` writes an xplane and the
    # trace viewer JSON JAX converts from it, side by side; `StepTraceAnnotation` marks the
    # steps with `step_num`, as TensorFlow's `Trace` does.
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install -r python/requirements-test.txt)")
    import jax.numpy as jnp

    @jax.jit
    def step(x):
        return jnp.sum(x @ x)

    x = jnp.ones((128, 128))
    step(x).block_until_ready()
    log = tmp_path / "jaxlog"
    with jax.profiler.trace(str(log)):
        for i in range(5):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                step(x).block_until_ready()
    (xplane,) = log.glob("plugins/profile/*/*.xplane.pb")
    (converted,) = log.glob("plugins/profile/*/*.trace.json.gz")
    from_xplane, err = trace(xplane)
    from_json, _ = trace(converted)
    assert_same(from_xplane["ranks"], from_json["ranks"])
    rank = from_xplane["ranks"][0]
    assert [s["step"] for s in rank["steps"]] == list(range(5))
    assert all(s["dur_us"] > 0 for s in rank["steps"])
    if not jax.devices()[0].platform == "gpu":
        assert "a CPU-only profile?" in err and "jax.devices()" in err
    # The log folder reads its run once (both forms of one profile: as JSON).
    from_log, _ = trace(log)
    assert len(from_log["ranks"]) == 1 and from_log["ranks"][0]["file"] == str(converted)


@pytest.mark.parametrize("case", CASES)
def test_a_generated_xplane_reads_as_tensorflows_converter_reads_it(case, tmp_path):
    xplane = tmp_path / "host.xplane.pb"
    code, _, err = run_cli("synth-trace", case, str(xplane), "--flavor", "xplane")
    assert code == 0, err
    converted = to_trace_viewer_json(xplane, tmp_path / "host.trace.json")
    # The converter kept the GPU plane and its stream (named by the line), and the stats.
    names = {e["args"]["name"] for e in converted["traceEvents"] if e.get("ph") == "M" and "name" in e.get("args", {})}
    assert "Stream #7(Compute)" in names and any(n.endswith("/device:GPU:0") for n in names), names
    doc, _ = trace(xplane)
    from_json, _ = trace(tmp_path / "host.trace.json")
    assert doc["verdict"] == case
    assert doc["ranks"][0]["window"]["gpu_events_in_file"] > 0
    assert_same(doc["ranks"], from_json["ranks"])
    assert doc["verdict"] == from_json["verdict"]
    assert_same(doc["kernel_types"], from_json["kernel_types"])


def test_a_file_that_is_not_an_xspace_exits_2_naming_it(tmp_path):
    p = tmp_path / "notes.xplane.pb"
    p.write_text("# my notes\nnot a profile\n")
    code, _, err = run_cli("trace", str(p))
    assert code == 2
    assert "notes.xplane.pb" in err and "not a TensorFlow XSpace" in err and "hint:" in err


def test_an_empty_xspace_exits_2_saying_so(tmp_path):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    for name, space, says in [
        ("none.xplane.pb", xplane_pb2.XSpace(hostnames=["h"]), "no planes"),
        (
            "failed.xplane.pb",
            xplane_pb2.XSpace(errors=["No trace event was collected"]),
            "No trace event was collected",
        ),
    ]:
        p = tmp_path / name
        p.write_bytes(space.SerializeToString())
        code, _, err = run_cli("trace", str(p))
        assert code == 2, err
        assert name in err and says in err, err
    empty = tmp_path / "empty.xplane.pb"
    empty.write_bytes(b"")
    code, _, err = run_cli("trace", str(empty))
    assert code == 2 and "empty.xplane.pb" in err and "the file is empty" in err, err


def test_a_cut_off_xplane_keeps_its_whole_planes_or_says_it_is_cut(real_profile, tmp_path):
    # Generated: the GPU plane first, the host plane last; a cut in the host plane keeps the
    # GPU's rows, with one warning naming the file.
    full = tmp_path / "full.xplane.pb"
    assert run_cli("synth-trace", "input-bound", str(full), "--flavor", "xplane")[0] == 0
    data = full.read_bytes()
    cut = tmp_path / "killed.xplane.pb"
    cut.write_bytes(data[: len(data) - 100])
    doc, err = trace(cut)
    assert doc["ranks"][0]["temporal"] is not None
    assert err.count("warning:") == 1 and "killed.xplane.pb" in err and "stops mid-write" in err, err
    # The real profile cut in its first plane: nothing whole, exit 2 with the length.
    (real,) = real_profile.glob("plugins/profile/*/*.xplane.pb")
    data = real.read_bytes()
    early = tmp_path / "early.xplane.pb"
    early.write_bytes(data[: len(data) // 3])
    code, _, err = run_cli("trace", str(early))
    assert code == 2, err
    assert "early.xplane.pb" in err and "looks cut off" in err and f"{len(data) // 3} bytes" in err, err


def test_an_xplane_written_by_tensorflows_own_classes_reads_as_its_converter_reads_it(tmp_path):
    """A GPU profile written with TensorFlow's own `xplane_pb2` (not gpufeed's writer), with
    what the generator does not write: two compute streams and a copy stream, line and event
    display names, a derived `XLA Ops` line, the copy kind as a `ref_value`,
    correlation ids as uint64 and int64, the input pipeline on its own thread, and an
    aggregated event (`num_occurrences`, no offset)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace(hostnames=["gpu-host"])

    def plane(name):
        p = space.planes.add(name=name, id=len(space.planes))
        return p

    def line(p, id_, name, display=""):
        return p.lines.add(id=id_, name=name, display_name=display, timestamp_ns=5_000)

    def intern(table, name):
        """The id of `name` in a plane's event or stat metadata, added if new."""
        for k, m in table.items():
            if m.name == name:
                return k
        k = len(table) + 1
        table[k].id = k
        table[k].name = name
        return k

    def meta(p, name, display=""):
        k = intern(p.event_metadata, name)
        p.event_metadata[k].display_name = display
        return k

    def event(p, ln, name, start_us, dur_us, display="", **stats):
        e = ln.events.add(metadata_id=meta(p, name, display), offset_ps=int(start_us * 1e6), duration_ps=int(dur_us * 1e6))
        for k, v in stats.items():
            s = e.stats.add(metadata_id=intern(p.stat_metadata, k))
            if k == "memcpy_details":
                s.ref_value = intern(p.stat_metadata, v)
            elif k == "correlation_id" and p.name.startswith("/device"):
                s.uint64_value = v
            elif isinstance(v, str):
                s.str_value = v
            else:
                s.int64_value = v
        return e

    host = plane("/host:CPU")
    py = line(host, 11, "python")
    data = line(host, 12, "tf_data_private_threadpool", "tf_data")
    gpu = plane("/device:GPU:0")
    compute = [line(gpu, 7, "Stream #7", "Stream #7(Compute)"), line(gpu, 9, "Stream #9(Compute)")]
    copies = line(gpu, 14, "Stream #14(MemcpyH2D)")
    xla = line(gpu, 10_000, "XLA Ops")
    corr = 1
    t = 10.0
    for step in range(4):
        start = t
        wait = 400.0 if step % 2 else 150.0
        event(host, data, "IteratorGetNextOp::DoCompute", t, wait)
        t += wait
        event(host, py, "cuMemcpyHtoDAsync_v2", t, 6.0, correlation_id=corr)
        event(gpu, copies, "MemcpyH2D", t + 8.0, 90.0, correlation_id=corr, memcpy_details="kind_src:pageable kind_dst:device")
        corr += 1
        t += 10.0
        for k in range(12):
            event(host, py, "cuLaunchKernel", t, 5.0, correlation_id=corr)
            kstart = t + 100.0 + 7.0 * k
            name = "void sgemm_kernel<float, 128>(int, float const*)"
            event(gpu, compute[k % 2], name, kstart, 60.0, display="sgemm_kernel", correlation_id=corr)
            event(gpu, xla, "fusion.1", kstart, 60.0)
            corr += 1
            t += 9.0
        t += 200.0
        event(host, py, "train", start, t - start, step_num=step, _r=1)
    agg = py.events.add(metadata_id=meta(host, "aggregated"), num_occurrences=5, duration_ps=10**9)
    assert agg.WhichOneof("data") == "num_occurrences"

    xplane = tmp_path / "gpu-host.xplane.pb"
    xplane.write_bytes(space.SerializeToString())
    converted = to_trace_viewer_json(xplane, tmp_path / "gpu-host.trace.json")
    # The aggregated event has no offset: the converter puts it at its line's start (5 µs).
    assert [e["ts"] for e in converted["traceEvents"] if e.get("name") == "aggregated"] == [5]
    doc, _ = trace(xplane)
    from_json, _ = trace(tmp_path / "gpu-host.trace.json")
    rank = doc["ranks"][0]
    # The compute streams and the copy stream; the XLA Ops line is not a stream.
    assert sorted(s["stream"] for s in rank["idle_breakdown"]) == [7, 9, 14]
    assert [s["step"] for s in rank["steps"]] == [0, 1, 2, 3]
    assert all(s["h2d_pageable_us"] == 90.0 for s in rank["steps"])
    assert rank["window"]["gpu_events_in_file"] == 4 * 13
    assert_same(doc["ranks"], from_json["ranks"])
    assert doc["verdict"] == from_json["verdict"]
    assert_same(doc["kernel_types"], from_json["kernel_types"])
