"""Gradient clipping: `clip_grad_norm_` (as torch.nn.utils) and `clip_grad_value_`.

Gradients are rescaled by assigning a new tensor (p.grad = p.grad * coef), never in place:
plain backward() stores a fresh array in each .grad, but a gradient stored with
create_graph=True, or assigned by hand, may be an array that another tensor holds too, and
scaling it in place would scale it once per holder."""
from minigrad import backend
from minigrad.autograd import no_grad
from minigrad.tensor import Tensor


def _with_grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so that their global norm (the norm of the vector of all
    gradient elements) is at most `max_norm`. Returns the norm before clipping, as a 0-d
    tensor (float(...) gives the number).

        coef = min(1, max_norm / (total_norm + 1e-6));  g ← g · coef

    `foreach` (PyTorch's name): take the norm of all gradients concatenated, in a few array
    operations, instead of one norm per gradient and their sum (a few per parameter); on a
    GPU each operation is a kernel launch. The concatenation is then scaled once, and each
    .grad becomes a view of its part of it (where the gradients share a dtype). None
    (default): on for GPU gradients, off on the CPU. Either way the result is the same up to
    rounding (the sums are ordered differently).
    """
    params = _with_grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not params:
        return Tensor(0.0)
    # everything stays on the device (no sync per parameter); the sums are 0-d arrays
    first = params[0].grad
    xp, dtype = first.backend.xp, first.dtype
    # float16 squares overflow (a norm above 256 would be inf and zero every gradient):
    # float16 gradients are summed in float32, and a float16 norm is returned as float32
    grads = [g.astype(backend.float32) if g.dtype == backend.float16 else g
             for g in (p.grad.data for p in params)]
    if dtype == backend.float16:
        dtype = backend.float32
    flat = None
    if foreach if foreach is not None else not first.backend.host:
        grads = [xp.concatenate([g.reshape(-1) for g in grads])]
        # ours, scaled in place below; not for a parameter listed twice (then scaled twice,
        # as PyTorch's per-gradient multiply does)
        if all(p.grad.dtype == grads[0].dtype for p in params) and \
                len({id(p) for p in params}) == len(params):
            flat = grads[0]
    if norm_type == float("inf"):
        total = xp.max(xp.stack([xp.abs(g).max() if g.size else xp.zeros((), dtype=g.dtype)
                                 for g in grads]))
    elif norm_type == -float("inf"):                     # the smallest |g|
        total = xp.min(xp.stack([xp.abs(g).min() for g in grads if g.size] or
                                [xp.full((), float("inf"), dtype)]))
    elif norm_type == 0.0:
        # how many elements are nonzero: the 0-"norm" of all elements as one vector, as the
        # other orders. (PyTorch takes it of the per-gradient counts, so it counts the
        # gradients that have a nonzero element; for every p > 0 the two agree)
        total = sum(xp.count_nonzero(g) for g in grads)
    elif norm_type == 2.0:
        # Σg² as a BLAS dot product: one pass, no g*g temporary
        total = xp.sqrt(sum(xp.vdot(g.reshape(-1), g.reshape(-1)) for g in grads))
    else:
        total = sum(xp.sum(xp.abs(g) ** norm_type) for g in grads) ** (1.0 / norm_type)
    total = xp.asarray(total).astype(dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):   # the one sync, when asked
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is {float(total)}, so they cannot be clipped; pass "
                           f"error_if_nonfinite=False to clip anyway")
    coef = xp.minimum(max_norm / (total + 1e-6), 1.0)
    # within the norm the factor is 1 and g·1 is g to the bit: the host skips the multiply (a
    # pass over every gradient); a GPU always multiplies, as deciding would need a sync
    if first.backend.host and coef >= 1:
        return Tensor._make(total, first.device)
    if flat is not None:     # one multiply, then each .grad a view of its part (no launch)
        flat *= coef.astype(flat.dtype)
        start = 0
        for p in params:
            n = p.grad.numel()
            p.grad = Tensor._make(flat[start:start + n].reshape(p.grad.shape), p.grad.device)
            start += n
        return Tensor._make(total, first.device)
    coefs = {}                                           # the factor in each grad dtype, once
    for p in params:
        c = coefs.get(p.grad.dtype)
        if c is None:
            c = coefs[p.grad.dtype] = coef.astype(p.grad.dtype)
        p.grad = Tensor._make(p.grad.data * c, p.grad.device)
    return Tensor._make(total, first.device)


@no_grad()
def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _with_grads(parameters):
        p.grad = Tensor._make(p.grad.backend.xp.clip(p.grad.data, -clip_value, clip_value),
                              p.grad.device)


def functional_call(module, parameters, args=(), kwargs=None):
    """module(*args, **kwargs) with some parameters replaced by the tensors in `parameters`
    (name -> Tensor, names as in named_parameters), as torch.func.functional_call. A tied
    parameter (GPT's head and token embedding) is replaced under every name it has, as
    PyTorch's tie_weights=True. The module's own parameters are restored afterwards. Useful
    for gradient checks of a layer and for computing with weights that are themselves
    outputs of a graph."""
    owners = dict(module.named_modules())
    slots = {}                                   # id(Parameter) -> every (module, name) of it
    for m in owners.values():
        for n, p in m._parameters.items():
            if p is not None:
                slots.setdefault(id(p), []).append((m, n))
    given = {}                                   # id(original Parameter) -> its new tensor
    for name, t in parameters.items():
        mname, _, pname = name.rpartition(".")
        owner = owners.get(mname)
        if owner is None or owner._parameters.get(pname) is None:
            raise KeyError(f"functional_call: {type(module).__name__} has no parameter "
                           f"{name!r}")
        if given.setdefault(id(owner._parameters[pname]), t) is not t:
            raise ValueError(f"functional_call: {name!r} is tied to a parameter given "
                             f"another tensor under another name; tied names take one")
    saved = [(m, n, m._parameters[n]) for key in given for m, n in slots[key]]
    try:
        for m, n, p in saved:
            m._parameters[n] = given[id(p)]
        if not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, pname, p in saved:
            owner._parameters[pname] = p
