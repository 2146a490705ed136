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
  forward-mode AD, so jacfwd gives jacrev's values at jacrev's cost, and there is no
  func.jvp (mg.autograd.functional.jvp computes one by double backward).
- vmap runs the function once per index of the mapped dim and stacks the results: the
  values PyTorch's gives, not its speed (see vmap).
"""
import functools
import threading
import weakref

from minigrad import backend
from minigrad.autograd import grad as _mg_grad
from minigrad.creation import zeros, zeros_like
from minigrad.grad_mode import enable_grad, is_grad_enabled
from minigrad.ops.shape import stack
from minigrad.tensor import Tensor


# ---- pytrees: nested tuples, lists and dicts, flattened to their leaves and back

def _flatten(tree):
    """(leaves, spec): the leaves of tree in order, and what _unflatten needs to rebuild
    it. A spec is None for a leaf, else (type, dict keys or None, [child specs]); None
    itself is a tree with no leaves, as in PyTorch."""
    if tree is None:
        return [], (type(None), None, [])
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            sub, spec = _flatten(x)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), None, specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for x in tree.values():
            sub, spec = _flatten(x)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), list(tree), specs)
    return [tree], None


def _unflatten(leaves, spec):
    return _build(iter(leaves), spec)


def _build(leaves, spec):
    if spec is None:
        return next(leaves)
    kind, keys, specs = spec
    if kind is type(None):
        return None
    children = [_build(leaves, s) for s in specs]
    if keys is not None:
        return kind(zip(keys, children))
    return kind(*children) if hasattr(kind, "_fields") else kind(children)   # namedtuple


def _spec_str(spec):
    """A spec as PyTorch writes one: * for a leaf, (*, *) for a tuple of two."""
    if spec is None:
        return "*"
    kind, keys, specs = spec
    if kind is type(None):
        return "None"
    inner = ", ".join(_spec_str(s) if keys is None else f"{k!r}: {_spec_str(s)}"
                      for k, s in zip(keys or specs, specs))
    return "{" + inner + "}" if keys is not None else \
        "[" + inner + "]" if issubclass(kind, list) else "(" + inner + ("," if len(specs) == 1
                                                                      else "") + ")"


def _broadcast(prefix, spec):
    """One value of `prefix` per leaf of the tree `spec` describes, where prefix is a tree
    whose leaves (ints or None) each stand for a whole subtree; None if they do not fit."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * _count_leaves(spec)
    if spec is None:
        return None
    kind, keys, specs = spec
    if isinstance(prefix, dict) != (keys is not None) or \
            (isinstance(prefix, list) != issubclass(kind, list)) or len(prefix) != len(specs):
        return None
    if keys is not None:
        if set(prefix) != set(keys):
            return None
        prefix = [prefix[k] for k in keys]
    out = []
    for p, s in zip(prefix, specs):
        sub = _broadcast(p, s)
        if sub is None:
            return None
        out += sub
    return out


