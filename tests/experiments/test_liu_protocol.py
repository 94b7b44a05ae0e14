#!/usr/bin/env python3
"""bench/liu/liu_protocol.py (Liu et al.'s protocol as a reference row): the Kepler data conserve energy
and angular momentum and agree with an independent RK4 integration; the least-squares probe returns R^2 = 1 for an
exact linear function of a hook's activations; in-sample R^2 is at least the held-out fit's on the same rows and
above the held-out R^2 on a hand case; a 2-context run of a few steps writes the table's columns and every hook."""
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "liu"))
import liu_protocol as L  # noqa: E402

failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


# 1. data: conservation along each trajectory, and an independent integrator. Conservation alone does not check the
#    solver: positions and velocities computed from ANY eccentric anomaly lie on the right orbit with the right
#    speed (two Newton iterations still conserve to 1e-14, while the positions are off by 1e-2); the RK4
#    comparison checks the time mapping.
pos, vel, el = L.kepler_orbits(200, np.random.default_rng(3))
r = np.linalg.norm(pos, axis=-1)
energy = 0.5 * np.sum(vel ** 2, axis=-1) - 1.0 / r
ang = pos[..., 0] * vel[..., 1] - pos[..., 1] * vel[..., 0]
check(np.max(np.abs(energy - energy[:, :1])) < 1e-9, f"energy conserved to 1e-9 (max drift {np.max(np.abs(energy - energy[:, :1])):.1e})")
check(np.max(np.abs(ang - ang[:, :1])) < 1e-9, f"angular momentum conserved to 1e-9 (max drift {np.max(np.abs(ang - ang[:, :1])):.1e})")
check(np.max(np.abs(energy[:, 0] + 0.5 / el["a"])) < 1e-12, "energy is -GM/(2a)")
check(np.max(np.abs(ang[:, 0] - np.sqrt(el["a"] * (1 - el["e"] ** 2)))) < 1e-12, "L = sqrt(GM a (1 - e^2)), prograde")
check(np.allclose(r[:, 0], el["a"] * (1 - el["e"]), atol=1e-14, rtol=0), "starts at pericentre")
check(abs(el["t"][1] - 100 * L.DT / 99) < 1e-15 and len(el["t"]) == 100, "their times: linspace(0, 100 dt, 100)")


def rk4(s, h, n):
    def f(s):
        rr = np.linalg.norm(s[:, :2], axis=1, keepdims=True) ** 3
        return np.hstack([s[:, 2:], -s[:, :2] / rr])
    for _ in range(n):
        k1 = f(s); k2 = f(s + h / 2 * k1); k3 = f(s + h / 2 * k2); k4 = f(s + h * k3)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s


s = np.hstack([pos[:8, 0], vel[:8, 0]])
sub = 400
h = el["t"][1] / sub
worst = 0.0
for k in range(1, 100):
    s = rk4(s, h, sub)
    worst = max(worst, np.max(np.abs(s[:, :2] - pos[:8, k])))
check(worst < 1e-7, f"Kepler-equation positions match RK4 (h = dt/400) to 1e-7 (max {worst:.1e})")

# 2. probe: an exact linear function of a hook's activations has in-sample R^2 = 1
torch.manual_seed(0)
m = L.LiuGPT(block_size=2)
trajs = pos[:, :, :]
ins, _, ids = L.chop(trajs, 2, np.random.default_rng(0))
acts = L.activations(m, ins[:300])
check(sorted(acts) == sorted(L.hook_names(2)) and len(acts) == 13, "13 hooks: embeddings, attention, MLP hidden/output, residuals, final LayerNorm")
check(acts["block_0_mlp_hidden"].shape[1] == 128, "the MLP hidden hook is 4x wide")
X = acts["after_ln_f"]
y = X @ np.random.default_rng(1).normal(size=X.shape[1]) + 0.3
fit_rows = np.arange(300) < 240
sc = L.probe_scores(X, y, fit_rows)
check(sc["in_sample"] > 1 - 1e-9, f"exact linear function: in-sample R^2 = 1 ({sc['in_sample']:.12f})")

# 3. in sample vs held out, by construction and on a hand case
rng = np.random.default_rng(2)
Xh = rng.normal(size=(60, 20))
yh = rng.normal(size=60)
fr = np.arange(60) < 48
sh = L.probe_scores(Xh, yh, fr)
check(sh["in_sample"] > 0.2 and sh["held_out"] < sh["in_sample"],
      f"noise target: in-sample R^2 {sh['in_sample']:.3f} above held-out {sh['held_out']:.3f}")
coef80 = L.lstsq_fit(Xh[fr], yh[fr])
check(sh["in_sample"] >= L.r2(yh, L.lstsq_predict(coef80, Xh)) - 1e-12,
      "in-sample R^2 is the maximum over linear predictors on its rows (>= the 80% fit scored there)")
check(abs(L.r2(np.array([1.0, 2, 3]), np.array([1.0, 2, 3])) - 1) < 1e-15 and abs(L.r2(np.array([1.0, 2, 3]), np.full(3, 2.0))) < 1e-15,
      "R^2: 1 for a perfect prediction, 0 for the mean")

# 4. a 2-context run of a few steps: the table's columns and the JSON
with tempfile.TemporaryDirectory() as d:
    doc = L.main(["--contexts", "1,5", "--steps", "4", "--trajectories", "200", "--probe-rows", "200", "--out", d])
    text = open(os.path.join(d, "liu_protocol.txt")).read()
    for col in ("context", "target", "trained best hook", "trained in / held", "untrained in / held",
                "raw window in / held", "rollout trained / untrained"):
        check(col in text, f"table column '{col}'")
    j = json.load(open(os.path.join(d, "liu_protocol.json")))
    check([c["context"] for c in j["contexts"]] == [1, 5], "JSON has contexts 1 and 5")
    for c in j["contexts"]:
        for kind in ("trained", "untrained"):
            ok = all(set(c[kind]["hooks"][h]) == set(L.TARGETS) and
                     set(c[kind]["hooks"][h]["Fx"]) == {"in_sample", "held_out"} for h in L.hook_names(2))
            check(ok and set(c[kind]["hooks"]) == set(L.hook_names(2)), f"context {c['context']} {kind}: every hook, every target, both columns")
            check(np.isfinite(c[kind]["rollout_error"]), f"context {c['context']} {kind}: rollout error")
        check(c["batch"] == 128 * 100 // c["context"], f"context {c['context']}: batch 128 * 100 / b")
        check(c["raw"]["raw_window"]["Fx"]["in_sample"] <= 1.0, "raw window probed")
    doc2 = L.main(["--contexts", "1", "--steps", "3", "--trajectories", "100", "--probe-rows", "100", "--out", d])
    doc3 = L.main(["--contexts", "1", "--steps", "3", "--trajectories", "100", "--probe-rows", "100", "--out", d])
    check(doc2["contexts"][0]["trained"] == doc3["contexts"][0]["trained"], "seeded: two runs give identical probes")

print("FAILED" if failures else "all passed")
sys.exit(1 if failures else 0)
