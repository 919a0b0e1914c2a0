#!/usr/bin/env bash
# The runs of docs/experiments/ranking.md's "Monotone trees": the shipped CV command per arm
# and fold seed, writers scored; the arms are scripts/experiments/learned_arms.sh's.
#   run.sh OUT "ARM..." WRITER...
exec "$(dirname "$0")/../learned_arms.sh" "$@"
