#!/usr/bin/env python3
"""Liu et al.'s block-size protocol as a reference row, written from a reading of their public code.

Liu, Sanborn, Ganguli, Tolias, "From Kepler to Newton" (arXiv 2602.06923); code KindXiaoming/newton-kepler
(files generate_kepler_cv.py, kepler_cv_blocksize.py, model_cv.py, fig6_block_size_kepler_newton.ipynb, read at
commit d1e37bd; nothing copied).
docs/design.md section 6b summarises their setup. Per context b this script trains their model, probes it with
their probe (unregularised least squares, in sample) and, beside it, the untrained model of that context and the
raw input window, each also with the project's held-out variant (fit on 80% of trajectories, score on the rest).

Where this follows their code (F) and where it could not tell or departs (?/D), with what was chosen:
  F data: one body, GM = 1, e ~ U(0, 0.8), a ~ U(0.5, 2), orientation angle ~ U(0, 2 pi), start at pericentre,
    prograde (their v0 = v_peri (-sin angle, cos angle)), 100 points at t = linspace(0, 100 dt, 100), dt = 0.2
    (so the spacing is 20/99 = 0.2020..., not 0.2), 20,000 trajectories, the first half train, the second test.
  D positions from Kepler's equation solved by Newton's method to machine precision (they integrate with
    solve_ivp, rtol = atol = 1e-8); the same orbits up to their integrator's ~1e-8 error. Our own RNG stream.
  F contexts: b < 100 cuts each trajectory into 100 // b windows of b + 1 points at random starts (without
    replacement among the 100 - b possible), the model sees b points and the loss is on the one next point
    (their loss_mask 'all' with a one-point target is the last position). b = 100 uses whole trajectories:
    99 inputs, loss on all 99 next positions.
  F model: nanoGPT-style, 2 layers, width 32, 1 head, bias everywhere, dropout 0, pre-LayerNorm blocks, causal
    softmax attention (their attention_alpha = 0 makes the (log N)^alpha scale 1), MLP 4x wide with SiLU, a linear
    embedding of the raw (x, y), learned absolute positions (b of them), final LayerNorm, linear (x, y) head, MSE.
    Init as theirs: N(0, 0.02) for Linear and Embedding weights, zero biases, c_proj weights N(0, 0.02/sqrt(4)).
  D attention uses torch's scaled_dot_product_attention (mathematically their manual softmax; rounding differs).
  F optimiser: AdamW, lr 1e-3, betas (0.9, 0.999), weight decay 0 (train_model is called with 0.0), lr x 0.1
    at steps // 2, no clipping, batch 128 * 100 // b sequences drawn with replacement, noise N(0, 0.1^2) added
    to the training inputs only (not to targets, not at probe or rollout time). Their sweep runs 20,001 steps.
  D they draw a test batch every step (which advances torch's RNG); this script does not evaluate during training.
  F probe: 1000 training sequences drawn with replacement, clean inputs, eval mode; features are the last token's
    activation at each hook: input_embed, after_pos_emb, per block attn_output, after_attn_merge, mlp_hidden
    (after SiLU, 4x wide), mlp_output, after_mlp_merge; after_ln_f. Least squares with an intercept, no
    regularisation (scikit-learn LinearRegression there; numpy lstsq here, the same estimator; min-norm where
    the features are rank-deficient), R^2 on the rows it was fitted on. Targets computed from the last INPUT
    position (the current position, which the model is given): Fx = -x/r^3, Fy = -y/r^3, |F| = 1/r^2.
  F which R^2: the probe records 'r2' (all positions of the window) and 'r2_last' (last token); their figure
    notebook (fig6_block_size_kepler_newton.ipynb) takes postfix '_last', the final evaluation (eval_results[-1])
    and the maximum over hooks, for F_magnitude and Fx. Done the same here (best hook = maximum in-sample R^2).
  F rollout error: 500 random test trajectories, the first 50 true points as conditioning, 50 points generated
    autoregressively from the last b points (b = 100: the whole growing sequence), mean Euclidean distance to
    the truth over the generated points and trajectories (the notebook's np.mean of position_errors).
    Their figure's rollout error is on test trajectories (error_stats_test), 500 drawn with replacement; so here.
  Added (not theirs): untrained model of each context (same init seed) under the same probe; the raw input window
    (its last b positions, 2b features) and, in the JSON only, the last position's quadratic monomials; a held-out
    column: the same least squares fitted on the probe rows of 80% of the probe's trajectories and scored on the
    rows of the other 20% (split by trajectory).

Usage: python bench/liu/liu_protocol.py --contexts 1,2,5,100 --steps 20000 --seed 1 --threads 1 --out DIR
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

N_POINTS = 100
DT = 0.2
GM = 1.0
HOOKS_HEAD = ["input_embed", "after_pos_emb"]
HOOKS_BLOCK = ["attn_output", "after_attn_merge", "mlp_hidden", "mlp_output", "after_mlp_merge"]
TARGETS = ["F_magnitude", "Fx", "Fy"]


def hook_names(n_layer):
    names = list(HOOKS_HEAD)
    for i in range(n_layer):
        names += [f"block_{i}_{h}" for h in HOOKS_BLOCK]
    return names + ["after_ln_f"]


# ---------------------------------------------------------------- data
def solve_kepler(M, e, iters=60):
    """Eccentric anomaly E with E - e sin E = M (elementwise), Newton from E = M + e sin M (e < 1)."""
    E = M + e * np.sin(M)
    for _ in range(iters):
        f = E - e * np.sin(E) - M
        step = f / (1.0 - e * np.cos(E))
        E = E - step
        if np.max(np.abs(step)) < 1e-15:
            break
    return E


def kepler_orbits(n, rng, n_points=N_POINTS, dt=DT):
    """Positions and velocities (n, n_points, 2) of one body about a fixed centre, GM = 1, from pericentre."""
    e = rng.uniform(0.0, 0.8, n)
    a = rng.uniform(0.5, 2.0, n)
    angle = rng.uniform(0.0, 2 * np.pi, n)
    t = np.linspace(0.0, n_points * dt, n_points)  # as theirs: spacing n_points*dt/(n_points-1)
    mean_motion = np.sqrt(GM / a ** 3)
    M = mean_motion[:, None] * t[None, :]
    E = solve_kepler(M, e[:, None])
    b = a * np.sqrt(1 - e ** 2)
    cosE, sinE = np.cos(E), np.sin(E)
    xp = a[:, None] * (cosE - e[:, None])
    yp = b[:, None] * sinE
    edot = mean_motion[:, None] / (1 - e[:, None] * cosE)
    vxp = -a[:, None] * sinE * edot
    vyp = b[:, None] * cosE * edot
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    pos = np.stack([c * xp - s * yp, s * xp + c * yp], axis=-1)
    vel = np.stack([c * vxp - s * vyp, s * vxp + c * vyp], axis=-1)
    return pos, vel, {"e": e, "a": a, "angle": angle, "t": t}


def chop(trajs, b, rng):
    """(inputs (S, b, 2), targets (S, 1, 2), trajectory id (S,)) for b < N_POINTS; whole tracks for b >= N_POINTS."""
    n, n_points, _ = trajs.shape
    if b >= n_points:
        return trajs[:, :-1], trajs[:, 1:], np.arange(n)
    per = n_points // b
    max_start = n_points - (b + 1) + 1
    ins, tgs, ids = [], [], []
    for k in range(n):
        starts = np.arange(max_start) if max_start <= per else rng.choice(max_start, size=per, replace=False)
        idx = starts[:, None] + np.arange(b + 1)[None, :]
        w = trajs[k][idx]
        ins.append(w[:, :b])
        tgs.append(w[:, b:])
        ids.append(np.full(len(starts), k))
    return np.concatenate(ins), np.concatenate(tgs), np.concatenate(ids)


def force_targets(last_pos):
    x, y = last_pos[:, 0], last_pos[:, 1]
    r = np.sqrt(x * x + y * y)
    return {"F_magnitude": 1.0 / r ** 2, "Fx": -x / r ** 3, "Fy": -y / r ** 3}


# ---------------------------------------------------------------- model
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.attn_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, rec=None, prefix=""):
        q, k, v = self.c_attn(self.ln_1(x)).split(x.shape[-1], dim=-1)
        att = self.attn_proj(F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=True)[:, 0])
        x = x + att
        h = F.silu(self.c_fc(self.ln_2(x)))
        m = self.mlp_proj(h)
        out = x + m
        if rec is not None:
            rec[prefix + "attn_output"] = att[:, -1]
            rec[prefix + "after_attn_merge"] = x[:, -1]
            rec[prefix + "mlp_hidden"] = h[:, -1]
            rec[prefix + "mlp_output"] = m[:, -1]
            rec[prefix + "after_mlp_merge"] = out[:, -1]
        return out


class LiuGPT(nn.Module):
    def __init__(self, block_size, n_layer=2, d=32):
        super().__init__()
        self.block_size = block_size
        self.embed = nn.Linear(2, d)
        self.wpe = nn.Embedding(block_size, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, 2)
        for mod in self.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, 0.0, 0.02)
                if getattr(mod, "bias", None) is not None:
                    nn.init.zeros_(mod.bias)
        for blk in self.blocks:  # their c_proj: the attention and MLP output projections
            for p in (blk.attn_proj.weight, blk.mlp_proj.weight):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))

    def forward(self, x, rec=None):
        e = self.embed(x)
        h = e + self.wpe.weight[: x.shape[1]]
        if rec is not None:
            rec["input_embed"], rec["after_pos_emb"] = e[:, -1], h[:, -1]
        for i, blk in enumerate(self.blocks):
            h = blk(h, rec, f"block_{i}_")
        h = self.ln_f(h)
        if rec is not None:
            rec["after_ln_f"] = h[:, -1]
        return self.head(h)


# ---------------------------------------------------------------- probe
def lstsq_fit(X, y):
    """Least squares with an intercept, no regularisation (what LinearRegression computes)."""
    X1 = np.hstack([X, np.ones((X.shape[0], 1))])
    coef, *_ = np.linalg.lstsq(X1, y, rcond=None)
    return coef


def lstsq_predict(coef, X):
    return np.hstack([X, np.ones((X.shape[0], 1))]) @ coef


def r2(y, pred):
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - np.mean(y)) ** 2))
    return 1.0 - ss_res / ss_tot


def probe_scores(X, y, fit_rows):
    """{'in_sample': R^2 of the fit on all rows scored on them, 'held_out': fit on fit_rows, scored on the rest}."""
    X = np.asarray(X, np.float64)
    ins = r2(y, lstsq_predict(lstsq_fit(X, y), X))
    coef = lstsq_fit(X[fit_rows], y[fit_rows])
    rest = ~fit_rows
    return {"in_sample": ins, "held_out": r2(y[rest], lstsq_predict(coef, X[rest]))}


def probe_features(feats, targets, fit_rows):
    return {name: {t: probe_scores(X, targets[t], fit_rows) for t in TARGETS} for name, X in feats.items()}


def best_hook(per_hook, target):
    name = max(per_hook, key=lambda h: per_hook[h][target]["in_sample"])
    return name, per_hook[name][target]


@torch.no_grad()
def activations(model, inputs):
    model.eval()
    rec = {}
    model(torch.from_numpy(inputs).float(), rec)
    return {k: v.double().numpy() for k, v in rec.items()}


@torch.no_grad()
def rollout_error(model, trajs, b, cond=50):
    model.eval()
    seq = torch.from_numpy(trajs[:, :cond]).float()
    for _ in range(trajs.shape[1] - cond):
        nxt = model(seq[:, -min(b, model.block_size):])[:, -1:]
        seq = torch.cat([seq, nxt], dim=1)
    err = np.sqrt(np.sum((seq[:, cond:].double().numpy() - trajs[:, cond:]) ** 2, axis=-1))
    return float(err.mean())


# ---------------------------------------------------------------- run
class Progress:
    def __init__(self, label, total):
        self.label, self.total, self.t0 = label, total, time.time()
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def update(self, step, loss):
        if not self.tty:
            return
        now = time.time()
        if now - self.last < 0.5 and step < self.total:
            return
        self.last = now
        rate = step / max(now - self.t0, 1e-9)
        eta = (self.total - step) / max(rate, 1e-9)
        sys.stderr.write(f"\r{self.label} step {step}/{self.total}  {rate:.2f} steps/s  ETA {eta:.0f} s"
                         f"  loss {loss:.3g}   ")
        sys.stderr.flush()
        if step >= self.total:
            sys.stderr.write("\n")


def run_context(b, trajs, steps, seed, probe_rows=1000, batch_base=128, noise=0.1, lr=1e-3):
    n = trajs.shape[0]
    train, test = trajs[: n // 2], trajs[n // 2:]
    rng = np.random.default_rng([seed, b, 1])
    tr_in, tr_tg, tr_id = chop(train, b, rng)
    block = min(b, N_POINTS - 1) if b >= N_POINTS else b
    torch.manual_seed(seed * 1000 + b)
    model = LiuGPT(block_size=max(block, tr_in.shape[1]))
    untrained = LiuGPT(block_size=model.block_size)
    untrained.load_state_dict(model.state_dict())

    # probe sample: their 1000 training sequences with replacement; held-out split by trajectory
    prng = np.random.default_rng([seed, b, 2])
    rows = prng.integers(0, tr_in.shape[0], probe_rows)
    p_in, p_id = tr_in[rows], tr_id[rows]
    uniq = np.unique(p_id)
    fit_traj = set(prng.permutation(uniq)[: int(round(0.8 * len(uniq)))].tolist())
    fit_rows = np.array([i in fit_traj for i in p_id])
    targets = force_targets(p_in[:, -1])
    rollout_trajs = test[prng.integers(0, test.shape[0], 500)]

    batch = batch_base * 100 // b
    X = torch.from_numpy(tr_in).float()
    Y = torch.from_numpy(tr_tg).float()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed * 1000 + b + 7)
    prog = Progress(f"context {b}", steps)
    losses = []
    t0 = time.time()
    model.train()
    for step in range(steps):
        if step == steps // 2:
            for g in opt.param_groups:
                g["lr"] *= 0.1
        idx = torch.randint(0, X.shape[0], (batch,), generator=gen)
        xb, yb = X[idx], Y[idx]
        xb = xb + torch.randn(xb.shape, generator=gen) * noise
        pred = model(xb)[:, -yb.shape[1]:]
        loss = F.mse_loss(pred, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        lv = loss.item()
        if step % 100 == 0 or step == steps - 1:
            losses.append([step, lv])
        prog.update(step + 1, lv)
    train_s = time.time() - t0

    out = {"context": b, "steps": steps, "batch": batch, "train_sequences": int(X.shape[0]),
           "train_seconds": train_s, "steps_per_s": steps / max(train_s, 1e-9), "loss_curve": losses,
           "probe_rows": probe_rows, "probe_trajectories": int(len(uniq)), "probe_fit_rows": int(fit_rows.sum())}
    for label, m in (("trained", model), ("untrained", untrained)):
        out[label] = {"hooks": probe_features(activations(m, p_in), targets, fit_rows),
                      "rollout_error": rollout_error(m, rollout_trajs, b)}
    last = p_in[:, -1]
    raw = {"raw_window": p_in.reshape(len(p_in), -1),
           "raw_last_quadratic": np.stack([last[:, 0], last[:, 1], last[:, 0] ** 2, last[:, 1] ** 2,
                                           last[:, 0] * last[:, 1]], axis=1)}
    out["raw"] = probe_features(raw, targets, fit_rows)
    return out


def table(results):
    head = ("context | target | trained best hook | trained in / held | untrained in / held | raw window in / held"
            " | rollout trained / untrained")
    lines = [head, "-" * len(head)]
    for res in results:
        for t in ("F_magnitude", "Fx"):
            hb, tr = best_hook(res["trained"]["hooks"], t)
            _, un = best_hook(res["untrained"]["hooks"], t)
            rw = res["raw"]["raw_window"][t]
            lines.append(f"{res['context']:>7} | {t:11} | {hb:24} | {tr['in_sample']:.5f} / {tr['held_out']:.5f}"
                         f" | {un['in_sample']:.5f} / {un['held_out']:.5f} | {rw['in_sample']:.5f} / "
                         f"{rw['held_out']:.5f} | {res['trained']['rollout_error']:.4f} / "
                         f"{res['untrained']['rollout_error']:.4f}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--contexts", default="1,2,5,100")
    ap.add_argument("--steps", type=int, default=20000, help="training steps per context (theirs: 20,000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--trajectories", type=int, default=20000, help="half train, half test (theirs: 20,000)")
    ap.add_argument("--probe-rows", type=int, default=1000, help="probe sample (theirs: 1000)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    contexts = [int(c) for c in a.contexts.split(",")]
    os.makedirs(a.out, exist_ok=True)
    trajs, _, _ = kepler_orbits(a.trajectories, np.random.default_rng([a.seed, 0]))
    t0 = time.time()
    results = []
    for b in contexts:  # written after every context, so an interrupted run keeps the contexts it finished
        results.append(run_context(b, trajs, a.steps, a.seed, probe_rows=a.probe_rows))
        doc = {"protocol": "Liu et al. block-size sweep (see header of bench/liu/liu_protocol.py)",
               "args": vars(a), "torch": torch.__version__, "threads": a.threads,
               "wall_seconds": time.time() - t0, "hooks": hook_names(2), "contexts": results}
        with open(os.path.join(a.out, "liu_protocol.json"), "w") as f:
            json.dump(doc, f, indent=1)
        text = table(results)
        with open(os.path.join(a.out, "liu_protocol.txt"), "w") as f:
            f.write(text + "\n")
    print(text)
    return doc


if __name__ == "__main__":
    main()
