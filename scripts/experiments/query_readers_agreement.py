"""How many queries of each writer's rewording set the query readers read like the short form.

The readings compared are those behind the active query rules (exclusions, side, limits,
claim source and breadth, renewal, cap, waived damages), as `query_readers` prints them; the
glossary's matches and the inclusion reader (its rule is off) are left out, as in
`crates/learn/tests/query_rules.rs`. With `-v`, each
query read differently is printed with both texts and both readings: that is development
text, so only sets whose protocol allows reading them may be given `-v`.

    cargo build --release -p precedent-tools --bin query_readers
    python3 scripts/experiments/query_readers_agreement.py [-v] g h i ...   # own_g, own_h, ...
    python3 scripts/experiments/query_readers_agreement.py medium long      # ACORD's wordings
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target/release/query_readers"
ACORD = ROOT.parent / "shared/data/acord"
OWN = ROOT / "scripts/experiments/own_words"


# The glossary's matches, and the inclusion reader, whose rule is off in the shipped rankers.
SKIPPED = ("glossary", "requires")


def load(path: Path) -> dict:
    queries = {}
    with path.open() as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                query = json.loads(line)
                queries[query["_id"]] = query["text"]
            except (json.JSONDecodeError, KeyError) as e:
                sys.exit(f"{path}:{number}: {e}")
    return queries


def readings(texts: list) -> list:
    lines = [" ".join(t.split()) for t in texts]
    out = subprocess.run([str(BIN)], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    read = []
    for i in range(len(lines)):
        parts = out[2 * i + 1].strip().split("; ")
        read.append("; ".join(p for p in parts if p and not p.startswith(SKIPPED)))
    return read


def source(name: str) -> Path:
    if name in ("medium", "long"):
        return ACORD / f"queries_{name}.jsonl"
    return OWN / f"queries_own_{name}.jsonl"


def main() -> None:
    verbose = "-v" in sys.argv
    names = [a for a in sys.argv[1:] if a != "-v"]
    short = load(ACORD / "queries.jsonl")
    ids = sorted(short)
    short_read = dict(zip(ids, readings([short[i] for i in ids])))
    for name in names:
        other = load(source(name))
        missing = [i for i in ids if i not in other]
        if missing:
            sys.exit(f"{source(name)}: no wording of {missing}")
        other_read = dict(zip(ids, readings([other[i] for i in ids])))
        same = sum(short_read[i] == other_read[i] for i in ids)
        print(f"{name}: {same} of {len(ids)} read alike")
        if verbose:
            for i in ids:
                if short_read[i] != other_read[i]:
                    print(f"  [{i}] short: {short[i]}\n      reads: {short_read[i]}")
                    print(f"      other: {other[i]}\n      reads: {other_read[i]}")


if __name__ == "__main__":
    main()
