"""Demo 07 — article 2.2.5.1 前馈神经网络 (feed-forward network), 2.2.5.3 残差连接
(residual connection), 2.2.5.4 层归一化 (layer normalisation), and how they make up one
layer of 2.2.4.1 编码器结构 (the encoder) and 2.2.4.2 解码器结构 (the decoder).

(1) The FFN expands each position to d_ff, applies ReLU, projects back; it works on every
position alone, and the ReLU makes it non-linear. (2) Layer norm, by the article's formula
and by the module: each position's vector gets mean 0 and variance 1, whatever the batch.
(3) Residual connections, measured: the gradient that reaches the input of a deep stack,
with and without x + F(x). (4) An encoder layer rebuilt from its parts, post-norm (the
paper) and pre-norm. (5) A decoder layer: masked self-attention keeps the past blind to
the future, cross-attention reads the encoder's output. Saves a picture of (2) and (3).

    python demos/07_encoder_decoder_layers.py [--out out] [--no-plot]
"""
import argparse
import math
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
               os.path.dirname(os.path.abspath(__file__))]
from plotting import save_figure  # noqa: E402
import minigrad as mg  # noqa: E402
from minitransformer.argtypes import non_negative_int  # noqa: E402
from minigrad import nn  # noqa: E402
from minitransformer import (Decoder, DecoderLayer, Encoder, EncoderLayer,  # noqa: E402
                             FeedForward, causal_mask)

D_MODEL, N_HEADS, D_FF, T = 8, 2, 32, 5


def largest(t):
    return t.abs().max().item()


def feed_forward(x):
    ffn = FeedForward(D_MODEL, D_FF, dropout=0.0)
    print(f"\n(1) 2.2.5.1 FFN(x) = linear2(ReLU(linear1(x))): {D_MODEL} -> {D_FF} -> "
          f"{D_MODEL} per position (the paper: 512 -> 2048 -> 512)")
    hidden = ffn.linear1(x)
    zeroed = (hidden.relu() == 0).float().mean().item()
    print(f"    x {x.shape} -> linear1 {hidden.shape} -> ReLU sets {zeroed:.0%} of them to 0 "
          f"-> linear2 {ffn(x).shape}")
    moved = mg.cat([x[:, :2], x[:, 2:3] * 3.0, x[:, 3:]], 1)      # change position 2 only
    change = (ffn(moved) - ffn(x)).abs().max(-1).values[0]
    print("    change position 2 of the input; how far each output position moves: "
          + "  ".join(f"{v:.3f}" for v in change.tolist()))
    assert [v == 0 for v in change.tolist()] == [True, True, False, True, True]
    gap = largest(ffn(-x) + ffn(x) - 2 * ffn(mg.zeros_like(x)))
    print(f"    not linear: FFN(-x) + FFN(x) - 2·FFN(0) is up to {gap:.3f} (0 for an affine map "
          f"f, where f(-x) + f(x) = 2·f(0): the ReLU makes the difference)")


def layer_norm(x):
    print("\n(2) 2.2.5.4 layer norm: y = (x - μ) / √(σ² + ε) · γ + β, μ and σ² over each "
          "position's own vector")
    row = x[0, 0].tolist()
    mu = sum(row) / len(row)
    var = sum((v - mu) ** 2 for v in row) / len(row)             # biased, as the paper's
    by_hand = [(v - mu) / math.sqrt(var + 1e-5) for v in row]
    ln = nn.LayerNorm(D_MODEL)                                   # γ = 1, β = 0 to start
    y = ln(x)
    print(f"    position 0: μ = {mu:.4f}, σ² = {var:.4f}; by hand and by nn.LayerNorm differ "
          f"by {max(abs(a - b) for a, b in zip(by_hand, y[0, 0].tolist())):.1e}")
    print(f"    every position after it: mean {largest(y.mean(-1)):.1e} (largest |mean|), "
          f"variance {y.var(-1, unbiased=False).min().item():.4f} to "
          f"{y.var(-1, unbiased=False).max().item():.4f}")
    alone = ln(x[1:2])
    print(f"    sentence 2 normalised alone or in the batch differs by "
          f"{largest(alone - y[1:2]):.1e}: unlike batch norm, no statistics cross examples")
    return x, y


def residual_gradients(depth=30, width=16, seed=0):
    """‖∂L/∂x‖ at the input of `depth` tanh layers, with and without the shortcut."""
    print(f"\n(3) 2.2.5.3 residual connections: a stack of {depth} small tanh layers, "
          f"the gradient norm that reaches each layer's input")
    mg.manual_seed(seed)
    layers = [nn.Linear(width, width) for _ in range(depth)]
    for layer in layers:
        nn.init.normal_(layer.weight, std=0.5 / math.sqrt(width))   # a "stable" small init
    norms, x = {}, mg.randn(4, width, requires_grad=True)
    for residual in (False, True):
        h, inputs = x, []
        for layer in layers:
            inputs.append(h)
            f = layer(h).tanh()
            h = h + f if residual else f
        grads = mg.grad(h.sum(), inputs)                  # ∂L/∂(each layer's input)
        norms[residual] = [(g * g).sum().sqrt().item() for g in grads]
    for residual, label in ((False, "F(x)    "), (True, "x + F(x)")):
        n = norms[residual]
        print(f"    {label}: at layer {depth}: {n[-1]:.2e}, at layer 1: {n[0]:.2e} "
              f"(x{n[0] / n[-1]:.1e} on the way down)")
    assert norms[True][0] > 1e3 * norms[False][0]
    print("    without the shortcut the gradient vanishes layer by layer; with it, each layer "
          "adds\n    to an identity path (∂(x + F(x))/∂x = 1 + ∂F/∂x), so it reaches layer 1 "
          "(here growing\n    a little on the way down, as the factors 1 + ∂F/∂x multiply)")
    return norms


