"""Parameter names and order of nn layers' forward/__init__ and of nn.functional against
PyTorch's, so code ported from PyTorch that calls by keyword (layer(input=x),
F.cross_entropy(input=..., target=..., label_smoothing=0.1)) keeps working."""
import inspect

import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

# PyTorch parameters minigrad leaves out everywhere, on purpose:
#  size_average, reduce: the losses' deprecated forms of `reduction` (see nn/losses.py);
#  _stacklevel: a private warning detail of F.softmax and kin.
DROPPED = {"size_average", "reduce", "_stacklevel"}

# Intended differences, each with why. Key: "nn.Class.method" or "F.name"; value: the torch
# parameter names minigrad lacks or names differently there.
ALLOWED = {
    # torch names them input_ and target_ (a quirk of its own); minigrad keeps input, target
    "nn.AdaptiveLogSoftmaxWithLoss.forward": {"input_", "target_"},
    # deprecated aliases of min_val/max_val in torch
    "nn.Hardtanh.__init__": {"min_value", "max_value"},
    # minigrad has no out= tensors
    "F.normalize": {"out"},
}


def _params(fn):
    """(positional names in order, all names, takes **kwargs) of fn, less self."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    ps = [p for p in sig.parameters.values() if p.name != "self"]
    if ps and ps[0].kind == ps[0].VAR_POSITIONAL:       # a dispatcher (*args, **kwargs)
        return None
    positional = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = {p.name for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    return positional, named, any(p.kind == p.VAR_KEYWORD for p in ps)


def _mismatches(key, torch_fn, mg_fn):
    ours, theirs = _params(mg_fn), _params(torch_fn)
    if ours is None or theirs is None:
        return []
    allowed = ALLOWED.get(key, set()) | DROPPED
    t_pos, m_pos = [n for n in theirs[0] if n not in DROPPED], ours[0]
    out = []
    # minigrad's positional parameters must be torch's, in torch's order (it may make some
    # of torch's trailing ones keyword-only); an allowed torch name may be named otherwise
    if len(m_pos) > len(t_pos) or any(m != t and t not in allowed
                                      for m, t in zip(m_pos, t_pos)):
        out.append(f"{key}: positional {m_pos} vs torch {t_pos}")
    missing = theirs[1] - ours[1] - allowed
    if missing and not ours[2]:
        out.append(f"{key}: lacks keyword(s) {sorted(missing)}")
    return out


def _shared_modules(torch):
    for name in sorted(dir(torch.nn)):
        theirs, ours = getattr(torch.nn, name), getattr(nn, name, None)
        if (inspect.isclass(theirs) and issubclass(theirs, torch.nn.Module)
                and inspect.isclass(ours) and issubclass(ours, nn.Module)):
            yield name, theirs, ours


def test_module_forward_and_init_match_torch(torch):
    bad, seen = [], 0
    for name, theirs, ours in _shared_modules(torch):
        for meth in ("__init__", "forward"):
            seen += 1
            bad += _mismatches(f"nn.{name}.{meth}", getattr(theirs, meth),
                               getattr(ours, meth))
    assert seen > 100                            # the comparison found the layers
    assert not bad, "\n".join(bad)


def test_functional_matches_torch(torch):
    bad, seen = [], 0
    for name in sorted(dir(torch.nn.functional)):
        theirs, ours = getattr(torch.nn.functional, name), getattr(F, name, None)
        if name.startswith("_") or inspect.isclass(theirs) or not callable(ours):
            continue
        seen += 1
        bad += _mismatches(f"F.{name}", theirs, ours)
    assert seen > 100
    assert not bad, "\n".join(bad)


def test_allow_list_is_still_needed(torch):
    # an entry that no longer differs should be removed, so the list stays true
    for key, names in ALLOWED.items():
        kind, *path = key.split(".")
        owner_t = torch.nn if kind == "nn" else torch.nn.functional
        owner_m = nn if kind == "nn" else F
        t, m = owner_t, owner_m
        for part in path:
            t, m = getattr(t, part), getattr(m, part)
        assert names & (_params(t)[1] - _params(m)[1]), key


def test_keyword_calls_ported_from_torch(torch):
    """The calls above, on the builtins inspect cannot read: run them on both libraries."""
    q = [[[0.1, 0.2], [0.3, -0.1]], [[0.5, 0.0], [-0.2, 0.4]]]
    for lib, fn in ((torch, torch.nn.functional), (mg, F)):
        t = lib.tensor(q)
        out = fn.scaled_dot_product_attention(query=t, key=t, value=t, attn_mask=None,
                                              dropout_p=0.0, is_causal=True, scale=None,
                                              enable_gqa=False)
        assert tuple(out.shape) == (2, 2, 2)
        logits, y = lib.tensor([[1.0, 2.0, 0.5]]), lib.tensor([1])
        fn.cross_entropy(input=logits, target=y, label_smoothing=0.1)
        fn.softmax(input=logits, dim=-1)
        fn.linear(input=logits, weight=lib.ones(2, 3))
        fn.gelu(input=logits, approximate="tanh")
        fn.threshold_(input=logits.clone(), threshold=1.0, value=0.0)
        lib.cat(tensors=[logits, logits], dim=0)
        logits.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize("make", [lambda: nn.Linear(3, 2), lambda: nn.ReLU(),
                                  lambda: nn.LayerNorm(3), lambda: nn.Dropout(0.0),
                                  lambda: nn.Sequential(nn.Linear(3, 3), nn.Tanh())])
def test_layers_take_input_by_keyword(make):
    x = mg.ones(2, 3)
    layer = make()
    assert mg.allclose(layer(input=x), layer(x))


def test_embedding_and_rms_norm_keyword_names():
    # torch: Embedding.forward(input), RMSNorm.forward(x)
    emb = nn.Embedding(4, 2)
    idx = mg.tensor([1, 3])
    assert mg.allclose(emb(input=idx), emb(idx))
    norm = nn.RMSNorm(3)
    x = mg.ones(2, 3)
    assert mg.allclose(norm(x=x), norm(x))
