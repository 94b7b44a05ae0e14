"""The orbitlaw GPT (docs/design.md sections 4-5) in Python PyTorch, the peer of bench_model_train.

Same architecture as model/src/gpt.cpp (two embedding tables concatenated and projected, learned positions or
RoPE, pre-LayerNorm blocks, GELU MLP, 2 x V head), the same unfused attention formulas (model/src/attention.cpp),
the same AdamW groups and step (forward, loss, backward, clip 1.0, AdamW). Prints one JSON line.

The modules carry the LibTorch model's names (blocks.0.attn.c_attn.weight, blocks.0.c_proj.weight, ...), so a
state dict maps one to one onto Gpt::named_parameters(); gpt_parity.py relies on that to check the LibTorch GPT
against this one in float64 (tests/model/test_gpt_parity.cpp).
"""
import argparse
import json
import math
import resource
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {  # (n_layer, n_head, n_embd, block_size, bins, window) as in model/src/config.cpp
    "tiny": (2, 2, 64, 128, 500, 32),
    "small": (4, 4, 128, 256, 500, 64),
    "paper-109m": (12, 12, 768, 999, 7000, 128),
}

# LSSAR's near-uniform cut-off tau = 2^-10 (kLssarUniformTolerance, model/shared/include/orbitlaw/model/
# lssar_cutoff.hpp): a row with max_j u_ij <= tau is all at or below uniform and gets all-zero weights.
LSSAR_UNIFORM_TOLERANCE = 1.0 / 1024.0


def lssar_reweight(a, p, offset_rows):
    """LSSAR re-weighting of row-normalised LSSA weights a [..., T, T] (design.md section 5, attention.cpp).

    W_ij = (u_ij / max_j u_ij)^p, renormalised, with u_ij = ReLU(n_i A_ij - O_i); the row maximum is a
    constant of the row (detached). Rows with max_j u_ij <= tau are all zeros, with zero gradients.
    """
    i = torch.arange(a.shape[-2], dtype=a.dtype).unsqueeze(1)
    n = i + 1
    offset = (i >= offset_rows).to(a.dtype)
    excess = torch.relu(n * a - offset)
    row_max = excess.amax(-1, keepdim=True).detach()
    kept = row_max > LSSAR_UNIFORM_TOLERANCE
    scaled = excess / torch.where(kept, row_max, torch.ones_like(row_max))
    w = scaled.pow(p) * kept.to(a.dtype)
    total = w.sum(-1, keepdim=True)
    return w / torch.where(kept, total, torch.ones_like(total))


def attention(q, k, v, kind, p=15.0, offset_rows=3, window=64, scale=None, sdpa=False):
    """Causal attention of one kind on q, k, v [B, H, T, d]; `scale` is SSMax's per-head s [H]. `sdpa`: the
    softmax kinds through F.scaled_dot_product_attention, as the LibTorch model's fused path computes them."""
    t, d = q.shape[-2], q.shape[-1]
    i = torch.arange(t).unsqueeze(1)
    j = torch.arange(t).unsqueeze(0)
    visible = j <= i
    if kind == "window":
        visible = visible & (j > i - window)
    n = (i + 1).to(q.dtype)
    if sdpa and kind in ("softmax", "ssmax"):
        factor = scale.view(1, -1, 1, 1) * torch.log(n) if kind == "ssmax" else 1.0
        return F.scaled_dot_product_attention(q * factor, k, v, is_causal=True)
    if sdpa and kind == "window":
        return F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
    if kind in ("softmax", "window"):
        w = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~visible, float("-inf")), -1)
    elif kind == "ssmax":
        s = scale.view(1, -1, 1, 1) * torch.log(n) * (q @ k.transpose(-2, -1)) / math.sqrt(d)
        w = torch.softmax(s.masked_fill(~visible, float("-inf")), -1)
    elif kind in ("lssa", "lssar"):
        qn, kn = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        a = F.softplus(math.log(d) * torch.log(n) * (qn @ kn.transpose(-2, -1))) * visible.to(q.dtype)
        w = a / a.sum(-1, keepdim=True)
        if kind == "lssar":
            w = lssar_reweight(w, p, offset_rows)
    elif kind == "sigmoid":
        w = torch.sigmoid(q @ k.transpose(-2, -1) / math.sqrt(d) - torch.log(n)) * visible.to(q.dtype)
    else:
        raise ValueError(f"unknown attention kind {kind!r}")
    return w @ v


