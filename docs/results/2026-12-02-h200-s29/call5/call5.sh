#!/usr/bin/env bash
# s29 call 5: scripts/agreement_check.py --checkpoint, on a 4-layer model of the real widths (3 GDN, 1 attention)
# (prefill 256, 512 positions): (1) seeded weights as gpu_check runs it, saved text-only; (2) the
# same directory through --checkpoint; (3) the same text weights inside the official
# vision-language layout (Qwen3_5MoeForConditionalGeneration with a one-block vision tower), through
# --checkpoint. (2) and (3) must read what (1) reads.
set -u
O=$OUT/call5; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu
python3 -c 'import importlib.util as u; print("accelerate:", bool(u.find_spec("accelerate")))'
A="--layers 4 --prefill 256 --positions 512"
timeout 200 python3 scripts/agreement_check.py .gpu/lily $O/seeded --work /tmp/w_text $A > $O/seeded.log 2>&1; echo "seeded rc=$?"
timeout 150 python3 scripts/agreement_check.py .gpu/lily $O/text --checkpoint /tmp/w_text $A > $O/text.log 2>&1; echo "text rc=$?"
timeout 150 python3 - > $O/vl_build.log 2>&1 <<'PY'
import torch
from transformers import Qwen3_5MoeConfig, Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration
text = Qwen3_5MoeForCausalLM.from_pretrained("/tmp/w_text", dtype=torch.bfloat16)
cfg = Qwen3_5MoeConfig(text_config=text.config.to_dict(),
                       vision_config=dict(depth=1, hidden_size=64, intermediate_size=128, num_heads=2,
                                          out_hidden_size=text.config.hidden_size))
vl = Qwen3_5MoeForConditionalGeneration(cfg).to(torch.bfloat16)
missing = vl.model.language_model.load_state_dict(text.model.state_dict())
print("language model:", missing)
vl.lm_head.weight.data.copy_(text.lm_head.weight.data)
vl.save_pretrained("/tmp/w_vl")
import json, safetensors.torch, glob
keys = [k for f in glob.glob("/tmp/w_vl/*.safetensors") for k in safetensors.torch.load_file(f).keys()]
print(len(keys), "tensors, e.g.", sorted(keys)[:3], [k for k in keys if "visual" in k][:2])
PY
echo "vl build rc=$?"; tail -3 $O/vl_build.log
timeout 150 python3 scripts/agreement_check.py .gpu/lily $O/vl --checkpoint /tmp/w_vl $A > $O/vl.log 2>&1; echo "vl rc=$?"
for r in seeded text vl; do
  python3 -c "import json;d=json.load(open('$O/$r/agreement.json'));print('$r', d['weights'], d['layers'], d['top1_agreement'], d['mean_nll_lily'], d['mean_nll_transformers'], d['transformers_bf16_top1_agreement'])" 2>&1 | tail -1
  grep -iE "error|Traceback" $O/$r.log | head -3
done
