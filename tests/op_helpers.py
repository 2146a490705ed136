"""The one helper every op test uses (tinygrad's `helper_test_op`, parametrised over shapes,
dtypes and devices).

An `OpCase` says how to call an op on minigrad tensors (and, where the spelling differs, on
torch tensors), the shapes of its differentiable inputs and their value range. Three checks
run a case:
- `check_vs_torch`: forward values, output dtype/shape/device and `.grad` against PyTorch, in
  float32 (~1e-5 relative) and float64 (~1e-10), with a random upstream gradient;
- `check_gradcheck`: `mg.gradcheck` and `mg.gradgradcheck` in float64 (no torch needed), plus
  the forward against a NumPy formula where the case gives one;
- `check_double_backward_vs_torch`: second derivatives (a gradient of a gradient) against
  `torch.autograd.grad(..., create_graph=True)`;
- `check_fused_vs_unfused`: a fused op against its composition from primitive minigrad ops
  (forward, gradient and second order, float64);
- `check_fast_backward` and `check_special_values_vs_torch`: a fused elementwise op's fast
  backward against its reference, and both against PyTorch, at SPECIAL_VALUES (kinks,
  thresholds, ±inf, NaN) with upstream gradients from `special_upstreams` (inf and NaN too).
"""
import dataclasses
from typing import Callable, Optional

import numpy as np
import pytest

import minigrad as mg

TOL = {"float32": 1e-5, "float64": 1e-10}

# broadcasting tables: every binary op runs on each pair, every unary op on each shape
UNARY_SHAPES = [(), (3,), (2, 3), (2, 1, 3)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)),
                 ((2, 3), ()), ((), (2, 3)), ((1, 3), (2, 1)), ((2, 1, 3), (4, 3)),
                 ((2, 1, 3), (1, 4, 1))]

# value ranges: "nonzero" keeps away from kinks (abs, relu) so finite differences are exact
_DOMAINS = {
    "real": lambda rng, s: rng.uniform(-2, 2, s),
    "positive": lambda rng, s: rng.uniform(0.5, 2, s),
    "nonzero": lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.2, 2, s),
    "unit": lambda rng, s: rng.uniform(-0.9, 0.9, s),
}


@dataclasses.dataclass
class OpCase:
    name: str
    fn: Callable                          # called with minigrad tensors
    shapes: tuple                         # one shape per differentiable input
    torch_fn: Optional[Callable] = None   # default fn: operators and method names match torch
    np_fn: Optional[Callable] = None      # a NumPy formula for the forward (runs without torch)
    domain: object = "real"               # a _DOMAINS key, or one per input
    gradgrad: bool = True                 # twice differentiable: check second order too

    def __str__(self):
        return self.name + "-" + "-".join(str(s).replace(" ", "") for s in self.shapes)

    def arrays(self, seed=0):
        rng = np.random.default_rng(seed)
        domains = self.domain if isinstance(self.domain, tuple) else (self.domain,) * len(
            self.shapes)
        return [np.asarray(_DOMAINS[d](rng, s), dtype=np.float64)
                for d, s in zip(domains, self.shapes)]


def unary(name, fn, shapes=UNARY_SHAPES, **kw):
    return [OpCase(name, fn, (s,), **kw) for s in shapes]


def binary(name, fn, shapes=BINARY_SHAPES, **kw):
    return [OpCase(name, fn, pair, **kw) for pair in shapes]


def _np(t):
    """A torch tensor as NumPy (force: torch may hand back a lazy ZeroTensor)."""
    return t.detach().numpy(force=True)


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_close(actual, expected, dtype, what=""):
    """Relative tolerance of the dtype, with an absolute floor scaled to the values' size."""
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    tol = TOL[str(dtype)]
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale, err_msg=what)


def _loss(outs, weights, make):
    """Σ out·w over the floating outputs: a scalar whose gradient is a random upstream one."""
    total = 0
    for o, w in zip(outs, weights):
        if w is not None:
            total = total + (o * make(w)).sum()
    return total


