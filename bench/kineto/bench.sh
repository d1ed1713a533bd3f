#!/usr/bin/env bash
# gpufeed against Holistic Trace Analysis on the same traces, whole processes, one run:
# wall time and peak RSS (GNU time) of `gpufeed trace DIR --format json` and of HTA's
# temporal, idle-time and kernel-type breakdowns (python/bench/hta_bench.py), as ratios.
#
# Usage: bench/kineto/bench.sh [HTA_PYTHON] [COPIES] [RUNS]
#   HTA_PYTHON  a Python with `holistictraceanalysis psutil pyyaml` (default: python3);
#               without HTA installed, only gpufeed is timed.
#   COPIES      copies of v100_large's steps in the large trace (default 12: ~565 MB).
#   RUNS        runs of each command on each shared trace (default 5): the table gives the
#               median wall time and the largest peak RSS, so that one run slowed by another
#               process on the machine does not make the ratio; the large trace runs once.
# The load average is printed before and after: wall times are only comparable at a
# similar load.
# Needs a release build (`cargo build --release -p gpufeed`) and shared/ beside the repo.
# The large trace is written to a temporary folder and deleted at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${1:-python3}
COPIES=${2:-12}
RUNS=${3:-5}
BIN=target/release/gpufeed
DATA=../shared/data/kineto
[ -x "$BIN" ] || { echo "build first: cargo build --release -p gpufeed" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
HAVE_HTA=0
"$PY" -c "import hta" 2>/dev/null && HAVE_HTA=1

measure() { # label, runs, command...: prints "median_seconds max_peak_kib"
  # Wall time from bash's microsecond clock (GNU time's %e has 10 ms steps: a fifth of a
  # 0.05 s run), peak RSS from GNU time.
  local label=$1 runs=$2 t0 t1; shift 2
  : > "$TMP/times"
  for _ in $(seq "$runs"); do
    t0=$EPOCHREALTIME
    if ! /usr/bin/time -f "%M" -o "$TMP/time" "$@" > "$TMP/$label.out" 2> "$TMP/$label.err"; then
      echo "$label failed: $* ($(tail -n 2 "$TMP/$label.err" | tr '\n' ' '))" >&2
      exit 1
    fi
    t1=$EPOCHREALTIME
    echo "$t0 $t1 $(tail -n 1 "$TMP/time")" | awk '{ printf "%.4f %d\n", $2 - $1, $3 }' >> "$TMP/times"
  done
  sort -n "$TMP/times" | awk '{ t[NR] = $1; if ($2 > k) k = $2 }
    END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2; print m, k }'
}

mkdir -p "$TMP/large"
"$PY" bench/kineto/repeat_trace.py "$DATA/v100_large/df_index_resolver.json.gz" \
  "$TMP/large/large.json" "$COPIES"
echo "large trace: $(du -m "$TMP/large/large.json" | cut -f1) MB of JSON, $COPIES copies of v100_large"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $RUNS runs each (median time, largest peak RSS); large: 1 run"
printf '| trace | gpufeed s | gpufeed MiB | HTA s | HTA MiB | time ratio | memory ratio |\n'
printf '|---|---|---|---|---|---|---|\n'
for dir in "$DATA"/sampled_2rank "$DATA"/resnet50_nw0 "$DATA"/resnet50_nw4 \
  "$DATA"/v100_memcpy "$DATA"/v100_ns_floats "$DATA"/v100_large "$TMP/large"; do
  name=$(basename "$dir")
  runs=$RUNS
  [ "$name" = large ] && runs=1
  read -r gs gk < <(measure gpufeed "$runs" "$BIN" trace "$dir" --format json)
  if [ "$HAVE_HTA" = 1 ]; then
    read -r hs hk < <(measure hta "$runs" "$PY" python/bench/hta_bench.py "$dir")
    awk -v n="$name" -v gs="$gs" -v gk="$gk" -v hs="$hs" -v hk="$hk" 'BEGIN {
      printf "| %s | %.3f | %.0f | %.2f | %.0f | %.1fx faster | %.1fx less |\n",
        n, gs, gk / 1024, hs, hk / 1024, hs / (gs > 0.0005 ? gs : 0.0005), hk / gk }'
  else
    awk -v n="$name" -v gs="$gs" -v gk="$gk" 'BEGIN {
      printf "| %s | %.3f | %.0f | - | - | - | - |\n", n, gs, gk / 1024 }'
  fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
