"""mg.autograd.functional against torch.autograd.functional (float64): vjp, jvp, jacobian,
hessian, vhp, hvp on tensors and tuples, with create_graph, and their errors (strict mode,
bad v, bad inputs) word for word."""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None
AF, TF = mg.autograd.functional, torch.autograd.functional if torch else None
RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)


def lib_tensors(arrays, lib):
    """Nested tuples of arrays as tensors of minigrad (lib mg) or torch."""
    if isinstance(arrays, tuple):
        return tuple(lib_tensors(a, lib) for a in arrays)
    return mg.tensor(arrays, dtype=mg.float64) if lib is mg else \
        torch.tensor(arrays, dtype=torch.float64)


def assert_same(a, b):
    """Same nesting of tuples, same values (a minigrad's, b torch's; torch's forward-mode
    jacobian nests lists, where its docs say tuples: minigrad's are tuples)."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, tuple) and len(a) == len(b)
        for p, q in zip(a, b):
            assert_same(p, q)
        return
    assert a.shape == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def both(name, func, inputs, *rest, **kwargs):
    """AF.name and TF.name on the same function (func(lib) -> function) and arrays."""
    mine = getattr(AF, name)(func(mg), lib_tensors(inputs, mg),
                             *(lib_tensors(r, mg) for r in rest), **kwargs)
    theirs = getattr(TF, name)(func(torch), lib_tensors(inputs, torch),
                               *(lib_tensors(r, torch) for r in rest), **kwargs)
    assert_same(mine, theirs)
    return mine, theirs


def two_outputs(lib):
    return lambda a, b: (lib.tanh(a * b).sum(1), (a ** 2).sum() * b)


def scalar(lib):
    return lambda a, b: (lib.tanh(a * b) ** 2).sum() + (a.sum(0) * b.exp()).sum()


def test_is_mg_autograd_functional():
    from minigrad.autograd import functional
    assert functional is AF and AF.jacobian is mg.autograd.functional.jacobian
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        mg.autograd.nope


def test_vjp_and_jvp_match_torch_on_tuples_and_single_tensors(torch):
    v_out = (RNG.standard_normal(2), RNG.standard_normal(3))
    v_in = (RNG.standard_normal((2, 3)), RNG.standard_normal(3))
    both("vjp", two_outputs, (X, Y), v_out)
    both("jvp", two_outputs, (X, Y), v_in)
    both("vjp", lambda lib: lambda a: a.exp() * a, X, X[::-1].copy())
    both("jvp", lambda lib: lambda a: a.exp().sum(0), X, X[::-1].copy())
    both("vjp", lambda lib: lambda a: (a * a).sum(), X)                  # v=None: scalar out
    both("jvp", lambda lib: lambda a: (a.sin(), a * 3), np.array(0.5))    # v=None: one input


def test_jacobian_nests_outputs_then_inputs_as_torch(torch):
    (mine, _) = both("jacobian", two_outputs, (X, Y))
    assert mine[0][1].shape == (2, 3) and mine[1][0].shape == (3, 2, 3)
    both("jacobian", lambda lib: lambda a: a.tanh() * a.sum(), X)
    both("jacobian", lambda lib: lambda a, b: a @ b, (X, Y))
    both("jacobian", lambda lib: lambda a: (a.exp(), a.sum()), Y)
    # an input the output does not use: zeros, as torch; vectorize and forward-mode agree
    both("jacobian", lambda lib: lambda a, b: a * 2, (X, Y))
    both("jacobian", two_outputs, (X, Y), vectorize=True)
    both("jacobian", two_outputs, (X, Y), vectorize=True, strategy="forward-mode")


def test_hessian_vhp_hvp_match_torch(torch):
    (h, _) = both("hessian", scalar, (X, Y))
    assert h[0][1].shape == (2, 3, 3) and h[1][1].shape == (3, 3)
    both("hessian", lambda lib: lambda a: (a ** 3).sum() * a.sum(), X)
    v = (RNG.standard_normal((2, 3)), RNG.standard_normal(3))
    both("vhp", scalar, (X, Y), v)
    both("hvp", scalar, (X, Y), v)
    both("hvp", lambda lib: lambda a: (a ** 4).sum(), X, X.copy())
    both("vhp", lambda lib: lambda a, b: (a ** 2).sum() + b.sum(), (X, Y), v)  # b linear: 0


def test_results_are_detached_unless_create_graph():
    x = mg.tensor(X, requires_grad=True)
    out, g = AF.vjp(lambda a: (a ** 3).sum(), x)
    assert not out.requires_grad and not g.requires_grad
    assert not AF.jacobian(lambda a: a ** 3, x).requires_grad


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_create_graph_differentiates_as_torch(torch, name):
    """The result, with create_graph=True, is a function of the inputs: its gradient
    matches torch's."""
    needs_v = name in ("jvp", "vhp", "hvp")
    results = []
    for lib in (mg, torch):
        x = lib_tensors(X, lib).requires_grad_(True)
        args = (lib_tensors(X[::-1].copy(), lib),) if needs_v else ()
        f = (lambda a: (a ** 3).sum() * a.sum()) if name in ("hessian", "vjp", "vhp", "hvp") \
            else (lambda a: a.sin() * a.sum())
        out = getattr(TF if lib is torch else AF, name)(f, x, *args, create_graph=True)
        res = out[1] if isinstance(out, tuple) else out
        assert res.requires_grad
        (res * lib_tensors(np.arange(res.numel()).reshape(tuple(res.shape)), lib)) \
            .sum().backward()
        results.append(x.grad)
    assert_same(*results)


