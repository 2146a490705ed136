"""Demo 02 — article 2.2.3.2 自注意力机制 (self-attention), by hand: "小北 喝 奶茶".

The article feeds the sentence 小北 / 喝 / 奶茶 (XiaoBei / drinks / milk tea) to a
Transformer: 3 tokens, each a 4-dimensional embedding. Its numbers did not survive
publication, so this demo uses the classic small-integer example the figures follow
(inputs [1,0,1,0], [0,2,0,2], [1,1,1,1]; 4x3 weight matrices), and prints every step of

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

computed with minigrad, each step checked against the formula written out in plain Python.

    python demos/02_self_attention_by_hand.py                 # from the repo root
    python demos/02_self_attention_by_hand.py --out out --no-plot
"""
import argparse
import math
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
               os.path.dirname(os.path.abspath(__file__))]
from plotting import save_figure  # noqa: E402
import minigrad as mg  # noqa: E402
import minigrad.functional as F  # noqa: E402

TOKENS = ["小北", "喝", "奶茶"]
TOKENS_EN = ["XiaoBei", "drinks", "milk tea"]
X = [[1.0, 0.0, 1.0, 0.0],       # 小北
     [0.0, 2.0, 0.0, 2.0],       # 喝
     [1.0, 1.0, 1.0, 1.0]]       # 奶茶
W_Q = [[1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
W_K = [[0.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
W_V = [[0.0, 2.0, 0.0], [0.0, 3.0, 0.0], [1.0, 0.0, 3.0], [1.0, 1.0, 0.0]]


def show(name, t, note=""):
    rows = t.tolist() if hasattr(t, "tolist") else t
    print(f"\n{name}{'  ' + note if note else ''}")
    for r in rows:
        print("   [" + "  ".join(f"{v:8.4f}" for v in r) + " ]")


# ---- the same formula in plain Python lists: the independent check ---------------------------
def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def transpose(a):
    return [list(r) for r in zip(*a)]


def softmax_rows(a):
    out = []
    for r in a:
        m = max(r)
        e = [math.exp(v - m) for v in r]
        out.append([v / sum(e) for v in e])
    return out


def check(name, got, want, tol=1e-5):
    err = max(abs(g - w) for gr, wr in zip(got.tolist(), want) for g, w in zip(gr, wr))
    assert err < tol, f"{name}: minigrad and the plain formula differ by {err}"
    return err


def self_attention_by_hand():
    """Every intermediate of one self-attention, computed with minigrad and checked."""
    x, wq, wk, wv = (mg.tensor(m) for m in (X, W_Q, W_K, W_V))
    show("X  (3 tokens x 4 dims: 小北 / 喝 / 奶茶)", x)
    show("W_Q (4 x 3)", wq)
    show("W_K (4 x 3)", wk)
    show("W_V (4 x 3)", wv)

    q, k, v = x @ wq, x @ wk, x @ wv                       # the three projections
    show("Q = X W_Q", q)
    show("K = X W_K", k)
    show("V = X W_V", v)
    scores = q @ k.T                                        # how well query i matches key j
    show("Q Kᵀ  (row i: how much token i matches each token j)", scores)
    d_k = k.shape[-1]
    scaled = scores / math.sqrt(d_k)
    show(f"Q Kᵀ / √d_k   (d_k = {d_k}, √d_k = {math.sqrt(d_k):.4f}: keeps the softmax "
         f"out of its flat, tiny-gradient regions)", scaled)
    weights = scaled.softmax(-1)
    show("softmax(Q Kᵀ / √d_k)  (the attention weights)", weights)
    print("   row sums:", "  ".join(f"{s:.6f}" for s in weights.sum(-1).tolist()))
    out = weights @ v
    show("output = softmax(Q Kᵀ / √d_k) V  (each row: a weighted mix of the value rows)", out)

    # the same numbers from plain Python lists, and from minigrad's fused attention op
    Q, K, V = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)
    S = [[s / math.sqrt(d_k) for s in r] for r in matmul(Q, transpose(K))]
    P = softmax_rows(S)
    errs = [check("Q", q, Q), check("K", k, K), check("V", v, V),
            check("scaled scores", scaled, S), check("weights", weights, P),
            check("output", out, matmul(P, V))]
    fused = F.scaled_dot_product_attention(q, k, v)
    errs.append(check("fused op", fused, matmul(P, V)))
    print(f"\nchecked against the plain formula and the fused op: largest difference "
          f"{max(errs):.2e}")
    print("(W_Q, W_K, W_V here are the worked example's small made-up matrices, not trained "
          "ones,\n and the article rounds its softmax to simple values: read these weights "
          "as arithmetic, not meaning)")
    for tok, en, r in zip(TOKENS, TOKENS_EN, weights.tolist()):
        top = [j for j in range(3) if math.isclose(r[j], max(r), rel_tol=1e-9)]  # ties too
        names = " and ".join(f"{TOKENS[j]} ({TOKENS_EN[j]})" for j in top)
        print(f"   {tok} ({en}) attends most to {names}: {max(r):.1%}"
              + (" each" if len(top) > 1 else ""))
    return weights, out


def plot_weights(weights, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None
    w = weights.tolist()
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
    for i in range(3):
        for j in range(3):
            ax.text(j, i, f"{w[i][j]:.2f}", ha="center", va="center",
                    color="white" if w[i][j] < 0.6 else "black")
    ax.set_xticks(range(3), TOKENS_EN)
    ax.set_yticks(range(3), TOKENS_EN)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query")
    ax.set_title("softmax(QKᵀ/√d_k), 2.2.3.2")
    fig.colorbar(im, ax=ax)
    return save_figure(fig, path, "the attention weights")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out", help="folder for the PNG")
    p.add_argument("--no-plot", action="store_true", help="do not save the PNG")
    args = p.parse_args(argv)
    print("Demo 02 — article 2.2.3.2 自注意力机制 (self-attention): "
          "Attention(Q,K,V) = softmax(QKᵀ/√d_k)V on 小北 喝 奶茶")
    weights, out = self_attention_by_hand()
    if not args.no_plot:
        plot_weights(weights, os.path.join(args.out, "02_self_attention_weights.png"))
    return weights, out


if __name__ == "__main__":
    main()
