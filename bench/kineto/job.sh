#!/usr/bin/env bash
# A job's whole trace folder on this machine: a generated job of RANKS ranks of SIZE of
# JSON each (gzipped, as tensorboard_trace_handler writes them; `gpufeed synth-job`, rank
# STRAGGLER's kernels 2.2 times as long), then `gpufeed trace DIR --format json` with
# --jobs 1 and --jobs 2: wall time, peak RSS (GNU time), the straggler named, and the rate
# in MB of uncompressed JSON per second per core, against gzip's own inflate of the same
# files measured in the same run (`gzip -dc`, one core: the limit a streaming reader can
# reach). Then HTA 0.5.0 on the same folder (python/bench/hta_bench.py), under a memory
# cap and a 30-minute limit: its time and peak RSS, or where it ran out.
#
# Usage: bench/kineto/job.sh [RANKS] [SIZE] [HTA_PYTHON] [HTA_CAP_GB]
#   RANKS       ranks (default 8)
#   SIZE        uncompressed JSON per rank, as synth-job takes it (default 1GB)
#   HTA_PYTHON  a Python with `holistictraceanalysis psutil pyyaml`; `none` skips HTA
#   HTA_CAP_GB  HTA's address-space cap (default 20): past it, it fails with MemoryError
# Needs a release build (`cargo build --release -p gpufeed`). The job is written to a
# temporary folder (about a twentieth of RANKS x SIZE on disk) and deleted at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
RANKS=${1:-8}
SIZE=${2:-1GB}
PY=${3:-python3}
CAP=${4:-20}
STRAGGLER=$((RANKS / 2 + 1))
BIN=target/release/gpufeed
[ -x "$BIN" ] || { echo "build first: cargo build --release -p gpufeed" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$BIN" synth-job "$TMP/job" --ranks "$RANKS" --rank-size "$SIZE" --straggler "$STRAGGLER" > "$TMP/truth.json"
json=$(python3 -c "import json,sys; print(sum(r['json_bytes'] for r in json.load(open(sys.argv[1]))['per_rank']))" "$TMP/truth.json")
disk=$(du -cb "$TMP"/job/*.gz | tail -n 1 | cut -f1)
echo "job: $RANKS ranks, $((json / 1000000)) MB of JSON ($((disk / 1000000)) MB gzipped), straggler rank $STRAGGLER"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

t0=$EPOCHREALTIME
for f in "$TMP"/job/*.gz; do gzip -dc "$f" > /dev/null; done
t1=$EPOCHREALTIME
awk -v a="$t0" -v b="$t1" -v j="$json" 'BEGIN {
  printf "gzip -dc, one core: %.1f s, %.0f MB/s of JSON\n", b - a, j / 1e6 / (b - a) }'

# The rate per core is per CPU second (user + system, GNU time): a `.gz` is inflated on a
# thread of its own beside the parser, so one job uses more than one core.
printf '| run | wall s | CPU s | peak RSS MiB | MB/s of JSON per CPU second | straggler |\n|---|---|---|---|---|---|\n'
for jobs in 1 2; do
  t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$TMP/time" "$BIN" trace "$TMP/job" --jobs "$jobs" --format json > "$TMP/out.json"
  t1=$EPOCHREALTIME
  named=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['straggler']; print(s and s['rank'])" "$TMP/out.json")
  read -r user sys kib < <(tail -n 1 "$TMP/time")
  awk -v j="$jobs" -v a="$t0" -v b="$t1" -v cpu="$(echo "$user + $sys" | bc)" -v k="$kib" -v n="$json" -v s="$named" -v want="$STRAGGLER" 'BEGIN {
    printf "| gpufeed --jobs %d | %.1f | %.1f | %.0f | %.0f | rank %s%s |\n", j, b - a, cpu, k / 1024, n / 1e6 / cpu, s, (s == want ? "" : " (WRONG)") }'
done

if [ "$PY" != none ] && "$PY" -c "import hta" 2>/dev/null; then
  # HTA's workers' resident memory summed, sampled every 5 s: GNU time reports nothing
  # for a run stopped by the time limit.
  ( peak=0; while sleep 5; do
      now=$(ps -eo rss=,args= | awk '/hta_bench[.]py/ { s += $1 } END { print s + 0 }')
      [ "$now" -gt "$peak" ] && peak=$now && echo "$peak" > "$TMP/hta.peak"
    done ) &
  sampler=$!
  t0=$EPOCHREALTIME
  rc=0
  timeout 1800 prlimit --as=$((CAP * 1024 * 1024 * 1024)) /usr/bin/time -f "%M" -o "$TMP/time" \
    "$PY" python/bench/hta_bench.py "$TMP/job" > "$TMP/hta.json" 2> "$TMP/hta.err" || rc=$?
  t1=$EPOCHREALTIME
  kill "$sampler" 2>/dev/null || true
  why="ok"
  if [ "$rc" = 124 ]; then why="past 30 minutes"; elif [ "$rc" != 0 ]; then
    why="failed (exit $rc): $(grep -m1 -oE 'MemoryError|Killed|Cannot allocate memory|[A-Za-z]*Error[^\n]{0,80}' "$TMP/hta.err" || tail -n 1 "$TMP/hta.err")"
  fi
  awk -v a="$t0" -v b="$t1" -v k="$(cat "$TMP/hta.peak" 2>/dev/null || echo 0)" -v w="$why" -v cap="$CAP" 'BEGIN {
    printf "| HTA 0.5.0 (cap %d GiB a process) | %.1f | - | %.0f (its processes, sampled) | - | %s |\n", cap, b - a, k / 1024, w }'
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
