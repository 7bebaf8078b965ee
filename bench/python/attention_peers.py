#!/usr/bin/env python3
"""The peers of `ferrocuda bench --attention`, timed on the GPU of this machine.

torch's scaled_dot_product_attention with the cuDNN and the flash (FlashAttention-2)
backends, and FlashAttention-3's flash_attn_interface.flash_attn_func where it imports, in
bf16, forward only, at the shapes of host/src/bench/attention.rs (ATTENTION_SHAPES; the
workload names must match `workload()` there). Inputs are the bench's own (uniform in
[-1, 1), `random_f64` of host/src/bench/mod.rs with the seeds INPUT_SEEDS, regenerated here
bit for bit), so each backend's output is checked against an f64 reference on the same 64
rows as ours (`checked_rows` of host/src/bench/attention.rs): the largest |O - O_ref|. Each
sample is one call between two CUDA events, after warm-up; TFLOP/s = 4*B*H*S^2*D, halved
when causal.

Writes JSON for `ferrocuda bench --attention --attention-peers FILE`:
  {"torch": version, "inputs_first": [Q's first four values], "rows": [{"workload",
   "implementation", "variant", "flops", "samples_ms", "max_abs_err"}], "notes": [what did
   not run, and why]}
"""

import argparse
import json
import math
import sys

# host/src/bench/attention.rs INPUT_SEEDS (Q, K, V) and CHECKED_ROWS.
INPUT_SEEDS = (1, 2, 3)
CHECKED_ROWS = 64
MASK64 = (1 << 64) - 1

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


def signed(x):
    """A u64 as the int64 with the same bits."""
    return x - (1 << 64) if x >= 1 << 63 else x


def lsr(z, k):
    """Logical right shift of int64 values (their u64 bits) by k."""
    return (z >> k) & ((1 << (64 - k)) - 1)


def random_f64(torch, seed, n, device):
    """host/src/bench/mod.rs random_f64: a splitmix64 finaliser of i ^ rotl(seed, 17), as
    [0.5, 1.5). int64 products and sums wrap as the u64 ones do."""
    rot = ((seed << 17) | (seed >> 47)) & MASK64
    z = torch.arange(n, dtype=torch.int64, device=device)
    z = (z ^ signed(rot)) + signed(0x9E3779B97F4A7C15)
    z = (z ^ lsr(z, 30)) * signed(0xBF58476D1CE4E5B9)
    z = (z ^ lsr(z, 27)) * signed(0x94D049BB133111EB)
    z = z ^ lsr(z, 31)
    return lsr(z, 11).double() / float(1 << 53) + 0.5


def inputs(torch, seed, shape, device):
    """The bench's attention input: 2(x - 1) rounded to f32, then to bf16 (each to nearest)."""
    n = math.prod(shape)
    x = random_f64(torch, seed, n, device)
    return (2.0 * (x - 1.0)).float().to(torch.bfloat16).reshape(shape)


def checked_rows(b, h, s):
    """host/src/bench/attention.rs checked_rows: (head, row) pairs, head in 0..B*H."""
    return [(j * b * h // CHECKED_ROWS, (977 * j + 13) % s) for j in range(CHECKED_ROWS)]


def reference(torch, q, k, v, h, hkv, causal):
    """O_ref in float64 of the checked rows: [((b, head, row), O_ref row)]."""
    b, _, s, d = q.shape
    refs = []
    for head, row in checked_rows(b, h, s):
        bb, hh = divmod(head, h)
        kvh = hh // (h // hkv)
        keys = row + 1 if causal else s
        kk = k[bb, kvh, :keys].double()
        vv = v[bb, kvh, :keys].double()
        p = torch.softmax(kk @ q[bb, hh, row].double() / math.sqrt(d), dim=0)
        refs.append(((bb, hh, row), p @ vv))
    return refs


def max_abs_err(out, refs):
    """The largest |O - O_ref| over the checked rows (`reference`)."""
    return max((out[at].double() - ref).abs().max().item() for at, ref in refs)


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
    first = inputs(torch, INPUT_SEEDS[0], (4,), dev)
    result["inputs_first"] = [float(x) for x in first.float().cpu()]
    for b, h, hkv, s, d, causal in SHAPES:
        name = workload(b, h, hkv, s, d, causal)
        sq, sk, sv = INPUT_SEEDS
        q = inputs(torch, sq, (b, h, s, d), dev)
        k = inputs(torch, sk, (b, hkv, s, d), dev)
        v = inputs(torch, sv, (b, hkv, s, d), dev)
        refs = reference(torch, q, k, v, h, hkv, causal)
        for variant, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                 ("flash", SDPBackend.FLASH_ATTENTION)):
            gqa = hkv != h

            def call():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

            try:
                # The backend chosen once, outside the timed calls.
                with sdpa_kernel(backend):
                    samples = time_ms(torch, call, args.warmup, args.reps)
                    out = call()
            except Exception as e:
                result["notes"].append(f"{name}: torch {variant} did not run ({e})".splitlines()[0])
                continue
            err = max_abs_err(out, refs)
            del out
            result["rows"].append({"workload": name, "implementation": "torch",
                                   "variant": variant, "flops": flops(b, h, s, d, causal),
                                   "samples_ms": samples, "max_abs_err": err})
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
        del q, k, v, refs
        torch.cuda.empty_cache()

    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
