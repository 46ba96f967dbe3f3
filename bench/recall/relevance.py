#!/usr/bin/env python3
"""Relevance of `query_code` on real codebases: hit@1, hit@5 and MRR@10 for the default ranking,
for `--compat reference` (the reference's BM25) and for a naive grep ranker.

Four question sets, each written from the source before any query was sent to its codebases:
- relevance_questions.tsv, the tuning set `tune` (108 questions over psf/requests and spf13/cobra):
  its misses have been read while choosing the ranking's weights, so it says how well the ranking
  fits what it was tuned on, nothing more;
- relevance_heldout.tsv, the held-out set `held-out` (pallets/click and go-chi/chi, commits in its
  header): committed before its first query and never used to choose anything;
- relevance_heldout2.tsv, the second held-out set `held-out-2` (BurntSushi/ripgrep and
  fastify/fastify, commits in its header), written later by someone who had not read the ranking's
  tuning, to judge ranking work done after the first held-out set was in use;
- relevance_heldout3.tsv, the third held-out set `held-out-3` (Textualize/rich and labstack/echo,
  commits in its header), written by someone who had read neither the ranking code nor any set's
  misses, to judge ranking work done after the first two held-out sets had been used for tuning.
Figures are reported for each set and style (id: the code's identifiers; para: paraphrased), and
for the held-out sets run together (`held-out-1+2+3` when all three are run, `held-out-2+3` and so
on when only some are; no combined line for a single one); the held-out figures are the ones to
judge by.

Each codebase is indexed with `index build` (the checkouts are not part of this repository: bring
them with git at the commits the files name, and name them with --root NAME=DIR). A set whose
codebases are not all given is skipped with a note on stderr, so a command naming only some roots
still reports the sets it can. `--show-misses` prints the tuning set's misses (top-1 not an
answer); the misses of every held-out set stay hidden unless `--show-heldout-misses` is given too,
which is for the final report only: reading them and then changing the ranking makes a set a tuning
set.

usage: relevance.py --bin BINARY --root requests=DIR --root cobra=DIR --root click=DIR --root chi=DIR
                    --root ripgrep=DIR --root fastify=DIR --root rich=DIR --root echo=DIR
                    [--show-misses [--show-heldout-misses]]
"""
import argparse, collections, json, re, subprocess, sys
from pathlib import Path

from parity import rpc_session

HERE = Path(__file__).resolve().parent
GREP_STOPWORDS = {"the", "and", "for", "with", "that", "this", "from", "into", "are", "how", "what",
                  "where", "when", "which", "does", "its", "is", "in", "of", "to", "on", "by", "an"}


QUESTION_SETS = (("tune", "relevance_questions.tsv"), ("held-out", "relevance_heldout.tsv"),
                 ("held-out-2", "relevance_heldout2.tsv"), ("held-out-3", "relevance_heldout3.tsv"))
HELD_OUT_SPLITS = tuple(split for split, _ in QUESTION_SETS if split != "tune")
STYLES = ("id", "para")


def load_questions(roots):
    """Every question of the sets whose codebases are all in `roots`, tagged with its set."""
    out = []
    for split, name in QUESTION_SETS:
        rows = []
        for line in (HERE / name).read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 4 or fields[1] not in STYLES:
                raise SystemExit(f"{name}: want codebase, style (id or para), question and answers "
                                 f"separated by tabs, got {line!r}")
            codebase, style, question, answers = fields
            rows.append({"codebase": codebase, "style": style, "question": question,
                         "answers": answers.split(","), "split": split})
        missing = sorted({r["codebase"] for r in rows} - set(roots))
        if missing:
            print(f"skipping {name}: no --root for {', '.join(missing)}", file=sys.stderr)
            continue
        out.extend(rows)
    return out


def held_out_combined(run_splits):
    """The name of the line that pools the held-out sets run (`held-out-1+2+3`, `held-out-2+3`), or
    None when fewer than two were run: one set alone already has its own line."""
    numbers = [str(HELD_OUT_SPLITS.index(split) + 1) for split in HELD_OUT_SPLITS
               if split in run_splits]
    return f"held-out-{'+'.join(numbers)}" if len(numbers) >= 2 else None


def relative(path, root):
    p = Path(path)
    return str(p.relative_to(root)) if p.is_absolute() else path


def build_index(binary, root):
    """Builds `root`'s indexes with `index build`; the code index's files, project-relative."""
    build = subprocess.run([binary, "index", "build", "--root", str(root)],
                           capture_output=True, text=True)
    if build.returncode != 0:
        raise SystemExit(build.stderr)
    local = json.loads((root / "references" / "code-index" / "local.json").read_text())
    return [relative(d["path"], root) for d in local["documents"]]


