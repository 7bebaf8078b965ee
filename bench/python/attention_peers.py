#!/usr/bin/env python3
"""The peers of `ferrocuda bench --attention`, timed on the GPU of this machine.

torch's scaled_dot_product_attention with the cuDNN and the flash (FlashAttention-2)
backends, and FlashAttention-3's flash_attn_interface.flash_attn_func where it imports, in
bf16, forward only, at the shapes of host/src/bench/attention.rs (ATTENTION_SHAPES; the
workload names must match `workload()` there). Inputs are uniform in [-1, 1). Each sample is
one call between two CUDA events, after warm-up; TFLOP/s = 4*B*H*S^2*D, halved when causal.

Writes JSON for `ferrocuda bench --attention --attention-peers FILE`:
  {"torch": version, "rows": [{"workload", "implementation", "variant", "flops",
   "samples_ms"}], "notes": [what did not run, and why]}
"""

import argparse
import json
import sys

# (B, H, H_kv, S, D, causal): host/src/bench/attention.rs ATTENTION_SHAPES.
SHAPES = [
    (4, 32, 32, 4096, 128, False),
    (4, 32, 32, 4096, 128, True),
    (16, 16, 16, 2048, 64, False),
    (4, 32, 8, 4096, 128, False),
]


def workload(b, h, hkv, s, d, causal):
    name = f"attention bf16 {b}x{h}x{s}x{d}"
    if causal:
        name += " causal"
    if hkv != h:
        name += f" kv{hkv}"
    return name


def flops(b, h, s, d, causal):
    f = 4.0 * b * h * s * s * d
    return f / 2 if causal else f


def time_ms(torch, fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()

    result = {"torch": "", "rows": [], "notes": []}
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # no torch: an empty peer file, said why
        result["notes"].append(f"attention peers: torch not importable ({e})")
        json.dump(result, open(args.out, "w"), indent=1)
        return 0
    result["torch"] = torch.__version__
    try:
        import flash_attn_interface as fa3
    except Exception as e:
        fa3 = None
        result["notes"].append(f"flash-attn-3: flash_attn_interface not importable ({e})")

    dev = "cuda"
    for b, h, hkv, s, d, causal in SHAPES:
        name = workload(b, h, hkv, s, d, causal)
        g = torch.Generator(device=dev).manual_seed(1)

        def uniform(heads):
            x = torch.rand((b, heads, s, d), generator=g, device=dev, dtype=torch.float32)
            return (2 * x - 1).to(torch.bfloat16)

        q, k, v = uniform(h), uniform(hkv), uniform(hkv)
        for variant, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                 ("flash", SDPBackend.FLASH_ATTENTION)):
            gqa = hkv != h

            def call():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

            try:
                # The backend chosen once, outside the timed calls.
                with sdpa_kernel(backend):
                    samples = time_ms(torch, call, args.warmup, args.reps)
            except Exception as e:
                result["notes"].append(f"{name}: torch {variant} did not run ({e})".splitlines()[0])
                continue
            result["rows"].append({"workload": name, "implementation": "torch",
                                   "variant": variant, "flops": flops(b, h, s, d, causal),
                                   "samples_ms": samples})
            print(f"{name}: torch {variant} {flops(b, h, s, d, causal) / (sorted(samples)[len(samples) // 2] * 1e9):.1f} TFLOP/s",
                  file=sys.stderr)
        if fa3 is not None:
            # FlashAttention-3 takes (B, S, H, D); the transposes are made before timing.
            qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
            try:
                samples = time_ms(torch, lambda: fa3.flash_attn_func(qt, kt, vt, causal=causal),
                                  args.warmup, args.reps)
                result["rows"].append({"workload": name, "implementation": "flash-attn-3",
                                       "variant": None, "flops": flops(b, h, s, d, causal),
                                       "samples_ms": samples})
            except Exception as e:
                result["notes"].append(f"{name}: flash-attn-3 did not run ({e})".splitlines()[0])
        del q, k, v
        torch.cuda.empty_cache()

    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
