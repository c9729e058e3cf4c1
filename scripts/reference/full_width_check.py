"""Full-width check of the CPU reference: a 2-layer model (one GDN, one attention layer) with
the real Qwen3.6-35B-A3B layer shapes (hidden 2048, head dim 256, rotary 64, GDN 16x128 keys /
32x128 values, top-8 routing, intermediate 512) but fewer experts and a smaller vocabulary by
default, seeded random weights stored in bf16. transformers (f32 compute on the bf16 values)
gives the greedy continuation; `lily generate` must produce the same ids. Unlike the tiny
fixtures this exercises the real head dims and the multi-threaded matmul path.

    python scripts/reference/full_width_check.py path/to/lily [--work DIR] [--experts 16] [--vocab 8192]

(--experts 256 --vocab 248320 gives full-size layers; that needs ~10 GB of memory.)
"""

import argparse
import os
import subprocess
import sys
import time

import torch
from transformers import Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig

# The seeded weights come from the fixture generator beside this folder.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from make_golden_fixtures import randomise, round_parameters_to_bf16  # noqa: E402

STEPS = 16
PROMPT_LEN = 100  # two GDN chunks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lily")
    parser.add_argument("--work", default="/tmp/lily-full-width")
    parser.add_argument("--experts", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=8192)
    args = parser.parse_args()
    lily, work = args.lily, args.work
    cfg = Qwen3_5MoeTextConfig(
        vocab_size=args.vocab, hidden_size=2048, num_hidden_layers=2,
        layer_types=["linear_attention", "full_attention"],
        num_attention_heads=16, num_key_value_heads=2, head_dim=256,
        linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
        linear_value_head_dim=128, linear_conv_kernel_dim=4,
        num_experts=args.experts, num_experts_per_tok=8, moe_intermediate_size=512,
        shared_expert_intermediate_size=512, max_position_embeddings=262144,
        rope_parameters=dict(rope_type="default", rope_theta=1e7, partial_rotary_factor=0.25,
                             mrope_section=[11, 11, 10], mrope_interleaved=True),
        eos_token_id=None,
    )
    torch.manual_seed(0)
    t0 = time.time()
    model = Qwen3_5MoeForCausalLM(cfg).eval()
    randomise(model, 0)
    round_parameters_to_bf16(model)
    os.makedirs(work, exist_ok=True)
    model.to(torch.bfloat16).save_pretrained(work)
    # Back to f32 from the same bf16 values, with the RoPE frequencies recomputed in f32.
    model = Qwen3_5MoeForCausalLM.from_pretrained(work, dtype=torch.float32).eval()
    model = model.to("cuda" if torch.cuda.is_available() else "cpu")
    print(f"built and saved in {time.time() - t0:.0f}s", flush=True)

    # The benchmark contract's synthetic prompt (docs/DESIGN.md §3).
    prompt = [((i * 2654435761) % 2**32) % cfg.vocab_size for i in range(PROMPT_LEN)]
    with torch.no_grad():
        ids = torch.tensor([prompt], device=model.device)
        # An explicit mask: generate() would otherwise mask prompt tokens equal to pad_token_id.
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=STEPS,
                             do_sample=False, eos_token_id=None, pad_token_id=0,
                             output_scores=True, return_dict_in_generate=True)
    want = out.sequences[0, PROMPT_LEN:].tolist()
    gaps = [float(s[0].topk(2).values[0] - s[0].topk(2).values[1]) for s in out.scores]
    print(f"transformers: {want}\nmin top-1/top-2 gap {min(gaps):.4f}", flush=True)

    run = subprocess.run([lily, "generate", "--model", work, "--prompt-ids", ",".join(map(str, prompt)),
                          "--max-tokens", str(STEPS), "--print-ids"], capture_output=True, text=True)
    print(run.stderr[-2000:])
    got = [int(x) for x in run.stdout.split()]
    print(f"lily:         {got}")
    print("MATCH" if got == want else "MISMATCH")
    sys.exit(0 if got == want else 1)


if __name__ == "__main__":
    main()
