"""Trains the topic classifier: one logistic regression per topic over hashed words, bigrams,
prefixes and character n-grams, then Platt scaling on texts of templates it did not train on
so that confidences are probabilities.

    python scripts/gate/train_topics.py DATA_DIR   # reads topics_{train,dev}.jsonl from gen_data.py

Writes crates/gate/models/topics.lgm and prints per-topic precision/recall at THRESHOLD of the
quantised, calibrated model on the held-out template fold and the dev set. numpy only (the model
is a sum of weight rows, so its gradient is a scatter-add; no autograd is needed); seeded, so
the same data gives the same file byte for byte. A few CPU-minutes.
"""

import json
import sys
from pathlib import Path

import numpy as np

from common import quantize, write_model
from features import TOPIC_FEATURE_VERSION, fnv1a, hashed, tokenize, topic_features

ROOT = Path(__file__).resolve().parents[2]
LOG2_ROWS = 18
# The order of crates/gate/src/learned/topics.rs's LABELS.
LABELS = ["health", "mental_health", "sexuality", "religion", "politics", "ethnicity", "finances",
          "legal", "children", "biometrics", "immigration", "criminal_history"]
THRESHOLD = 0.5
FEATURE_DROPOUT = 0.3
EPOCHS = 6
BATCH = 512
LR = 0.03
L2 = 1e-6


def encode(path):
    feats, ys, folds = [], [], []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        feats.append(np.array(hashed(topic_features([t for _, _, t in tokenize(r["text"])]), LOG2_ROWS), dtype=np.int64))
        ys.append([1.0 if l in r["labels"] else 0.0 for l in LABELS])
        # A text belongs to the calibration fold when any of its templates does.
        folds.append(any(fnv1a(t) % 5 == 0 for t in r["templates"] if t != "names"))
    return feats, np.array(ys, dtype=np.float32), np.array(folds)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def train(feats, ys):
    """Minimises the mean binary cross-entropy over texts and labels plus L2 * |W|^2 with Adam,
    the features of a text summed (a bag of hashed features)."""
    rng = np.random.default_rng(0)
    n_labels = ys.shape[1]
    rows = 1 << LOG2_ROWS
    w = np.zeros((rows, n_labels), dtype=np.float32)
    bias = np.full(n_labels, -3.0, dtype=np.float32)
    params = [w, bias]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    step = 0
    n = len(feats)
    for epoch in range(EPOCHS):
        perm = rng.permutation(n)
        total = 0.0
        for k in range(0, n, BATCH):
            sel = perm[k : k + BATCH]
            lens = np.array([len(feats[i]) for i in sel])
            ids = np.concatenate([feats[i] for i in sel])
            starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
            seg = np.repeat(np.arange(len(sel)), lens)
            # Feature dropout: no single word or bigram of a template ("Meine Mutter hat",
            # "went wrong") may carry a topic alone; the evidence has to be spread.
            keep = (rng.random(len(ids)) >= FEATURE_DROPOUT).astype(np.float32)
            z = np.add.reduceat(w[ids] * keep[:, None], starts, axis=0) + bias
            y = ys[sel]
            p = sigmoid(z)
            loss = -np.mean(y * np.log(np.clip(p, 1e-7, 1)) + (1 - y) * np.log(np.clip(1 - p, 1e-7, 1)))
            total += float(loss) * len(sel)
            dz = (p - y) / z.size
            g_rows = dz[seg] * keep[:, None]
            gw = np.stack([np.bincount(ids, weights=g_rows[:, l], minlength=rows) for l in range(n_labels)], axis=1)
            gw = gw.astype(np.float32) + 2 * L2 * w
            grads = [gw, dz.sum(0).astype(np.float32)]
            step += 1
            for p_, g, m_, v_ in zip(params, grads, m, v):
                m_ *= b1
                m_ += (1 - b1) * g
                v_ *= b2
                v_ += (1 - b2) * g * g
                mhat = m_ / (1 - b1**step)
                vhat = v_ / (1 - b2**step)
                p_ -= LR * mhat / (np.sqrt(vhat) + eps)
        print(f"epoch {epoch}: loss {total / n:.4f}", file=sys.stderr)
    q, scale = quantize(w)
    return q, scale, bias


def scores(q, scale, b, feats):
    wq = q.astype(np.float32) * scale
    return np.stack([wq[f].sum(0) for f in feats]) + b


def platt(s, y):
    """a, c of p = sigmoid(a * score + c), fitted by maximum likelihood (Newton's method). One
    pair shared by all topics: the calibration fold holds too few positives of the rarer topics
    (biometrics, ethnicity) for a stable fit of their own, and per-topic fits there were badly
    off."""
    s, y = s.reshape(-1).astype(np.float64), y.reshape(-1).astype(np.float64)
    a, c = 1.0, 0.0
    for _ in range(100):
        p = sigmoid(a * s + c)
        r = p - y
        g = np.array([np.dot(r, s), r.sum()])
        h = p * (1 - p)
        hess = np.array([[np.dot(h, s * s), np.dot(h, s)], [np.dot(h, s), h.sum()]]) + 1e-9 * np.eye(2)
        da, dc = np.linalg.solve(hess, g)
        a, c = a - da, c - dc
        if abs(da) + abs(dc) < 1e-10:
            break
    return np.float32(a), np.float32(c)


def report(name, probs, y):
    print(f"{name}, threshold {THRESHOLD}:", file=sys.stderr)
    for k, l in enumerate(LABELS):
        pred = probs[:, k] >= THRESHOLD
        tp = (pred & (y[:, k] == 1)).sum()
        p = tp / max(pred.sum(), 1)
        r = tp / max((y[:, k] == 1).sum(), 1)
        print(f"  {l:16s} P {p:.3f} R {r:.3f} (positives {int(y[:, k].sum())})", file=sys.stderr)
    benign = y.sum(1) == 0
    flagged = (probs[benign] >= THRESHOLD).any(1).mean() if benign.any() else 0.0
    print(f"  texts without a topic given one: {flagged:.3%} of {int(benign.sum())}", file=sys.stderr)


def main(data_dir):
    tr_f, tr_y, folds = encode(data_dir / "topics_train.jsonl")
    dv_f, dv_y, _ = encode(data_dir / "topics_dev.jsonl")
    # Calibrate on templates the model has not seen: train on four fifths of the templates,
    # fit Platt scaling on the texts of the fifth. Calibrating on texts of the training
    # templates would make every confidence near 0 or 1.
    fit = np.flatnonzero(~folds)
    cal = np.flatnonzero(folds)
    print(f"calibration fold: {len(cal)} of {len(folds)} texts", file=sys.stderr)
    q, scale, b = train([tr_f[i] for i in fit], tr_y[fit])
    cal_s = scores(q, scale, b, [tr_f[i] for i in cal])
    a, c = platt(cal_s, tr_y[cal])
    a, c = np.repeat(a, len(LABELS)), np.repeat(c, len(LABELS))
    report("unseen-template fold, calibrated", sigmoid(cal_s * a + c), tr_y[cal])
    print(f"  calibration: a {a[0]:.3f} c {c[0]:.3f}", file=sys.stderr)

    q, scale, b = train(tr_f, tr_y)
    report("dev (training templates), calibrated", sigmoid(scores(q, scale, b, dv_f) * a + c), dv_y)
    out = ROOT / "crates/gate/models/topics.lgm"
    write_model(out, b"LGTP", TOPIC_FEATURE_VERSION, LOG2_ROWS, LABELS, q, scale, b, a, c)
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
