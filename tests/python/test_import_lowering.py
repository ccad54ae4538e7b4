"""test_import_lowering.py - each lowering rule on a small model, with its GEMM shapes computed by hand."""

import os
import re
import unittest

import torch
import torch.nn as nn

import support
from fusetile.importer import machine
from support import SRCDIR

MM, PW = 4096, 128       # the default machine's base costs (bf16): a native MatMul step, a one-input Pointwise tile


def lowered(module_cls, *shapes, **opts):
    d, stats = support.problem(support.graph(module_cls, *shapes), **opts)
    return support.ops(d), d, stats


def brief(ops):
    """(type, input shapes, output shape) per op."""
    return [(t, ins, out) for t, ins, out, _, _, _ in ops]


def conv_model(cin, cout, k, s, p, groups=1, bias=False):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, k, s, p, groups=groups, bias=bias)

        def forward(self, x):
            return self.conv(x)
    return M


class TestConv(unittest.TestCase):
    def test_3x3_stride2_pad1_im2col(self):
        # N=2, Cin=16, 10 x 12 -> Ho = (10+2-3)//2+1 = 5, Wo = (12+2-3)//2+1 = 6
        ops, d, _ = lowered(conv_model(16, 32, 3, 2, 1), (2, 16, 10, 12))
        self.assertEqual(brief(ops), [
            ("Layout", [(2 * 10 * 12, 16)], (2 * 5 * 6, 16 * 3 * 3)),     # im2col: [N*H*W, Cin] -> [N*Ho*Wo, Cin*kh*kw]
            ("MatMul", [(60, 144), (144, 32)], (60, 32)),                  # [N*Ho*Wo, Cin*kh*kw] @ [Cin*kh*kw, Cout]
        ])
        self.assertEqual([o[3] for o in ops], [PW, MM])
        self.assertEqual([o[4] for o in ops], ["conv/im2col", "conv"])
        self.assertEqual([o[5] for o in ops], ["conv2d", "conv2d"])
        self.assertEqual(d["tensor_names"], ["x", "conv/im2col", "conv.weight", "conv"])

    def test_1x1_stride1_uses_the_feature_map(self):
        ops, _, stats = lowered(conv_model(16, 32, 1, 1, 0), (2, 16, 10, 12))
        self.assertEqual(brief(ops), [("MatMul", [(240, 16), (16, 32)], (240, 32))])

    def test_1x1_stride2_subsamples(self):
        ops, _, _ = lowered(conv_model(16, 32, 1, 2, 0), (2, 16, 10, 12))
        self.assertEqual(brief(ops), [("Layout", [(240, 16)], (60, 16)), ("MatMul", [(60, 16), (16, 32)], (60, 32))])

    def test_depthwise_is_a_pointwise_of_kh_kw_work(self):
        ops, _, _ = lowered(conv_model(16, 16, 3, 2, 1, groups=16), (2, 16, 10, 12))
        self.assertEqual(brief(ops), [("Layout", [(240, 16)], (60, 16)), ("Pointwise", [(60, 16)], (60, 16))])
        self.assertEqual(ops[1][3], PW * 9)
        ops, _, _ = lowered(conv_model(16, 16, 3, 1, 1, groups=16), (2, 16, 10, 12))
        self.assertEqual(brief(ops), [("Pointwise", [(240, 16)], (240, 16))])

    def test_grouped_split_one_gemm_per_group(self):
        # groups=4: per group [N*Ho*Wo, Cin/g*kh*kw] @ [Cin/g*kh*kw, Cout/g] = [60, 36] @ [36, 8]
        ops, _, _ = lowered(conv_model(16, 32, 3, 2, 1, groups=4), (2, 16, 10, 12))
        want = []
        for _ in range(4):
            want += [("Layout", [(240, 16)], (60, 36)), ("MatMul", [(60, 36), (36, 8)], (60, 8))]
        want += [("Layout", [(60, 8)], (60, 32))] * 4 + [("Pointwise", [(60, 32)] * 4, (60, 32))]
        self.assertEqual(brief(ops), want)
        self.assertEqual(ops[-1][3], PW)    # the concatenation copies each output element once

    def test_grouped_folded_above_the_limit(self):
        # groups=8 > GROUP_SPLIT: one GEMM of [N*Ho*Wo*g, Cin/g*kh*kw] @ [Cin/g*kh*kw, Cout/g] = [480, 18] @ [18, 4]
        ops, _, _ = lowered(conv_model(16, 32, 3, 2, 1, groups=8), (2, 16, 10, 12))
        self.assertEqual(brief(ops), [
            ("Layout", [(240, 16)], (480, 18)),
            ("Layout", [(144, 4)], (18, 4)),        # all groups' weights [Cin*kh*kw, Cout/g] -> one group's
            ("MatMul", [(480, 18), (18, 4)], (480, 4)),
            ("Layout", [(480, 4)], (60, 32)),
        ])
        ops2, _, _ = lowered(conv_model(16, 32, 3, 2, 1, groups=8), (2, 16, 10, 12), group_split=8)
        self.assertEqual(sum(1 for o in ops2 if o[0] == "MatMul"), 8)


