"""Parameter names and order of nn layers' forward/__init__ and of nn.functional against
PyTorch's, so code ported from PyTorch that calls by keyword (layer(input=x),
F.cross_entropy(input=..., target=..., label_smoothing=0.1)) keeps working."""
import inspect

import numpy as np

import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

# PyTorch parameters minigrad leaves out everywhere, on purpose:
#  _stacklevel: a private warning detail of F.softmax and kin.
# (The losses' deprecated size_average and reduce are kept, in PyTorch's places:
# ops/loss_legacy.py maps them to a reduction, so they are compared as any other.)
DROPPED = {"_stacklevel"}

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


# --- top-level functions (mg.sum, mg.where, ...) and Tensor methods ------------------------
# torch's own builtins cannot be read by inspect: their names come from the ATen schemas that
# torch's argument parser is generated from (`self` is `input` in torch.*, absent in methods)

# never in minigrad: out= tensors and their out_dtype, layouts, named-tensor dims
DROPPED_OPS = DROPPED | {"out", "out_dtype", "memory_format", "layout", "pin_memory", "names"}
# keywords torch's argument parser adds to what the schemas say
PARSER_EXTRAS = {"requires_grad", "as_tuple"}

ALLOWED_OPS = {
    # minigrad's own checkpoint format (safetensors, no pickle): not torch.save/load's file API
    "mg.save": {"f", "pickle_module", "pickle_protocol", "_use_new_zipfile_serialization",
                "_disable_byteorder_record"},
    # a decorator/context manager and a class there, plain functions here
    "mg.enable_grad": {"orig_func"},
    # tensor_split: torch's keyword is tensor_indices_or_sections (its docs say
    # indices_or_sections, which is ours)
    "mg.tensor_split": {"tensor_indices_or_sections"},
    "Tensor.tensor_split": {"tensor_indices_or_sections"},
    # t.max(other) / t.min(other): the elementwise forms are mg.maximum / mg.minimum
    "Tensor.max": {"other"}, "Tensor.min": {"other"},
    # copy_'s second overload (other) is a TorchScript form; non_blocking: no async copies
    "Tensor.copy_": {"other", "non_blocking"},
    "Tensor.to": {"other"},
    # TorchScript's aten::cuda(self) lacks the Python method's device and non_blocking
    "Tensor.cuda": {"device", "non_blocking"},
    # h/v/dsplit(indices=[...]): minigrad takes the indices positionally (as sections)
    "mg.hsplit": {"indices"}, "mg.vsplit": {"indices"}, "mg.dsplit": {"indices"},
    "Tensor.hsplit": {"indices"}, "Tensor.vsplit": {"indices"}, "Tensor.dsplit": {"indices"},
    # minigrad-only extras: as_strided's op= (which view op records it); no_grad(fn) decorates
    "mg.as_strided": {"op"}, "mg.no_grad": {"fn"},
    # not yet taken: pinning to a named device
    "Tensor.is_pinned": {"device"}, "Tensor.pin_memory": {"device"},
    # record_stream(s) and resize_as_(the_template) keep readable names; "from" is a Python
    # keyword
    "Tensor.record_stream": {"s"}, "Tensor.resize_as_": {"the_template"},
    "Tensor.uniform_": {"from", "to"},
    # the one schema of normal with a self is normal.out(self, mean, std), which
    # torch.normal does not bind (torch.normal(input=t) is an error): torch.normal's own
    # keywords, mean, std, size, generator, are ours (test_op_keyword_calls_ported_from_torch)
    "mg.normal": {"input", "mean", "std"},
    # mg.load(path, device, with_metadata, map_location): a safetensors file, not a pickle
    "mg.load": {"f", "pickle_module", "map_location"},
}


