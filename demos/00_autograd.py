"""Demo 00 — how autograd works: the engine every later demo (and every article section)
stands on.

We compute a small expression of two numbers,

    f(a, b) = tanh(a·b + b²) + a²/b

then draw the graph that minigrad recorded while computing it (Graphviz DOT, also written to
OUT/graph.dot), walk it node by node as PyTorch shows it (grad_fn.next_functions), run
backward(), and check each gradient against the derivative worked out by hand with the chain
rule, the intermediate ones too (`retain_grad()` keeps them). Finally a second derivative
through `mg.grad(..., create_graph=True)`.

    python demos/00_autograd.py                  # from the repo root; runs in about a second
    dot -Tpng out/graph.dot -o out/graph.png     # render the graph (needs Graphviz)
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minigrad as mg  # noqa: E402


def main(a0=0.5, b0=-1.2, out="out"):
    print("Demo 00 — minigrad: reverse-mode automatic differentiation\n")

    # 1. forward: every op records a node (its inputs and what backward will need)
    a = mg.tensor(a0, dtype=mg.float64, requires_grad=True)
    b = mg.tensor(b0, dtype=mg.float64, requires_grad=True)
    u = a * b                 # u = a·b
    v = b ** 2                # v = b²
    s = u + v                 # s = a·b + b²
    t = s.tanh()              # t = tanh(s)
    a2 = a ** 2               # a²
    w = a2 / b                # w = a²/b
    f = t + w
    print(f"a = {a0}, b = {b0}:  f(a, b) = tanh(a·b + b²) + a²/b = {f.item():.6f}\n")
    for node in (u, v, s, t, a2, w):
        node.retain_grad()    # keep these intermediate gradients in .grad (leaves keep theirs)

    # 2. the recorded graph, drawn before backward() frees what it saved
    names = {a: "a", b: "b", u: "u = a·b", v: "v = b²", s: "s = u + v", t: "t = tanh(s)",
             a2: "a²", w: "w = a²/b", f: "f = t + w"}
    dot = mg.viz.to_dot(f, names=names)
    print(dot)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "graph.dot")
    with open(path, "w") as fh:
        fh.write(dot + "\n")
    print(f"\n(wrote {path}; render it with: dot -Tpng {path} -o {path[:-4]}.png)\n")

    # the same graph walked by hand, as PyTorch users do: a tensor's grad_fn is the node of
    # the op that made it, and its next_functions lead to the nodes of that op's inputs,
    # down to an AccumulateGrad for each leaf (which adds into the leaf's .grad)
    def walk(node, depth=1):
        leaf = getattr(node, "variable", None)
        print("  " * depth + (f"AccumulateGrad -> {names[leaf]}.grad" if leaf is not None
                              else node.name()))
        for child, _ in node.next_functions:
            if child is not None:            # (None: an input that wants no gradient)
                walk(child, depth + 1)
    print("f.grad_fn and its next_functions:")
    walk(f.grad_fn)
    print()

    # 3. backward: walk the graph from f to the leaves, multiplying local derivatives
    f.backward()

    # each node's gradient is the one of the node after it times the local derivative
    th = math.tanh(a0 * b0 + b0 ** 2)
    steps = [("df/dt", t, 1.0), ("df/dw", w, 1.0),            # f = t + w
             ("df/ds", s, 1 - th ** 2),                        # · d tanh(s)/ds = 1 - tanh²(s)
             ("df/du", u, 1 - th ** 2), ("df/dv", v, 1 - th ** 2),   # s = u + v
             ("df/da²", a2, 1 / b0)]                           # w = a²/b: · 1/b
    print(f"{'':7} {'autograd':>14} {'by hand':>14}")
    for name, node, hand in steps:
        print(f"{name:7} {node.grad.item():14.10f} {hand:14.10f}")
        assert math.isclose(node.grad.item(), hand, rel_tol=1e-12), name

    # 4. the leaves' derivatives by hand (chain rule), summed over every path to them
    by_hand = {
        "df/da": (1 - th ** 2) * b0 + 2 * a0 / b0,                 # ∂s/∂a = b, ∂w/∂a = 2a/b
        "df/db": (1 - th ** 2) * (a0 + 2 * b0) - a0 ** 2 / b0 ** 2,  # ∂s/∂b = a + 2b
    }
    autograd = {"df/da": a.grad.item(), "df/db": b.grad.item()}
    for k in by_hand:
        print(f"{k:7} {autograd[k]:14.10f} {by_hand[k]:14.10f}")
        assert math.isclose(autograd[k], by_hand[k], rel_tol=1e-12), k

    # 5. a second derivative: differentiate the gradient itself (create_graph=True)
    a = mg.tensor(a0, dtype=mg.float64, requires_grad=True)
    f = (a * b0 + b0 ** 2).tanh() + a ** 2 / b0
    dfda, = mg.grad(f, a, create_graph=True)
    d2fda2, = mg.grad(dfda, a)
    # d/da [(1 - t²)·b + 2a/b] = -2t·(1 - t²)·b² + 2/b
    hand2 = -2 * th * (1 - th ** 2) * b0 ** 2 + 2 / b0
    print(f"d²f/da² {d2fda2.item():14.10f} {hand2:14.10f}")
    assert math.isclose(d2fda2.item(), hand2, rel_tol=1e-12)
    print("\nautograd agrees with the chain rule worked by hand.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Demo 00: reverse-mode autograd by hand")
    parser.add_argument("--out", default="out", help="folder for graph.dot (default: out)")
    main(out=parser.parse_args().out)
