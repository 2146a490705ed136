"""`mg.autograd.forward_ad`, as torch.autograd.forward_ad: forward-mode derivatives
(Jacobian-vector products) of any computation, written as

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        y_primal, y_tangent = forward_ad.unpack_dual(y)    # y_tangent = J_f(primal) · tangent

How, in minigrad, and what it costs. minigrad has no forward-mode engine: every op has a
reverse-mode backward, twice differentiable. So a dual tensor here is a tensor that records
a graph (a fresh leaf, or a view of a primal that requires grad), and the level remembers
its tangent. `unpack_dual(y)` then takes J·v by the double-vjp trick: for a dummy u shaped
as y, uᵀJ is a backward of y (recorded, create_graph), linear in u, and J·v is the gradient
of uᵀJ·v with respect to u: a second backward. So each unpack of a new tensor costs two
backward passes through the part of the graph between the duals and it (PyTorch's costs
nothing more than the forward ops themselves, which carry the tangents along); the result
is cached per tensor until the level exits. The values are the same as PyTorch's.

Differences that follow from riding on graph recording:
- Ops run under mg.no_grad (or inference_mode) record nothing, so forward AD cannot see
  them: in PyTorch tangents flow there too. unpack_dual under no_grad of a tensor with no
  dual ancestry raises rather than silently answer None while a level has duals.
- A dual tensor requires grad (PyTorch's does not, unless its primal does), so it refuses
  in-place ops as a leaf requiring grad does, and a backward inside the level may give it
  a .grad.
- A backward that frees the graph (no retain_graph) takes the tangents of the tensors it
  ran through with it: unpack_dual of one of them after it raises (PyTorch's answers).
- Tangents are plain tensors (not differentiable); one level at a time, as PyTorch.
"""
import collections
import contextlib
import weakref

from minigrad.backward import run_backward
from minigrad.grad_mode import enable_grad, is_grad_enabled

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


class _Level:
    """The duals made at the current level: id -> (dual, primal, tangent), and the tangents
    already computed: id -> (weak ref to the tensor, its version, tangent, whether its
    graph reaches past the duals)."""

    def __init__(self):
        self.duals, self.cache = {}, {}


_current = None          # the _Level in effect (PyTorch's levels are global too), or None


def enter_dual_level():
    """Start a forward AD level (only one at a time, as PyTorch); returns its number, 0."""
    global _current
    if _current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current = _Level()
    return 0


def exit_dual_level(*, level=None):
    """End the level: every dual made in it loses its tangent (unpack_dual then answers
    None for it)."""
    global _current
    if _current is None:
        raise RuntimeError("exit_dual_level: no forward AD level is active; enter one with "
                           "enter_dual_level() or `with dual_level():`")
    if level is not None and level != 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _current = None


@contextlib.contextmanager
def dual_level():
    """Context manager for a forward AD level: duals made inside are valid inside only."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level()


def make_dual(tensor, tangent, *, level=None):
    """A tensor with `tensor`'s values that carries `tangent` (same shape, a floating point
    Tensor) for forward AD at the current level. Reverse-mode gradients still reach
    `tensor` through it where `tensor` requires grad."""
    from minigrad.tensor import Tensor
    if _current is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level not in (None, 0):
        raise RuntimeError(f"make_dual: level {level} is not the current one (0)")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual: expected the {what} to be a Tensor, got "
                            f"{type(t).__name__}")
        if not t.is_floating_point():
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{t.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if tangent.device != tensor.device:
        raise RuntimeError(f"make_dual: the tangent is on {tangent.device} and the primal on "
                           f"{tensor.device}; move the tangent with .to(device) first")
    if id(tensor) in _current.duals or _duals_below(tensor, _current.duals)[0]:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           "gradient at the same level 0 is not supported.")
    with enable_grad():        # (a dual made under no_grad still links to its primal)
        dual = tensor.view_as(tensor) if tensor.requires_grad else \
            tensor.detach().requires_grad_(True)
    _current.duals[id(dual)] = (dual, tensor, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor` at the current level, as a namedtuple: its tangent is
    J·v summed over the duals it was computed from (None where there are none, or no level).
    Costs two backward passes the first time a tensor is asked (module docstring)."""
    from minigrad.tensor import Tensor
    level_ = _current
    if level not in (None, 0):
        raise RuntimeError(f"unpack_dual: level {level} is not the current one (0)")
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    if level_ is None:
        return UnpackedDualTensor(tensor, None)
    entry = level_.duals.get(id(tensor))
    if entry is not None:
        primal = entry[1]
        with enable_grad() if is_grad_enabled() else contextlib.nullcontext():
            return UnpackedDualTensor(primal.view_as(primal), entry[2])
    cached = level_.cache.get(id(tensor))      # (asked before: its graph may be freed since)
    if cached is not None and cached[0]() is tensor and cached[1] == tensor._version:
        return UnpackedDualTensor(tensor if cached[3] else tensor.detach(), cached[2])
    duals, outside, freed = _duals_below(tensor, level_.duals)
    if not duals:
        if level_.duals and freed:
            raise RuntimeError(
                "unpack_dual: this tensor's graph was freed by a backward, so its forward AD "
                "tangent can no longer be known (minigrad's forward AD rides on graph "
                "recording): unpack it before the backward, or pass retain_graph=True to it")
        if level_.duals and not is_grad_enabled() and not tensor.requires_grad:
            raise RuntimeError(
                "unpack_dual: this tensor has no forward AD tangent, but it may have been "
                "computed under mg.no_grad() (or inference_mode): minigrad's forward AD rides "
                "on graph recording, so ops under no_grad are invisible to it (PyTorch's "
                "tangents flow there). Compute it with grad mode on")
        return UnpackedDualTensor(tensor, None)
    tangent = jvp_by_double_vjp([tensor], [d for d, _, _ in duals],
                                [v for _, _, v in duals])[0]
    level_.cache[id(tensor)] = (weakref.ref(tensor), tensor._version, tangent, outside)
    # the primal keeps reverse-mode links only where they lead past the duals (PyTorch's
    # primal is a view, which requires grad where the computation does)
    return UnpackedDualTensor(tensor if outside else tensor.detach(), tangent)