def grep_ranker(root, files):
    texts = {}
    for rel in files:
        try:
            texts[rel] = (root / rel).read_text(encoding="utf-8", errors="replace").lower()
        except OSError:
            texts[rel] = ""

    def rank(question):
        words = [w for w in re.findall(r"[a-z0-9_]+", question.lower())
                 if len(w) >= 3 and w not in GREP_STOPWORDS]
        scored = [(sum(t.count(w) for w in words), rel) for rel, t in texts.items()]
        scored = [s for s in scored if s[0] > 0]
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [rel for _, rel in scored[:10]]
    return rank


def metrics(ranked_lists):
    n = len(ranked_lists)
    if n == 0:
        return {"n": 0}
    h1 = sum(1 for r, a in ranked_lists if r[:1] and r[0] in a) / n
    h5 = sum(1 for r, a in ranked_lists if any(x in a for x in r[:5])) / n
    mrr = sum(next((1 / (i + 1) for i, x in enumerate(r[:10]) if x in a), 0.0)
              for r, a in ranked_lists) / n
    return {"n": n, "hit@1": round(h1, 3), "hit@5": round(h5, 3), "MRR@10": round(mrr, 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--show-misses", action="store_true",
                    help="print the tuning set's misses (the default ranking's top 1 not an answer)")
    ap.add_argument("--show-heldout-misses", action="store_true",
                    help="with --show-misses, print every held-out set's misses too (final report only)")
    args = ap.parse_args()
    if args.show_heldout_misses and not args.show_misses:
        ap.error("--show-heldout-misses needs --show-misses")
    roots = {k: Path(v).resolve() for k, v in (r.split("=", 1) for r in args.root)}
    questions = load_questions(roots)
    if not questions:
        raise SystemExit("no question set has all its codebases given with --root")
    run_splits = {q["split"] for q in questions}
    combined = held_out_combined(run_splits)
    results = collections.defaultdict(list)  # (ranker, split, style) -> [(ranked, answers)]
    for name, root in roots.items():
        if not any(q["codebase"] == name for q in questions):
            continue
        files = build_index(args.bin, root)
        indexed = set(files)
        for q in (q for q in questions if q["codebase"] == name):
            if not indexed.intersection(q["answers"]):
                # No ranker can answer it: a fault of the set (or of the checkout), not a miss.
                print(f"warning: [{q['split']}] {name}: no answer file of {q['question']!r} is in "
                      f"the code index ({', '.join(q['answers'])})", file=sys.stderr)
        grep = grep_ranker(root, files)
        sessions = {mode: rpc_session(args.bin, str(root), compat)
                    for mode, compat in (("default", None), ("reference", "reference"))}
        for q in (q for q in questions if q["codebase"] == name):
            ranked = {"grep": grep(q["question"])}
            for mode, (_, call) in sessions.items():
                reply = call("tools/call", {"name": "query_code",
                                            "arguments": {"query": q["question"], "k": 10}})
                hits = json.loads(reply["result"]["content"][0]["text"])["hits"]
                ranked[mode] = [relative(h["path"], root) for h in hits]
            splits = [q["split"], "all"]
            if combined and q["split"] in HELD_OUT_SPLITS:
                splits.append(combined)
            for ranker, r in ranked.items():
                for split in splits:
                    for style in (q["style"], "all"):
                        results[(ranker, split, style)].append((r, q["answers"]))
                shown = args.show_misses and (q["split"] == "tune" or args.show_heldout_misses)
                if shown and ranker == "default" and not (r[:1] and r[0] in q["answers"]):
                    print(f"  miss [{q['split']}] {q['question']!r}: want {q['answers']} got {r[:3]}")
        for proc, _ in sessions.values():
            proc.stdin.close()
            proc.wait()
    print(f"{len(questions)} questions ({sum(q['style'] == 'para' for q in questions)} paraphrased)")
    print(f"{'ranker':10} {'split':14} {'style':5} {'n':>4} {'hit@1':>6} {'hit@5':>6} {'MRR@10':>7}")
    shown_splits = [*HELD_OUT_SPLITS, *([combined] if combined else []), "tune", "all"]
    for split in shown_splits:
        for style in ("all", *STYLES):
            for ranker in ("default", "reference", "grep"):
                m = metrics(results[(ranker, split, style)])
                if m["n"] == 0:
                    continue
                print(f"{ranker:10} {split:14} {style:5} {m['n']:>4} {m['hit@1']:>6} "
                      f"{m['hit@5']:>6} {m['MRR@10']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