def _weights(outs, rng):
    return [rng.standard_normal(tuple(o.shape)) if str(o.dtype).replace("torch.", "")
            .startswith("float") else None for o in outs]


def check_vs_torch(case, device, dtype):
    torch = pytest.importorskip("torch")
    arrays = case.arrays()
    xs = [mg.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    outs, refs = as_list(case.fn(*xs)), as_list((case.torch_fn or case.fn)(*ts))
    assert len(outs) == len(refs)
    for i, (o, r) in enumerate(zip(outs, refs)):
        assert o.device == device, f"{case}: output {i} on {o.device}, inputs on {device}"
        assert str(o.dtype) == str(r.dtype).replace("torch.", ""), \
            f"{case}: output {i} has dtype {o.dtype}, torch gives {r.dtype}"
        assert_close(o.numpy(), _np(r), dtype, f"{case} forward {i}")

    weights = _weights(refs, np.random.default_rng(1))
    _loss(outs, weights, lambda w: mg.tensor(w, dtype=dtype, device=device)).backward()
    _loss(refs, weights, lambda w: torch.tensor(w, dtype=getattr(torch, dtype))).backward()
    for i, (x, t) in enumerate(zip(xs, ts)):
        expected = np.zeros(t.shape) if t.grad is None else _np(t.grad)
        assert x.grad is not None, f"{case}: input {i} got no gradient"
        assert x.grad.dtype == x.dtype and x.grad.device == device, \
            f"{case}: grad {i} is {x.grad.dtype} on {x.grad.device}, input {x.dtype} on {device}"
        assert_close(x.grad.numpy(), expected, dtype, f"{case} grad {i}")

    # mg.grad gives the same gradients, in the inputs' dtype (no silent upcast on the way)
    fresh = [mg.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    loss = _loss(as_list(case.fn(*fresh)), weights,
                 lambda w: mg.tensor(w, dtype=dtype, device=device))
    for i, (g, x) in enumerate(zip(mg.grad(loss, fresh, allow_unused=True), xs)):
        if g is not None:
            assert g.dtype == x.dtype, f"{case}: mg.grad {i} has dtype {g.dtype}, not {x.dtype}"
            assert_close(g.numpy(), x.grad.numpy(), dtype, f"{case} mg.grad {i}")


def check_gradcheck(case, device):
    xs = [mg.tensor(a, dtype="float64", device=device, requires_grad=True)
          for a in case.arrays()]
    if case.np_fn is not None:
        outs, refs = as_list(case.fn(*xs)), as_list(case.np_fn(*case.arrays()))
        for i, (o, r) in enumerate(zip(outs, refs)):
            assert_close(o.numpy(), r, "float64", f"{case} forward {i} vs NumPy")
    assert mg.gradcheck(case.fn, xs)
    if case.gradgrad:
        assert mg.gradgradcheck(case.fn, xs)


def _mg_second_order(fn, arrays, device):
    """(outputs, dL/dx, d(Σ dL/dx·v)/dx) in float64, L = Σ out·w with fixed random w, v."""
    rng = np.random.default_rng(2)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    xs = [mg.tensor(a, dtype="float64", device=device, requires_grad=True) for a in arrays]
    outs = as_list(fn(*xs))
    weights = _weights(outs, np.random.default_rng(1))
    loss = _loss(outs, weights, lambda w: mg.tensor(w, dtype="float64", device=device))
    gs = mg.grad(loss, xs, create_graph=True, allow_unused=True)
    s = _loss([g for g in gs if g is not None], [v for g, v in zip(gs, vs) if g is not None],
              lambda v: mg.tensor(v, dtype="float64", device=device))
    hvp = mg.grad(s, xs, allow_unused=True) if getattr(s, "requires_grad", False) \
        else [None] * len(xs)
    as_np = lambda ts: [np.zeros(a.shape) if t is None else t.numpy()  # noqa: E731
                        for t, a in zip(ts, arrays)]
    return [o.numpy() for o in outs], as_np(gs), as_np(hvp)


def check_double_backward_vs_torch(case, device):
    """d/dx of (Σ dL/dx · v), L = Σ out·w: a Hessian-vector product, both libraries."""
    torch = pytest.importorskip("torch")
    arrays = case.arrays()
    _, gs, hvp = _mg_second_order(case.fn, arrays, device)

    rng = np.random.default_rng(2)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    t_outs = as_list((case.torch_fn or case.fn)(*ts))
    t_loss = _loss(t_outs, _weights(t_outs, np.random.default_rng(1)), torch.tensor)
    t_gs = torch.autograd.grad(t_loss, ts, create_graph=True, allow_unused=True)
    t_s = _loss([g for g in t_gs if g is not None],
                [v for g, v in zip(t_gs, vs) if g is not None], torch.tensor)
    t_hvp = torch.autograd.grad(t_s, ts, allow_unused=True) if getattr(
        t_s, "requires_grad", False) else [None] * len(ts)

    for what, mine, theirs in (("grad", gs, t_gs), ("grad of grad", hvp, t_hvp)):
        for i, (m, t) in enumerate(zip(mine, theirs)):
            t = np.zeros(arrays[i].shape) if t is None else _np(t)
            assert_close(m, t, "float64", f"{case} {what} {i}")


def check_fused_vs_unfused(fused, unfused, arrays, device, what=""):
    """A fused op against its composition from primitive minigrad ops: forward, gradient and
    second order, in float64."""
    for kind, a, b in zip(("forward", "grad", "grad of grad"),
                          _mg_second_order(fused, arrays, device),
                          _mg_second_order(unfused, arrays, device)):
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, "float64", f"{what} fused vs unfused: {kind} {i}")


def check_on_spy(case, device="spy"):
    """The case's forward and backward on the spy device (the stand-in for CuPy): no op
    reaches NumPy behind the backend's back, values match the NumPy formula, gradients
    stay on the device."""
    xs = [mg.tensor(a, device=device, requires_grad=True) for a in case.arrays()]
    out = case.fn(*xs)
    out.sum().backward()
    np.testing.assert_allclose(out.numpy(), case.np_fn(*case.arrays()), rtol=1e-5)
    assert all(x.grad is not None and x.grad.device == device for x in xs)


def check_outputs_on_spy(case, spy):
    """check_on_spy for a case of one output or several: every output on the device and as
    NumPy's formula (to float32's tolerance), every gradient on the device."""
    arrays = case.arrays()
    xs = [mg.tensor(a, device=spy, requires_grad=True) for a in arrays]
    outs = as_list(case.fn(*xs))
    sum(o.sum() for o in outs if o.requires_grad).backward()
    for i, (o, r) in enumerate(zip(outs, as_list(case.np_fn(*arrays)))):
        assert o.device == spy
        assert_close(o.numpy(), np.asarray(r), "float32", f"{case} output {i}")
    assert all(x.grad is not None and x.grad.device == spy for x in xs)


def _outputs_and_grads(fn, arrays, device):
    xs = [mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True) for a in arrays]
    outs = as_list(fn(*xs))
    sum((o * o).nansum() for o in outs if o.requires_grad).backward()
    return [o.numpy() for o in outs] + [x.grad.numpy() for x in xs]