ERROR_CASES = {
    "vjp strict: an unused input": lambda F, a, b: F.vjp(lambda x, y: x * 2, (a, b),
                                                         (a * 0,), strict=True),
    "vjp strict: a constant output": lambda F, a, b: F.vjp(lambda x: x.detach(), a, a,
                                                           strict=True),
    "vjp: v None for a vector": lambda F, a, b: F.vjp(lambda x: x * 2, a),
    "vjp: v of the wrong size": lambda F, a, b: F.vjp(lambda x: x * 2, a, b),
    "vjp: v of the wrong length": lambda F, a, b: F.vjp(lambda x: (x, x), a, (a,)),
    "vjp: not a tensor": lambda F, a, b: F.vjp(lambda x: x, (a, 3.0)),
    "vjp: output not a tensor": lambda F, a, b: F.vjp(lambda x: 3.0, a),
    "jvp: v None for a vector input": lambda F, a, b: F.jvp(lambda x: x * 2, a),
    "jvp: v two for one": lambda F, a, b: F.jvp(lambda x: x * 2, a, (a, a)),
    "jvp strict: an unused input": lambda F, a, b: F.jvp(lambda x, y: x * 2, (a, b),
                                                         (a, b), strict=True),
    "jacobian strict: an unused input": lambda F, a, b: F.jacobian(
        lambda x, y: x.exp(), (a, b), strict=True),
    "jacobian strict+create_graph: linear": lambda F, a, b: F.jacobian(
        lambda x: x * 2, a, strict=True, create_graph=True),
    "jacobian strict+vectorize": lambda F, a, b: F.jacobian(lambda x: x.exp(), a,
                                                            strict=True, vectorize=True),
    "jacobian: strategy": lambda F, a, b: F.jacobian(lambda x: x, a, strategy="both"),
    "jacobian: forward-mode needs vectorize": lambda F, a, b: F.jacobian(
        lambda x: x, a, strategy="forward-mode"),
    "jacobian: forward-mode and create_graph": lambda F, a, b: F.jacobian(
        lambda x: x, a, strategy="forward-mode", vectorize=True, create_graph=True),
    "hessian: a vector output": lambda F, a, b: F.hessian(lambda x: x * 2, a),
    "hessian: a tuple output": lambda F, a, b: F.hessian(lambda x: (x.sum(), x.sum()), a),
    "hessian strict: linear": lambda F, a, b: F.hessian(lambda x: x.sum() * 2, a,
                                                        strict=True),
    "vhp strict: linear": lambda F, a, b: F.vhp(lambda x: x.sum() * 2, a, a, strict=True),
    "vhp: a vector output": lambda F, a, b: F.vhp(lambda x: x * 2, a, a),
    "hvp strict: linear": lambda F, a, b: F.hvp(lambda x: x.sum() * 2, a, a, strict=True),
    "hvp strict: one input unused": lambda F, a, b: F.hvp(
        lambda x, y: (x ** 3).sum(), (a, b), (a, b), strict=True),
    "vhp strict: create_graph, linear in one": lambda F, a, b: F.vhp(
        lambda x, y: (x ** 2).sum() + y.sum(), (a, b), (a, b), strict=True,
        create_graph=True),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_are_torchs(torch, case):
    """Same exception type, same words (a size printed as (3,) for torch.Size([3]))."""
    caught = []
    for lib, F in ((mg, AF), (torch, TF)):
        a, b = lib_tensors(X[0], lib), lib_tensors(Y[:2], lib)
        with pytest.raises(Exception) as info:
            ERROR_CASES[case](F, a, b)
        caught.append(info)
    mine, theirs = caught
    assert issubclass(mine.type, (RuntimeError, TypeError, ValueError, NotImplementedError))
    # (an unknown strategy: torch raises AssertionError, minigrad ValueError, as for any
    # bad argument value: an assert would vanish under python -O)
    assert mine.type is (ValueError if theirs.type is AssertionError else theirs.type)
    words = str(theirs.value).replace("torch.Size([", "(").replace("])", ",)") \
        .replace("isonly", "is only")                    # (a space torch's words miss)
    assert str(mine.value) == words.replace("torch.Tensor", "minigrad.tensor.Tensor")


def test_strict_passes_where_every_input_matters():
    x, v = mg.tensor(X), mg.tensor(X * 2)
    out, g = AF.vjp(lambda a: (a ** 3).sum(), x, strict=True)
    np.testing.assert_allclose(g.numpy(), 3 * X ** 2)
    _, hv = AF.hvp(lambda a: (a ** 3).sum(), x, v, strict=True, create_graph=True)
    np.testing.assert_allclose(hv.detach().numpy(), 6 * X * (X * 2))
