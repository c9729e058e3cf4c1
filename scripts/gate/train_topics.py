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
from features import hashed, tokenize, topic_features

ROOT = Path(__file__).resolve().parents[2]
LOG2_ROWS = 17
LABELS = ["health", "mental_health", "sexuality", "religion", "politics", "ethnicity", "finances", "legal", "children", "biometrics"]
THRESHOLD = 0.5


def encode(path):
    feats, ys = [], []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        feats.append(hashed(topic_features([t for _, _, t in tokenize(r["text"])]), LOG2_ROWS))
        ys.append([1.0 if l in r["labels"] else 0.0 for l in LABELS])
    return feats, torch.tensor(ys)


def bags(feats):
    ids = torch.tensor([i for f in feats for i in f])
    offs = torch.tensor([0] + [len(f) for f in feats[:-1]]).cumsum(0)
    return ids, offs


def main(data_dir):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    tr_f, tr_y = encode(data_dir / "topics_train.jsonl")
    dv_f, dv_y = encode(data_dir / "topics_dev.jsonl")
    emb = torch.nn.EmbeddingBag(1 << LOG2_ROWS, len(LABELS), mode="sum")
    torch.nn.init.zeros_(emb.weight)
    bias = torch.nn.Parameter(torch.full((len(LABELS),), -3.0))
    opt = torch.optim.Adam(list(emb.parameters()) + [bias], lr=0.03)
    n = len(tr_f)
    for epoch in range(8):
        perm = torch.randperm(n).tolist()
        total = 0.0
        for k in range(0, n, 512):
            sel = perm[k : k + 512]
            ids, offs = bags([tr_f[i] for i in sel])
            logits = emb(ids, offs) + bias
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, tr_y[sel])
            loss = loss + 1e-6 * emb.weight.pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(sel)
        print(f"epoch {epoch}: loss {total / n:.4f}", file=sys.stderr)

    q, scale = quantize(emb.weight.detach().numpy())
    b = bias.detach().numpy()
    wq = q.astype(np.float32) * scale
    dv_scores = np.stack([wq[f].sum(0) for f in dv_f]) + b
    # Platt scaling on dev: fit p = sigmoid(a * score + c) per topic.
    s = torch.tensor(dv_scores)
    a = torch.ones(len(LABELS), requires_grad=True)
    c = torch.zeros(len(LABELS), requires_grad=True)
    popt = torch.optim.LBFGS([a, c], max_iter=200)

    def closure():
        popt.zero_grad()
        l = torch.nn.functional.binary_cross_entropy_with_logits(s * a + c, dv_y)
        l.backward()
        return l

    popt.step(closure)
    a, c = a.detach().numpy(), c.detach().numpy()
    probs = 1 / (1 + np.exp(-(dv_scores * a + c)))
    y = dv_y.numpy()
    print("dev, quantised and calibrated, threshold 0.5:", file=sys.stderr)
    for k, l in enumerate(LABELS):
        pred = probs[:, k] >= THRESHOLD
        tp = (pred & (y[:, k] == 1)).sum()
        p = tp / max(pred.sum(), 1)
        r = tp / max((y[:, k] == 1).sum(), 1)
        print(f"  {l:14s} P {p:.3f} R {r:.3f}  a {a[k]:.2f} b {c[k]:.2f}", file=sys.stderr)
    out = ROOT / "crates/gate/models/topics.lgm"
    write_model(out, b"LGTP", LOG2_ROWS, LABELS, q, scale, b, a, c)
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
