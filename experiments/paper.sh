#!/usr/bin/env bash
# paper: the published scale (Vafa et al., ICML 2025; Gao et al., ICML 2026), for a GPU cluster.
#
# 10M vafa-paper systems -> the 109M GPT (paper-109m: 12 layers, 12 heads, width 768, context 999, 7000 bins,
# 108.53M parameters) trained 25 epochs, once with softmax and once with LSSAR (p = 15) -> eval -> two-body
# force probe (10k systems) + symbolic regression (5 galaxies) -> compare with Newton -> report.
# Config: experiments/configs/paper.json. --smoke runs every one of these steps at tiny size (CI runs it).
#
# Budget (per model; computed, not measured -- the GPU throughput assumption is the one to check first):
#   sequences   10M systems x 25 epochs = 2.5e8 sequences of 999 positions
#   tokens      2.50e11 (10M x 999 x 25); 512 sequences per optimizer step -> 488,281 steps
#               (configured as batch 64 x grad_accum 8 per process; divide the accumulation by the GPU count)
#   FLOP        6 N T = 6 x 108.53M x 2.50e11 = 1.63e20, plus attention 12 L d ctx T = 2.8e19 -> 1.9e20
#               (docs/design.md section 8 quotes ~2e20 for the paper's run)
#   hours       at 40% MFU of the dense bf16 peak (llm.c reaches ~56% on A100 for GPT-2 124M):
#                 H100 SXM / H200 (989 TFLOP/s peak): 134 GPU-hours -> 16.7 h on 8 GPUs
#                 A100 (312 TFLOP/s peak):            423 GPU-hours -> 53 h on 8 GPUs
#               both models together: twice that. LSSAR at this speed needs the fused attention kernel
#               (model/cuda: fused LSSA/LSSAR); its unfused reference path is several times slower.
#   probe       10k steps x 64 sequences x 999 positions = 6.4e8 tokens, 4e17 FLOP: minutes on one GPU
#   data        10M systems x 1000 rows: ~640 GB as float64 position/velocity/acceleration/star
#               acceleration (before HDF5 compression), ~40 GB pre-tokenized (2 x uint16 per row); simulate
#               in shards (orbitlaw simulate --shard i/n) on CPU nodes -- throughput: bench/ of the simulator
# Run folder: runs/paper (or --out DIR); rerunning resumes it. See docs/experiments.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"
launch_experiment paper "$@"