class TestMatMul(unittest.TestCase):
    def test_linear_bias_folded(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 5)

            def forward(self, x):
                return self.fc(x)
        ops, d, _ = lowered(M, (2, 3, 8))
        self.assertEqual(brief(ops), [("MatMul", [(6, 8), (8, 5)], (6, 5))])    # [B*S, in] @ [in, out]
        self.assertEqual(d["tensor_names"], ["x", "fc.weight", "fc"])

    def test_bmm_folded_and_split(self):
        class M(nn.Module):
            def forward(self, a, b):
                return torch.bmm(a, b)
        ops, _, stats = lowered(M, (6, 5, 7), (6, 7, 9))
        self.assertEqual(brief(ops), [("Layout", [(42, 9)], (7, 9)), ("MatMul", [(30, 7), (7, 9)], (30, 9))])
        self.assertEqual(stats["batched product folded into one MatMul"], 1)
        ops, _, _ = lowered(M, (6, 5, 7), (6, 7, 9), batch_split=6)
        mms = [o for o in brief(ops) if o[0] == "MatMul"]
        self.assertEqual(mms, [("MatMul", [(5, 7), (7, 9)], (5, 9))] * 6)
        self.assertEqual(brief(ops)[-1], ("Pointwise", [(30, 9)] * 6, (30, 9)))

    def test_matmul_by_a_shared_right_operand_folds_exactly(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(7, 3))

            def forward(self, x):
                return x @ self.w
        ops, _, _ = lowered(M, (4, 5, 7))
        self.assertEqual(brief(ops), [("MatMul", [(20, 7), (7, 3)], (20, 3))])

    def test_attention_scores_transpose_through_one_layout(self):
        class M(nn.Module):
            def forward(self, q, k):
                return torch.softmax(q @ k.transpose(-1, -2), -1)
        ops, _, _ = lowered(M, (1, 4, 16, 8), (1, 4, 16, 8))
        self.assertEqual(brief(ops), [("Layout", [(64, 8)], (8, 16)), ("MatMul", [(64, 8), (8, 16)], (64, 16)),
                                      ("Pointwise", [(64, 16)], (64, 16))])