def check_spy_matches_cpu(case, spy):
    """Forward and backward (of Σ out², NaN skipped) on the spy device (no NumPy behind the
    backend's back, as CuPy would refuse), equal to the CPU's in float64."""
    arrays = case.arrays()
    for s, c in zip(_outputs_and_grads(case.fn, arrays, spy),
                    _outputs_and_grads(case.fn, arrays, "cpu")):
        np.testing.assert_allclose(s, c, rtol=1e-12, atol=1e-12)


# kinks and bounds (0, ±1, 1.5, 6, 20), tails, infinities and NaN, for elementwise activations
SPECIAL_VALUES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-8, -1e-8, 0.5, -0.5, 1.0,
                           -1.0, 1.5, 3.0, -3.0, 6.0, 20.0, 21.0, -20.0, -100.0, 100.0,
                           1e30, -1e30])


def special_upstreams(n):
    """Two upstream gradients for n values: a finite one, and one with infinities and NaN
    (among them where SPECIAL_VALUES is -inf and -3, outside hardtanh's and relu6's range,
    where the gradient is exactly 0 as PyTorch's, not 0·inf)."""
    rng = np.random.default_rng(3)
    finite = rng.standard_normal(n)
    odd = finite.copy()
    odd[[1, 2, 8, 13, 18, 20]] = [np.inf, -np.inf, np.nan, np.inf, np.nan, -np.inf]
    return finite, odd


