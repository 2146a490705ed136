"""Numerical gradient checks: central differences in float64 against autograd."""
from minigrad import backend
from minigrad.autograd import grad
from minigrad.tensor import Tensor


class GradcheckError(AssertionError):
    pass


def _prepare(inputs):
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    out = []
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            out.append(x)
            continue
        host = x.numpy()
        if host.dtype.kind == "f" and not backend.get("cpu").xp.isfinite(host).all():
            raise ValueError(f"gradcheck: input {i} contains NaN or inf; numerical gradients "
                             f"need finite inputs")
        if x.requires_grad:
            # a float64 leaf copy: central differences in float32 are too coarse to trust
            out.append(Tensor._make(_float64_like(x), x.device).requires_grad_())
        else:
            out.append(x)
    return out


def _float64_like(x):
    """x's values in float64, in an array of their own (perturbed in place below) laid out
    like x's: a transposed or sliced input stays non-contiguous, so an op is checked on the
    strided path it meets in use (a broadcast input's elements become independent)."""
    a = x._data.astype(backend.float64)             # order "K": a transpose keeps its layout
    if a.ndim and not x._data.flags.c_contiguous and a.flags.c_contiguous:
        # a sliced view: the values at every second element of a buffer twice as large
        big = x.backend.xp.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        a = big[..., ::2]
    return a


def _tensors(out):
    """The Tensors among fn's outputs: one Tensor, or tuples/lists of them, nested (a
    max(dim) inside a tuple gives (values, indices))."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


def _projected(fn, inputs, weights):
    """A scalar from fn's outputs: Σ outᵢ·wᵢ with fixed random w, so every output element
    and every input element is checked at the cost of one backward."""
    outs = _tensors(fn(*inputs))
    if not outs:
        raise ValueError("gradcheck: the function returned no Tensor")
    if weights is None:
        rng = backend.get("cpu").xp.random.default_rng(1234)
        weights = [Tensor(rng.standard_normal(o.shape), dtype=backend.float64, device=o.device)
                   for o in outs]
    total = None
    for o, w in zip(outs, weights):
        term = (o.double() * w).sum()
        total = term if total is None else total + term
    return total, weights


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, *,
              check_forward_ad=False, check_backward_ad=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, fast_mode=False, masked=None):
    """Compare autograd's gradient of `fn(*inputs)` with central differences, for every
    input that requires grad. Returns True, or raises naming the worst element (with
    raise_exception=False, returns False instead).

    Each such input is checked through a float64 copy (a float32 one too, without a warning:
    this checks the derivative, not float32 rounding, which the fast-path tests compare),
    laid out like the input (a strided input stays strided). Every Tensor fn returns, in
    tuples or lists however nested, enters the check.

    PyTorch's keywords: check_backward_ad (the reverse-mode gradient, as above) and
    check_forward_ad (forward_ad's tangents, element by element, against the same central
    differences) choose what is checked; the rest (nondet_tol, check_undefined_grad,
    check_batched_grad, fast_mode, ...) are taken and change nothing: minigrad's backward
    is deterministic, and vmap is a loop (no batched rule to check)."""
    inputs = _prepare(inputs)
    wrt = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad")
    loss, weights = _projected(fn, inputs, None)
    # a function linear in its inputs has a first gradient with no graph: its gradient is 0
    analytic = grad(loss, wrt, allow_unused=True) if loss.requires_grad and \
        check_backward_ad else [None] * len(wrt)
    for n, x in enumerate(wrt):
        xp = backend.get("cpu").xp
        a = (analytic[n].numpy() if analytic[n] is not None else xp.zeros(x.shape))
        numeric = xp.zeros(x.shape)
        for i in xp.ndindex(*x.shape):  # in place, through x's own (maybe strided) array
            orig = x._data[i].item()
            x._data[i] = orig + eps      # with grad on: fn may itself take gradients
            plus = _projected(fn, inputs, weights)[0].item()
            x._data[i] = orig - eps
            minus = _projected(fn, inputs, weights)[0].item()
            x._data[i] = orig
            numeric[i] = (plus - minus) / (2 * eps)
        # isclose, not `error > tolerance`: a NaN on either side is a mismatch (a NaN
        # compares False with everything, so it passed), equal infinities are not
        for kind, a in (("gradient", a if check_backward_ad else None),
                        ("forward AD tangent",
                         _forward_columns(fn, inputs, weights, wrt, n)
                         if check_forward_ad else None)):
            if a is not None and not _agrees(a, numeric, x, n, kind, atol, rtol,
                                             raise_exception):
                return False
    return True


def _forward_columns(fn, inputs, weights, wrt, n):
    """Σ w·(J eᵢ) for each element i of input wrt[n], by forward AD: the projected output's
    derivative along each unit tangent, as the central differences give it."""
    from minigrad.autograd import forward_ad
    xp = backend.get("cpu").xp
    x, out = wrt[n], xp.zeros(wrt[n].shape)
    for i in xp.ndindex(*x.shape):
        e = xp.zeros(x.shape)
        e[i] = 1.0
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, Tensor._make(e, x.device))
            outs = _tensors(fn(*[dual if t is x else t for t in inputs]))
            total = 0.0
            for o, w in zip(outs, weights):
                t = forward_ad.unpack_dual(o).tangent
                if t is not None:
                    total += float((t.double() * w).sum().item())
        out[i] = total
    return out


def _agrees(a, numeric, x, n, kind, atol, rtol, raise_exception):
    """Whether `a` (autograd's) is close to the central differences; else raises."""
    xp = backend.get("cpu").xp
    close = xp.isclose(a, numeric, rtol=rtol, atol=atol)
    if not close.all():
        if not raise_exception:
            return False
        with xp.errstate(invalid="ignore"):
            err = abs(a - numeric) - (atol + rtol * abs(numeric))
        err = xp.where(close, -xp.inf, xp.where(xp.isnan(err), xp.inf, err))
        worst = tuple(int(j) for j in divmod_index(err.argmax(), x.shape))
        raise GradcheckError(
            f"gradcheck: {kind} of input {n} (shape {x.shape}) differs at {worst}: "
            f"analytic {a[worst]:.10g}, numeric {numeric[worst]:.10g} "
            f"(atol={atol}, rtol={rtol})")
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-4, rtol=1e-3,
                  raise_exception=True, **_ignored):
    """Check second derivatives: gradcheck the (projected) first gradient, which autograd
    computes with create_graph=True. grad_outputs: the vectors the first gradient is
    taken against (random ones by default); other PyTorch keywords change nothing."""
    inputs = _prepare(inputs)
    wrt_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    weights = [] if grad_outputs is None else [w.double() for w in _tensors(grad_outputs)]

    def first_grad(*xs):
        loss, w = _projected(fn, xs, weights or None)
        if not weights:
            weights.extend(w)
        gs = grad(loss, [xs[i] for i in wrt_idx], create_graph=True, allow_unused=True)
        return [g for g in gs if g is not None]
    return gradcheck(first_grad, inputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def divmod_index(flat_index, shape):
    return backend.get("cpu").xp.unravel_index(int(flat_index), shape) if shape else ()
