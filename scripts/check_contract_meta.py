#!/usr/bin/env python3
"""Scores the contract metadata extractor against CUAD's answers in master_clauses.csv.

Usage: cargo run --release -p precedent-tools --bin dump_meta ../shared/data/cuad/full_contract_txt \
         | python3 scripts/check_contract_meta.py ../shared/data/cuad/master_clauses.csv

Per field: how many contracts have an answer, how many the extractor filled, and how many agree:
- governing law: the extracted place occurs in CUAD's answer (case-insensitive), or vice versa;
- date: the same ISO date as CUAD's Agreement Date answer (M/D/YYYY; answers with "[]" or no
  full date are skipped);
- parties: at least one extracted party occurs in CUAD's Parties answer (case-insensitive); and,
  over all names extracted, the share that occurs in the answer (junk names such as "Delaware
  corporation" show there);
- document type: the extracted title equals CUAD's Document Name answer after normalising case and
  whitespace.

Then precision and recall for parties and the document name:
- party names: precision is the share of extracted names that occur in the Parties answer; recall
  the share of the answer's parties (its `;`-separated items, each a name with its defined term in
  parentheses) whose name (without the parentheses) an extracted name matches (one contains the
  other, case and spacing aside);
- document name: precision is the share of extracted titles (and, separately, document types, the
  facet values) equal to the Document Name answer, recall the share of answers equalled.
"""
import csv
import json
import re
import sys
import unicodedata

csv.field_size_limit(10**9)


def key(name):
    name = name.lower().strip().rstrip("'\"")
    for ext in (".pdf", ".txt"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return "".join(c for c in unicodedata.normalize("NFKD", name) if c.isalnum())


def norm(s):
    return " ".join(s.lower().split())


def main():
    rows = {key(r["Filename"]): r for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))}
    stats = {f: [0, 0, 0] for f in ("governing_law", "date", "parties", "title")}
    # Party names extracted from contracts with a Parties answer, and how many occur in it (the
    # agreement above counts a contract once one name does, so it cannot see junk names).
    names = [0, 0]
    # Answer parties, and how many an extracted name matches.
    answer_parties = [0, 0]
    # Document types extracted from contracts with a Document Name answer, and how many equal it.
    doc_types = [0, 0]
    for line in sys.stdin:
        item = json.loads(line)
        row = rows.get(key(item["file"]))
        if row is None:
            continue
        meta = item["meta"]
        law = row["Governing Law-Answer"].strip()
        if law:
            s = stats["governing_law"]
            s[0] += 1
            got = meta.get("governing_law")
            if got:
                s[1] += 1
                if norm(got) in norm(law) or norm(law) in norm(got):
                    s[2] += 1
        m = re.fullmatch(r"\s*(\d{1,2})/(\d{1,2})/(\d{4})\s*", row["Agreement Date-Answer"])
        if m:
            s = stats["date"]
            s[0] += 1
            want = f"{int(m[3]):04d}-{int(m[1]):02d}-{int(m[2]):02d}"
            got = meta.get("date")
            if got:
                s[1] += 1
                s[2] += got == want
        parties = row["Parties-Answer"].strip()
        if parties:
            s = stats["parties"]
            s[0] += 1
            got = meta.get("parties") or []
            if got:
                s[1] += 1
                s[2] += any(norm(p) in norm(parties) for p in got)
            names[0] += len(got)
            names[1] += sum(norm(p) in norm(parties) for p in got)
            for item_text in parties.split(";"):
                who = norm(re.sub(r"\([^)]*\)?", " ", item_text)).strip(" ,.")
                if sum(c.isalnum() for c in who) < 3:
                    continue
                answer_parties[0] += 1
                answer_parties[1] += any(
                    sum(c.isalnum() for c in norm(p)) >= 3 and (norm(p) in who or who in norm(p))
                    for p in got
                )
        name = row["Document Name-Answer"].strip()
        if name:
            s = stats["title"]
            s[0] += 1
            got = meta.get("title")
            if got:
                s[1] += 1
                s[2] += norm(got) == norm(name)
            kind = meta.get("document_type")
            if kind:
                doc_types[0] += 1
                doc_types[1] += norm(kind) == norm(name)
    print(f"{'field':<14} {'answered':>8} {'filled':>7} {'agree':>6}  agree/answered")
    for field, (answered, filled, agree) in stats.items():
        share = 100.0 * agree / answered if answered else 0.0
        print(f"{field:<14} {answered:>8} {filled:>7} {agree:>6}  {share:5.1f}%")
    share = 100.0 * names[1] / names[0] if names[0] else 0.0
    print(f"party names extracted {names[0]}, found in the answer {names[1]} ({share:.1f}%)")
    recall = 100.0 * answer_parties[1] / answer_parties[0] if answer_parties[0] else 0.0
    print(f"parties: precision {share:.1f}% ({names[1]}/{names[0]} names), "
          f"recall {recall:.1f}% ({answer_parties[1]}/{answer_parties[0]} answer parties)")
    answered, filled, agree = stats["title"]
    for what, (got, right) in (("title", (filled, agree)), ("document type", tuple(doc_types))):
        p = 100.0 * right / got if got else 0.0
        r = 100.0 * right / answered if answered else 0.0
        print(f"document name as {what}: precision {p:.1f}% ({right}/{got}), "
              f"recall {r:.1f}% ({right}/{answered})")


if __name__ == "__main__":
    main()
