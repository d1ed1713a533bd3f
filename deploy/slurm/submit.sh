#!/bin/bash
# Submits the precompute array, then the merge to run once every array task succeeded.
# DATA, CACHE, CONFIG and SHARD_ITEMS in the environment reach both jobs (sbatch exports
# the submitting shell's environment by default).
#
#   deploy/slurm/submit.sh
#   DATA=/shared/my-data CACHE=/shared/cache deploy/slurm/submit.sh
set -euo pipefail
here=$(dirname "$0")
array=$(sbatch --parsable "$here/precompute.sbatch")
array=${array%%;*} # `ID;CLUSTER` on a federated cluster
merge=$(sbatch --parsable --dependency="afterok:$array" "$here/merge.sbatch")
echo "precompute array job $array, merge job $merge (runs after every task succeeded)"
