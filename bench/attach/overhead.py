"""The target's slowdown under `gpufeed attach` at 100 Hz, and gpufeed's CPU per sample.

The target (bench/attach/fixed_work.py, a loop doing the same work every step, which
counts its own steps) is pinned to core 0 and gpufeed to core 1 (taskset), so that the
two do not share a core.

The machine's own speed drifts: on the 2-core VM the loop alone runs anywhere from 85 to
155 steps/s, smoothly over seconds. So the windows are short and bracketed: a window
without gpufeed, one with `gpufeed attach PID --duration WINDOW --rate 100`, one without,
and so on (A B A B ... A). Each attached window is compared with the mean of the two plain
windows around it, which cancels a drift that is linear over the three; the figure is the
mean of these slowdowns with its 95 % confidence interval (Student's t over the rounds),
and their median. An A/A control (the same bracket with nothing attached) shows what the
design reads when there is no effect.

The TensorFlow target (bench/attach/fixed_work_tf.py, Keras `fit` on a generator of fixed
work) is read with the threads beside the training thread at every tick, as any Keras job
is: `--tf`, run by a Python that has TensorFlow and Keras 3.

Usage: python3 bench/attach/overhead.py GPUFEED_BINARY [ROUNDS] [WINDOW_S] [--tf]
"""

import json
import math
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOOPS = ROOT / "crates" / "gpufeed-attach" / "tests" / "loops"

# Two-sided 97.5 % quantiles of Student's t for the degrees of freedom a run can have; past
# 120 the normal's 1.96 is within 0.5 %.
T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 10: 2.23, 20: 2.09, 30: 2.04, 60: 2.00, 120: 1.98}


def t975(df):
    return T975[max(k for k in T975 if k <= df)] if df < 120 else 1.96


def last(path):
    lines = [l for l in path.read_text().splitlines() if len(l.split()) == 3]
    steps, _, elapsed = lines[-1].split()
    return float(steps), float(elapsed)


def rate(truth, run):
    """Steps/s of the loop over the time `run()` takes (by the loop's own clock)."""
    a = last(truth)
    out = run()
    b = last(truth)
    return (b[0] - a[0]) / (b[1] - a[1]), out


def summary(name, slowdowns):
    n = len(slowdowns)
    mean = statistics.fmean(slowdowns)
    half = t975(n - 1) * statistics.stdev(slowdowns) / math.sqrt(n)
    print(
        f"{name}: slowdown {mean * 100:+.2f} % (95 % CI {(mean - half) * 100:+.2f} to "
        f"{(mean + half) * 100:+.2f} %, {n} rounds), median {statistics.median(slowdowns) * 100:+.2f} %"
    )


def main():
    tf = "--tf" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--tf"]
    gpufeed = args[0]
    rounds = int(args[1]) if len(args) > 1 else 60
    window = float(args[2]) if len(args) > 2 else 1.0
    target = ROOT / "bench" / "attach" / ("fixed_work_tf.py" if tf else "fixed_work.py")
    with tempfile.TemporaryDirectory() as d:
        truth = pathlib.Path(d) / "truth.txt"
        p = subprocess.Popen(
            ["taskset", "-c", "0", sys.executable, str(target), str(truth)],
            cwd=LOOPS,
        )
        attach = [
            "taskset", "-c", "1", gpufeed, "attach", str(p.pid), "--duration", str(window),
            "--rate", "100", "--format", "json",
        ]
        try:
            # TensorFlow's import and the first trace take seconds.
            time.sleep(15.0 if tf else 2.0)
            plain = lambda: time.sleep(window)  # noqa: E731
            attached = lambda: subprocess.run(attach, capture_output=True, text=True, check=True)  # noqa: E731
            rates, cost, walls = [], [], []
            # A/B/A: with gpufeed; A/A control: the middle window plain too.
            before, _ = rate(truth, plain)
            slow, control = [], []
            for i in range(rounds):
                t = time.monotonic()
                mid, r = rate(truth, attached)
                walls.append(time.monotonic() - t)
                after, _ = rate(truth, plain)
                slow.append(1 - mid / ((before + after) / 2))
                cost.append(json.loads(r.stdout)["cost"]["cpu_ms_per_read"])
                rates.extend([mid, after])
                before = after
                mid, _ = rate(truth, lambda: time.sleep(walls[-1]))
                after, _ = rate(truth, plain)
                control.append(1 - mid / ((before + after) / 2))
                before = after
        finally:
            p.kill()
            p.wait()
    print(
        f"the loop alone ran {min(rates):.0f}-{max(rates):.0f} steps/s over the run; windows of "
        f"{window:.1f} s plain, {statistics.median(walls):.2f} s with `gpufeed attach --duration "
        f"{window:g}` (its start and end included)"
    )
    summary("with gpufeed attach at 100 Hz", slow)
    summary("A/A control (nothing attached)", control)
    print(
        f"gpufeed CPU per stack read: {statistics.median(cost):.3f} ms (median of {len(cost)} runs; "
        f"{min(cost):.3f}-{max(cost):.3f})"
    )


main()
