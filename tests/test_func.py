"""mg.func against torch.func (float64): grad, grad_and_value, vjp, jacrev, jacfwd,
hessian on nested arguments, their composition (grad of grad, per-sample gradients with
vmap(grad)), functional_call, and vmap's dims, randomness and errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None
MF, TF = mg.func, torch.func if torch else None
RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)


def to(lib, tree):
    """Nested tuples, lists and dicts of arrays as tensors of minigrad (mg) or torch."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(to(lib, t) for t in tree)
    if isinstance(tree, dict):
        return {k: to(lib, v) for k, v in tree.items()}
    return mg.tensor(tree, dtype=mg.float64) if lib is mg else \
        torch.tensor(tree, dtype=torch.float64)


def assert_same(a, b):
    """Same structure, same values (a minigrad's, b torch's)."""
    if isinstance(b, (tuple, list, dict)):
        assert type(a) is type(b) and len(a) == len(b)
        for k in (b if isinstance(b, dict) else range(len(b))):
            assert_same(a[k], b[k])
        return
    if not isinstance(b, torch.Tensor):
        assert a == b
        return
    assert a.shape == tuple(b.shape) and a.requires_grad == b.requires_grad
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def both(transform, func, *args, **kwargs):
    """transform(func(lib), **kwargs)(*args) with minigrad's and torch's, compared."""
    mine = getattr(MF, transform)(func(mg), **kwargs)(*to(mg, args))
    theirs = getattr(TF, transform)(func(torch), **kwargs)(*to(torch, args))
    assert_same(mine, theirs)
    return mine


def loss(lib):
    return lambda a, b: (lib.tanh(a * b) ** 2).sum() + (a.sum(0) * b.exp()).sum()


def test_grad_argnums_and_pytrees_match_torch(torch):
    both("grad", loss, X, Y)
    both("grad", loss, X, Y, argnums=1)
    both("grad", loss, X, Y, argnums=(1, 0))
    both("grad", loss, X, Y, argnums=-1)
    both("grad", lambda lib: lambda p, x: ((x @ p["w"]).tanh() * p["b"][0]).sum(),
         {"w": X.T.copy(), "b": [Y[:2], Y]}, X)
    both("grad", lambda lib: lambda a, b: (a * 2).sum(), X, Y, argnums=(0, 1))  # unused: 0
    both("grad_and_value", loss, X, Y, argnums=(0, 1))


def test_has_aux_returns_the_aux_as_torch(torch):
    f = lambda lib: lambda a: ((a ** 2).sum(), {"double": a * 2, "n": [a.sum()]})  # noqa
    both("grad", f, X, has_aux=True)
    both("grad_and_value", f, X, has_aux=True)


def test_grad_of_grad_and_captured_tensors_stay_differentiable(torch):
    both("grad", lambda lib: TF.grad(lambda a: a ** 3) if lib is torch else
         MF.grad(lambda a: a ** 3), np.array(1.5))
    for lib in (mg, torch):                       # grad(grad(f)) inside a Hessian's loop
        f = getattr(lib, "func").grad(getattr(lib, "func").grad(lambda a: (a ** 3).sin()))
        assert abs(float(f(to(lib, np.array(0.7)))) - float(
            (-9 * 0.7 ** 4 * np.sin(0.343) + 6 * 0.7 * np.cos(0.343)))) < 1e-12
    results = []
    for lib in (mg, torch):
        w, x = to(lib, Y).requires_grad_(True), to(lib, X).requires_grad_(True)
        g = getattr(lib, "func").grad(lambda a: (a * w).sin().sum())(x)
        (g * to(lib, X)).sum().backward()         # through the gradient to w and x
        results.append((g, w.grad, x.grad))
    assert_same(*results)
    g = MF.grad(lambda a: (a ** 3).sum())(mg.tensor(X))
    assert not g.requires_grad                    # nothing outside needs it: plain
    with mg.no_grad():                            # grad works under no_grad, as torch's
        np.testing.assert_allclose(MF.grad(lambda a: (a ** 3).sum())(
            mg.tensor(X, requires_grad=True)).numpy(), 3 * X ** 2)


def test_nested_transforms_of_plain_tensors_give_plain_results(torch):
    """An inner transform's own fresh tensor, reached through its result, is no tensor
    from outside for the transform around it: the result stays plain, as torch's."""
    for name, prog in [
            ("grad of grad", lambda F, x, w: F.grad(
                lambda v: F.grad(lambda a: (a.sin() * v).sum())(x).sum())(w)),
            ("hessian-like jacrev", lambda F, x, w: F.jacrev(
                lambda v: F.jacrev(lambda b: b.sin() * v)(x))(w)),
            ("grad of vjp_fn", lambda F, x, w: F.grad(
                lambda v: F.vjp(lambda b: b.sin() * w, x)[1](v)[0].sum())(x))]:
        mine = prog(MF, mg.tensor(Y), mg.tensor(Y * 2))
        assert_same(mine, prog(TF, torch.tensor(Y), torch.tensor(Y * 2)))
        assert mine.grad_fn is None, name


