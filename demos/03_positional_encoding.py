"""Demo 03 — article 2.2.5.2 位置编码 (positional encoding).

Self-attention ignores order: shuffle the tokens and each output row is just shuffled too.
The paper therefore ADDS a fixed position signal to every embedding:

    PE(pos, 2i)   = sin(pos / 10000^(2i/d))
    PE(pos, 2i+1) = cos(pos / 10000^(2i/d))

This demo (1) shows that self-attention without positions is order-blind, (2) builds the
d=4 matrix P the article describes (its printed numbers were lost) for the 3 tokens of
小北 喝 奶茶 and adds it to X, (3) checks a property behind "relative positions":
PE(pos + k) is a fixed rotation of PE(pos), and (4) draws the d=128 x 100-position heatmap.

    python demos/03_positional_encoding.py [--out out] [--no-plot]
"""
import argparse
import math
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
               os.path.dirname(os.path.abspath(__file__))]
from plotting import save_figure  # noqa: E402
import minigrad as mg  # noqa: E402
from minitransformer import MultiHeadAttention, SinusoidalPositionalEncoding  # noqa: E402
from minitransformer import sinusoidal_table  # noqa: E402

X = [[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]]   # 小北 喝 奶茶 (demo 02)


def show(name, rows):
    print(f"\n{name}")
    for r in rows:
        print("   [" + "  ".join(f"{v:8.4f}" for v in r) + " ]")


def order_blindness():
    mg.manual_seed(0)
    mha = MultiHeadAttention(4, 2).eval()
    x = mg.tensor([X])
    swapped = mg.tensor([[X[2], X[1], X[0]]])            # 奶茶 喝 小北
    a, b = mha(x).tolist()[0], mha(swapped).tolist()[0]
    same = max(abs(u - v) for r, s in zip(a, b[::-1]) for u, v in zip(r, s))
    print(f"\n(1) self-attention alone: reversing the sentence just reverses the outputs "
          f"(largest difference {same:.1e}) — it cannot tell 小北喝奶茶 from 奶茶喝小北.")
    pe = SinusoidalPositionalEncoding(4, max_len=8).eval()
    a, b = mha(pe(x)).tolist()[0], mha(pe(swapped)).tolist()[0]
    diff = max(abs(u - v) for r, s in zip(a, b[::-1]) for u, v in zip(r, s))
    print(f"    with positions added first, the outputs differ by up to {diff:.3f}: order "
          f"now matters.")


def article_matrix():
    P = sinusoidal_table(3, 4, dtype=mg.float64)
    print("\n(2) d = 4, so i = 0, 1 and the denominators are 10000^(0/4) = 1 and "
          "10000^(2/4) = 100:")
    print("    P[pos] = [ sin(pos/1), cos(pos/1), sin(pos/100), cos(pos/100) ]")
    show("P (positions 0, 1, 2 = 小北, 喝, 奶茶)", P.tolist())
    for pos, row in enumerate(P.tolist()):
        want = [math.sin(pos), math.cos(pos), math.sin(pos / 100), math.cos(pos / 100)]
        assert max(abs(a - b) for a, b in zip(row, want)) < 1e-12
    show("X + P (what the first encoder layer receives)",
         (mg.tensor(X, dtype=mg.float64) + P).tolist())
    return P


def rotation_property(d=16, k=5):
    """For each frequency w_i, [sin, cos](w (pos+k)) = R(w k) [sin, cos](w pos): a linear
    map that depends on the offset k only, which attention can learn to use."""
    table = sinusoidal_table(64, d, dtype=mg.float64).tolist()
    worst = 0.0
    for pos in range(40):
        for i in range(d // 2):
            w = 1 / 10000 ** (2 * i / d)
            s, c = table[pos][2 * i], table[pos][2 * i + 1]
            rs = s * math.cos(w * k) + c * math.sin(w * k)
            rc = c * math.cos(w * k) - s * math.sin(w * k)
            worst = max(worst, abs(rs - table[pos + k][2 * i]), abs(rc - table[pos + k][2 * i + 1]))
    print(f"\n(3) PE(pos + {k}) = R({k}) · PE(pos) for every pos (a rotation per frequency pair, "
          f"independent of pos): largest error {worst:.1e}")
    return worst


def plot_heatmap(path, positions=100, d=128):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None
    table = sinusoidal_table(positions, d).tolist()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    im = ax.imshow(table, cmap="RdBu", aspect="auto", vmin=-1, vmax=1)
    ax.set_xlabel("embedding dimension (even: sin, odd: cos)")
    ax.set_ylabel("position")
    ax.set_title(f"sinusoidal positional encoding, d={d}, {positions} positions (2.2.5.2)")
    fig.colorbar(im, ax=ax)
    for col in (0, 1, 10, 40, 100):
        ax2.plot([r[col] for r in table], label=f"dim {col}")
    ax2.set_xlabel("position")
    ax2.set_title("columns: longer waves at higher dims")
    ax2.legend(fontsize=8)
    return save_figure(fig, path, f"the d={d} heatmap")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="out", help="folder for the PNG")
    p.add_argument("--no-plot", action="store_true", help="do not save the PNG")
    args = p.parse_args(argv)
    print("Demo 03 — article 2.2.5.2 位置编码 (positional encoding): "
          "PE(pos,2i) = sin(pos/10000^(2i/d)), PE(pos,2i+1) = cos(pos/10000^(2i/d))")
    order_blindness()
    P = article_matrix()
    rotation_property()
    if not args.no_plot:
        plot_heatmap(os.path.join(args.out, "03_positional_encoding.png"))
    return P


if __name__ == "__main__":
    main()
