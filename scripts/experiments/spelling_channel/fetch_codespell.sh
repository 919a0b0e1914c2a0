#!/usr/bin/env bash
# Real misspellings for scoring the spelling corrector: codespell's dictionary (typos and
# misspellings people made in code, comments and prose, with their corrections; GPL-2.0, so it
# is fetched here and never committed). Writes OUT/codespell.tsv, one `typo<TAB>intended` line
# per entry with a single correction.
#
#   bash scripts/experiments/spelling_channel/fetch_codespell.sh OUT
set -euo pipefail
out=${1:?usage: fetch_codespell.sh OUT}
mkdir -p "$out/wheel"
python3 -m pip download --quiet --disable-pip-version-check --no-deps "codespell==2.4.3" -d "$out/wheel"
python3 - "$out" <<'PY'
import sys, zipfile, pathlib
out = pathlib.Path(sys.argv[1])
wheel = next((out / "wheel").glob("codespell-2.4.3-*.whl"))
with zipfile.ZipFile(wheel) as z:
    lines = z.read("codespell_lib/data/dictionary.txt").decode("utf-8").splitlines()
rows = []
for line in lines:
    typo, _, fixes = line.partition("->")
    fixes = [f.strip() for f in fixes.split(",") if f.strip()]
    if len(fixes) == 1:
        rows.append(f"{typo.strip()}\t{fixes[0]}")
(out / "codespell.tsv").write_text("\n".join(rows) + "\n")
print(f"{len(rows)} single-correction entries of {len(lines)} -> {out / 'codespell.tsv'}")
PY
