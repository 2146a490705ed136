"""`mg.func`, as torch.func: function transforms. `grad`, `grad_and_value`, `vjp`,
`jacrev`, `hessian` and `jacfwd` turn a function of Tensors into one that computes its
derivatives; `vmap` maps a function over a dim of its inputs; `functional_call` runs a
Module with other tensors in place of its parameters and buffers. They compose:
`vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)` gives per-sample gradients.

Arguments and results may be nested tuples, lists and dicts of Tensors (PyTorch's
"pytrees"): a gradient has the structure of its argument.

How, in minigrad. PyTorch's transforms are levels of one interpreter; here each is a
plain function on the reverse-mode engine, with the same results:
- grad and friends call the function on fresh tensors made from the arguments they
  differentiate (a view of an argument that requires grad, so that an outer transform or
  backward can still differentiate through; a detached copy otherwise) and take mg.grad.
  The backward records a graph (create_graph) only where the result has to stay
  differentiable: grad mode on and the function's output reaching a tensor requiring grad
  from outside (an outer grad's input, a captured weight). So grad(grad(f)) works, and a
  result that depends on nothing outside is a plain tensor, as PyTorch's.
- jacrev takes one backward per element of the output; `jacfwd` and `hessian` (PyTorch's
  forward-over-reverse) are the same reverse-mode Jacobians here: minigrad has no
  forward-mode engine, so jacfwd gives jacrev's values at jacrev's cost; `jvp` and
  `linearize` take J·v by double backward (func_more.py, with functionalize,
  stack_module_state and replace_all_batch_norm_modules_).
- vmap runs the function once per index of the mapped dim and stacks the results: the
  values PyTorch's gives, not its speed (see vmap).
vmap is func_vmap.py's, functional_call func_call.py's, the pytrees pytree.py's.
"""
import functools
import weakref

from minigrad.autograd import grad as _mg_grad
from minigrad.creation import zeros, zeros_like
from minigrad.grad_mode import enable_grad, is_grad_enabled
from minigrad.ops.shape import stack
from minigrad.tensor import Tensor
from minigrad.pytree import _count_leaves, _flatten, _spec_str, _unflatten


# ---- differentiation

def _argnums_tuple(argnums, nargs):
    """argnums (an int or a non-empty tuple of ints, negatives from the end) as a tuple of
    positions of args."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    if not single and not (isinstance(argnums, tuple) and all(
            isinstance(a, int) and not isinstance(a, bool) for a in argnums)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = (argnums,) if single else argnums
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    nums = tuple(a % nargs for a in nums)
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return nums


class _Inputs:
    """The arguments `argnums` picks out of args, as fresh tensors to differentiate with
    respect to (see the module docstring), and args with them in place."""

    def __init__(self, args, argnums):
        self.nums = _argnums_tuple(argnums, len(args))
        self.single = not isinstance(argnums, tuple)
        self.outer = is_grad_enabled()
        self.specs, self.leaves = [], []
        args = list(args)
        for n in self.nums:
            leaves, spec = _flatten(args[n])
            for x in leaves:
                if not isinstance(x, Tensor):
                    raise ValueError(f"Thing passed to transform API must be Tensor, got "
                                     f"{type(x)}")
            fresh = [x.view_as(x) if self.outer and x.requires_grad else
                     x.detach().requires_grad_(True) for x in leaves]
            args[n] = _unflatten(fresh, spec)
            self.specs.append(spec)
            self.leaves += fresh
        self.args = tuple(args)
        self.own = {id(x) for x in self.leaves if x.is_leaf}

    def spent(self):
        """The transform is done with its fresh leaves: to transforms around it, which may
        still reach them through its results, they are constants, not tensors from outside
        (grad(lambda w: grad(f)(x, w).sum())(w) with plain x and w gives a plain result)."""
        for x in self.leaves:
            if x.is_leaf:
                _SPENT[id(x)] = x

    def differentiable(self, outputs):
        """Whether results from these outputs must stay differentiable: grad mode was on
        and the outputs reach a tensor requiring grad that the transform did not make."""
        return self.outer and _reaches_outside(outputs, self.own)

    def structured(self, flat):
        """Per-leaf results (one per fresh tensor) in the arguments' structure."""
        out, k = [], 0
        for spec in self.specs:
            n = _count_leaves(spec)
            out.append(_unflatten(flat[k:k + n], spec))
            k += n
        return out[0] if self.single else tuple(out)

    def grads(self, outputs, grad_outputs, create_graph, retain_graph=True):
        """The gradients (zeros where none) with respect to the fresh tensors."""
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
        if not pairs:
            return [zeros_like(x) for x in self.leaves]
        found = _mg_grad([o for o, _ in pairs], self.leaves, [g for _, g in pairs],
                         retain_graph=retain_graph or create_graph, create_graph=create_graph,
                         allow_unused=True)
        return [zeros_like(x) if g is None else g for g, x in zip(found, self.leaves)]


# id -> fresh leaf, of the transforms that have finished (_Inputs.spent); an entry goes
# with its tensor, so an id is not mistaken for a later tensor's
_SPENT = weakref.WeakValueDictionary()


def _reaches_outside(outputs, own):
    """Whether the graph below `outputs` reaches a leaf requiring grad whose id is not in
    `own` nor a finished transform's (or a node whose graph a backward already freed: made
    outside too)."""
    stack_, seen = [o for o in outputs if isinstance(o, Tensor) and o.requires_grad], set()
    while stack_:
        t = stack_.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        ctx = t._ctx
        if ctx is None:
            if id(t) not in own and id(t) not in _SPENT:
                return True
        elif ctx.inputs is None:
            return True
        else:
            stack_ += [p for p in ctx.inputs if p.requires_grad]
    return False


