"""device.py - gpumeasure's torch device and its three timings (back to back in a stream, replayed in a CUDA graph, one call then a synchronize), and opening torch with the no-GPU message."""

import statistics
import sys
import time
import warnings

from .common import PROG, first_line


class Device:
    """The torch device, its element type and the three timings."""

    def __init__(self, torch, kind, args):
        self.torch = torch
        self.kind = kind
        self.cuda = kind == "cuda"
        self.dev = torch.device("cuda") if self.cuda else torch.device("cpu")
        self.dtype = torch.bfloat16 if self.cuda else torch.float32
        self.elem_bytes = torch.tensor([], dtype=self.dtype).element_size()
        self.reps = args.reps
        self.warmup = args.warmup
        self.target_us = args.target_ms * 1000.0
        self.max_calls = args.max_calls

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def randn(self, shape):
        return self.torch.randn(shape, device=self.dev, dtype=self.dtype)

    def _measure(self, fn, n):
        """One measurement: n back-to-back calls of fn, microseconds per call."""
        if self.cuda:
            ev = self.torch.cuda.Event
            start, end = ev(enable_timing=True), ev(enable_timing=True)
            start.record()
            for _ in range(n):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1000.0 / n
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) * 1e6 / n

    def per_call(self, fn):
        """Median time per call of fn run back to back, after the warm-up (us)."""
        for _ in range(self.warmup):
            fn()
        self.sync()
        estimate = self._measure(fn, 2)
        n = max(1, min(self.max_calls, int(self.target_us / max(estimate, 1e-3))))
        return statistics.median(self._measure(fn, n) for _ in range(self.reps))

    def sync_wall(self, fn):
        """Median wall time of one call followed by a synchronize (us)."""
        for _ in range(self.warmup):
            fn()
        times = []
        for _ in range(self.reps):
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.sync()
            times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)

    def capture(self, fn):
        """(graph, its outputs) of fn captured in a CUDA graph, warmed up on a side stream first."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(max(2, self.warmup)):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn()
        torch.cuda.synchronize()
        return graph, out

    def per_replay(self, fn):
        """Median time per replay of fn captured in a CUDA graph (us); None on the CPU (no graphs)."""
        if not self.cuda:
            return None
        graph, out = self.capture(fn)
        try:
            return self.per_call(graph.replay)
        finally:
            self.sync()
            del graph, out


def open_torch(device):
    """torch, with the requested device usable; else the one-line no-GPU message and exit status 2."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
    except Exception as e:   # noqa: BLE001 - a broken install is as good as none here
        what = "CUDA GPU" if device == "cuda" else "torch"
        print(f"{PROG}: no {what} found (torch not importable: {first_line(e)}); nothing measured",
              file=sys.stderr)
        sys.exit(2)
    if device == "cuda":
        try:
            ok = torch.cuda.is_available() and torch.cuda.device_count() > 0
        except Exception:   # noqa: BLE001
            ok = False
        if not ok:
            why = "" if torch.version.cuda else ": this torch is built without CUDA"
            print(f"{PROG}: no CUDA GPU found (torch {torch.__version__}, CUDA not available{why}); "
                  "nothing measured", file=sys.stderr)
            sys.exit(2)
    return torch
