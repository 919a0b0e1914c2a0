"""Contiguous-block CV of `eval-unfair-tos --model ensemble` over the training rows.

`eval-unfair-tos --fit-on train` always holds out the last 20% of `unfair_tos_train.csv`
(1,106 of 5,532 rows) to fit and score the MiniLM's and the ensemble's thresholds. To hold out
another contiguous block without touching the product code, this writes a data folder whose
training file is the other rows in their original order followed by the block: the same
command then holds out exactly that block, and every model is fitted on the other 4,426 rows.

    python3 scripts/experiments/unfair_tos/block_cv.py prepare K OUT_DIR   # K in 1..4
    python3 scripts/experiments/unfair_tos/block_cv.py score RUN.json ...   # the decision

Block K (1-based) is rows [1106 (K - 1), 1106 K) of the training file, 0-based; block 5 is the
shipped command's own block, rows 4426-5531; rows 4424 and 4425 are in no block. `score` reads
the `--json-out` files of the runs and prints each block's macro-F1 per model, their mean and
the counts pooled over the blocks it was given.
"""
import csv
import json
import shutil
import sys
from pathlib import Path

BLOCK = 1106
SHARED = Path(__file__).resolve().parents[3].parent / "shared/data/unfair_tos"


def prepare(k: int, out: Path) -> None:
    if not 1 <= k <= 4:
        sys.exit("K must be 1..4 (block 5 is the shipped command's own block)")
    src = SHARED / "unfair_tos_train.csv"
    with src.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    if len(rows) != 5532:
        sys.exit(f"{src}: expected 5,532 rows, found {len(rows)}")
    lo, hi = BLOCK * (k - 1), BLOCK * k
    block = rows[lo:hi]
    rest = rows[:lo] + rows[hi:]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "unfair_tos_train.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rest + block)
    shutil.copy(SHARED / "unfair_tos_validation.csv", out / "unfair_tos_validation.csv")
    # A few validation rows as `--test`: the block figures are what is read, not these.
    with (SHARED / "unfair_tos_validation.csv").open(newline="") as f:
        reader = csv.reader(f)
        small = [next(reader)] + [next(reader) for _ in range(20)]
    with (out / "small_test.csv").open("w", newline="") as f:
        csv.writer(f).writerows(small)
    print(f"block {k}: rows {lo}-{hi - 1} held out, {len(rest)} rows before it, in {out}")


def f1(c):
    d = 2 * c["tp"] + c["fp"] + c["fn_"]
    return 100.0 * 2 * c["tp"] / d if d else 0.0


def score(paths) -> None:
    models = ("svm", "minilm", "ensemble")
    pooled = {m: None for m in models}
    per_block = {m: [] for m in models}
    for p in paths:
        block = json.loads(Path(p).read_text())["held_out_block"]
        line = [Path(p).name]
        for m in models:
            counts = block[m]["counts"]
            macro = sum(f1(c) for c in counts) / len(counts)
            per_block[m].append(macro)
            if pooled[m] is None:
                pooled[m] = [dict(c) for c in counts]
            else:
                for acc, c in zip(pooled[m], counts):
                    for key in ("tp", "fp", "fn_"):
                        acc[key] += c[key]
            line.append(f"{m} {macro:.2f}")
        print("  ".join(line))
    for m in models:
        mean = sum(per_block[m]) / len(per_block[m])
        macro = sum(f1(c) for c in pooled[m]) / len(pooled[m])
        cols = " ".join(f"{f1(c):.1f}" for c in pooled[m])
        print(f"{m:9} mean of block macro {mean:.2f}  pooled macro {macro:.2f}  columns {cols}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "prepare":
        prepare(int(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "score":
        score(sys.argv[2:])
    else:
        sys.exit(__doc__)