def _torch_op_params(torch, name, method):
    """[(positional names, all names)] of torch.name / torch.Tensor.name, one per overload."""
    fn = getattr(torch.Tensor if method else torch, name)
    py = _params(fn)
    if py is not None:
        return [(py[0], py[1])]
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    except RuntimeError:
        return []
    out = []
    for s in schemas:
        args = [a for a in s.arguments        # less out= tensors (written, keyword-only)
                if not (a.alias_info and a.alias_info.is_write and a.kwarg_only)]
        if not any(a.name == "self" and str(a.type).startswith("Tensor") for a in args):
            continue                                # TorchScript's int/float/list overloads
        names = [a.name for a in args if not (method and a.name == "self")]
        names = ["input" if n == "self" else n for n in names]
        pos = [n for n, a in zip(names, [a for a in args if not (method and a.name == "self")])
               if not a.kwarg_only]
        out.append((pos, set(names)))
    return out


def _op_mismatches(torch, key, name, method, ours):
    mine, theirs = _params(ours), _torch_op_params(torch, name, method)
    if mine is None or not theirs:
        return []
    allowed = ALLOWED_OPS.get(key, set()) | DROPPED_OPS
    out = []
    known = set().union(*(named for _, named in theirs)) | PARSER_EXTRAS
    for i, m in enumerate(mine[0]):
        at_i = {pos[i] for pos, _ in theirs if i < len(pos)}
        if not at_i:                # extra positional slots are harmless where torch has
            if m not in known | allowed:        # the name (by keyword): ported calls work
                out.append(f"{key}: positional {m!r} is unknown to torch")
        elif m not in at_i and not at_i & allowed:
            out.append(f"{key}: positional {i} is {m!r}, torch's {sorted(at_i)}")
    missing = known - PARSER_EXTRAS - mine[1] - allowed
    if missing and not mine[2]:
        out.append(f"{key}: lacks keyword(s) {sorted(missing)}")
    return sorted(set(out))


def _shared_functions(torch):
    for name in sorted(dir(mg)):
        ours = getattr(mg, name)
        if (not name.startswith("_") and hasattr(torch, name) and callable(ours)
                and not inspect.isclass(ours) and not inspect.ismodule(ours)):
            yield name, ours


def _shared_methods(torch):
    for name in sorted(dir(mg.Tensor)):
        if name.startswith("_") or not hasattr(torch.Tensor, name):
            continue
        if isinstance(inspect.getattr_static(mg.Tensor, name), property):
            continue
        yield name, getattr(mg.Tensor, name)


def test_top_level_functions_match_torch(torch):
    bad, seen = [], 0
    for name, ours in _shared_functions(torch):
        seen += 1
        bad += _op_mismatches(torch, f"mg.{name}", name, False, ours)
    assert seen > 300
    assert not bad, "\n".join(bad)


def test_tensor_methods_match_torch(torch):
    bad, seen = [], 0
    for name, ours in _shared_methods(torch):
        seen += 1
        bad += _op_mismatches(torch, f"Tensor.{name}", name, True, ours)
    assert seen > 300
    assert not bad, "\n".join(bad)


def test_ops_allow_list_is_still_needed(torch, monkeypatch):
    # each entry must still hide a mismatch: without it, the comparison would report one
    for key in list(ALLOWED_OPS):
        kind, name = key.split(".")
        method = kind == "Tensor"
        with monkeypatch.context() as m:
            m.delitem(ALLOWED_OPS, key)
            assert _op_mismatches(torch, key, name, method,
                                  getattr(mg.Tensor if method else mg, name)), key


def test_op_keyword_calls_ported_from_torch(torch):
    """Keyword calls as torch takes them (checked by calling torch), on both libraries."""
    for lib in (torch, mg):
        a, i = lib.tensor([[1.0, -2.0], [3.0, 0.5]]), lib.tensor([[0, 1]])
        lib.sum(input=a, dim=0, keepdim=True)
        lib.maximum(input=a, other=a)
        lib.div(input=a, other=a, rounding_mode="floor")
        lib.mm(input=a, mat2=a)
        lib.outer(input=a[0], vec2=a[1])
        lib.float_power(input=a, exponent=2)
        lib.where(condition=a > 0, input=a, other=a)
        lib.split(tensor=a, split_size_or_sections=1)
        lib.cumsum(input=a, dim=0, dtype=lib.float64)
        lib.sort(input=a, stable=True)
        lib.gather(input=a, dim=0, index=i, sparse_grad=False)
        lib.polygamma(n=1, input=a.abs() + 1)
        lib.cholesky_solve(input=a, input2=lib.eye(2))
        lib.result_type(tensor=a, other=a)
        assert lib.vander(x=a[0], N=3, increasing=True).tolist() == [[1, 1, 1], [1, -2, 4]]
        a.add(other=a, alpha=2), a.pow(exponent=2), a.matmul(other=a)
        a[0].dot(tensor=a[1]), a.eq(other=a), a.swapaxes(axis0=0, axis1=1)
        a.clone().requires_grad_(requires_grad=True)
        a.gather(dim=1, index=i, sparse_grad=False), a.argsort(stable=True)


