"""Float64 whole-model reference for the LibTorch GPT (tests/model/test_gpt_parity.cpp), in the style of llm.c.

For one case (an attention kind and its options) this builds a tiny GPT from gpt_reference.py in float64,
initialises every parameter from a fixed seed, runs one fixed token batch forward, takes the training loss
(next_token_loss: mean cross-entropy over the x and y channels, pad targets ignored) and its backward, and
writes the weights, the batch, both logits, the loss and the gradient of every parameter to

    OUT/CASE.json   {"case", "model": ModelConfig::from_json's keys, "pad", "lssar", "tensors": [...]}
    OUT/CASE.bin    the tensors' raw little-endian bytes (float64, or int64 for "tokens"), back to back

Each tensor entry has name, dtype, shape and offset (bytes into CASE.bin). Names: "tokens" ([B, T + 1, 2]:
inputs are positions 0..T-1, targets 1..T; float64 coordinates with NaN rows for the regression cases),
"logits_x", "logits_y" ([B, T, V]; "coordinates" [B, T, 2] for the regression cases), "loss" ([]), and
"param:NAME" and "grad:NAME" for every parameter, NAME as in Gpt::named_parameters() (the reference's
modules carry the LibTorch names). No third-party format, so the C++ test needs nothing but nlohmann::json.

    python bench/model/gpt_parity.py --out DIR [--case NAME ...]      (default: every case)
    python bench/model/gpt_parity.py --list
"""
import argparse
import json
import math
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gpt_reference  # noqa: E402  (the sibling module, whatever the working directory)

# The shared tiny model: 2 layers, 2 heads of dimension 16, 40 bins (vocab 43, pad 42), 20 positions of a
# 24-position context (so wpe rows 20..23 get exactly zero gradient on both sides), 3 sequences.
N_LAYER, N_HEAD, N_EMBD, BLOCK_SIZE, BINS = 2, 2, 32, 24, 40
VOCAB, PAD = BINS + 3, BINS + 2
BATCH, LENGTH = 3, 20
WINDOW = 5  # shorter than LENGTH, so the window cuts
REST, REST_SEQUENCE = 6, 2  # LSSAR cut-off rows: see initialise and token_batch
SEED = 20250101

# case -> attention options. Every kind of AttentionKind (model/include/orbitlaw/model/config.hpp) at least
# once; LSSAR also at p = 3 (the locality study's setting), LSSA also with RoPE (normalised after RoPE).
CASES = {
    "softmax": dict(kind="softmax"),
    "lssa": dict(kind="lssa"),
    "lssar": dict(kind="lssar", p=15.0),
    "lssar_p3": dict(kind="lssar", p=3.0),
    "ssmax": dict(kind="ssmax"),
    "window": dict(kind="window"),
    "lssa_rope": dict(kind="lssa", rope=True),
    # The regression head (coordinates in and out, MSE loss), with full softmax and with a short window.
    "regression": dict(kind="softmax", regression=True),
    "regression_window": dict(kind="window", regression=True),
}
COORDINATE_SCALE = 2.5
OFFSET_ROWS = 3
ROPE_THETA = 10000.0


def build_model(case):
    options = CASES[case]
    kind = options["kind"]
    p = options.get("p", 15.0)
    rope = options.get("rope", False)
    regression = options.get("regression", False)
    model = gpt_reference.Gpt(N_LAYER, N_HEAD, N_EMBD, BLOCK_SIZE, VOCAB, kind, WINDOW,
                              coordinate_scale=COORDINATE_SCALE if regression else None, p=p,
                              offset_rows=OFFSET_ROWS, rope_theta=ROPE_THETA if rope else None)
    config = {"n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD, "vocab": VOCAB, "block_size": BLOCK_SIZE,
              "attention": kind, "p": p, "offset_rows": OFFSET_ROWS, "window": WINDOW,
              "positional": "rope" if rope else "learned", "rope_theta": ROPE_THETA}
    if regression:
        config.update(head="regression", coordinate_scale=COORDINATE_SCALE)
    return model, config