def _duals_below(tensor, duals):
    """The entries of `duals` that `tensor`'s graph reaches (itself included), whether it
    also reaches a tensor requiring grad that is no fresh dual (so its values are
    differentiable in the ordinary, reverse-mode sense), and whether it meets a node a
    backward freed (past which duals may hide)."""
    found, outside, freed, seen, todo = {}, False, False, set(), [tensor]
    while todo:
        t = todo.pop()
        if id(t) in seen or not t.requires_grad:
            continue
        seen.add(id(t))
        entry = duals.get(id(t))
        if entry is not None:
            found[id(t)] = entry
            outside = outside or entry[1].requires_grad
        elif t._ctx is None or t._ctx.inputs is None:
            outside = True
            freed = freed or t._ctx is not None
        else:
            todo += t._ctx.inputs
    return list(found.values()), outside, freed


def jvp_by_double_vjp(outputs, inputs, tangents, create_graph=False):
    """J·v for each of `outputs` (Tensors) along `tangents` (one per tensor of `inputs`,
    which the outputs were computed from), by two backward passes: g = uᵀJ with a dummy u
    per output (recorded), then the gradient of Σ g·v with respect to the u's. Zeros for an
    output that depends on none of the inputs."""
    return second_vjp(outputs, first_vjp(outputs, inputs), tangents, create_graph)


def first_vjp(outputs, inputs):
    """The first pass: (live, us, gs), gs = uᵀJ recorded as a function of the dummies us
    (one per output of `live`: the floating ones requiring grad), one per input.

    u is ones, not zeros: uᵀJ is linear in u, so any u gives the same derivative, but a
    backward written as a function of g that is linear only piecewise (a custom Function's
    that splits g by sign, through log|g|) has the right derivative only away from g = 0. The
    pass runs no tensor hooks and fills no retain_grad .grad on the way (they are reverse
    mode's; PyTorch's forward mode runs no backward at all)."""
    from minigrad.creation import ones_like
    live = [k for k, o in enumerate(outputs) if o.requires_grad and o.is_floating_point()]
    if not live:
        return live, [], []
    with enable_grad(), _quiet([outputs[k] for k in live], inputs):
        us = [ones_like(outputs[k]).requires_grad_(True) for k in live]
        gs = run_backward([outputs[k] for k in live], us, retain_graph=True,
                          create_graph=True, inputs=list(inputs))
    return live, us, gs


def second_vjp(outputs, first, tangents, create_graph=False):
    """J·v for each of `outputs` from first_vjp's `first`, along `tangents` (one per
    input): one backward pass, the gradient of Σ g·v with respect to the u's."""
    from minigrad.creation import zeros_like
    live, us, gs = first
    results = [zeros_like(o).detach() for o in outputs]
    pairs = [(g, v.to(g.dtype) if v.dtype != g.dtype else v)
             for g, v in zip(gs, tangents) if g is not None and g.requires_grad]
    if not pairs:           # uᵀJ independent of u: J is 0 there (floor, sign, a constant)
        return results
    with enable_grad():
        found = run_backward([g for g, _ in pairs], [v for _, v in pairs], retain_graph=True,
                             create_graph=create_graph, inputs=us)
    for k, g in zip(live, found):
        if g is not None:
            results[k] = g if create_graph else g.detach()
    return results


@contextlib.contextmanager
def _quiet(outputs, inputs):
    """The tensors between `inputs` and `outputs` keep their hooks and retain_grad off for
    the block (put back on exit)."""
    stop, seen, todo, saved = {id(t) for t in inputs}, set(), list(outputs), []
    while todo:
        t = todo.pop()
        if id(t) in seen or not t.requires_grad:
            continue
        seen.add(id(t))
        if t._hooks or t._retains_grad:
            saved.append((t, t._hooks, t._retains_grad))
            t._hooks, t._retains_grad = None, False
        if id(t) not in stop and t._ctx is not None and t._ctx.inputs is not None:
            todo += t._ctx.inputs
    try:
        yield
    finally:
        for t, hooks, retains in saved:
            t._hooks, t._retains_grad = hooks, retains
