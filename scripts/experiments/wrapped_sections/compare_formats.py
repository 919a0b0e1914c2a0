#!/usr/bin/env python3
"""Whether two libraries of the same contracts in two formats record the same section numbers.

Usage: compare_formats.py REFERENCE_LIB OTHER_LIB

Per contract (the id is the file stem, so a .txt and a .pdf of one contract share it), the
section numbers of the clauses each library holds are compared as multisets. Prints, pooled
over contracts: recall (share of the reference's numbered clauses whose number the other
library also has), precision (share of the other's numbered clauses whose number the
reference has), their mean, and the clause counts.
"""
import collections
import glob
import json
import sys


def sections(lib):
    generation = sorted(glob.glob(f"{lib}/gen-*"))[-1]
    by_contract = collections.defaultdict(collections.Counter)
    clauses = collections.Counter()
    for line in open(f"{generation}/clauses.jsonl", encoding="utf-8"):
        clause = json.loads(line)
        contract = clause["_id"].rsplit("#", 1)[0]
        clauses[contract] += 1
        section = clause.get("metadata", {}).get("section")
        if section:
            by_contract[contract][section] += 1
    return by_contract, clauses


def main():
    reference, ref_clauses = sections(sys.argv[1])
    other, other_clauses = sections(sys.argv[2])
    shared = sum(((reference[c] & other[c]) for c in reference), collections.Counter())
    matched = sum(shared.values())
    ref_total = sum(sum(v.values()) for v in reference.values())
    other_total = sum(sum(v.values()) for v in other.values())
    recall = matched / ref_total if ref_total else 0.0
    precision = matched / other_total if other_total else 0.0
    print(f"contracts {len(ref_clauses)} / {len(other_clauses)}; clauses {sum(ref_clauses.values())} / {sum(other_clauses.values())}")
    print(f"numbered clauses {ref_total} / {other_total}; numbers in both {matched}")
    print(f"recall {100 * recall:.1f}  precision {100 * precision:.1f}  mean {50 * (recall + precision):.1f}")
    for c in sorted(ref_clauses):
        r, o = reference[c], other[c]
        both = sum((r & o).values())
        print(f"  {c[:60]:60} text {sum(r.values()):4} pdf {sum(o.values()):4} both {both:4}")


if __name__ == "__main__":
    main()
