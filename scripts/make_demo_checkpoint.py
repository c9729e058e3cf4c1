"""Builds Lily's built-in demo checkpoint (assets/demo/): a tiny model of the Qwen3.6
architecture (Gated DeltaNet + gated attention, MoE) with a small byte-level BPE tokenizer of
the same family (Qwen3.5 pre-tokenizer regex, NFC, the same 33 special tokens as strings),
trained for a few minutes (on a GPU when there is one) on a procedurally generated corpus of simple chat exchanges
(with <think> reasoning) and short stories, so `lily serve` with no --model answers in
readable, if very simple, English.

    python scripts/make_demo_checkpoint.py [--minutes 4] [--out assets/demo]

Reproducible: fixed seeds for the corpus, the tokenizer, the initial weights and the batches;
GPU kernels may change the last bits of training, not the behaviour. On the 2-core CPU of a
developer machine a few minutes are far too few steps for readable text: build it on a GPU
(the committed one was trained on an H200 in the stated time). Needs torch,
transformers >= 5.2, tokenizers.
"""

import argparse
import json
import math
import random
import shutil
import time
from pathlib import Path

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig

ROOT = Path(__file__).resolve().parent.parent
# The Qwen3.5/3.6 pre-tokenizer pattern and special tokens (crates/model/src/tokenizer).
PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
    "<tts_text_bos_single>", "<|audio_pad|>",
]
BPE_VOCAB = 1024

COLORS = {"sky": "blue", "grass": "green", "sun": "yellow", "snow": "white", "night": "dark",
          "apple": "red", "banana": "yellow", "ocean": "blue", "leaf": "green", "cherry": "red",
          "cloud": "white", "carrot": "orange", "lemon": "yellow", "crow": "black", "rose": "red"}
SOUNDS = {"dog": "barks", "cat": "meows", "cow": "moos", "duck": "quacks", "sheep": "baas",
          "lion": "roars", "bird": "sings", "horse": "neighs", "frog": "croaks", "owl": "hoots"}
CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Italy": "Rome", "Spain": "Madrid",
            "Germany": "Berlin", "Egypt": "Cairo", "Canada": "Ottawa", "Norway": "Oslo",
            "Kenya": "Nairobi", "Peru": "Lima", "China": "Beijing", "India": "New Delhi"}
NAMES = ["Tom", "Mia", "Leo", "Ana", "Sam", "Lily", "Ben", "Zoe", "Max", "Emma"]
ADJECTIVES = ["little", "brave", "happy", "curious", "sleepy", "kind", "small", "clever"]
PLACES = ["in a small house", "near a big river", "in a green forest", "on a quiet farm",
          "by the sea", "in a busy town", "under an old tree"]
EVENTS = ["found a shiny red ball", "met a new friend", "saw a bright rainbow",
          "lost a favourite hat", "heard a strange sound", "went on a long walk",
          "found a box of old toys"]
ENDINGS = ["They played together all day and were very happy.",
           "At the end of the day, everyone went home smiling.",
           "It was the best day ever.",
           "From that day on, they were best friends.",
           "Then it was time to sleep, and the stars came out."]


def story(rng, animal):
    name = rng.choice(NAMES)
    return (f"Once upon a time, there was a {rng.choice(ADJECTIVES)} {animal} named {name}. "
            f"{name} lived {rng.choice(PLACES)}. One day, {name} {rng.choice(EVENTS)}. "
            f"{rng.choice(ENDINGS)}")


def exchange(rng):
    """One (question, thought, answer)."""
    kind = rng.randrange(8)
    if kind == 0:
        obj, color = rng.choice(list(COLORS.items()))
        q = rng.choice([f"What color is the {obj}?", f"What colour is the {obj}?", f"Tell me the color of the {obj}."])
        return q, f"The user asks about the color of the {obj}. The {obj} is {color}.", f"The {obj} is {color}."
    if kind == 1:
        animal, verb = rng.choice(list(SOUNDS.items()))
        q = rng.choice([f"What sound does a {animal} make?", f"What does a {animal} say?"])
        return q, f"A {animal} {verb}. I will say that.", f"A {animal} {verb}."
    if kind == 2:
        a, b = rng.randrange(10), rng.randrange(10)
        q = rng.choice([f"What is {a} plus {b}?", f"What is {a} + {b}?", f"Add {a} and {b}."])
        return q, f"I need to add {a} and {b}. {a} plus {b} is {a + b}.", f"{a} plus {b} is {a + b}."
    if kind == 3:
        country, city = rng.choice(list(CAPITALS.items()))
        return (f"What is the capital of {country}?", f"The capital of {country} is {city}.",
                f"The capital of {country} is {city}.")
    if kind == 4:
        q = rng.choice(["Hello!", "Hi there.", "Hello, who are you?", "Good morning!", "Hi!"])
        a = rng.choice(["Hello! I am Lily, a small demo model. How can I help you today?",
                        "Hi! I am a tiny demo model. Ask me a simple question.",
                        "Hello! I can answer simple questions and tell short stories."])
        return q, "The user says hello. I will greet them back.", a
    if kind == 5:
        return ("Name the two colors of a chessboard.", "A chessboard has light and dark squares. They are black and white.",
                "The two colors of a chessboard are black and white.")
    animal = rng.choice(list(SOUNDS))
    q = rng.choice([f"Tell me a story about a {animal}.", f"Write a short story about a {animal}."])
    return q, f"The user wants a short story about a {animal}. I will write a simple one.", story(rng, animal)


