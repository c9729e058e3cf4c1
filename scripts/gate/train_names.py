"""Trains the names tagger: softmax regression over hashed token features, BIO labels.

    python scripts/gate/train_names.py DATA_DIR   # reads names_{train,dev}.jsonl from gen_data.py

Writes crates/gate/models/names.lgm and prints entity precision/recall/F1 of the quantised
model on the dev set, decoded like the Rust side (softmax per token, Viterbi under BIO).
A few CPU-minutes on one core.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from common import quantize, write_model
from features import NAME_FEATURE_VERSION, Gazetteers, hashed, name_features, tokenize

ROOT = Path(__file__).resolve().parents[2]
LOG2_ROWS = 17
LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
KIND = {"person": 1, "location": 3, "organization": 5}


def encode(path, gaz):
    """Per text: hashed feature lists per token, BIO label per token, token offsets."""
    rows = []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        toks = tokenize(r["text"])
        labels = [0] * len(toks)
        for s, e, cat in r["spans"]:
            inside = [i for i, (ts, te, _) in enumerate(toks) if ts >= s and te <= e]
            for k, i in enumerate(inside):
                labels[i] = KIND[cat] + (0 if k == 0 else 1)
        feats = [hashed(f, LOG2_ROWS) for f in name_features([t for _, _, t in toks], gaz)]
        rows.append((feats, labels))
    return rows


def flatten(rows):
    ids, offsets, labels = [], [], []
    for feats, labs in rows:
        for f, l in zip(feats, labs):
            offsets.append(len(ids))
            ids.extend(f)
            labels.append(l)
    return torch.tensor(ids), torch.tensor(offsets), torch.tensor(labels)


def allowed(prev, label):
    if label > 0 and (label - 1) % 2 == 1:
        return prev is not None and prev > 0 and (prev - 1) // 2 == (label - 1) // 2
    return True


def viterbi(probs):
    n = probs.shape[1]
    logp = np.log(np.maximum(probs, 1e-9))
    score = np.array([logp[0, l] if allowed(None, l) else -np.inf for l in range(n)])
    back = np.zeros(probs.shape, dtype=int)
    for t in range(1, len(probs)):
        nxt = np.full(n, -np.inf)
        for l in range(n):
            for p in range(n):
                if score[p] > nxt[l] and allowed(p, l):
                    nxt[l] = score[p]
                    back[t, l] = p
            nxt[l] += logp[t, l]
        score = nxt
    best = int(np.argmax(score))
    path = [0] * len(probs)
    for t in range(len(probs) - 1, -1, -1):
        path[t] = best
        best = back[t, best]
    return path


def entities(labels):
    out, i = set(), 0
    while i < len(labels):
        if labels[i] == 0:
            i += 1
            continue
        ent = (labels[i] - 1) // 2
        j = i + 1
        while j < len(labels) and labels[j] == ent * 2 + 2:
            j += 1
        out.add((i, j, ent))
        i = j
    return out


def evaluate(rows, w, b):
    tp = np.zeros(3)
    fp = np.zeros(3)
    fn = np.zeros(3)
    for feats, labs in rows:
        if not feats:
            continue
        scores = np.stack([w[f].sum(0) for f in feats]) + b
        probs = np.exp(scores - scores.max(1, keepdims=True))
        probs /= probs.sum(1, keepdims=True)
        pred, gold = entities(viterbi(probs)), entities(labs)
        for e in pred:
            (tp if e in gold else fp)[e[2]] += 1
        for e in gold - pred:
            fn[e[2]] += 1
    for k, name in enumerate(["person", "location", "organization"]):
        p = tp[k] / max(tp[k] + fp[k], 1)
        r = tp[k] / max(tp[k] + fn[k], 1)
        print(f"  {name:13s} P {p:.3f} R {r:.3f} F1 {2 * p * r / max(p + r, 1e-9):.3f}", file=sys.stderr)
    p, r = tp.sum() / (tp.sum() + fp.sum()), tp.sum() / (tp.sum() + fn.sum())
    print(f"  all           P {p:.3f} R {r:.3f} F1 {2 * p * r / (p + r):.3f}", file=sys.stderr)


def main(data_dir):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    gaz = Gazetteers()
    t0 = time.time()
    train = encode(data_dir / "names_train.jsonl", gaz)
    dev = encode(data_dir / "names_dev.jsonl", gaz)
    print(f"features: {time.time() - t0:.0f}s, {len(train)} train texts", file=sys.stderr)
    ids, offsets, labels = flatten(train)
    emb = torch.nn.EmbeddingBag(1 << LOG2_ROWS, len(LABELS), mode="sum")
    torch.nn.init.zeros_(emb.weight)
    bias = torch.nn.Parameter(torch.zeros(len(LABELS)))
    opt = torch.optim.Adam(list(emb.parameters()) + [bias], lr=0.05)
    n_tok = len(offsets)
    ends = torch.cat([offsets[1:], torch.tensor([len(ids)])])
    for epoch in range(6):
        perm = torch.randperm(n_tok)
        total = 0.0
        for k in range(0, n_tok, 4096):
            sel = perm[k : k + 4096]
            # Gather the selected tokens' feature ids into one bag batch.
            lens = ends[sel] - offsets[sel]
            idx = torch.cat([ids[o:e] for o, e in zip(offsets[sel].tolist(), ends[sel].tolist())])
            offs = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)[:-1]])
            # Feature dropout: no single context word or list hit may carry a decision alone.
            keep = (torch.rand(len(idx)) < 0.7).float() / 0.7
            logits = emb(idx, offs, per_sample_weights=keep) + bias
            loss = torch.nn.functional.cross_entropy(logits, labels[sel])
            loss = loss + 1e-6 * emb.weight.pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(sel)
        print(f"epoch {epoch}: loss {total / n_tok:.4f} ({time.time() - t0:.0f}s)", file=sys.stderr)
    w = emb.weight.detach().numpy()
    q, scale = quantize(w)
    b = bias.detach().numpy()
    print("dev, quantised weights:", file=sys.stderr)
    evaluate(dev, q.astype(np.float32) * scale, b)
    ones, zeros = np.ones(len(LABELS)), np.zeros(len(LABELS))
    out = ROOT / "crates/gate/models/names.lgm"
    write_model(out, b"LGNM", NAME_FEATURE_VERSION, LOG2_ROWS, LABELS, q, scale, b, ones, zeros)
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
