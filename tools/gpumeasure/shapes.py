"""shapes.py - gpumeasure's GEMM shape lists (no torch needed): odd_gemm's random, example-problem and real-layer shapes, merged and shuffled (odd_gemm_shapes), and energy's GEMMs (ENERGY_GEMMS)."""

import math
import os
import random

from .common import UsageError
from .problems import load_problem, problem_name

# Every shape is (M, N, K): C[M,N] = A[M,K] @ B[K,N], 2MNK flop.

# energy.tsv's GEMMs: squares, shapes of real layers (misaligned among
# them), one misaligned shape, skinny ones.
ENERGY_GEMMS = [
    (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
    (6304, 3072, 768),      # ViT-B/16 FFN up at batch 32 (32 x 197 tokens)
    (2048, 11008, 4096),    # LLaMA-7B FFN up, 2048 tokens
    (128, 50257, 768),      # GPT-2 LM head, 128 tokens: N misaligned
    (12544, 64, 147),       # ResNet stem as an implicit GEMM, batch 1: K misaligned
    (3001, 5003, 1999),     # misaligned on every axis
    (16, 11008, 4096),      # skinny: LLaMA-7B FFN up, 16 tokens
    (1, 4096, 4096),        # a matrix-vector product
    (128, 8192, 8192),      # skinny, as in the H100 file
]


def layer_gemms():
    """The GEMMs of real layers, (M, N, K, source); source names the network, the layer and the size."""
    out = []
    # BERT-base, ViT-B/16 and GPT-2 small (d = 768, FFN 3072), at T tokens.
    for t in (128, 197, 512, 4096):
        out += [(t, 2304, 768, f"d768.qkv.t{t}"), (t, 768, 768, f"d768.attn_out.t{t}"),
                (t, 3072, 768, f"d768.ffn_up.t{t}"), (t, 768, 3072, f"d768.ffn_down.t{t}")]
    # LLaMA-7B (d = 4096, FFN 11008), at M tokens.
    for m in (1, 16, 128, 2048):
        out += [(m, 12288, 4096, f"llama7b.qkv.t{m}"), (m, 4096, 4096, f"llama7b.attn_out.t{m}"),
                (m, 11008, 4096, f"llama7b.ffn_up.t{m}"), (m, 4096, 11008, f"llama7b.ffn_down.t{m}")]
    # LM heads: GPT-2's 50257-word vocabulary (misaligned), LLaMA's 32000.
    for m in (1, 128, 512, 2048):
        out.append((m, 50257, 768, f"gpt2.lm_head.t{m}"))
    for m in (1, 128):
        out.append((m, 32000, 4096, f"llama7b.lm_head.t{m}"))
    # CNN layers as implicit GEMMs (M = batch x output pixels, K = in_ch x kh x kw), batch B.
    for b in (1, 32):
        out += [(b * 112 * 112, 64, 147, f"resnet.stem7x7.b{b}"),
                (b * 56 * 56, 64, 576, f"resnet.layer1_3x3.b{b}"),
                (b * 28 * 28, 128, 1152, f"resnet.layer2_3x3.b{b}"),
                (b * 14 * 14, 256, 2304, f"resnet.layer3_3x3.b{b}"),
                (b * 7 * 7, 512, 4608, f"resnet.layer4_3x3.b{b}"),
                (b * 56 * 56, 64, 256, f"resnet50.layer1_1x1_in.b{b}"),
                (b * 56 * 56, 256, 64, f"resnet50.layer1_1x1_out.b{b}"),
                (b * 7 * 7, 2048, 512, f"resnet50.layer4_1x1_out.b{b}"),
                (b, 1000, 512, f"resnet18.fc.b{b}"),
                (b, 1000, 2048, f"resnet50.fc.b{b}"),
                (b * 196, 768, 768, f"vit_b_16.patch_embed.b{b}"),
                (b * 7 * 7, 1280, 320, f"mobilenet_v2.last_1x1.b{b}")]
    return out


def problem_files(paths):
    """The files named by --odd-gemm-problems: a directory gives its *.problem.json, sorted."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".problem.json")))
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise UsageError(f"{p}: --odd-gemm-problems: no such file or directory")
    return files


def problem_gemms(paths):
    """Each distinct MatMul shape of each problem file, (M, N, K, the file's name less .problem.json):
    a MatMul's output [H, W] = L[H, K] @ R[K, W] (K the width of L) is M = H, N = W."""
    out = []
    for path in problem_files(paths):
        pr = load_problem(path)
        seen = set()
        for o, kind in enumerate(pr.op_types):
            if kind != "MatMul":
                continue
            t = pr.outputs[o]
            shape = (pr.heights[t], pr.widths[t], pr.op_k(o))
            if shape not in seen:
                seen.add(shape)
                out.append(shape + (problem_name(path),))
    return out


def random_gemms(count, lo, hi, seed, max_flop):
    """count shapes (M, N, K, 'random'), each axis drawn log-uniform in [lo, hi] with random.Random(seed):
    every third (the 1st, 4th, ...) forced so that K, N or both are not multiples of 8 (M as drawn), the
    others rounded to multiples of 8; a shape over max_flop (2MNK) is drawn again (at most 1000 times)."""
    rng = random.Random(seed)
    a_lo, a_hi = math.log(lo), math.log(hi)
    lo8, hi8 = -(-lo // 8) * 8, hi // 8 * 8

    def draw():
        return min(hi, max(lo, round(math.exp(rng.uniform(a_lo, a_hi)))))

    def misalign(v):
        v = v - v % 8 + rng.randint(1, 7)
        return v - 8 if v > hi else v

    out = []
    for i in range(count):
        for _ in range(1000):
            m, n, k = draw(), draw(), draw()
            if i % 3 == 0:
                which = rng.choice(("K", "N", "NK"))
                n = misalign(n) if "N" in which else n
                k = misalign(k) if "K" in which else k
            else:
                m, n, k = (min(hi8, max(lo8, round(v / 8) * 8)) for v in (m, n, k))
            if 2.0 * m * n * k <= max_flop:
                out.append((m, n, k, "random"))
                break
    return out


def odd_gemm_shapes(args):
    """odd_gemm.tsv's shapes, (M, N, K, source): the random ones, the example problems' and the real
    layers', those over --odd-gemm-max-flop left out, one row per distinct (M, N, K) (its sources joined
    by commas, in that order), shuffled with --seed so that a run cut short still has a mix."""
    lo, hi = args.odd_gemm_range
    shapes = (random_gemms(args.odd_gemm_count, lo, hi, args.seed, args.odd_gemm_max_flop)
              + problem_gemms(args.odd_gemm_problems) + layer_gemms())
    merged = {}
    for m, n, k, source in shapes:
        if 2.0 * m * n * k > args.odd_gemm_max_flop:
            continue
        sources = merged.setdefault((m, n, k), [])
        if source not in sources:
            sources.append(source)
    out = [key + (",".join(sources),) for key, sources in merged.items()]
    random.Random(args.seed).shuffle(out)
    return out
