#!/usr/bin/env bash
# s29 call 5b: call 5's third case again, the wrapper built on the GPU in bf16 (on the CPU in f32
# it did not finish saving in 150 s): the same text weights as call 5's /tmp/w_text (kept on the
# warm machine, else made again) in the official vision-language layout, through --checkpoint.
set -u
O=$OUT/call5b; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
A="--layers 4 --prefill 256 --positions 512"
[ -x .gpu/lily ] || tar xJf .gpu/gpu.tar.xz -C .gpu
ls /tmp/w_text/config.json 2>/dev/null || timeout 100 python3 scripts/agreement_check.py .gpu/lily $O/seeded --work /tmp/w_text $A > $O/seeded.log 2>&1
timeout 60 python3 - > $O/vl_build.log 2>&1 <<'PY'
import torch
from transformers import Qwen3_5MoeConfig, Qwen3_5MoeForCausalLM, Qwen3_5MoeForConditionalGeneration
text = Qwen3_5MoeForCausalLM.from_pretrained("/tmp/w_text", dtype=torch.bfloat16, device_map="cuda")
cfg = Qwen3_5MoeConfig(text_config=text.config.to_dict(),
                       vision_config=dict(depth=1, hidden_size=64, intermediate_size=128, num_heads=2,
                                          out_hidden_size=text.config.hidden_size))
with torch.device("cuda"):
    torch.set_default_dtype(torch.bfloat16)
    vl = Qwen3_5MoeForConditionalGeneration(cfg)
print("language model:", vl.model.language_model.load_state_dict(text.model.state_dict()))
vl.lm_head.weight.data.copy_(text.lm_head.weight.data)
vl.save_pretrained("/tmp/w_vl")
import glob, safetensors.torch
keys = [k for f in glob.glob("/tmp/w_vl/*.safetensors") for k in safetensors.torch.load_file(f).keys()]
print(len(keys), "tensors, e.g.", sorted(keys)[:2], [k for k in keys if "visual" in k][:1])
PY
echo "vl build rc=$?"; tail -2 $O/vl_build.log
timeout 120 python3 scripts/agreement_check.py .gpu/lily $O/vl --checkpoint /tmp/w_vl $A > $O/vl.log 2>&1; echo "vl rc=$?"
python3 -c "import json;d=json.load(open('$O/vl/agreement.json'));print('vl', d['weights'], d['layers'], d['top1_agreement'], d['mean_nll_lily'], d['mean_nll_transformers'], d['transformers_bf16_top1_agreement'])" 2>&1 | tail -1
grep -iE "error|loaded" $O/vl.log | head -4
