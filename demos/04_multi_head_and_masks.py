"""Demo 04 — article 2.2.3.3 多头注意力机制 (multi-head attention) and 2.2.3.4 掩码注意力机制
(masked attention).

Multi-head attention: project Q, K, V, split the d_model dims into n_heads heads, attend in
each head separately, concatenate, project. This demo prints the shapes at every step,
checks the module against doing exactly that by hand, one head at a time, and shows that
the heads attend differently. Then the two masks (boolean, True = may attend):

  * causal mask — position t may look at positions <= t only (the decoder, GPT);
  * padding mask — nobody looks at <pad> tokens that only fill a batch to one length.

A masked key gets exactly zero weight. Saves a picture of the per-head maps and the masks.

    python demos/04_multi_head_and_masks.py [--out out] [--no-plot]
"""
import argparse
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
               os.path.dirname(os.path.abspath(__file__))]
from plotting import save_figure  # noqa: E402
import minigrad as mg  # noqa: E402
import minigrad.functional as F  # noqa: E402
from minitransformer.argtypes import non_negative_int  # noqa: E402
from minitransformer import (MultiHeadAttention, SinusoidalPositionalEncoding,  # noqa: E402
                             causal_mask, combine_masks, padding_mask)

WORDS = ["XiaoBei", "drinks", "milk-tea", ",", "XiaoNan", "sings"]    # 小北 喝 奶茶 ， 小南 唱歌
D_MODEL, N_HEADS = 16, 4


def grid(name, rows, fmt="{:6.3f}"):
    print(f"\n{name}")
    for r in rows:
        print("   " + " ".join(fmt.format(v) for v in r))


def multi_head(mha, x):
    B, T, D = x.shape
    H, dh = mha.n_heads, mha.d_head
    print(f"\n(1) multi-head attention, d_model={D}, n_heads={H}, d_head = {D}/{H} = {dh}")
    q = mha.project(x, 0)                  # x W_Qᵀ + b_Q, W_Q the first block of in_proj
    print(f"    x {x.shape} -> Q = x W_Qᵀ {q.shape} -> split into heads "
          f"{q.reshape(B, T, H, dh).transpose(1, 2).shape} (batch, head, position, d_head)")
    out, w = mha(x, need_weights=True)
    print(f"    per-head weights softmax(Q_h K_hᵀ/√{dh}) {w.shape} -> per-head outputs "
          f"{(B, H, T, dh)} -> concat {(B, T, D)} -> out_proj {out.shape}")
    # the same thing by hand: head h uses rows h*dh:(h+1)*dh of each projection
    heads = []
    for h in range(H):
        rows = slice(h * dh, (h + 1) * dh)
        W, b = mha.in_proj_weight, mha.in_proj_bias          # W_Q, W_K, W_V stacked
        qh, kh, vh = (x @ W[i * D:(i + 1) * D][rows].T + b[i * D:(i + 1) * D][rows]
                      for i in range(3))
        heads.append(F.scaled_dot_product_attention(qh, kh, vh))
    by_hand = mha.out_proj(mg.cat(heads, -1))
    err = (by_hand - out).abs().max().item()
    print(f"    by hand, head by head (slice the projections, attend, concat, project): "
          f"largest difference {err:.1e}")
    assert err < 1e-5
    print("    the weights are random (untrained), so these patterns mean nothing yet; what "
          "shows is\n    that each head has its own: training shapes them (2.2.3.3)")
    for h in range(H):
        focus = [WORDS[r.index(max(r))] for r in w[0, h].tolist()]
        print(f"    head {h}: each word attends most to {focus}")
    return w


