#!/usr/bin/env bash
# gpufeed against Holistic Trace Analysis on the same traces, whole processes, one run:
# wall time and peak RSS (GNU time) of `gpufeed trace DIR --format json` and of HTA's
# temporal, idle-time and kernel-type breakdowns (python/bench/hta_bench.py), as ratios.
#
# Usage: bench/kineto/bench.sh [HTA_PYTHON] [COPIES]
#   HTA_PYTHON  a Python with `holistictraceanalysis psutil pyyaml` (default: python3);
#               without HTA installed, only gpufeed is timed.
#   COPIES      copies of v100_large's steps in the large trace (default 12: ~565 MB).
# Needs a release build (`cargo build --release -p gpufeed`) and shared/ beside the repo.
# The large trace is written to a temporary folder and deleted at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${1:-python3}
COPIES=${2:-12}
BIN=target/release/gpufeed
DATA=../shared/data/kineto
[ -x "$BIN" ] || { echo "build first: cargo build --release -p gpufeed" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
HAVE_HTA=0
"$PY" -c "import hta" 2>/dev/null && HAVE_HTA=1

measure() { # label, command...: prints "seconds peak_kib"
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" > "$TMP/$label.out" 2> "$TMP/$label.err"
  cat "$TMP/time"
}

mkdir -p "$TMP/large"
"$PY" bench/kineto/repeat_trace.py "$DATA/v100_large/df_index_resolver.json.gz" \
  "$TMP/large/large.json" "$COPIES"
echo "large trace: $(du -m "$TMP/large/large.json" | cut -f1) MB of JSON, $COPIES copies of v100_large"

printf '| trace | gpufeed s | gpufeed MiB | HTA s | HTA MiB | time ratio | memory ratio |\n'
printf '|---|---|---|---|---|---|---|\n'
for dir in "$DATA"/sampled_2rank "$DATA"/resnet50_nw0 "$DATA"/resnet50_nw4 \
  "$DATA"/v100_memcpy "$DATA"/v100_ns_floats "$DATA"/v100_large "$TMP/large"; do
  name=$(basename "$dir")
  read -r gs gk < <(measure gpufeed "$BIN" trace "$dir" --format json)
  if [ "$HAVE_HTA" = 1 ]; then
    read -r hs hk < <(measure hta "$PY" python/bench/hta_bench.py "$dir")
    awk -v n="$name" -v gs="$gs" -v gk="$gk" -v hs="$hs" -v hk="$hk" 'BEGIN {
      printf "| %s | %.2f | %.0f | %.2f | %.0f | %.1fx faster | %.1fx less |\n",
        n, gs, gk / 1024, hs, hk / 1024, hs / (gs > 0.005 ? gs : 0.005), hk / gk }'
  else
    awk -v n="$name" -v gs="$gs" -v gk="$gk" 'BEGIN {
      printf "| %s | %.2f | %.0f | - | - | - | - |\n", n, gs, gk / 1024 }'
  fi
done
