"""Writes a large PyTorch profiler trace by repeating the steps of a real one.

Usage: python repeat_trace.py IN.json.gz OUT.json COPIES

Each copy of IN's events is shifted in time by the span of IN (so copies follow each
other), its correlation ids and External ids by a multiple of the largest one (so
launches still link to their own kernels), and its ProfilerStep numbers by the number of
steps (so each step name stays distinct, as in a long run). Metadata is kept once.
"""

import gzip
import json
import sys


def main() -> None:
    src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with gzip.open(src, "rb") as fh:
        doc = json.loads(fh.read())
    events = doc.pop("traceEvents")
    ts = [e["ts"] for e in events if "ts" in e]
    span = max(e["ts"] + e.get("dur", 0) for e in events if "ts" in e) - min(ts) + 1000
    top = 1 + max(
        (e.get("args", {}).get("correlation", 0) for e in events), default=0
    )
    top = max(top, 1 + max((e.get("args", {}).get("External id", 0) for e in events), default=0))
    steps = [e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    nsteps = len(steps) + 1
    with open(dst, "w") as out:
        head = json.dumps(doc)[:-1]
        out.write(head + (', ' if len(doc) else '') + '"traceEvents": [\n')
        first = True
        for k in range(copies):
            for e in events:
                if k and e.get("ph") == "M":
                    continue
                e2 = dict(e)
                if "ts" in e2:
                    e2["ts"] = e["ts"] + k * span
                if "id" in e2 and isinstance(e2["id"], int):
                    e2["id"] = e["id"] + k * top
                args = e.get("args")
                if isinstance(args, dict):
                    a2 = dict(args)
                    for key in ("correlation", "External id"):
                        if isinstance(a2.get(key), int) and a2[key] >= 0:
                            a2[key] += k * top
                    e2["args"] = a2
                name = e2.get("name", "")
                if isinstance(name, str) and name.startswith("ProfilerStep#"):
                    e2["name"] = "ProfilerStep#%d" % (int(name[13:]) + k * nsteps)
                out.write(("" if first else ",\n") + json.dumps(e2))
                first = False
        out.write("\n]}\n")


if __name__ == "__main__":
    main()