class TestPointwise(unittest.TestCase):
    def test_batch_norm_folded_into_conv_unless_shared(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(4, 8, 1)
                self.bn = nn.BatchNorm2d(8)
                self.bn2 = nn.BatchNorm2d(4)

            def forward(self, x):
                return self.bn(self.conv(self.bn2(x)))
        ops, _, stats = lowered(M, (1, 4, 6, 6))
        self.assertEqual(brief(ops), [("Pointwise", [(36, 4)], (36, 4)), ("MatMul", [(36, 4), (4, 8)], (36, 8))])
        self.assertEqual(stats["batch_norm folded into conv2d"], 1)

        class Shared(M):
            def forward(self, x):
                y = self.conv(x)
                return self.bn(y) + y
        ops, _, _ = lowered(Shared, (1, 4, 6, 6))
        self.assertEqual([o[0] for o in ops], ["MatMul", "Pointwise", "Pointwise"])

    def test_broadcast_weight_folded_activation_through_layout(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.ones(8, 1, 1))
                self.pool = nn.AdaptiveAvgPool2d(1)

            def forward(self, x):
                y = x * self.scale              # per-channel weight: folded
                return y * torch.sigmoid(self.pool(y))    # [N, C, 1, 1] activation: a Layout to [N*H*W, C]
        ops, _, stats = lowered(M, (2, 8, 4, 4))
        self.assertEqual(brief(ops), [
            ("Pointwise", [(32, 8)], (32, 8)),
            ("Layout", [(32, 8)], (2, 8)),           # global pool: [N*H*W, C] -> [N, C]
            ("Pointwise", [(2, 8)], (2, 8)),
            ("Layout", [(2, 8)], (32, 8)),           # broadcast of the [N, C, 1, 1] operand
            ("Pointwise", [(32, 8), (32, 8)], (32, 8)),
        ])
        self.assertEqual(ops[1][3], PW * 16)         # the pool reads H*W = 16 elements per output
        self.assertEqual(ops[4][3], PW * 2)          # two inputs
        self.assertEqual(stats["broadcast weight folded into its op"], 1)

    def test_rowwise_softmax_over_a_middle_dim(self):
        class M(nn.Module):
            def forward(self, x):
                return torch.softmax(x, 1)
        ops, _, _ = lowered(M, (2, 3, 4))
        self.assertEqual(brief(ops), [("Pointwise", [(8, 3)], (8, 3))])    # rows: the other dims, cols: dim 1

    def test_layer_norm_and_pool_flatten_linear(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.norm = nn.LayerNorm(8)
                self.fc = nn.Linear(8, 3)

            def forward(self, x):
                return self.fc(self.norm(torch.flatten(self.pool(x), 1)))
        ops, _, stats = lowered(M, (2, 8, 5, 5))
        self.assertEqual(brief(ops), [("Layout", [(50, 8)], (2, 8)), ("Pointwise", [(2, 8)], (2, 8)),
                                      ("MatMul", [(2, 8), (8, 3)], (2, 3))])
        self.assertEqual(stats["data movement without a copy (identity view)"], 1)    # the flatten

    def test_channels_last_permutes_cost_nothing(self):
        class Block(nn.Module):    # convnext's block without its scale
            def __init__(self):
                super().__init__()
                self.dw = nn.Conv2d(8, 8, 7, padding=3, groups=8)
                self.norm = nn.LayerNorm(8)
                self.fc1 = nn.Linear(8, 32)
                self.fc2 = nn.Linear(32, 8)

            def forward(self, x):
                y = self.dw(x).permute(0, 2, 3, 1)
                y = self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(y))))
                return x + y.permute(0, 3, 1, 2)
        ops, _, _ = lowered(Block, (1, 8, 7, 7))
        self.assertEqual([o[0] for o in ops], ["Pointwise", "Pointwise", "MatMul", "Pointwise", "MatMul", "Pointwise"])
        self.assertEqual(brief(ops)[-1], ("Pointwise", [(49, 8), (49, 8)], (49, 8)))   # no Layout anywhere
        self.assertEqual(ops[0][3], PW * 49)    # the 7 x 7 depthwise window

    def test_cat_is_layouts_into_one_pointwise(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Conv2d(4, 6, 1)
                self.b = nn.Conv2d(4, 2, 1)

            def forward(self, x):
                return torch.cat([self.a(x), self.b(x)], 1)
        ops, _, _ = lowered(M, (1, 4, 3, 3))
        self.assertEqual(brief(ops)[2:], [("Layout", [(9, 6)], (9, 8)), ("Layout", [(9, 2)], (9, 8)),
                                          ("Pointwise", [(9, 8), (9, 8)], (9, 8))])

    def test_virtual_output_is_materialised(self):
        class M(nn.Module):
            def forward(self, x):
                return torch.relu(x).transpose(0, 1)
        ops, d, _ = lowered(M, (3, 5))
        self.assertEqual(brief(ops), [("Pointwise", [(3, 5)], (3, 5)), ("Layout", [(3, 5)], (5, 3))])


class TestCosts(unittest.TestCase):
    def test_target_and_dtype(self):
        m = machine.load_target(os.path.join(SRCDIR, "targets", "kpu.cfg"))
        g = support.graph(conv_model(16, 32, 3, 2, 1), (2, 16, 10, 12))
        d, _ = support.problem(g, machine=m)
        # kpu: 32 x 32 x 32 tile / 1024 MAC per cycle; 32 x 32 / 32 elements per cycle; 256 KiB / 2 B; 32 B/cycle / 2 B
        self.assertEqual(d["base_costs"], [32, 32])
        self.assertEqual((d["fast_memory_capacity"], d["slow_memory_bandwidth"], d["native_granularity"]),
                         (131072, 16, [32, 32]))
        d, _ = support.problem(g, dtype="fp32", machine=m)
        self.assertEqual(d["base_costs"], [64, 64])
        self.assertEqual((d["fast_memory_capacity"], d["slow_memory_bandwidth"]), (65536, 8))
        d, _ = support.problem(g, dtype="int8")
        self.assertEqual(d["base_costs"], [PW // 2, MM // 2])
        self.assertEqual((d["fast_memory_capacity"], d["slow_memory_bandwidth"]), (1200000, 100))

    def test_total_compute_is_work_over_throughput(self):
        # MatMul: base x (M/nh)(N/nw)(K/nw) = MACs / macs_per_cycle when sizes are multiples of the tile
        s = machine.DEFAULT.for_dtype("bf16")
        M_, N_, K_ = 256, 384, 512
        total = s.base_matmul() * (M_ / 128) * (N_ / 128) * (K_ / 128)
        self.assertAlmostEqual(total, M_ * N_ * K_ / s.macs)
        self.assertAlmostEqual(s.base_pointwise(3) * (M_ / 128) * (N_ / 128), 3 * M_ * N_ / s.pointwise)


class TestTargetCosts(unittest.TestCase):
    """--target: the machine and every base cost are the C library's (ft_target_apply, through the binding)."""

    # native k unlike w, efficiencies below 1 (slow memory too), kind_cost
    # entries for two of the model's kinds, a capacity that is no multiple
    # of element_bytes
    CFG = """name = "t"; contest = false; clock_hz = 1e9; element_bytes = 2;
fast_memory = { capacity_bytes = 100001; };
slow_memory = { read_bandwidth = 30.0; efficiency = 0.9; };
compute = {
  native_granularity = { w = 32; h = 16; k = 64; };
  matmul_macs_per_cycle = 1000.0; matmul_efficiency = 0.7;
  pointwise_elements_per_cycle = 48.0; pointwise_efficiency = 0.6;
  kind_cost = { gelu = 3.5; conv2d = 1.25; };
};
execution = { launch_overhead = 0.0; };
"""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(8, 16, 3, 1, 1, bias=False)

        def forward(self, x):
            y = nn.functional.max_pool2d(nn.functional.gelu(self.conv(x)), 2)
            return torch.cat([y, torch.relu(y)], 1)

    def setUp(self):
        import tempfile
        self.tmp = tempfile.TemporaryDirectory()
        self.cfg = os.path.join(self.tmp.name, "t.cfg")
        with open(self.cfg, "w") as f:
            f.write(self.CFG)

    def tearDown(self):
        self.tmp.cleanup()

    def lowered(self, module, shape, target, dtype="bf16"):
        """(importer Problem, info() of the same problem with the target applied by the binding)."""
        import fusetile
        p, _ = support.lower(support.graph(module, shape), machine.load_target(target).for_dtype(dtype),
                             support.Options())
        applied = fusetile.apply_target(fusetile.problem_from_dict(p.to_json()), target).info()
        return p, applied

    def test_costs_and_machine_are_ft_target_apply(self):
        p, applied = self.lowered(self.Model, (1, 8, 6, 6), self.cfg)
        d = p.to_json()
        self.assertEqual(d["fast_memory_capacity"], 100001 // 2)
        self.assertEqual((d["fast_memory_capacity"], d["slow_memory_bandwidth"], d["native_granularity"]),
                         (applied["capacity"], applied["bandwidth"], [applied["native"]["w"], applied["native"]["h"]]))
        self.assertEqual(d["slow_memory_bandwidth"], 30.0 * 0.9 / 2)
        other = 0
        for o, op in enumerate(applied["ops"]):
            n = len(p.inputs[o])
            with self.subTest(op=p.names[o], type=p.types[o], kind=p.kinds[o], factor=p.factors[o], inputs=n):
                if p.types[o] == "MatMul" or p.factors[o] == n:
                    self.assertEqual(d["base_costs"][o], op["base_cost"])   # exactly the C library's figure
                else:   # a pooling window, a concatenation: the importer's factor instead of the input count
                    other += 1
                    self.assertAlmostEqual(d["base_costs"][o], op["base_cost"] / n * p.factors[o], delta=1e-9 * op["base_cost"])
        self.assertGreater(other, 0)
        # by hand: native k, the efficiencies and kind_cost are in
        cost = dict(zip(p.kinds, d["base_costs"]))
        conv = [c for t, k, c in zip(p.types, p.kinds, d["base_costs"]) if t == "MatMul"]
        self.assertEqual(len(conv), 1)
        self.assertAlmostEqual(conv[0], 32 * 16 * 64 / (1000 * 0.7) * 1.25)
        self.assertAlmostEqual(cost["gelu"], 32 * 16 / (48 * 0.6) * 3.5)
        self.assertAlmostEqual(cost["relu"], 32 * 16 / (48 * 0.6))

    def test_dtype_scales_what_ft_target_apply_gives(self):
        p2, _ = self.lowered(self.Model, (1, 8, 6, 6), self.cfg)
        p4, _ = self.lowered(self.Model, (1, 8, 6, 6), self.cfg, dtype="fp32")
        d2, d4 = p2.to_json(), p4.to_json()
        self.assertEqual((d4["fast_memory_capacity"], d4["slow_memory_bandwidth"]), (100001 // 4, 30.0 * 0.9 / 4))
        for a, b in zip(d2["base_costs"], d4["base_costs"]):
            self.assertAlmostEqual(b, 2 * a)

    def test_gpu_h100(self):
        """A bundled target with efficiencies and a kind_cost (gelu): every base cost is ft_target_apply's."""
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(256, 512)
                self.fc2 = nn.Linear(512, 128)

            def forward(self, x):
                h = self.fc1(x)
                return self.fc2(nn.functional.gelu(h) + torch.relu(h))
        target = os.path.join(SRCDIR, "targets", "gpu-h100.cfg")
        p, applied = self.lowered(M, (128, 256), target)
        d = p.to_json()
        self.assertEqual(d["base_costs"], [op["base_cost"] for op in applied["ops"]])
        self.assertEqual((d["fast_memory_capacity"], d["slow_memory_bandwidth"]), (applied["capacity"], applied["bandwidth"]))
        self.assertIn("gelu", p.kinds)
        # the fitted gelu factor as the file gives it (each refit moves it)
        gelu = float(re.search(r"^ *gelu = ([0-9.]+);", open(target).read(), re.M).group(1))
        self.assertAlmostEqual(d["base_costs"][p.kinds.index("gelu")], 64 * 64 / 128.0 * gelu)

    def test_contest_target_is_the_default_machine(self):
        m = machine.load_target(os.path.join(SRCDIR, "targets", "contest.cfg"))
        self.assertEqual(m.name, "contest")
        s = m.for_dtype("bf16")
        self.assertEqual((s.capacity, s.bandwidth, s.base_matmul(), s.base_pointwise()), (600000, 50, MM, PW))


if __name__ == "__main__":
    unittest.main()