def _count_leaves(spec):
    return 1 if spec is None else sum(_count_leaves(s) for s in spec[2])


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
    (jacrev): minigrad has no forward-mode AD (module docstring). `randomness` is accepted
    for the signature: no vmap runs here."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                           f"or 'same'. Got {randomness}")
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of func (0-d output) with respect to argument(s) `argnums`, as
    torch.func.hessian: the Jacobian of its gradient, nested as jacrev(jacrev(func))."""
    return jacrev(jacrev(func, argnums), argnums)


# ---- functional_call

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the parameters and buffers named in
    `parameter_and_buffer_dicts` (a dict name -> Tensor, names as in named_parameters and
    named_buffers, or a sequence of such dicts) swapped in for the call and the module's
    own put back afterwards, even if the call raises, as torch.func.functional_call.
    tie_weights: a tensor the module holds under several names (tied weights) is replaced
    under all of them. strict: every parameter and buffer must be given, and no other
    name. A name the module does not have is set as an attribute for the call (PyTorch
    does the same). A tensor the module assigns to a given name during the call (a
    BatchNorm's running statistics) ends up in that dict."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    for name, t in given.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"functional_call: {name!r} must be a Tensor, got "
                            f"{type(t).__name__}")
    names = {**dict(module.named_parameters(remove_duplicate=False)),
             **dict(module.named_buffers(remove_duplicate=False))}
    swap = _untied(names, given) if tie_weights else dict(given)
    if strict:
        unexpected = sorted(set(swap) - set(names))
        missing = sorted(set(names) - set(swap))
        errors = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected
                  else []) + ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing
                              else [])
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(errors))
    slots = [_Slot(module, name) for name in swap]       # (a missing submodule: raises)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    try:
        for slot in slots:
            slot.put(swap[slot.name])
        return module(*args, **(kwargs or {}))
    finally:
        # one place may have several names (a submodule registered twice): it is put back
        # once, by its last name, and what the call left there is told to each of them
        left = {}
        for slot in reversed(slots):
            place = (id(slot.owner), slot.attr)
            if place not in left:
                left[place] = slot.restore()
            now = left[place]
            if now is not None and isinstance(parameter_and_buffer_dicts, dict) and \
                    slot.name in parameter_and_buffer_dicts:
                parameter_and_buffer_dicts[slot.name] = now


def _untied(names, given):
    """given, plus each tensor given for a tied name under every other name of its tensor;
    two different tensors for one tied group are refused."""
    groups = {}
    for name, t in names.items():
        groups.setdefault(id(t), []).append(name)
    out = dict(given)
    for group in groups.values():
        named = [n for n in group if n in given]
        if len(group) < 2 or not named:
            continue
        if len({id(given[n]) for n in named}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, "
                             f"which are tied. Consider using tie_weights=False")
        for n in group:
            out[n] = given[named[0]]
    return out


class _Slot:
    """One place (a module's parameter, buffer or plain attribute) a tensor is swapped
    into, and what was there."""

    def __init__(self, module, name):
        path, _, self.attr = name.rpartition(".")
        self.name, self.owner = name, module
        for part in path.split(".") if path else []:
            child = self.owner._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(self.owner).__name__} has no attribute `{part}`")
            self.owner = child
        self.store = self.owner._parameters if self.attr in self.owner._parameters else \
            self.owner._buffers if self.attr in self.owner._buffers else None
        self.had = self.attr in self.owner.__dict__ if self.store is None else True
        self.was = self.store[self.attr] if self.store is not None else \
            self.owner.__dict__.get(self.attr)

    def put(self, t):
        if self.store is not None:      # (any Tensor: a Parameter's store takes it as is)
            self.store[self.attr] = t
        else:
            object.__setattr__(self.owner, self.attr, t)
        self.put_in = t

    def restore(self):
        """Put the module's own back; returns what the call left there if it assigned
        another tensor (else None)."""
        if not hasattr(self, "put_in"):
            return None
        if self.store is not None:
            now = self.store.get(self.attr)
            self.store[self.attr] = self.was
        else:
            now = self.owner.__dict__.get(self.attr)
            if self.had:
                object.__setattr__(self.owner, self.attr, self.was)
            else:
                self.owner.__dict__.pop(self.attr, None)
        return now if now is not self.put_in and isinstance(now, Tensor) else None


# ---- vmap

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                 "either use the 'same' or 'different' randomness flags on vmap or perform "
                 "the randomness operation out of vmap")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dim `in_dims` of its arguments, as torch.func.vmap: the results
    for each index stacked along `out_dims`. in_dims: an int (every argument), or a tuple
    with one entry per argument, each an int, None (not mapped) or a nested structure
    matching the argument's; keyword arguments are not mapped. out_dims likewise for the
    output (None: an output that is the same for every index, returned once).

    Honestly a loop: func runs once per index, on the argument slices, and the results
    are stacked. The values are PyTorch's (vmap(grad(f)) gives per-sample gradients,
    nested vmaps work, gradients flow back through), the speed is a Python loop's, not
    one batched op's; func also may do what PyTorch's refuses inside vmap (.item(), data-
    dependent Python control flow). A mapped dim of size 0 is refused (nothing would run
    to tell the output's shape). randomness: 'error' refuses a draw from the default
    generators inside func (PyTorch's error), 'different' lets each index draw its own,
    'same' gives every index the same draws (the generators restarted from one state per
    index). chunk_size is checked, and changes nothing."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                           f"or 'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        leaves, spec, dims, size = _mapped_inputs(name, in_dims, args)
        results = []
        with _Randomness(randomness):
            for b in _Randomness.indices(randomness, size):
                part = [x if d is None else x.select(d, b) for x, d in zip(leaves, dims)]
                results.append(func(*_unflatten(part, spec), **kwargs))
        return _stacked(name, results, out_dims)
    return wrapped


def _mapped_inputs(name, in_dims, args):
    """(leaves of args, their spec, each leaf's in_dim (non-negative, or None), the
    mapped size), checked as PyTorch's vmap checks them."""
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    leaves, spec = _flatten(args)
    dims = _broadcast(in_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure "
                         f"{_spec_str(_flatten(in_dims)[1])} but inputs has structure "
                         f"{_spec_str(spec)}.")
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    for i, (x, d) in enumerate(zip(leaves, dims)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {x.ndim} so expected in_dim to "
                             f"satisfy -{x.ndim} <= in_dim < {x.ndim}.")
        dims[i] = d % x.ndim
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if sizes[0] == 0:
        raise ValueError(f"vmap({name}): the mapped dimension has size 0; minigrad's vmap "
                         f"runs the function once per index, so nothing would tell the "
                         f"shape of its output")
    return leaves, spec, dims, sizes[0]


def _stacked(name, results, out_dims):
    """The per-index results of func as vmap's output: each Tensor stacked along its
    out_dim, each out_dim None output given once."""
    flat, spec = _flatten(results[0])
    if not isinstance(out_dims, (int, tuple, list, dict, type(None))) or \
            isinstance(out_dims, bool) or any(
                d is not None and (not isinstance(d, int) or isinstance(d, bool))
                for d in _flatten(out_dims)[0]):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         f"None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    if spec is None and isinstance(out_dims, tuple) and len(out_dims) == 1:
        out_dims = out_dims[0]          # (PyTorch's: one Tensor out, out_dims=(d,))
    dims = _broadcast(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         f"compatible with the structure of `outputs`. out_dims has structure "
                         f"{_spec_str(_flatten(out_dims)[1])} but outputs has structure "
                         f"{_spec_str(spec)}.")
    per_index = []
    for r in results:
        leaves, s = _flatten(r)
        if s != spec:
            raise ValueError(f"vmap({name}): the function returned {_spec_str(s)} for one "
                             f"index and {_spec_str(spec)} for another; it must return the "
                             f"same structure for each")
        per_index.append(leaves)
    out = []
    for k, d in enumerate(dims):
        values = [leaves[k] for leaves in per_index]
        if d is None:
            if isinstance(values[0], Tensor) and not all(       # (a NaN equals a NaN here)
                    v is values[0] or v.backend.xp.array_equal(v._data, values[0]._data,
                                                               equal_nan=True)
                    for v in values):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None (output {k} differs between "
                                 f"indices)")
            out.append(values[0])
            continue
        if not isinstance(values[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                             f"type {type(values[0])}. Did you mean to set out_dims= to "
                             f"None for output?")
        out.append(stack(values, dim=d))
    return _unflatten(out, spec)


class _Randomness:
    """vmap's randomness: 'error' puts a guard in the place of each device's generator
    (b.rng), which refuses draws made in this thread (other threads draw as ever);
    'same' hands out the index numbers, restarting the generators before each;
    'different' changes nothing."""

    def __init__(self, mode):
        self.mode, self.guarded = mode, []

    def __enter__(self):
        if self.mode == "error":
            me = threading.get_ident()
            for b in {id(b): b for b in backend._BACKENDS.values()}.values():
                if not isinstance(b.rng, _RefusingRng):       # (an outer vmap's stays)
                    b.rng = _RefusingRng(b.rng, me)
                    self.guarded.append(b)

    def __exit__(self, *exc):
        for b in self.guarded:
            if isinstance(b.rng, _RefusingRng):    # (unless func reseeded: keep that)
                b.rng = b.rng.rng

    @staticmethod
    def indices(mode, size):
        if mode != "same":
            yield from range(size)
            return
        from minigrad.utils.checkpoint import _copy_rng, _rng_states
        start = _rng_states()
        for b in range(size):
            for be, state in start:
                be.rng = _copy_rng(state)
            yield b


class _RefusingRng:
    """A device's generator inside vmap(randomness='error'): draws from the thread running
    the vmap raise PyTorch's error."""

    def __init__(self, rng, thread):
        self.rng, self.thread = rng, thread

    def __getattr__(self, name):
        if threading.get_ident() == self.thread and not name.startswith("__"):
            raise RuntimeError(_RANDOM_ERROR)
        return getattr(self.rng, name)