def masks(mha, x):
    T = x.shape[1]
    cm = causal_mask(T)
    grid("(2) causal_mask(6): row = query position, column = key; 1 = may attend",
         cm.to(dtype=mg.float32).tolist(), "{:2.0f}")
    _, wc = mha(x, attn_mask=cm, need_weights=True)
    grid("    head 0 weights with the causal mask (the upper triangle is exactly 0)",
         wc[0, 0].tolist())
    assert all(v == 0.0 for i, r in enumerate(wc[0, 0].tolist()) for v in r[i + 1:])
    later = mg.cat([x[:, :3], x[:, 3:] * -2.0], 1)              # change positions 3..5
    a, b = mha(x, attn_mask=cm), mha(later, attn_mask=cm)
    print(f"    change positions 3-5: outputs 0-2 move by "
          f"{(a[:, :3] - b[:, :3]).abs().max().item():.1e}, outputs 3-5 by "
          f"{(a[:, 3:] - b[:, 3:]).abs().max().item():.2f} — the past never sees the future")

    tokens = [[5, 6, 7, 8, 9, 10], [5, 6, 7, 0, 0, 0]]     # the second sentence: 3 words + 3 pads
    pm = padding_mask(tokens, pad_id=0)
    print(f"\n(3) padding_mask for a batch of [6 words], [3 words + 3 <pad>] (pad id 0): "
          f"shape {pm.shape} (batch, 1, 1, keys)")
    grid("    one row per sentence, one column per key; 1 = a real token",
         pm.reshape(2, T).to(dtype=mg.float32).tolist(), "{:2.0f}")
    pads = mg.zeros(1, T - 3, x.shape[-1])          # the <pad> positions' vectors (zeros here)
    batch = mg.cat([x, mg.cat([x[:, :3], pads], 1)], 0)
    _, wp = mha(batch, attn_mask=pm, need_weights=True)
    grid("    sentence 2, head 0: the 3 <pad> columns are exactly 0 (rows still sum to 1);\n"
         "    the <pad> rows are queries whose outputs the model ignores (no loss on them)",
         wp[1, 0].tolist())
    assert all(v == 0.0 for r in wp[1, 0].tolist() for v in r[3:])
    both = combine_masks(cm, pm)
    print(f"\n    a decoder combines both: causal_mask & padding_mask -> {both.shape}")
    grid("    sentence 2, combined", both[1, 0].to(dtype=mg.float32).tolist(), "{:2.0f}")
    return cm, wc, pm, wp


def plot(w, cm, wc, pm, wp, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None
    fig, axes = plt.subplots(2, 4, figsize=(15, 7.5))
    for h in range(4):
        ax = axes[0, h]
        ax.imshow(w[0, h].tolist(), cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"head {h} (2.2.3.3)")
    panels = [("causal mask (True = may attend)", cm.to(dtype=mg.float32).tolist(), "gray"),
              ("head 0 with the causal mask", wc[0, 0].tolist(), "viridis"),
              ("padding mask, sentence 2", combine_masks(mg.ones(6, 6, dtype=mg.bool), pm)[1, 0]
               .to(dtype=mg.float32).tolist(), "gray"),
              ("head 0 with the padding mask", wp[1, 0].tolist(), "viridis")]
    for ax, (title, data, cmap) in zip(axes[1], panels):
        ax.imshow(data, cmap=cmap, vmin=0, vmax=1)
        ax.set_title(title + " (2.2.3.4)", fontsize=9)
    padded = WORDS[:3] + ["<pad>"] * 3
    for i, ax in enumerate(axes.flat):
        labels = padded if i >= 6 else WORDS
        ax.set_xticks(range(6), labels, rotation=60, fontsize=7)
        ax.set_yticks(range(6), labels, fontsize=7)
    fig.suptitle("multi-head attention weights (row: query, column: key) and masks")
    return save_figure(fig, path, "the per-head maps and masks")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out", help="folder for the PNG")
    p.add_argument("--no-plot", action="store_true", help="do not save the PNG")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seeds the weights and inputs")
    args = p.parse_args(argv)
    print("Demo 04 — article 2.2.3.3 多头注意力机制 (multi-head attention) and "
          "2.2.3.4 掩码注意力机制 (masked attention)")
    mg.manual_seed(args.seed)
    mha = MultiHeadAttention(D_MODEL, N_HEADS).eval()
    x = SinusoidalPositionalEncoding(D_MODEL, max_len=16)(mg.randn(1, len(WORDS), D_MODEL))
    with mg.no_grad():
        w = multi_head(mha, x)
        cm, wc, pm, wp = masks(mha, x)
    if not args.no_plot:
        plot(w, cm, wc, pm, wp, os.path.join(args.out, "04_multi_head_and_masks.png"))
    return w


if __name__ == "__main__":
    main()