def test_var_and_std_read_positional_arguments_as_torch(torch):
    """torch's var(dim, unbiased, keepdim): t.var(0, True) is the unbiased variance, not a
    keepdim one (minigrad read the second positional as keepdim: silently another shape);
    t.var(False) is the population variance of every element."""
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    calls = [((0, True), {}), ((0, False), {}), ((0, True, True), {}), ((False,), {}),
             ((True,), {}), ((1,), {"keepdim": True}), ((1,), {"correction": 0}), ((), {}),
             ((0,), {"unbiased": False, "keepdim": True})]
    for op in ("var", "std"):
        for args, kw in calls:
            want = getattr(torch.tensor(a), op)(*args, **kw)
            for got in (getattr(mg.tensor(a), op)(*args, **kw),
                        getattr(mg, op)(mg.tensor(a), *args, **kw)):
                assert got.shape == tuple(want.shape), (op, args, kw)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    with pytest.raises(TypeError, match="unbiased .* must be a bool.*keepdim=True"):
        mg.ones(3).var(0, 1)
    with pytest.raises(TypeError, match="not both"):
        mg.ones(3).var(0, True, correction=0)


# --- torch's names for the first parameter (input, size) and the keywords added to match ---
def _renamed_calls(lib):
    """(name, value) of keyword calls with torch's names, on lib (torch or minigrad)."""
    a, i = lib.tensor([[1.0, -2.0], [3.0, 0.5]]), lib.tensor([0, 3])
    one, row = lib.tensor([1]), lib.tensor([[5.0, 6.0]])
    out = [(f"{n}_like", getattr(lib, f"{n}_like")(input=a).shape)
           for n in ("zeros", "ones", "empty", "rand", "randn")]
    return out + [
        ("zeros_like_mf", lib.zeros_like(input=a, memory_format=lib.preserve_format)),
        ("full_like", lib.full_like(input=a, fill_value=7.0)),
        ("full", lib.full(size=(2, 3), fill_value=2)),
        ("take", lib.take(input=a, index=i)),
        ("argwhere", lib.argwhere(input=a > 0)),
        ("index_fill", lib.index_fill(input=a, dim=0, index=one, value=0.0)),
        ("index_copy", lib.index_copy(input=a, dim=0, index=one, source=row)),
        ("index_put", lib.index_put(input=a, indices=(one,), values=lib.tensor(9.0),
                                    accumulate=True)),
        ("masked_scatter", lib.masked_scatter(input=a, mask=a > 0,
                                              source=lib.tensor([7.0, 8.0, 9.0]))),
        ("scatter_reduce", lib.scatter_reduce(input=a, dim=0, index=lib.tensor([[1, 0]]),
                                              src=row, reduce="amax", include_self=True)),
        ("normal", lib.normal(mean=lib.zeros(2), std=0.0)),
        ("normal_size", lib.normal(mean=1.0, std=0.0, size=(2,), generator=None)),
        ("prod", lib.prod(input=lib.tensor([[3, 4], [1, 2]]), dtype=lib.float64)),
        ("prod_dim", lib.tensor([[3.5, 4.0]]).prod(1, dtype=lib.int32)),
        ("norm", lib.norm(input=lib.tensor([3.0, 4.0]), dtype=lib.float64)),
        ("norm_method", lib.tensor([[3.0, 4.0]]).half().norm(p=1, dim=1, dtype=lib.float32)),
        ("div_floor", lib.tensor([7, -7]).div_(2, rounding_mode="floor")),
        ("div_trunc", lib.tensor([7.0, -7.0]).div_(lib.tensor(2.0), rounding_mode="trunc")),
        ("rrelu_", lib.rrelu_(lib.tensor([-1.0, 2.0]), lower=0.25, upper=0.25,
                              training=True, generator=None)),
    ]


