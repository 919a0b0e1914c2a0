# Sourced by the experiment scripts that score writers' rewordings: `writer_queries own_ab own_ac`
# sets the array `writers` to their `--queries` options (scored by `train --cv`, never trained
# on with `--train-wordings short,medium,long`). Paths are relative to the repository root.
writer_queries() {
  writers=()
  local x
  for x in "$@"; do
    writers+=(--queries "scripts/experiments/own_words/queries_$x.jsonl")
  done
}