def test_vjp_matches_torch_and_may_be_called_again(torch):
    outs = []
    for lib in (mg, torch):
        out, fn = getattr(lib, "func").vjp(lambda a, b: (a * b, {"s": a.sum()}),
                                           *to(lib, (X, Y)))
        ct = to(lib, (X[::-1].copy(), {"s": np.array(2.0)}))
        outs.append((out, fn(ct), fn(ct)))
    assert_same(*outs)
    _, fn, aux = MF.vjp(lambda a: (a.exp(), a.sum()), mg.tensor(Y), has_aux=True)
    assert isinstance(fn(mg.ones(3)), tuple) and aux.item() == pytest.approx(Y.sum())


def test_jacrev_jacfwd_hessian_structures_match_torch(torch):
    f = lambda lib: lambda a: (a.exp(), {"s": a.sum(1)})  # noqa: E731
    both("jacrev", f, X)
    both("jacfwd", f, X)
    both("jacrev", loss, X, Y, argnums=(0, 1))
    both("jacfwd", lambda lib: lambda a, b: a @ b, X, Y, argnums=1)
    both("jacrev", lambda lib: lambda a: (a.sum(), a * 2), np.array(2.0), has_aux=True)
    both("hessian", loss, X, Y)
    both("hessian", loss, X, Y, argnums=(0, 1))


def test_per_sample_gradients_with_vmap_of_grad(torch):
    W, XS, YS = RNG.standard_normal((3, 2)), RNG.standard_normal((5, 3)), \
        RNG.standard_normal((5, 2))

    def per_sample(lib):
        def sample_loss(p, x, y):
            return ((x @ p["w"]).tanh() - y).pow(2).sum()
        return getattr(lib, "func").vmap(getattr(lib, "func").grad(sample_loss),
                                         in_dims=(None, 0, 0))
    mine = per_sample(mg)({"w": mg.tensor(W)}, mg.tensor(XS), mg.tensor(YS))
    assert_same(mine, per_sample(torch)({"w": torch.tensor(W)}, torch.tensor(XS),
                                        torch.tensor(YS)))
    # the per-sample gradients sum to the batch's gradient
    w = mg.tensor(W, requires_grad=True)
    ((mg.tensor(XS) @ w).tanh() - mg.tensor(YS)).pow(2).sum().backward()
    np.testing.assert_allclose(mine["w"].sum(0).numpy(), w.grad.numpy(), rtol=1e-12)


def test_functional_call_swaps_and_restores():
    lin = nn.Linear(2, 2).double()
    x = mg.ones(1, 2, dtype=mg.float64)
    weight = lin.weight
    out = MF.functional_call(lin, {"weight": mg.zeros(2, 2, dtype=mg.float64)}, x)
    np.testing.assert_array_equal(out.detach().numpy(), lin.bias.detach().numpy()[None])
    assert lin.weight is weight
    params = {k: v.detach() for k, v in lin.named_parameters()}
    g = MF.grad(lambda p, x: MF.functional_call(lin, p, (x,)).sum())(params, x)
    np.testing.assert_array_equal(g["weight"].numpy(), np.ones((2, 2)))
    # split in two dicts; an extra name is set for the call only (as torch's)
    out = MF.functional_call(lin, ({"weight": params["weight"]}, {"bias": params["bias"]}),
                             args=(x,), kwargs={})
    np.testing.assert_allclose(out.detach().numpy(), lin(x).detach().numpy())
    MF.functional_call(lin, {"extra": mg.zeros(1)}, x)
    assert not hasattr(lin, "extra")

    class Boom(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(mg.ones(2))
            self.register_buffer("count", mg.zeros(1))

        def forward(self, x):
            assert not isinstance(self.w, nn.Parameter) and self.count.item() == 5
            raise ValueError("boom")
    m = Boom()
    w, count = m.w, m.count
    with pytest.raises(ValueError, match="boom"):
        MF.functional_call(m, {"w": mg.zeros(2), "count": mg.full((1,), 5.0)}, x)
    assert m.w is w and m.count is count and m._parameters["w"] is w


def test_functional_call_ties_buffers_and_strict_as_torch(torch):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.head = nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)
            self.head.weight = self.emb.weight
        def forward(self, x):                             # noqa: E301
            return self.head(self.emb(x))
    m, x = Tied(), mg.ones(1, 3)
    out = MF.functional_call(m, {"emb.weight": mg.eye(3) * 2}, x)
    np.testing.assert_array_equal(out.numpy(), 4)         # both names got it
    assert MF.functional_call(m, {"emb.weight": mg.eye(3)}, x, tie_weights=False) \
        .numpy().tolist() != [[1, 1, 1]]                  # head kept its own
    with pytest.raises(ValueError, match="multiple values for keys"):
        MF.functional_call(m, {"emb.weight": mg.eye(3), "head.weight": mg.eye(3)}, x)
    with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing for Tied:\n\t"
                       "Unexpected key\\(s\\): 'x'.\n\tMissing key\\(s\\): 'emb.weight', "
                       "'head.weight'."):
        MF.functional_call(m, {"x": mg.eye(3)}, x, strict=True)
    with pytest.raises(AttributeError, match="Tied has no attribute `nope`"):
        MF.functional_call(m, {"nope.weight": mg.eye(3)}, x)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        MF.functional_call(m, ({"emb.weight": mg.eye(3)}, {"emb.weight": mg.eye(3)}), x)
    # a BatchNorm's running statistics, updated in the call, land in the given dict
    # (torch's too), not in the module
    for lib in (mg, torch):
        bn = (nn if lib is mg else torch.nn).BatchNorm1d(2)
        stats = {"running_mean": lib.ones(2)}
        getattr(lib, "func").functional_call(bn, stats, lib.tensor([[0., 2.], [2., 4.]]))
        assert stats["running_mean"].tolist() == pytest.approx([1.0, 1.2])
        assert bn.running_mean.tolist() == [0.0, 0.0]


