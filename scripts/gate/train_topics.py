"""Trains the topic classifier: one logistic regression per topic over hashed words, bigrams
and prefixes, then Platt scaling per topic on the dev set so confidences are probabilities.

    python scripts/gate/train_topics.py DATA_DIR   # reads topics_{train,dev}.jsonl from gen_data.py

Writes crates/gate/models/topics.lgm and prints per-topic precision/recall at the Rust
threshold (0.5) of the quantised, calibrated model on the dev set. About a CPU-minute.
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

from common import quantize, write_model
from features import fnv1a, hashed, tokenize, topic_features

ROOT = Path(__file__).resolve().parents[2]
LOG2_ROWS = 17
LABELS = ["health", "mental_health", "sexuality", "religion", "politics", "ethnicity", "finances", "legal", "children", "biometrics"]
THRESHOLD = 0.5
FEATURE_DROPOUT = 0.3


def encode(path):
    feats, ys, folds = [], [], []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        feats.append(hashed(topic_features([t for _, _, t in tokenize(r["text"])]), LOG2_ROWS))
        ys.append([1.0 if l in r["labels"] else 0.0 for l in LABELS])
        # A text belongs to the calibration fold when any of its templates does.
        folds.append(any(fnv1a(t) % 5 == 0 for t in r["templates"] if t != "names"))
    return feats, torch.tensor(ys), folds


def bags(feats):
    ids = torch.tensor([i for f in feats for i in f])
    offs = torch.tensor([0] + [len(f) for f in feats[:-1]]).cumsum(0)
    return ids, offs


def train(feats, ys):
    torch.manual_seed(0)
    emb = torch.nn.EmbeddingBag(1 << LOG2_ROWS, len(LABELS), mode="sum")
    torch.nn.init.zeros_(emb.weight)
    bias = torch.nn.Parameter(torch.full((len(LABELS),), -3.0))
    opt = torch.optim.Adam(list(emb.parameters()) + [bias], lr=0.03)
    n = len(feats)
    for epoch in range(8):
        perm = torch.randperm(n).tolist()
        total = 0.0
        for k in range(0, n, 512):
            sel = perm[k : k + 512]
            ids, offs = bags([feats[i] for i in sel])
            # Feature dropout: no single word or bigram of a template ("Meine Mutter hat",
            # "went wrong") may carry a topic alone; the evidence has to be spread.
            keep = (torch.rand(len(ids)) >= FEATURE_DROPOUT).float()
            logits = emb(ids, offs, per_sample_weights=keep) + bias
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, ys[sel])
            loss = loss + 1e-5 * emb.weight.pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(sel)
        print(f"epoch {epoch}: loss {total / n:.4f}", file=sys.stderr)
    q, scale = quantize(emb.weight.detach().numpy())
    return q, scale, bias.detach().numpy()


def scores(q, scale, b, feats):
    wq = q.astype(np.float32) * scale
    return np.stack([wq[f].sum(0) for f in feats]) + b


def platt(s, y):
    """a, c of p = sigmoid(a * score + c), fitted by maximum likelihood. One pair shared by all
    topics: the calibration fold holds too few positives of the rarer topics (biometrics,
    ethnicity) for a stable fit of their own, and per-topic fits there were badly off."""
    s, y = torch.tensor(s).reshape(-1), torch.tensor(y).reshape(-1)
    a = torch.ones(1, requires_grad=True)
    c = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([a, c], max_iter=200)

    def closure():
        opt.zero_grad()
        l = torch.nn.functional.binary_cross_entropy_with_logits(s * a + c, y)
        l.backward()
        return l

    opt.step(closure)
    return a.detach().numpy(), c.detach().numpy()


def report(name, probs, y):
    print(f"{name}, threshold {THRESHOLD}:", file=sys.stderr)
    for k, l in enumerate(LABELS):
        pred = probs[:, k] >= THRESHOLD
        tp = (pred & (y[:, k] == 1)).sum()
        p = tp / max(pred.sum(), 1)
        r = tp / max((y[:, k] == 1).sum(), 1)
        print(f"  {l:14s} P {p:.3f} R {r:.3f}", file=sys.stderr)


def main(data_dir):
    torch.set_num_threads(1)
    tr_f, tr_y, folds = encode(data_dir / "topics_train.jsonl")
    dv_f, dv_y, _ = encode(data_dir / "topics_dev.jsonl")
    # Calibrate on templates the model has not seen: train on four fifths of the templates,
    # fit Platt scaling on the texts of the fifth. Calibrating on texts of the training
    # templates would make every confidence near 0 or 1.
    fit = [i for i, f in enumerate(folds) if not f]
    cal = [i for i, f in enumerate(folds) if f]
    print(f"calibration fold: {len(cal)} of {len(folds)} texts", file=sys.stderr)
    q, scale, b = train([tr_f[i] for i in fit], tr_y[fit])
    cal_s = scores(q, scale, b, [tr_f[i] for i in cal])
    a, c = platt(cal_s, tr_y[cal].numpy())
    a, c = np.repeat(a, len(LABELS)), np.repeat(c, len(LABELS))
    report("unseen-template fold, calibrated", 1 / (1 + np.exp(-(cal_s * a + c))), tr_y[cal].numpy())
    for k, l in enumerate(LABELS):
        print(f"  {l:14s} a {a[k]:.2f} c {c[k]:.2f}", file=sys.stderr)

    q, scale, b = train(tr_f, tr_y)
    report("dev (training templates), calibrated", 1 / (1 + np.exp(-(scores(q, scale, b, dv_f) * a + c))), dv_y.numpy())
    out = ROOT / "crates/gate/models/topics.lgm"
    write_model(out, b"LGTP", LOG2_ROWS, LABELS, q, scale, b, a, c)
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