def check_fast_backward_everywhere(fn, dtype, device, what):
    """check_fast_backward at SPECIAL_VALUES under both special_upstreams, and at random
    values away from the kinks."""
    x = SPECIAL_VALUES.astype(dtype)
    for upstream in special_upstreams(x.size):
        check_fast_backward(fn, x, upstream, device, what)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 50)).astype(dtype) * 4
    check_fast_backward(fn, x, rng.standard_normal(x.shape), device, what)


def _fast_and_reference(fn, x, upstream, device):
    """(output, gradient by the fast backward, gradient by the reference backward) as NumPy
    arrays: ordinary backward runs an op's `backward_arrays`, create_graph=True its
    `backward`."""
    results = []
    for create_graph in (False, True):
        t = mg.tensor(x, device=device, requires_grad=True)          # x's dtype
        with np.errstate(invalid="ignore", over="ignore"):   # inf·0 of the odd values
            y = fn(t)
            assert callable(getattr(y._ctx, "backward_arrays", None)), \
                f"{type(y._ctx).__name__} has no fast backward to check"
            (g,) = mg.grad(y, [t], mg.tensor(upstream, dtype=t.dtype, device=device),
                           create_graph=create_graph)
        assert y.dtype == g.dtype == t.dtype, f"{y.dtype}, {g.dtype} from {t.dtype}"
        results.append((y.numpy(), g.numpy()))
    return results[0][0], results[0][1], results[1][1]


def check_fast_backward(fn, x, upstream, device="cpu", what=""):
    """The fast backward of the op `fn` ends in gives the gradient its reference gives, NaN
    where that is NaN, in x's dtype."""
    _, fast, reference = _fast_and_reference(fn, x, upstream, device)
    tol = TOL[str(x.dtype)]
    np.testing.assert_allclose(fast, reference, rtol=tol, atol=1e-30, equal_nan=True,
                               err_msg=f"{what}: fast backward != reference at {x}")


def check_special_values_vs_torch(fn, torch_fn, x, upstream, device="cpu", what=""):
    """Output and both gradients against PyTorch's, NaN and inf included."""
    torch = pytest.importorskip("torch")
    y, fast, reference = _fast_and_reference(fn, x, upstream, device)
    xt = torch.tensor(x, requires_grad=True)
    with np.errstate(invalid="ignore", over="ignore"):
        yt = torch_fn(xt)
        (gt,) = torch.autograd.grad(yt, xt, torch.tensor(upstream, dtype=xt.dtype))
    tol = TOL[str(x.dtype)]
    gt = _np(gt)
    if what.split()[0].split("_")[0] in _NAN_GRADIENT_VARIES:
        # PyTorch's elu kernels give NaN's gradient by the path they take (its float32
        # vectorised kernel on AVX-512 takes NaN as x > 0, other paths give NaN): ours is NaN
        nan_x = np.isnan(x)
        assert np.isnan(fast[nan_x]).all() and np.isnan(reference[nan_x]).all(), what
        gt = np.where(nan_x, np.nan, gt)
    for name, mine, theirs in (("output", y, _np(yt)), ("fast gradient", fast, gt),
                               ("reference gradient", reference, gt)):
        np.testing.assert_allclose(mine, theirs, rtol=tol, atol=1e-30, equal_nan=True,
                                   err_msg=f"{what}: {name} != PyTorch's at {x}")


_NAN_GRADIENT_VARIES = {"elu", "selu", "celu"}