def encoder_layer(x):
    print(f"\n(4) 2.2.4.1 one encoder layer (d_model {D_MODEL}, {N_HEADS} heads, d_ff {D_FF}):"
          f" self-attention, then FFN, each inside Add & Norm")
    for norm_first in (False, True):
        layer = EncoderLayer(D_MODEL, N_HEADS, D_FF, dropout=0.0, norm_first=norm_first).eval()
        attn = lambda h: layer.self_attn(h)                            # noqa: E731
        if norm_first:   # pre-norm: x + F(LN(x)); the stack ends with one more LayerNorm
            h = x + attn(layer.norm1.normalize(x))
            by_hand = h + layer.ffn(layer.norm2.normalize(h))
            formula = "h = x + SelfAttn(LN₁(x));  out = h + FFN(LN₂(h))     (pre-norm, GPT)"
        else:            # post-norm: LN(x + F(x)), the paper's
            h = layer.norm1.normalize(x + attn(x))
            by_hand = layer.norm2.normalize(h + layer.ffn(h))
            formula = "h = LN₁(x + SelfAttn(x));  out = LN₂(h + FFN(h))     (post-norm, paper)"
        err = largest(layer(x) - by_hand)
        print(f"    {formula}: by hand vs EncoderLayer {err:.1e}")
        assert err < 1e-5
    stack = Encoder(512, 8, 2048, num_layers=6)
    print(f"    the paper's encoder, 6 such layers at d_model 512, 8 heads, d_ff 2048: "
          f"{sum(p.numel() for p in stack.parameters()):,} parameters")


def decoder_layer(x):
    print("\n(5) 2.2.4.2 one decoder layer: masked self-attention, cross-attention to the "
          "encoder's output\n    (the memory), then FFN, each inside Add & Norm")
    layer = DecoderLayer(D_MODEL, N_HEADS, D_FF, dropout=0.0).eval()
    memory = mg.randn(2, 7, D_MODEL)                 # an encoder's output: 7 source positions
    tgt = x
    mask = causal_mask(T)
    out = layer(tgt, memory, tgt_mask=mask)
    later = mg.cat([tgt[:, :3], tgt[:, 3:] + 5.0], 1)            # change target positions 3..4
    moved = (layer(later, memory, tgt_mask=mask) - out).abs().max(-1).values[0].tolist()
    print("    change target positions 3-4; how far each output position moves: "
          + "  ".join(f"{v:.3f}" for v in moved) + "  (the past never sees the future)")
    assert moved[:3] == [0.0, 0.0, 0.0] and min(moved[3:]) > 0
    other = layer(tgt, memory * -1.0, tgt_mask=mask)
    print(f"    change the memory: every position moves (by up to {largest(other - out):.3f}): "
          f"cross-attention reads the source")
    stack = Decoder(512, 8, 2048, num_layers=6)
    print(f"    the paper's decoder, 6 layers: {sum(p.numel() for p in stack.parameters()):,} "
          f"parameters (a third sublayer per layer)")


def plot(x, y, norms, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.plot(x.reshape(-1, D_MODEL).tolist()[0], "o-", label="a position's input x")
    a.plot(y.reshape(-1, D_MODEL).tolist()[0], "s-", label="LayerNorm(x)")
    a.axhline(0, color="gray", lw=0.5)
    a.set_title("2.2.5.4 layer norm: mean 0, variance 1 per position")
    a.set_xlabel("feature")
    a.legend()
    for residual, label in ((False, "F(x)"), (True, "x + F(x)")):
        b.semilogy(range(1, len(norms[residual]) + 1), norms[residual], label=label)
    b.set_title("2.2.5.3 gradient norm reaching each layer's input")
    b.set_xlabel("layer")
    b.legend()
    return save_figure(fig, path, "the layer-norm and residual-gradient plots")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out", help="folder for the PNG")
    p.add_argument("--no-plot", action="store_true", help="do not save the PNG")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seeds the weights and inputs")
    args = p.parse_args(argv)
    print("Demo 07 — article 2.2.5.1 前馈神经网络 (FFN), 2.2.5.3 残差连接 (residual), "
          "2.2.5.4 层归一化 (layer norm),\n          2.2.4.1 编码器结构 and 2.2.4.2 解码器结构 "
          "(encoder and decoder layers)")
    mg.manual_seed(args.seed)
    x = mg.randn(2, T, D_MODEL) * 3 + 1            # 2 sentences of T positions, off-centre
    with mg.no_grad():
        feed_forward(x)
        x, y = layer_norm(x)
    norms = residual_gradients(seed=args.seed)
    with mg.no_grad():
        encoder_layer(x)
        decoder_layer(x)
    if not args.no_plot:
        plot(x, y, norms, os.path.join(args.out, "07_layer_norm_and_residual.png"))
    return norms


if __name__ == "__main__":
    main()
