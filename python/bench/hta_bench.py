"""HTA's figures on one trace folder, as JSON on stdout: the reference gpufeed matches.

Runs Meta's Holistic Trace Analysis (``pip install holistictraceanalysis psutil pyyaml``)
on DIR and prints, per rank, the temporal breakdown, the per-stream idle-time breakdown
and the kernel-type breakdown, plus HTA's own wall time. ``bench/kineto/bench.sh`` runs it
under ``/usr/bin/time -v`` beside ``gpufeed trace DIR --format json`` for the time and
peak-memory ratios. Not a test: the Rust suite needs no Python.

Usage: python hta_bench.py DIR
"""

import json
import logging
import sys
import time


def main() -> None:
    t0 = time.perf_counter()
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis

    trace_dir = sys.argv[1]
    analyzer = TraceAnalysis(trace_dir=trace_dir)
    ranks = sorted(analyzer.t.traces.keys())
    temporal = analyzer.get_temporal_breakdown(visualize=False)
    idle, _ = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)
    kernel_types, _ = analyzer.get_gpu_kernel_breakdown(visualize=False)
    out = {"dir": trace_dir, "ranks": []}
    for _, row in temporal.iterrows():
        rank = int(row["rank"])
        streams = []
        for stream in idle[idle["rank"] == rank]["stream"].unique():
            s = idle[(idle["rank"] == rank) & (idle["stream"] == stream)]
            cat = {r["idle_category"]: float(r["idle_time"]) for _, r in s.iterrows()}
            streams.append(
                {
                    "stream": int(stream),
                    "host_wait_us": cat.get("host_wait", 0.0),
                    "kernel_wait_us": cat.get("kernel_wait", 0.0),
                    "other_us": cat.get("other", 0.0),
                }
            )
        out["ranks"].append(
            {
                "rank": rank,
                "temporal": {
                    "span_us": float(row["kernel_time(us)"]),
                    "idle_us": float(row["idle_time(us)"]),
                    "compute_us": float(row["compute_time(us)"]),
                    "non_compute_us": float(row["non_compute_time(us)"]),
                    "idle_pct": float(row["idle_time_pctg"]),
                    "compute_pct": float(row["compute_time_pctg"]),
                    "non_compute_pct": float(row["non_compute_time_pctg"]),
                },
                "idle_breakdown": streams,
            }
        )
    out["kernel_types"] = [
        {"type": r["kernel_type"], "us": float(r["sum"]), "pct": float(r["percentage"])}
        for _, r in kernel_types.iterrows()
    ]
    out["seconds"] = time.perf_counter() - t0
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
