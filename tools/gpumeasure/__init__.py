"""gpumeasure - the modules of tools/measure_gpu.py, which times GEMMs, element-wise ops and whole contest problems on a GPU and writes the measured-hardware TSV files (the script's docstring documents them).

  common    constants, the file headers, UsageError, progress lines, cells
  args      the command line (parse_args)
  problems  problem files: read, checked, ordered (load_problem, find_problems)
  device    the torch device and its three timings (Device, open_torch)
  ops       ops and whole problems as torch functions (problem_function)
  env       env.tsv: the machine, the software and the settings
  sets      gemm.tsv, pointwise.tsv, graph_ops.tsv and graphs.tsv
  output    writing a TSV file atomically (write_tsv)
"""
