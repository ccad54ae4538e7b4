"""gpumeasure - the modules of tools/measure_gpu.py, which times GEMMs, element-wise ops and whole contest problems on a GPU and writes the measured-hardware TSV files (the script's docstring documents them).

  common    constants, the file headers, UsageError, SkipSet, progress lines, cells
  args      the command line (parse_args)
  budget    the --budget-s wall-time limit and what it cut (Budget)
  problems  problem files: read, checked, ordered (load_problem, find_problems)
  device    the torch device and its three timings (Device, open_torch)
  ops       ops and whole problems as torch functions (problem_function)
  env       env.tsv: the machine, the software and the settings
  shapes    GEMM shape lists: odd_gemm's and energy's (odd_gemm_shapes, ENERGY_GEMMS)
  sets      gemm.tsv, pointwise.tsv, graph_ops.tsv, graphs.tsv and odd_gemm.tsv
  nets      torchvision models: models.tsv, model_kernels.tsv and conv.tsv
  energy    energy.tsv: NVML's energy counter around CUDA-graph replays
  output    writing a TSV file atomically, at once or as a set goes (write_tsv, TsvRows)

DEVICE_RUN.md, beside these modules, is the command for one time-limited run
of the extra sets on an H100.
"""
