"""The target's slowdown under `gpufeed attach` at 100 Hz, and gpufeed's CPU per sample.

The target (bench/attach/fixed_work.py, a loop doing the same work every step, which
counts its own steps) is pinned to core 0 and gpufeed to core 1 (taskset), so that the
two do not share a core. Windows of WINDOW seconds alternate: without gpufeed, then with
`gpufeed attach PID --duration WINDOW --rate 100`, ROUNDS times; the figure is the median
steps/s of each. Usage: python3 bench/attach/overhead.py GPUFEED_BINARY [ROUNDS] [WINDOW]
"""

import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOOPS = ROOT / "crates" / "gpufeed-attach" / "tests" / "loops"


def last(path):
    lines = [l for l in path.read_text().splitlines() if len(l.split()) == 3]
    steps, _, elapsed = lines[-1].split()
    return float(steps), float(elapsed)


def main():
    gpufeed = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    window = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    with tempfile.TemporaryDirectory() as d:
        truth = pathlib.Path(d) / "truth.txt"
        p = subprocess.Popen(
            ["taskset", "-c", "0", sys.executable, str(ROOT / "bench" / "attach" / "fixed_work.py"), str(truth)],
            cwd=LOOPS,
        )
        try:
            time.sleep(2.0)
            plain, attached, cost = [], [], []
            for _ in range(rounds):
                a = last(truth)
                time.sleep(window)
                b = last(truth)
                plain.append((b[0] - a[0]) / (b[1] - a[1]))
                a = last(truth)
                r = subprocess.run(
                    ["taskset", "-c", "1", gpufeed, "attach", str(p.pid), "--duration", str(window),
                     "--rate", "100", "--format", "json"],
                    capture_output=True, text=True, check=True,
                )
                b = last(truth)
                attached.append((b[0] - a[0]) / (b[1] - a[1]))
                doc = json.loads(r.stdout)
                cost.append(doc["cost"]["cpu_ms_per_read"])
        finally:
            p.kill()
            p.wait()
    mp, ma = statistics.median(plain), statistics.median(attached)
    print(f"without gpufeed: {mp:.2f} steps/s (median of {rounds} windows of {window:.0f} s: "
          + ", ".join(f"{x:.2f}" for x in plain) + ")")
    print(f"with gpufeed attach at 100 Hz: {ma:.2f} steps/s ("
          + ", ".join(f"{x:.2f}" for x in attached) + ")")
    print(f"slowdown: {(1 - ma / mp) * 100:.2f} %")
    # Each round's two windows are back to back: their ratio cancels the VM's slower drift.
    paired = sorted(1 - a / p for p, a in zip(plain, attached))
    print(f"slowdown, median of the rounds' paired ratios: {statistics.median(paired) * 100:.2f} % "
          f"(rounds from {paired[0] * 100:.1f} % to {paired[-1] * 100:.1f} %)")
    print(f"gpufeed CPU per stack read: {statistics.median(cost):.3f} ms (median; "
          + ", ".join(f"{x:.3f}" for x in cost) + ")")


main()
