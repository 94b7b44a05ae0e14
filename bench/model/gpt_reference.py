"""The orbitlaw GPT (docs/design.md sections 4-5) in Python PyTorch, the peer of bench_model_train.

Same architecture as model/src/gpt.cpp (two embedding tables concatenated and projected, learned positions,
pre-LayerNorm blocks, GELU MLP, 2 x V head), the same unfused attention formulas (model/src/attention.cpp),
the same AdamW groups and step (forward, loss, backward, clip 1.0, AdamW). Prints one JSON line.
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


def attention(q, k, v, kind, p=15.0, offset_rows=3, window=64, scale=None):
    t, d = q.shape[-2], q.shape[-1]
    i = torch.arange(t).unsqueeze(1)
    j = torch.arange(t).unsqueeze(0)
    visible = j <= i
    if kind == "window":
        visible = visible & (j > i - window)
    n = (i + 1).to(q.dtype)
    if kind in ("softmax", "window"):
        w = torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~visible, float("-inf")), -1)
    elif kind == "ssmax":
        s = scale.view(1, -1, 1, 1) * torch.log(n) * (q @ k.transpose(-2, -1)) / math.sqrt(d)
        w = torch.softmax(s.masked_fill(~visible, float("-inf")), -1)
    else:
        qn, kn = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        a = F.softplus(math.log(d) * torch.log(n) * (qn @ kn.transpose(-2, -1))) * visible.to(q.dtype)
        w = a / a.sum(-1, keepdim=True)
        if kind == "lssar":
            offset = (i >= offset_rows).to(q.dtype)
            eps = torch.finfo(q.dtype).eps
            excess = torch.relu(n * w - offset * (1 + 64 * eps))
            m = excess.amax(-1, keepdim=True).detach()
            w = (excess / m.clamp_min(torch.finfo(torch.float32).tiny)) ** p
            total = w.sum(-1, keepdim=True)
            w = w / torch.where(total > 0, total, torch.ones_like(total))
    return w @ v


class Block(nn.Module):
    def __init__(self, n_head, n_embd, kind, window):
        super().__init__()
        self.n_head, self.kind, self.window = n_head, kind, window
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)
        self.ssmax_scale = nn.Parameter(torch.ones(n_head)) if kind == "ssmax" else None

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, -1)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = attention(q, k, v, self.kind, window=self.window, scale=self.ssmax_scale)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))


class Gpt(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, block_size, vocab, kind, window):
        super().__init__()
        self.vocab = vocab
        self.wte_x, self.wte_y = nn.Embedding(vocab, n_embd), nn.Embedding(vocab, n_embd)
        self.in_proj = nn.Linear(2 * n_embd, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList(Block(n_head, n_embd, kind, window) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, 2 * vocab)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.in_proj(torch.cat([self.wte_x(tokens[..., 0]), self.wte_y(tokens[..., 1])], -1))
        x = x + self.wpe(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x)).split(self.vocab, -1)


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024
    return float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default="softmax")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    before = current_rss_mib()
    n_layer, n_head, n_embd, block, bins, window = PRESETS[args.preset]
    vocab = bins + 3
    torch.manual_seed(1)
    model = Gpt(n_layer, n_head, n_embd, block, vocab, args.kind, window)
    model.train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), foreach=False)
    tokens = torch.randint(0, bins, (args.batch, block + 1, 2))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    times, loss_value = [], 0.0
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        opt.zero_grad()
        lx, ly = model(inputs)
        loss = 0.5 * (F.cross_entropy(lx.reshape(-1, vocab), targets[..., 0].reshape(-1), ignore_index=bins + 2)
                      + F.cross_entropy(ly.reshape(-1, vocab), targets[..., 1].reshape(-1), ignore_index=bins + 2))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_value = loss.item()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    times.sort()
    median = times[len(times) // 2]
    print(json.dumps({"impl": "pytorch", "kind": args.kind, "preset": args.preset, "batch": args.batch,
                      "context": block, "threads": args.threads,
                      "parameters": sum(p.numel() for p in model.parameters()), "median_step_s": median,
                      "tokens_per_s": args.batch * block / median, "peak_rss_mib": peak_rss_mib(),
                      "rss_before_model_mib": before, "final_loss": loss_value}))


if __name__ == "__main__":
    main()