def test_functional_call_with_a_submodule_registered_twice_keeps_the_given_dict():
    """One Linear under two names: its weight is swapped and put back once, and the
    caller's dict still holds the caller's tensors afterwards (as torch's; torch 2.13
    leaves the given weight in such a module, a bug not copied)."""
    lin = nn.Linear(2, 2)
    model = nn.Sequential(lin, lin)
    weight, bias = lin.weight, lin.bias
    given = {"0.weight": mg.eye(2), "0.bias": mg.zeros(2)}
    mine = dict(given)
    out = MF.functional_call(model, given, mg.ones(1, 2))
    assert out.tolist() == [[1.0, 1.0]]
    assert lin.weight is weight and lin.bias is bias
    assert all(given[k] is mine[k] for k in mine)


def test_vmap_dims_nesting_and_gradients_match_torch(torch):
    both("vmap", lambda lib: lambda a, b: a * b, X, np.array(2.0), in_dims=(1, None),
         out_dims=1)
    both("vmap", lambda lib: lambda a: a.sin().sum(), X, in_dims=-1)
    both("vmap", lambda lib: lambda d: (d["a"] * d["b"], d["a"].sum()),
         {"a": X, "b": Y}, in_dims=({"a": 0, "b": None},), out_dims=(1, 0))
    both("vmap", lambda lib: getattr(lib, "func").vmap(lambda a: a.exp().sum()), X)
    both("vmap", lambda lib: lambda a: (a, 3), X, out_dims=(0, None))
    both("vmap", lambda lib: lambda a, b: a + b.sum(), X, Y, in_dims=(0, None))
    # an out_dims=None output made anew at each index, NaN in it: the same each time
    both("vmap", lambda lib: lambda a: (a, lib.full((2,), float("nan"), dtype=lib.float64)),
         X, out_dims=(0, None))
    grads = []
    for lib in (mg, torch):
        x = to(lib, X).requires_grad_(True)
        (getattr(lib, "func").vmap(lambda r: r.tanh() @ r)(x) * to(lib, Y[:2])).sum() \
            .backward()
        grads.append(x.grad)
    assert_same(*grads)


VMAP_ERRORS = {
    "in_dims a list": dict(f=lambda a: a, in_dims=[0], args=(X,)),
    "in_dims too short": dict(f=lambda a, b: a, in_dims=(0,), args=(X, X)),
    "in_dim for a float": dict(f=lambda a, b: a, in_dims=(0, 0), args=(X, 3.0)),
    "in_dim out of range": dict(f=lambda a: a, in_dims=(2,), args=(Y,)),
    "in_dim not an int": dict(f=lambda a: a, in_dims=(1.5,), args=(Y,)),
    "sizes differ": dict(f=lambda a, b: a, in_dims=0, args=(X, Y)),
    "nothing mapped": dict(f=lambda a: a, in_dims=(None,), args=(Y,)),
    "no inputs": dict(f=lambda: 1, args=()),
    "an int out": dict(f=lambda a: (a, 3), args=(X,)),
    "out_dims not fitting": dict(f=lambda a: a, out_dims=(0, None), args=(X,)),
    "out_dims a float": dict(f=lambda a: a, out_dims=1.0, args=(X,)),
}