def apply_rope(x, theta):
    """RoPE on x [B, H, T, d] for positions 0..T-1, "rotate half" pairs (x_m, x_{m + d/2}) as attention.cpp."""
    t, d = x.shape[-2], x.shape[-1]
    inv_freq = torch.pow(theta, -torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.outer(torch.arange(t, dtype=torch.float64), inv_freq)
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_head, n_embd, kind, window, p=15.0, offset_rows=3, rope_theta=None, sdpa=False):
        super().__init__()
        self.n_head, self.kind, self.window, self.p, self.offset_rows = n_head, kind, window, p, offset_rows
        self.sdpa = sdpa
        self.rope_theta = rope_theta  # None: learned positions (added to the input, not here)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.ssmax_scale = nn.Parameter(torch.ones(n_head)) if kind == "ssmax" else None

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, -1)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        if self.rope_theta is not None:
            q, k = apply_rope(q, self.rope_theta), apply_rope(k, self.rope_theta)
        y = attention(q, k, v, self.kind, p=self.p, offset_rows=self.offset_rows, window=self.window,
                      scale=self.ssmax_scale, sdpa=self.sdpa)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, n_head, n_embd, kind, window, **attention_options):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_head, n_embd, kind, window, **attention_options)
        self.c_fc, self.c_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