def test_renamed_and_new_keywords_as_torch(torch):
    for (name, ours), (_, theirs) in zip(_renamed_calls(mg), _renamed_calls(torch)):
        if isinstance(ours, tuple):                                     # a shape
            assert ours == tuple(theirs), name
            continue
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), name
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), err_msg=name)


def test_renamed_and_new_keywords():
    """The same calls without torch: closed forms."""
    got = dict(_renamed_calls(mg))
    assert got["zeros_like"] == (2, 2) and got["full_like"].tolist() == [[7.0] * 2] * 2
    assert got["full"].tolist() == [[2] * 3] * 2 and got["full"].dtype == mg.int64
    assert got["take"].tolist() == [1.0, 0.5]
    assert got["argwhere"].tolist() == [[0, 0], [1, 0], [1, 1]]
    assert got["index_fill"].tolist() == [[1.0, -2.0], [0.0, 0.0]]
    assert got["index_copy"].tolist() == [[1.0, -2.0], [5.0, 6.0]]
    assert got["index_put"].tolist() == [[1.0, -2.0], [12.0, 9.5]]
    assert got["masked_scatter"].tolist() == [[7.0, -2.0], [8.0, 9.0]]
    assert got["scatter_reduce"].tolist() == [[1.0, 6.0], [5.0, 0.5]]
    assert got["normal"].tolist() == [0.0, 0.0] and got["normal_size"].tolist() == [1.0, 1.0]
    assert got["prod"].item() == 24.0 and got["prod"].dtype == mg.float64
    # dtype= is the result's dtype too (an integer product was int64 whatever was asked)
    assert got["prod_dim"].tolist() == [12] and got["prod_dim"].dtype == mg.int32
    assert got["norm"].item() == 5.0 and got["norm"].dtype == mg.float64
    assert got["norm_method"].tolist() == [7.0] and got["norm_method"].dtype == mg.float32
    assert got["div_floor"].tolist() == [3, -4] and got["div_trunc"].tolist() == [3.0, -3.0]
    assert got["rrelu_"].tolist() == [-0.25, 2.0]


def test_norm_dtype_refuses_what_torch_refuses():
    with pytest.raises(TypeError, match="at least as wide as the input's float64"):
        mg.norm(mg.ones(2, dtype=mg.float64), dtype=mg.float32)
    with pytest.raises(TypeError, match="needs a floating-point tensor"):
        mg.norm(mg.tensor([3, 4]), dtype=mg.float64)       # an integer input: as without
    with pytest.raises(TypeError, match="generator= is not supported"):
        mg.rrelu_(mg.ones(2), generator=mg.Generator())


def test_backward_inputs_accumulates_only_into_those():
    w1 = mg.tensor([1.0, 2.0], requires_grad=True)
    w2 = mg.tensor([3.0, 4.0], requires_grad=True)
    h = w1 * w2
    (h * h).sum().backward(inputs=[w1, h])
    assert w1.grad.tolist() == [18.0, 64.0] and w2.grad is None
    assert h.grad.tolist() == [6.0, 16.0]        # a non-leaf asked for keeps its gradient
    (w1 * w2).sum().backward(mg.tensor(2.0), inputs=w2)
    assert w1.grad.tolist() == [18.0, 64.0] and w2.grad.tolist() == [2.0, 4.0]


def test_backward_inputs_as_torch(torch):
    grads = []
    for lib in (torch, mg):
        w1 = lib.tensor([1.0, 2.0], requires_grad=True)
        w2 = lib.tensor([3.0, 4.0], requires_grad=True)
        (w1 * w2).pow(2).sum().backward(inputs=[w2], retain_graph=False)
        grads.append((w1.grad, w2.grad.tolist()))
    assert grads[0] == grads[1] == (None, [6.0, 32.0])