@pytest.mark.parametrize("case", list(VMAP_ERRORS))
def test_vmap_errors_are_torchs(torch, case):
    spec = dict(VMAP_ERRORS[case])
    f, args = spec.pop("f"), spec.pop("args")
    caught = []
    for lib in (mg, torch):
        with pytest.raises(ValueError) as info:
            getattr(lib, "func").vmap(f, **spec)(*to(lib, args))
        caught.append(str(info.value))
    mine, theirs = caught
    if "structure" in theirs:     # torch prints its TreeSpec objects; minigrad (*, *)
        assert mine.split("structure")[0] == theirs.split("structure")[0]
    else:
        assert mine == theirs.replace("torch.Tensor", "minigrad.tensor.Tensor")
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        MF.vmap(lambda a: a, chunk_size=0)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness are"):
        MF.vmap(lambda a: a, randomness="sometimes")


def test_vmap_randomness_error_same_different():
    x = mg.ones(3, 2)
    for draw in (lambda a: a + mg.rand(2), lambda a: mg.nn.functional.dropout(a, 0.5),
                 lambda a: a * mg.randn_like(a)):
        with pytest.raises(RuntimeError, match="called random operation while in "
                                               "randomness error mode"):
            MF.vmap(draw)(x)
    mg.rand(1)                                     # the generator is back after the error
    mg.manual_seed(0)
    same = MF.vmap(lambda a: a + mg.rand(2), randomness="same")(x).numpy()
    assert (same == same[0]).all()
    mg.manual_seed(0)
    np.testing.assert_array_equal(same[0], 1 + mg.rand(2).numpy())   # one draw's worth
    different = MF.vmap(lambda a: a + mg.rand(2), randomness="different")(x).numpy()
    assert len({tuple(r) for r in different}) == 3
    with pytest.raises(ValueError, match="mapped dimension has size 0"):
        MF.vmap(lambda a: a)(mg.ones(0, 2))


def test_vmap_refuses_an_in_place_change_of_an_unmapped_input():
    """Run once per index, b.add_(a) would add every row of x into b one after another
    (PyTorch refuses it; b.add_(1) it makes once, where the loop made it 3 times)."""
    x, b = mg.tensor(X), mg.tensor(Y)
    for f in (lambda a, c: c.add_(a), lambda a, c: c.add_(1) + a):
        with pytest.raises(RuntimeError, match="changed an input that is not mapped"):
            MF.vmap(f, in_dims=(0, None))(x, b)
    # changing the mapped input stays allowed, even where an unmapped one views its memory
    out = MF.vmap(lambda a, c: a.mul_(2) + c, in_dims=(0, None))(x, x[0])
    np.testing.assert_allclose(out.numpy(), 2 * X + 2 * X[0])


def test_transform_errors_are_torchs(torch):
    cases = [
        lambda F, x: F.grad(lambda a: a * 2)(x),
        lambda F, x: F.grad(lambda a: 3)(x),
        lambda F, x: F.grad(lambda a: a.sum(), argnums=1)(x),
        lambda F, x: F.grad(lambda a: a.sum(), argnums=())(x),
        lambda F, x: F.grad(lambda a: a.sum(), argnums=1.0)(x),
        lambda F, x: F.grad(lambda a: a.sum(), has_aux=True)(x),
        lambda F, x: F.grad(lambda a: (a.sum(), 1), has_aux=True)(x),
        lambda F, x: F.vjp(lambda a: a * 2, x)[1](x[:1]),
        lambda F, x: F.vjp(lambda a: a * 2, x)[1]((x,)),
        lambda F, x: F.vjp(lambda a: (a, {"b": a}), x)[1]((x, x)),
        lambda F, x: F.vjp(lambda a: 3, x),
        lambda F, x: F.jacrev(lambda a: [a, 3])(x),
    ]
    for case in cases:
        caught = []
        for lib in (mg, torch):
            with pytest.raises(RuntimeError) as info:
                case(getattr(lib, "func"), to(lib, Y))
            caught.append(str(info.value))
        mine, theirs = caught
        theirs = theirs.replace("torch.Size([", "(").replace("])", ",)")
        assert mine == theirs
    for lib in (mg, torch):
        with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor, "
                                             "got <class 'float'>"):
            getattr(lib, "func").grad(lambda a: a)(3.0)