def initialise(model, generator):
    """Every parameter drawn from the seed, away from the C++ defaults on purpose: PyTorch's default scale for
    weights (so attention is far from uniform and LSSAR keeps its rows), non-zero biases, LayerNorm gains and
    shifts off 1 and 0, SSMax scales off 1 - every gradient path then carries a distinct, non-trivial value."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ssmax_scale"):
                p.copy_(1 + 0.5 * (2 * torch.rand(p.shape, generator=generator) - 1))
            elif ".ln_" in name or name.startswith("ln_"):
                base = 1.0 if name.endswith(".weight") else 0.0
                p.copy_(base + 0.1 * torch.randn(p.shape, generator=generator))
            elif name.startswith(("wte_", "wpe", "start")):
                p.copy_(torch.randn(p.shape, generator=generator))
            else:  # linear weights and biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), nn.Linear's default
                fan_in = p.shape[-1] if p.dim() == 2 else model.get_submodule(name.rsplit(".", 1)[0]).in_features
                bound = 1 / math.sqrt(fan_in)
                p.copy_(bound * (2 * torch.rand(p.shape, generator=generator) - 1))
        if model.wpe is not None:
            # Positions 0..REST-1 get (almost) the same embedding: with token_batch's body at rest, the first
            # layer's keys there differ by ~1e-6 only, so LSSAR rows 3..REST-1 of that sequence are near
            # uniform (max_j u_ij ~ 1e-6 <= tau) and take the cut-off branch - exactly zero output, where a
            # per-key or epsilon-sized tolerance would amplify the 1e-6 differences into weights instead.
            w = model.wpe.weight
            w[1:REST] = w[0] + 1e-6 * torch.randn(w[1:REST].shape, generator=generator)


def token_batch(generator):
    """[B, T + 1, 2] int64: random bins, cadence tokens (BINS, BINS + 1) in row 0 as the tokenizer writes
    them, a padded tail in sequence 2 (pad inputs, and pad targets that the loss must ignore), and a body at
    rest over the first REST positions of sequence REST_SEQUENCE (see initialise)."""
    tokens = torch.randint(0, BINS, (BATCH, LENGTH + 1, 2), generator=generator)
    tokens[0, 0] = BINS
    tokens[1, 0] = BINS + 1
    tokens[2, LENGTH - 3:] = PAD
    tokens[1, 7, 0] = PAD  # one target ignored in the x channel only
    tokens[REST_SEQUENCE, :REST] = tokens[REST_SEQUENCE, 0]  # a body at rest: REST equal positions
    return tokens


def coordinate_batch(generator):
    """[B, T + 1, 2] float64 coordinates in AU for the regression head: random positions within +-2
    coordinate_scale, NaN on the cadence row 0 (which the model reads as its `start` vector) and on a tail of
    sequence 2 (padding: NaN inputs, and NaN targets the loss must skip)."""
    coordinates = 2 * COORDINATE_SCALE * (2 * torch.rand((BATCH, LENGTH + 1, 2), generator=generator) - 1)
    coordinates[:, 0] = math.nan
    coordinates[2, LENGTH - 3:] = math.nan
    return coordinates


def lssar_margins(model, tokens):
    """How far the batch is from LSSAR's two non-smooth points, over every layer, head and row: the row
    cut-off (max_j u_ij against tau) and ReLU's kink (u_ij = 0 for a visible key of a kept row). Two
    implementations agree to float64 rounding only away from both; the script fails when a case comes close."""
    rows = {"kept": 0, "cut": 0, "closest_to_cutoff": math.inf, "closest_to_kink": math.inf}
    original = gpt_reference.lssar_reweight

    def recording(a, p, offset_rows):
        i = torch.arange(a.shape[-2], dtype=a.dtype).unsqueeze(1)
        u = (i + 1) * a - (i >= offset_rows).to(a.dtype)
        visible = torch.arange(a.shape[-1]).unsqueeze(0) <= torch.arange(a.shape[-2]).unsqueeze(1)
        row_max = u.masked_fill(~visible, -math.inf).amax(-1)
        kept = row_max > gpt_reference.LSSAR_UNIFORM_TOLERANCE
        rows["kept"] += int(kept.sum())
        rows["cut"] += int((~kept).sum())
        rows["closest_to_cutoff"] = min(rows["closest_to_cutoff"],
                                        float((row_max - gpt_reference.LSSAR_UNIFORM_TOLERANCE).abs().min()))
        kink = u.abs().masked_fill(~(visible & kept.unsqueeze(-1)), math.inf)
        rows["closest_to_kink"] = min(rows["closest_to_kink"], float(kink.min()))
        return original(a, p, offset_rows)

    gpt_reference.lssar_reweight = recording
    try:
        with torch.no_grad():
            model(tokens[:, :-1])
    finally:
        gpt_reference.lssar_reweight = original
    return rows


def write_case(case, out):
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model, config = build_model(case)
    initialise(model, generator)
    regression = config.get("head") == "regression"
    tokens = coordinate_batch(generator) if regression else token_batch(generator)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    if regression:
        coordinates = model(inputs)
        loss = gpt_reference.next_position_loss(coordinates, targets, COORDINATE_SCALE)
        outputs = [("coordinates", coordinates)]
    else:
        logits_x, logits_y = model(inputs)
        loss = gpt_reference.next_token_loss(logits_x, logits_y, targets, PAD)
        outputs = [("logits_x", logits_x), ("logits_y", logits_y)]
    loss.backward()

    tensors = [("tokens", tokens), *outputs, ("loss", loss)]
    for name, p in model.named_parameters():
        tensors.append(("param:" + name, p))
    for name, p in model.named_parameters():
        if p.grad is None:
            raise RuntimeError(f"{case}: parameter {name} got no gradient")
        tensors.append(("grad:" + name, p.grad))

    index, offset = [], 0
    with open(out / f"{case}.bin", "wb") as f:
        for name, t in tensors:
            t = t.detach().contiguous()
            dtype = "int64" if t.dtype == torch.int64 else "float64"
            assert t.dtype in (torch.int64, torch.float64), (name, t.dtype)
            data = t.numpy().astype("<i8" if dtype == "int64" else "<f8", copy=False).tobytes()
            f.write(data)
            index.append({"name": name, "dtype": dtype, "shape": list(t.shape), "offset": offset})
            offset += len(data)

    lssar = lssar_margins(model, tokens) if config["attention"] == "lssar" else None
    if lssar is not None and (lssar["closest_to_cutoff"] < 1e-6 or lssar["closest_to_kink"] < 1e-9):
        raise RuntimeError(f"{case}: the batch sits at an LSSAR non-smooth point ({lssar}); choose another seed")
    meta = {"case": case, "model": config, "pad": PAD, "seed": SEED, "lssar": lssar, "tensors": index}
    (out / f"{case}.json").write_text(json.dumps(meta, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, help="folder for CASE.json and CASE.bin (created)")
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="repeatable; default: every case")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    if args.out is None:
        ap.error("--out is required")
    if sys.byteorder != "little":  # the C++ reader takes the bytes as native
        raise SystemExit("gpt_parity.py writes little-endian data and expects a little-endian host")
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    for case in args.case or CASES:
        write_case(case, args.out)


if __name__ == "__main__":
    main()
