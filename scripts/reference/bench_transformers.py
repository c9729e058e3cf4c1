#!/usr/bin/env python3
"""transformers on the same contract as `lily bench --synthetic` (docs/DESIGN.md §3), for the
side-by-side ratio: Qwen3.5/3.6-35B-A3B text shapes, seeded random bf16 weights on the GPU,
batch 1, greedy, synthetic prompt token i = ((i * 2654435761) mod 2^32) mod vocab, one
exact-shape warm-up, then per round one prefill (prompt / time to first token) and exactly 64
decode steps; median of the rounds. transformers' own kernels are used as they are (no
flash-linear-attention on the GPU machine, so its GDN runs the PyTorch fallback: say so when
quoting the ratio)."""
import argparse
import json
import statistics
import time

import torch
import transformers
from transformers.models.qwen3_5_moe.configuration_qwen3_5_moe import Qwen3_5MoeTextConfig
from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import Qwen3_5MoeForCausalLM


def prompt(n, vocab):
    return [((i * 2654435761) % (1 << 32)) % vocab for i in range(n)]


def build(seed, tiny):
    kwargs = dict(max_position_embeddings=262144, rope_parameters={
        "rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
        "mrope_section": [11, 11, 10], "mrope_interleaved": True})
    if tiny:  # for checking this script on a CPU
        kwargs.update(vocab_size=512, hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
                      num_key_value_heads=1, head_dim=32, linear_key_head_dim=16, linear_value_head_dim=16,
                      linear_num_key_heads=2, linear_num_value_heads=4, moe_intermediate_size=32,
                      shared_expert_intermediate_size=32, num_experts=8, num_experts_per_tok=2)
        kwargs["rope_parameters"]["mrope_section"] = [2, 1, 1]
    config = Qwen3_5MoeTextConfig(**kwargs)
    torch.manual_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = Qwen3_5MoeForCausalLM(config).to(torch.bfloat16)
    return model.eval(), config, device


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


@torch.no_grad()
def one_round(model, ids, steps, device):
    sync(device)
    t0 = time.perf_counter()
    out = model(input_ids=ids, use_cache=True)
    nxt = out.logits[:, -1].argmax(-1, keepdim=True)
    nxt.cpu()
    ttft = time.perf_counter() - t0
    cache = out.past_key_values
    generated = []
    t1 = time.perf_counter()
    for _ in range(steps):
        out = model(input_ids=nxt, past_key_values=cache, use_cache=True)
        cache = out.past_key_values
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        generated.append(nxt)
    gen = torch.cat(generated, 1).view(-1).tolist()
    decode = time.perf_counter() - t1
    return ids.shape[1] / ttft, steps / decode, gen


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--contexts", default="256,1024")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    p.add_argument("--tiny", action="store_true", help="tiny shapes, to check the script on a CPU")
    a = p.parse_args()
    t = time.perf_counter()
    model, config, device = build(a.seed, a.tiny)
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    print(f"# transformers {transformers.__version__}, torch {torch.__version__}, {name}, bf16 random weights "
          f"built in {time.perf_counter() - t:.1f} s")
    print("| context | prefill tok/s | decode tok/s |")
    print("|---:|---:|---:|")
    rows = []
    for ctx in [int(c) for c in a.contexts.split(",")]:
        ids = torch.tensor([prompt(ctx, config.vocab_size)], device=device)
        one_round(model, ids, a.steps, device)  # exact-shape warm-up
        pre, dec, gens = [], [], []
        for _ in range(a.rounds):
            x, y, g = one_round(model, ids, a.steps, device)
            pre.append(x)
            dec.append(y)
            gens.append(g)
        row = {"context": ctx, "prefill_tok_s": statistics.median(pre), "decode_tok_s": statistics.median(dec),
               "digest_repeats": all(g == gens[0] for g in gens)}
        rows.append(row)
        print(f"| {ctx} | {row['prefill_tok_s']:.0f} | {row['decode_tok_s']:.1f} |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpu": name, "transformers": transformers.__version__, "torch": torch.__version__,
                       "steps": a.steps, "rounds": a.rounds, "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