def conversation(rng):
    """Rendered exactly as the Qwen3.6 chat template renders a conversation plus the reply."""
    text = ""
    if rng.random() < 0.2:
        q, _, a = exchange(rng)
        text += f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n{a}<|im_end|>\n"
    q, thought, a = exchange(rng)
    text += f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n"
    if rng.random() < 0.7:
        text += f"<think>\n{thought}\n</think>\n\n{a}<|im_end|>\n"
    else:
        text += f"<think>\n\n</think>\n\n{a}<|im_end|>\n"
    return text


def corpus(rng, n):
    docs = []
    for i in range(n):
        if i % 5 == 0:
            docs.append(" ".join(story(rng, rng.choice(list(SOUNDS))) for _ in range(2)) + "<|endoftext|>")
        else:
            docs.append(conversation(rng))
    return docs


def train_tokenizer(docs):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=BPE_VOCAB, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    # Special tokens are not text: train on what lies between them.
    split = Regex("|".join(s.replace("|", r"\|") for s in SPECIALS))
    pieces = []
    for d in docs:
        pieces.extend(p for p in __import__("re").split("|".join(map(__import__("re").escape, SPECIALS)), d) if p)
    tok.train_from_iterator(pieces, trainer)
    del split
    tok.add_special_tokens(SPECIALS)
    return tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=4.0, help="training wall-clock budget")
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "demo")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    rng = random.Random(20261130)
    torch.manual_seed(20261130)
    torch.set_num_threads(2)

    docs = corpus(rng, 6000)
    tok = train_tokenizer(docs)
    ids = []
    for d in docs:
        ids.extend(tok.encode(d).ids)
    data = torch.tensor(ids, dtype=torch.long)
    n_tokens = tok.get_vocab_size()
    vocab = math.ceil(n_tokens / 64) * 64  # padded like the real vocabulary
    im_end, eot = tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")
    print(f"corpus: {len(docs)} documents, {len(ids)} tokens; vocabulary {n_tokens} (padded to {vocab})")

    cfg = Qwen3_5MoeTextConfig(
        vocab_size=vocab, hidden_size=256, num_hidden_layers=4,
        layer_types=["linear_attention"] * 3 + ["full_attention"],
        num_attention_heads=4, num_key_value_heads=1, head_dim=64,
        linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=64,
        linear_value_head_dim=64, linear_conv_kernel_dim=4,
        num_experts=8, num_experts_per_tok=2, moe_intermediate_size=256,
        shared_expert_intermediate_size=256, max_position_embeddings=2048,
        # Sections sum to head_dim * partial_rotary_factor / 2 (= 8); text positions are equal
        # in all three rows, so mRoPE is plain 1-D RoPE whatever the split.
        rope_parameters=dict(rope_type="default", rope_theta=1e7, partial_rotary_factor=0.25,
                             mrope_section=[4, 2, 2], mrope_interleaved=True),
        eos_token_id=[im_end, eot], tie_word_embeddings=False,
    )
    model = Qwen3_5MoeForCausalLM(cfg).to(args.device)
    data = data.to(args.device)
    print(f"model: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.95))
    seq, batch = (128, 64) if args.device != "cpu" else (96, 12)
    budget = args.minutes * 60
    batches = torch.Generator().manual_seed(1)
    start = time.time()
    step = 0
    while time.time() - start < budget:
        frac = (time.time() - start) / budget
        for g in opt.param_groups:
            g["lr"] = 3e-3 * min(1.0, (step + 1) / 30) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        starts = torch.randint(0, len(data) - seq, (batch,), generator=batches)
        x = torch.stack([data[s:s + seq] for s in starts.tolist()])
        # The model shifts the labels: position t learns to predict token t + 1.
        out = model(input_ids=x, labels=x)
        opt.zero_grad()
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        out_loss = out.loss.item()
        if step % 100 == 0:
            print(f"step {step} loss {out.loss.item():.3f} ({time.time() - start:.0f}s)", flush=True)
        step += 1
    train_seconds = time.time() - start
    model = model.eval().to("cpu", torch.bfloat16)

    out = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    model.save_pretrained(out, safe_serialization=True)
    json.dump({"trained_steps": step, "train_seconds": round(train_seconds), "device": args.device,
               "final_loss": round(out_loss, 3)}, open(out / "demo.json", "w"), indent=1)
    tok.save(str(out / "tokenizer.json"))
    shutil.copy(ROOT / "assets" / "qwen3_6_chat_template.jinja", out / "chat_template.jinja")
    prompt = "<|im_start|>user\nWhat color is the sky?<|im_end|>\n<|im_start|>assistant\n<think>\n"
    x = torch.tensor([tok.encode(prompt).ids])
    with torch.no_grad():
        model = model.float()
        y = model.generate(x, max_new_tokens=40, do_sample=False, eos_token_id=[im_end, eot])
    sample = tok.decode(y[0, x.shape[1]:].tolist(), skip_special_tokens=False)
    (out / "README.md").write_text(
        "# Lily demo checkpoint\n\n"
        f"Made by `scripts/make_demo_checkpoint.py`: {train_seconds:.0f} s of training on {args.device} ({step} steps, "
        f"final loss {out_loss:.3f}).\n"
        "A tiny model of the Qwen3.6 architecture (4 layers: 3 Gated DeltaNet + 1 gated attention, "
        f"8 experts top-2, hidden 256, bf16) with a {n_tokens}-token byte-level BPE tokenizer of the Qwen3.5 family "
        "(same pre-tokenizer and special tokens), trained on generated simple chat exchanges and stories. "
        "It is a demonstration of the runtime, not Qwen3.6: it knows colours, animal sounds, sums of two "
        "digits, a dozen capitals and one kind of story.\n\n"
        f"Greedy answer to \"What color is the sky?\" at build time:\n\n```\n{sample}\n```\n")
    print("sample:", repr(sample))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
