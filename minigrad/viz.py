"""Draw what backward walks: a tensor's graph as Graphviz DOT text (render it with
`dot -Tpng graph.dot -o graph.png`, or paste it into any Graphviz viewer)."""
from minigrad.backward import _topological_order


def to_dot(root, names=None):
    """DOT text for the graph that produced `root`. Tensors are boxes (shape, and `.grad` if
    set), ops are ellipses; `names` maps tensors to labels ({x: "x"}) for readability."""
    names = {id(t): n for t, n in (names or {}).items()}
    lines = ["digraph minigrad {", "  rankdir=LR;", '  node [fontname="Helvetica"];']

    def label(t):
        head = _escaped(names.get(id(t), ""))
        shape = "scalar" if t.ndim == 0 else "x".join(map(str, t.shape))
        text = f"{head} | {shape}" if head else shape
        if t.numel() == 1:
            text += f" | data {t.item():.4g}"
        if t.grad is not None and t.grad.numel() == 1:
            text += f" | grad {t.grad.item():.4g}"
        return text

    try:
        order = _topological_order([root])
    except RuntimeError:
        raise RuntimeError("to_dot: backward() has freed this graph (as it does unless "
                           "retain_graph=True); draw it before backward, or run backward("
                           "retain_graph=True) to see the gradients on it") from None
    drawn = set()          # a node with several outputs (a module's backward hooks): once
    for t in order:
        lines.append(f'  t{id(t)} [shape=record, label="{{{label(t)}}}"];')
        ctx = t._ctx
        if ctx is not None:
            lines.append(f"  f{id(ctx)} -> t{id(t)};")
            if id(ctx) in drawn:
                continue
            drawn.add(id(ctx))
            lines.append(f'  f{id(ctx)} [label="{type(ctx).__name__}", shape=ellipse];')
            for p in ctx.inputs:
                if p.requires_grad:
                    lines.append(f"  t{id(p)} -> f{id(ctx)};")
    lines.append("}")
    return "\n".join(lines)


def _escaped(text):
    """A name as DOT record-label text: its braces, bars, angle brackets and quotes would
    otherwise be read as the record's structure."""
    return "".join("\\" + c if c in '{}|<>"\\' else c for c in str(text))
