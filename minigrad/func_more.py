"""More of `mg.func`, as torch.func: `jvp` and `linearize` (forward-mode derivatives),
`functionalize`, and the model-ensembling helpers `stack_module_state` and
`replace_all_batch_norm_modules_`.

jvp and linearize compute J·v by the double-vjp trick on the reverse-mode engine
(forward_ad.jvp_by_double_vjp): two backward passes for jvp, where PyTorch's forward mode
carries the tangents along the forward ops; the values are the same. linearize records
the first pass once, so each call of its jvp_fn is one backward pass.
"""
from minigrad.forward_ad import first_vjp, jvp_by_double_vjp, second_vjp
from minigrad.func import _Inputs, _plain, _split_aux
from minigrad.grad_mode import enable_grad, is_grad_enabled, no_grad
from minigrad.ops.shape import stack
from minigrad.pytree import _flatten, _spec_str, _unflatten
from minigrad.tensor import Tensor


def _tangent_leaves(primals, tangents, name):
    """The tangents' tensors, checked against the primals' structure, shapes and kinds."""
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if t_spec != p_spec:
        raise RuntimeError(f"{name}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure "
                           f"{_spec_str(p_spec)} and tangents with structure "
                           f"{_spec_str(t_spec)}")
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{name}: Expected tangents to be Tensors, got {type(t)}")
        if isinstance(p, Tensor) and t.shape != p.shape:
            raise RuntimeError(f"Trying to set a forward gradient that has a different size "
                               f"than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(p.shape)} while the given forward "
                               f"gradient is of size {list(t.shape)}.")
    return t_leaves


def _outputs(out, name):
    outputs, spec = _flatten(out)
    for x in outputs:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{name}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(x)}")
    return outputs, spec


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J·tangents), as torch.func.jvp: `primals` a tuple of arguments
    (pytrees of Tensors), `tangents` of the same structure and shapes; the JVP has the
    output's structure. With has_aux=True func returns (output, aux) and this (output,
    jvp_out, aux). Results are differentiable where they depend on tensors requiring grad
    from outside (an outer grad's input), so jvp(grad(f)) and grad(jvp(f)) work. `strict`
    is accepted, as PyTorch's (which does not implement it either). func may not change
    a primal in place: riding on reverse mode, each is a leaf requiring grad here, as in
    grad (PyTorch's forward mode allows it)."""
    name = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{name}: Expected primals to be a tuple. E.g. it should be valid "
                           f"to call f(*primals).")
    if not primals:
        raise RuntimeError(f"{name}: Expected primals to be a non-empty tuple")
    t_leaves = _tangent_leaves(primals, tangents, name)
    inputs = _Inputs(primals, tuple(range(len(primals))))
    with enable_grad():
        out, aux = _split_aux(func(*inputs.args), has_aux, name)
        outputs, spec = _outputs(out, name)
        keep = inputs.differentiable(outputs) or \
            is_grad_enabled() and any(t.requires_grad for t in t_leaves)
        jvps = jvp_by_double_vjp(outputs, inputs.leaves, t_leaves, create_graph=keep)
    inputs.spent()
    value, jvp_out = _plain(out, keep), _unflatten(_plain(jvps, keep), spec)
    return (value, jvp_out, _plain(aux, keep)) if has_aux else (value, jvp_out)


def linearize(func, *primals):
    """(func(*primals), jvp_fn), as torch.func.linearize: jvp_fn(*tangents) (tangents of
    the primals' structure) returns J·tangents at the primals, in the output's structure,
    one backward pass per call (the function runs once, here). The output is
    differentiable where it depends on tensors requiring grad from outside, as jvp's."""
    if not primals:
        raise RuntimeError("linearize(f, *primals): expected at least one primal")
    inputs = _Inputs(primals, tuple(range(len(primals))))
    with enable_grad():
        outputs, spec = _outputs(func(*inputs.args), "linearize(f, *primals)")
        first = first_vjp(outputs, inputs.leaves)
        keep = inputs.differentiable(outputs)
    inputs.spent()

    def jvp_fn(*tangents):
        t_leaves = _tangent_leaves(primals, tangents, "linearize: jvp_fn(*tangents)")
        return _unflatten(second_vjp(outputs, first, t_leaves), spec)

    return _plain(_unflatten(outputs, spec), keep), jvp_fn


def functionalize(func, *, remove="mutations"):
    """torch.func.functionalize: there it traces func so that in-place ops become
    out-of-place ones (for compilers and transforms that need pure functions). minigrad is
    eager and its transforms handle in-place ops as they run, so this returns func as it is
    (same results)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are: 'mutations', "
                           f"'mutations_and_views'")
    return func


def stack_module_state(models):
    """(params, buffers) of `models` (modules of one structure), each a dict of name ->
    the models' tensors stacked along a new dim 0, as torch.func.stack_module_state: for
    vmap(functional_call) over an ensemble. Stacked parameters are new leaves that require
    grad where the models' do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    return (_stacked(models, lambda m: m.named_parameters(), True),
            _stacked(models, lambda m: m.named_buffers(), False))


def _stacked(models, named, leaves):
    tables = [dict(named(m)) for m in models]
    for k, table in enumerate(tables[1:], 1):
        if table.keys() != tables[0].keys():
            raise RuntimeError(f"stack_module_state: model {k} has tensors "
                               f"{sorted(table)}, model 0 {sorted(tables[0])}: the models "
                               f"must share one structure")
    out = {}
    with no_grad():
        for name in tables[0]:
            each = [t[name] for t in tables]
            wants = {t.requires_grad for t in each}
            if leaves and len(wants) > 1:
                raise RuntimeError(f"stack_module_state: Expected {name} from each model to "
                                   f"have the same .requires_grad")
            out[name] = stack(each).detach()
            if leaves and wants == {True}:
                out[name].requires_grad_(True)
    return out


def replace_all_batch_norm_modules_(root):
    """Make every BatchNorm in `root` (in place) stop tracking running statistics, as
    torch.func.replace_all_batch_norm_modules_: running_mean, running_var and
    num_batches_tracked become None, so each normalises with its batch's statistics (what
    vmap over a batch wants). Returns root. InstanceNorms are left as they are, as
    PyTorch's (there they are no _BatchNorm; here they derive from it)."""
    from minigrad.nn.batchnorm import _BatchNorm
    from minigrad.nn.normalization import _InstanceNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.running_mean = module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


__all__ = ["jvp", "linearize", "functionalize", "stack_module_state",
           "replace_all_batch_norm_modules_"]
