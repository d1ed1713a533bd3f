#!/bin/bash
# Submits the trace array, then the merge to run once every array task succeeded.
# TRACES, PARTS and REPORT in the environment reach both jobs (sbatch exports the
# submitting shell's environment by default).
#
#   deploy/slurm/submit-trace.sh
#   TRACES=/shared/profiles/run7 PARTS=/shared/profiles/run7-parts deploy/slurm/submit-trace.sh
set -euo pipefail
here=$(dirname "$0")
array=$(sbatch --parsable "$here/trace.sbatch")
array=${array%%;*} # `ID;CLUSTER` on a federated cluster
merge=$(sbatch --parsable --dependency="afterok:$array" "$here/trace-merge.sbatch")
echo "trace array job $array, merge job $merge (runs after every task succeeded)"