class Gpt(nn.Module):
    """`attention_options`: p, offset_rows (LSSAR) and rope_theta (RoPE instead of learned positions).
    `coordinate_scale` set: the regression head (coordinates in, next coordinates out, both in AU; NaN marks
    a row that is not a position, which reads the learned `start` vector instead)."""

    def __init__(self, n_layer, n_head, n_embd, block_size, vocab, kind, window, coordinate_scale=None,
                 **attention_options):
        super().__init__()
        self.vocab = vocab
        self.coordinate_scale = coordinate_scale
        if coordinate_scale is None:
            self.wte_x, self.wte_y = nn.Embedding(vocab, n_embd), nn.Embedding(vocab, n_embd)
            self.in_proj = nn.Linear(2 * n_embd, n_embd)
        else:
            self.coord_in = nn.Linear(2, n_embd)
            self.start = nn.Parameter(torch.zeros(n_embd))
        rope = attention_options.get("rope_theta") is not None
        self.wpe = None if rope else nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList(Block(n_head, n_embd, kind, window, **attention_options)
                                    for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        if coordinate_scale is None:
            self.head = nn.Linear(n_embd, 2 * vocab)
        else:
            self.coord_head = nn.Linear(n_embd, 2)

    def forward(self, tokens, batched=False):
        """`batched`: the regression embedding as one where() over the batch (the benchmark's); else row by
        row, the plainest reading of gpt.cpp's embed (the parity test's)."""
        t = tokens.shape[1]
        if self.coordinate_scale is None:
            x = self.in_proj(torch.cat([self.wte_x(tokens[..., 0]), self.wte_y(tokens[..., 1])], -1))
        elif batched:
            scaled = tokens / self.coordinate_scale
            is_position = torch.isfinite(scaled).all(-1, keepdim=True)
            x = torch.where(is_position, self.coord_in(torch.nan_to_num(scaled, 0.0)), self.start)
        else:
            x = torch.stack([self.start if torch.isnan(row).any() else self.coord_in(row / self.coordinate_scale)
                             for row in tokens.reshape(-1, 2)]).reshape(*tokens.shape[:2], -1)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        if self.coordinate_scale is not None:
            return self.coord_head(self.ln_f(x)) * self.coordinate_scale
        return self.head(self.ln_f(x)).split(self.vocab, -1)


def next_token_loss(logits_x, logits_y, targets, ignore_index):
    """Mean cross-entropy over the x and y channels, pad targets not counted (gpt.cpp's next_token_loss)."""
    vocab = logits_x.shape[-1]
    return 0.5 * (F.cross_entropy(logits_x.reshape(-1, vocab), targets[..., 0].reshape(-1),
                                  ignore_index=ignore_index)
                  + F.cross_entropy(logits_y.reshape(-1, vocab), targets[..., 1].reshape(-1),
                                    ignore_index=ignore_index))


def next_position_loss(coordinates, targets, coordinate_scale):
    """The regression head's loss (gpt.cpp's next_position_loss): the mean, over the target positions that are
    positions (no NaN) and their two channels, of the squared error in units of coordinate_scale."""
    kept = [(c, t) for c, t in zip(coordinates.reshape(-1, 2), targets.reshape(-1, 2)) if not torch.isnan(t).any()]
    return sum(((c - t) / coordinate_scale).pow(2).sum() for c, t in kept) / (2 * len(kept))


def next_position_loss_batched(coordinates, targets, coordinate_scale):
    """next_position_loss as whole-batch operations (the benchmark's)."""
    valid = torch.isfinite(targets).all(-1, keepdim=True)
    diff = (coordinates - torch.nan_to_num(targets, 0.0)) / coordinate_scale
    return torch.where(valid, diff * diff, torch.zeros_like(diff)).sum() / (2 * valid.sum())


def matmul_gflops():
    """The float32 rate of a 1024^3 matrix product (median of 9), as bench_model_train --peak."""
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    rates = []
    for i in range(12):
        start = time.perf_counter()
        torch.mm(a, b)
        if i >= 3:
            rates.append(2 * 1024 ** 3 / (time.perf_counter() - start) / 1e9)
    return sorted(rates)[len(rates) // 2]


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024
    return float("nan")


def build_model(args):
    """A preset's token-head model, or (--shape sweep) the locality/quickstart regression model, as
    bench_model_train builds it; returns (model, inputs, targets, loss function)."""
    if args.preset == "sweep":
        model = Gpt(2, 2, 32, 128, 163, args.kind, 2, coordinate_scale=4.0, rope_theta=10000.0,
                    sdpa=args.path == "fused")
        data = torch.randn(args.batch, 129, 2)
        return model, data[:, :-1], data[:, 1:], lambda out, targets: next_position_loss_batched(out, targets, 4.0)
    n_layer, n_head, n_embd, block, bins, window = PRESETS[args.preset]
    model = Gpt(n_layer, n_head, n_embd, block, bins + 3, args.kind, window, sdpa=args.path == "fused")
    tokens = torch.randint(0, bins, (args.batch, block + 1, 2))
    return model, tokens[:, :-1], tokens[:, 1:], lambda out, targets: next_token_loss(*out, targets, bins + 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default="softmax")
    ap.add_argument("--preset", "--shape", dest="preset", default="small")
    ap.add_argument("--path", choices=["fused", "reference"], default="fused")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peak", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    if args.peak:
        print(json.dumps({"impl": "pytorch", "threads": args.threads, "matmul_gflops": matmul_gflops()}))
        return
    before = current_rss_mib()
    torch.manual_seed(1)
    model, inputs, targets, loss_of = build_model(args)
    model.train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), foreach=False)
    times, loss_value = [], 0.0
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        opt.zero_grad()
        loss = loss_of(model(inputs, batched=True), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_value = loss.item()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    times.sort()
    median = times[len(times) // 2]
    context = inputs.shape[1]
    print(json.dumps({"impl": "pytorch", "kind": args.kind, "preset": args.preset, "path": args.path,
                      "batch": args.batch, "context": context, "threads": args.threads,
                      "parameters": sum(p.numel() for p in model.parameters()), "median_step_s": median,
                      "tokens_per_s": args.batch * context / median, "peak_rss_mib": peak_rss_mib(),
                      "rss_before_model_mib": before, "final_loss": loss_value}))


if __name__ == "__main__":
    main()
