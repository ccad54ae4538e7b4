#!/usr/bin/env python3
"""eager_kernels.py - write the kernel-level rows of PyTorch's batch-norm and max-pool kernels (targets/measured/h100-c/eager_kernels.tsv) from a profile of whole models (model_kernels.tsv), each kernel matched to its layer's shape, so that `fusetile calibrate` fits those kernel classes on kernels, not on whole models.

usage: eager_kernels.py MODEL_KERNELS.tsv [-o OUT.tsv] [--models LIST]

A model's batch_norm_transform_input_kernel and max_pool_forward_nchw
kernels run in the order of its BatchNorm2d and MaxPool2d layers'
calls; the shapes come from one forward of the torchvision model on the
CPU (weights=None, 1 x 3 x 224 x 224, scaled to the profile's batch).
A model and batch whose kernel counts differ from its layers' is
skipped with a line on stderr.  Columns: kind (batch_norm, max_pool2d),
model, batch, rows (N*H*W of the input), cols (channels), out_rows
(N*Ho*Wo), us (the profiler's time of the kernel alone).  Needs torch
and torchvision.
"""
import argparse
import collections
import csv
import sys

DEFAULT_MODELS = "resnet18,resnet34,resnet50,mobilenet_v2,efficientnet_b0,densenet121"
PATTERNS = {"batch_norm": "batch_norm_transform_input_kernel", "max_pool2d": "max_pool_forward_nchw"}


def layer_shapes(model):
    """Per kind, (rows, cols, out_rows) of each call at batch 1, in call order."""
    import torch
    import torchvision
    net = getattr(torchvision.models, model)(weights=None).eval()
    calls = collections.defaultdict(list)

    def hook(kind):
        def record(_m, inp, out):
            n, c, h, w = inp[0].shape
            calls[kind].append((n * h * w, c, out.shape[0] * out.shape[2] * out.shape[3]))
        return record
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.register_forward_hook(hook("batch_norm"))
        elif isinstance(m, torch.nn.MaxPool2d):
            m.register_forward_hook(hook("max_pool2d"))
    with torch.no_grad():
        net(torch.zeros(1, 3, 224, 224))
    return calls


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profile")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--models", default=DEFAULT_MODELS)
    a = ap.parse_args(argv)
    prof = collections.defaultdict(list)
    with open(a.profile, newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            prof[(r["model"], int(r["batch"]))].append(r)
    out = []
    for model in a.models.split(","):
        shapes = layer_shapes(model)
        for batch in sorted(b for (m, b) in prof if m == model):
            ks = prof[(model, batch)]
            for kind, pat in PATTERNS.items():
                times = [float(k["us"]) for k in ks if pat in k["kernel_name"]]
                if len(times) != len(shapes[kind]):
                    print(f"eager_kernels.py: {model} b{batch}: {len(times)} {kind} kernels, {len(shapes[kind])} layers: "
                          "skipped", file=sys.stderr)
                    continue
                for (rows, cols, orows), us in zip(shapes[kind], times):
                    out.append((kind, model, batch, rows * batch, cols, orows * batch, us))
    f = sys.stdout if a.output == "-" else open(a.output, "w", newline="")
    w = csv.writer(f, delimiter="\t", lineterminator="\n")
    w.writerow(["kind", "model", "batch", "rows", "cols", "out_rows", "us"])
    w.writerows(out)
    if f is not sys.stdout:
        f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
