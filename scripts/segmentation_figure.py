#!/usr/bin/env python3
"""Segmentation figure: the share of CUAD's annotated spans that fall inside a single produced
clause.

Usage:
  cargo run --release -p precedent-tools --bin dump_clauses ../shared/data/cuad/full_contract_txt \\
    | python3 scripts/segmentation_figure.py ../shared/data/cuad

Spans come from master_clauses.csv (Python-list strings, one column per category). A span is
placed in its contract text tolerantly: verbatim first, else with whitespace runs matched
flexibly, else (pieces joined by "<omitted>", CUAD's discontiguous spans) from the first piece's
start to the last piece's end, each piece placed in order. Unplaced spans are counted and left
out of the share. A span is "inside" when one clause's [start, end) contains it after trimming
surrounding whitespace and punctuation. A second line counts a span of pieces when each of its
pieces lies inside some clause (a date in the preamble joined to a closing sentence can never
lie inside one). Offsets are characters (Python str indices = Unicode
scalars, as the Rust side reports).
"""
import ast
import csv
import json
import re
import sys
import unicodedata
from collections import defaultdict

csv.field_size_limit(10**9)


def key(name):
    name = name.lower().strip().rstrip("'\"")
    for ext in (".pdf", ".txt"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return "".join(c for c in unicodedata.normalize("NFKD", name) if c.isalnum())


def flexible(piece):
    words = piece.split()
    if not words:
        return None
    return re.compile(r"\s+".join(re.escape(w) for w in words))


def place_piece(text, piece, start):
    at = text.find(piece, start)
    if at >= 0:
        return at, at + len(piece)
    pattern = flexible(piece)
    if pattern is None:
        return None
    m = pattern.search(text, start)
    return (m.start(), m.end()) if m else None


def place_pieces(text, span):
    """Each piece's (start, end), each placed after the one before; None if any is unplaced."""
    pieces = [p.strip() for p in span.split("<omitted>") if p.strip()]
    if not pieces:
        return None
    out = []
    end = 0
    for piece in pieces:
        at = place_piece(text, piece, end)
        if at is None:
            return None
        out.append(at)
        end = at[1]
    return out


def place(text, span):
    pieces = place_pieces(text, span)
    if pieces is None:
        return None
    return pieces[0][0], pieces[-1][1]


def trimmed(text, start, end):
    junk = " \t\n\r.,;:\"'“”()"
    while start < end and text[start] in junk:
        start += 1
    while end > start and text[end - 1] in junk:
        end -= 1
    return start, end


def main():
    cuad = sys.argv[1]
    segmented = {}
    for line in sys.stdin:
        item = json.loads(line)
        segmented[key(item["file"])] = item
    rows = list(csv.DictReader(open(f"{cuad}/master_clauses.csv", encoding="utf-8")))
    categories = [h for h in rows[0].keys() if h not in ("Filename",) and not h.endswith("-Answer")]
    total = placed = inside = pieces_inside = 0
    per_category = defaultdict(lambda: [0, 0])
    lengths = []
    for row in rows:
        item = segmented.get(key(row["Filename"]))
        if item is None:
            continue
        path = f"{cuad}/full_contract_txt/{item['file']}"
        text = open(path, encoding="utf-8").read().replace("\r\n", "\n").replace("\r", "\n")
        assert len(text) == item["chars"], path
        clauses = item["clauses"]
        lengths.extend(e - s for s, e in clauses)
        for category in categories:
            raw = row[category].strip()
            if not raw or raw == "[]":
                continue
            for span in ast.literal_eval(raw):
                total += 1
                where = place(text, span)
                if where is None:
                    continue
                placed += 1
                s, e = trimmed(text, *where)
                ok = any(cs <= s and e <= ce for cs, ce in clauses)
                inside += ok
                # Each piece of a span of pieces in some clause (not necessarily the same one):
                # a preamble date joined to a closing sentence cannot lie in one clause.
                pieces_inside += all(
                    any(cs <= ps and pe <= ce for cs, ce in clauses)
                    for ps, pe in (trimmed(text, *p) for p in place_pieces(text, span))
                )
                per_category[category][0] += 1
                per_category[category][1] += ok
    lengths.sort()
    n_contracts = len(segmented)
    print(f"contracts {n_contracts}, clauses {len(lengths)} ({len(lengths) / max(n_contracts, 1):.1f} per contract), "
          f"clause length chars p50 {lengths[len(lengths) // 2]} p90 {lengths[len(lengths) * 9 // 10]}")
    print(f"spans {total}, placed {placed} ({100.0 * placed / total:.1f}%), "
          f"inside one clause {inside} = {100.0 * inside / placed:.1f}% of placed")
    print(f"each piece of a span inside a clause: {pieces_inside} = "
          f"{100.0 * pieces_inside / placed:.1f}% of placed")
    worst = sorted(per_category.items(), key=lambda kv: kv[1][1] / kv[1][0])[:8]
    for category, (n, ok) in worst:
        print(f"  lowest: {category:<40} {ok}/{n} = {100.0 * ok / n:.1f}%")


if __name__ == "__main__":
    main()