def _plain(tree, keep):
    """tree with its Tensors detached, unless `keep` (results that stay differentiable)."""
    if keep:
        return tree
    leaves, spec = _flatten(tree)
    return _unflatten([x.detach() if isinstance(x, Tensor) else x for x in leaves], spec)


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}: output of function f should be a tuple: (output, aux) "
                           f"if has_aux is True")
    for x in _flatten(out[1])[0]:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return out


def grad_and_value(func, argnums=0, has_aux=False):
    """A function that returns (the gradient of func, func's value) at its arguments, as
    torch.func.grad_and_value: func must return a 0-d Tensor (or (it, aux) with
    has_aux=True: then ((gradient, (value, aux)))). The gradient has the structure of
    argument `argnums` (an int), or is a tuple of them (a tuple of ints)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        name = "grad_and_value(f)(*args)"
        inputs = _Inputs(args, argnums)
        with enable_grad():
            out, aux = _split_aux(func(*inputs.args, **kwargs), has_aux, name)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{name}: Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            if out.ndim != 0:
                raise RuntimeError(f"{name}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.ndim} dims. Maybe you wanted to use the "
                                   f"vjp or jacrev APIs instead?")
            keep = inputs.differentiable([out])
            grads = inputs.grads([out], [None], keep)
        inputs.spent()
        grads = inputs.structured(_plain(grads, keep))
        value = _plain(out, keep)
        return (grads, (value, _plain(aux, keep))) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function that returns the gradient of func (0-d Tensor output) with respect to
    argument(s) `argnums` at its arguments, as torch.func.grad; with has_aux=True func
    returns (output, aux) and so does this one: (gradient, aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn), as torch.func.vjp: vjp_fn(cotangents), cotangents of the
    output's structure and shapes, returns the vector-Jacobian products, a tuple with one
    per primal (each of its structure). vjp_fn may be called again. With has_aux=True func
    returns (output, aux) and this (output, vjp_fn, aux). vjp_fn's retain_graph=False
    frees the graph (one call only); create_graph=True makes its results differentiable
    (default: where they depend on tensors requiring grad from outside, as above)."""
    inputs = _Inputs(primals, tuple(range(len(primals)))) if primals else None
    if inputs is None:
        raise RuntimeError("vjp(f, *primals): expected at least one primal")
    with enable_grad():
        out, aux = _split_aux(func(*inputs.args), has_aux, "vjp(f, *primals)")
    outputs, out_spec = _flatten(out)
    for x in outputs:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only "
                               f"tensors, got unsupported type {type(x)}")
    keep = inputs.differentiable(outputs)
    inputs.spent()

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        tangents, spec = _flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{_spec_str(spec)}, primal output: {_spec_str(out_spec)}")
        for i, (v, o) in enumerate(zip(tangents, outputs)):
            if not isinstance(v, Tensor):
                raise RuntimeError(f"vjp_fn: expected the cotangents to be Tensors, got "
                                   f"{type(v)} at {i}")
            if v.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{v.shape} and output[{i}] has a shape of {o.shape}.")
        create = create_graph if create_graph is not None else \
            is_grad_enabled() and (keep or any(v.requires_grad for v in tangents))
        with enable_grad():
            grads = inputs.grads(outputs, tangents, create, retain_graph)
        return tuple(inputs.structured(_plain(grads, create)))

    value = _plain(out, keep)
    return (value, vjp_fn, _plain(aux, keep)) if has_aux else (value, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function that returns the Jacobian of func with respect to argument(s) `argnums`,
    as torch.func.jacrev: for each output Tensor (in func's output structure) the
    Jacobians for each argument, shaped output.shape + argument.shape, in the argument's
    structure (a tuple of them for a tuple `argnums`). One backward per output element
    (`chunk_size` is accepted and changes nothing)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        inputs = _Inputs(args, argnums)
        with enable_grad():
            out, aux = _split_aux(func(*inputs.args, **kwargs), has_aux, "jacrev(f)(*args)")
            outputs, out_spec = _flatten(out)
            for x in outputs:
                if not isinstance(x, Tensor):
                    raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return "
                                       f"only tensors, got unsupported type {type(x)}")
            keep = inputs.differentiable(outputs)
            jacobians = [inputs.structured(_plain(_jacobian(o, inputs, keep), keep))
                         for o in outputs]
        inputs.spent()
        jac = _unflatten(jacobians, out_spec)
        return (jac, _plain(aux, keep)) if has_aux else jac
    return wrapper


def _jacobian(out, inputs, create_graph):
    """d out / d each fresh input, shaped out.shape + input.shape: row k is the gradient of
    out's element k."""
    rows = [inputs.grads([element], [None], create_graph) for element in out.reshape(-1)] \
        if out.requires_grad else []
    return [stack([r[j] for r in rows]).reshape(out.shape + x.shape) if rows else
            zeros(out.shape + x.shape, dtype=x.dtype, device=x.device)
            for j, x in enumerate(inputs.leaves)]


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd's Jacobian, same structure and values, computed by reverse mode
    (jacrev): one backward per output element is cheaper here than a J·v per input
    element by double backward (module docstring). `randomness` is accepted for the
    signature: no vmap runs here."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                           f"or 'same'. Got {randomness}")
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of func (0-d output) with respect to argument(s) `argnums`, as
    torch.func.hessian: the Jacobian of its gradient, nested as jacrev(jacrev(func))."""
    return jacrev(jacrev(func, argnums), argnums)


# vmap and functional_call live in files of their own
from minigrad.func_call import functional_call  # noqa: E402,F401
from minigrad.func_vmap import vmap  # noqa: E402,F401
from minigrad.func_more import (jvp, linearize, functionalize,  # noqa: E402,F401
                                stack_module_state, replace_all_batch_norm_modules_)
