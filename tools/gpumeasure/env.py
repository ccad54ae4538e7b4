"""env.py - gpumeasure's env.tsv: the device, the GPU's properties and clocks (nvidia-smi) or the CPU's, the software, the date and the settings."""

import datetime
import os
import platform
import shlex
import subprocess

from .common import MISSING, PROG, clean


def measure_env(dev, args, argv):
    """env.tsv's rows (key, value): the device, the GPU's properties and clocks or the CPU's, the software,
    the date, torch.compile's state, the settings and the command line."""
    torch = dev.torch
    rows = [("device", dev.kind)]
    if dev.cuda:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        smi = nvidia_smi()
        rows += [
            ("gpu", props.name),
            ("sms", props.multi_processor_count),
            ("memory_bytes", props.total_memory),
            ("torch", torch.__version__),
            ("cuda", torch.version.cuda or MISSING),
            ("l2_bytes", getattr(props, "L2_cache_size", MISSING)),
            ("smem_per_block_optin", getattr(props, "shared_memory_per_block_optin", MISSING)),
            ("smem_per_sm", getattr(props, "shared_memory_per_multiprocessor", MISSING)),
            ("nvidia_smi max_sm_MHz,max_mem_MHz,sm_MHz,power_limit,driver", smi or MISSING),
            ("driver", smi.rsplit(",", 1)[-1].strip() if smi else MISSING),
            ("capability", f"{props.major}.{props.minor}"),
            ("dtype", "bfloat16"),
        ]
    else:
        rows += [
            ("gpu", "none"),
            ("cpu", cpu_model()),
            ("cpu_threads", torch.get_num_threads()),
            ("memory_bytes", physical_memory()),
            ("torch", torch.__version__),
            ("cuda", torch.version.cuda or MISSING),
            ("dtype", "float32"),
            ("note", "test mode (--device cpu): CPU wall times (time.perf_counter) on float32 tensors; "
                     "no CUDA graphs or torch.compile: those columns are '-'; not GPU figures"),
        ]
    rows += [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")),
        ("python", platform.python_version()),
        ("compile", compile_state(dev, args)),
        ("settings", settings_text(args)),
        ("command", " ".join(shlex.quote(a) for a in [PROG] + argv)),
    ]
    return [(k, clean(v)) for k, v in rows]


def settings_text(args):
    """env.tsv's settings: the timing settings, --quick, and the budget with what it cut (a run cut short
    rewrites env.tsv with this)."""
    text = (f"reps {args.reps}, warmup {args.warmup}, target_ms {args.target_ms:g}, "
            f"max_calls {args.max_calls}{', quick' if args.quick else ''}")
    budget = args.budget.describe()
    return clean(f"{text}, {budget}" if budget else text)


def nvidia_smi():
    """nvidia-smi's max SM clock, max memory clock, SM clock, power limit and driver, or None."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,"
                            "driver_version", "--format=csv,noheader", "--id=" + gpu_index()],
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    line = r.stdout.strip().splitlines()
    return line[0].strip() if r.returncode == 0 and line else None


def gpu_index():
    """The physical index of the GPU torch uses: the first of CUDA_VISIBLE_DEVICES, else 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return visible if visible else "0"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or MISSING


def physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MISSING


def compile_state(dev, args):
    """What env.tsv's compile says: torch.compile's mode, or why it is skipped."""
    if not dev.cuda:
        return "skipped (--device cpu)"
    if args.no_compile:
        return "skipped (--no-compile)"
    if not hasattr(dev.torch, "compile"):
        return "unavailable (this torch has no torch.compile)"
    return "torch.compile (default mode, Inductor)"
