"""`mg.autograd.functional`, as torch.autograd.functional: derivatives of a function of
Tensors, taken by calling it: `vjp`, `jvp`, `jacobian`, `hessian`, `vhp`, `hvp`.

Each takes `func` and `inputs` (a Tensor or a tuple of them, passed as func(*inputs)) and
works on fresh tensors made from the inputs (detached, or, with create_graph=True, views
of those that require grad, so that the result is differentiable with respect to them).
Results have the structure of what they belong to: a Tensor for a Tensor, a tuple for a
tuple; jacobian[i][j] is output i's with respect to input j. A quantity that does not
depend on an input is zeros for it, or, with `strict=True`, an error (PyTorch's words).

minigrad has reverse mode only, as these functions do in PyTorch: `jvp` and `hvp` use the
double-backward trick (the gradient of a vector-Jacobian product with respect to the
vector), and `jacobian` takes one backward per output element. `vectorize=True` and
strategy="forward-mode" (which PyTorch allows only with vectorize=True) give the same
values, computed the same way. One difference in strict mode: with create_graph=True a
Jacobian that is locally constant in the inputs through a piecewise-linear op (relu, abs)
is refused here, where PyTorch's graph still links it to them (minigrad's derivative of
such an op records no dependence on the input: see autograd._initial_grad).
"""
from minigrad.autograd import grad as _autograd_grad
from minigrad.creation import zeros, zeros_like
from minigrad.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from minigrad.ops.shape import stack
from minigrad.tensor import Tensor


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), vᵀ·J): the vector-Jacobian product, one per input. `v` is shaped as
    the output (may be None for a one-element output)."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _fresh(_as_tuple(v, "v", "vjp")[1], create_graph, need_graph=False)
            _validate_v(v, outputs, out_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad(outputs, inputs, v, create_graph)
        result = _zeros_for_none(found, inputs, strict, create_graph, "back")
    return (_untuple(_detached(outputs, create_graph), out_tuple),
            _untuple(_detached(result, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), J·v): the Jacobian-vector product, one per output. `v` is shaped as
    the inputs (may be None for a single one-element input). Computed by reverse mode
    twice: J·v is the gradient of u ↦ uᵀ·J·v, and uᵀ·J is linear in u."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _fresh(_as_tuple(v, "v", "jvp")[1], create_graph, need_graph=False)
            _validate_v(v, inputs, in_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        u = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        uJ = _grad(outputs, inputs, u, create_graph=True)
        _check_requires_grad(uJ, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad(uJ, u, v, create_graph)
        result = _zeros_for_none(found, outputs, strict, create_graph, "back_trick")
    return (_untuple(_detached(outputs, create_graph), out_tuple),
            _untuple(_detached(result, create_graph), out_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at `inputs`: for output i and input j a Tensor of shape
    output_i.shape + input_j.shape, nested as the two are (module docstring). One backward
    per element of the outputs, whatever `vectorize` and `strategy` say (same values)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         'Hint: If your function has more outputs than inputs, "forward-mode" '
                         'tends to be more performant. Otherwise, prefer to use '
                         '"reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy='
                '"forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                      "reverse Hessian is only implemented for "
                                      "`vectorize=True`.")
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                       "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        jac = tuple(_jacobian_of(i, out, inputs, create_graph, strict)
                    for i, out in enumerate(outputs))
    jac = tuple(_detached(row, create_graph) for row in jac)
    if not in_tuple:
        jac = tuple(row[0] for row in jac)
    return _untuple(jac, out_tuple)


def _jacobian_of(i, out, inputs, create_graph, strict):
    """Output i's Jacobians, one per input: row k of each is the gradient of its k-th
    element."""
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        found = _grad((flat[k],), inputs, None, create_graph, retain_graph=True)
        for j, (g, x) in enumerate(zip(found, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       f"strict mode.")
                g = zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is "
                                   f"independent of input {j}. This is not allowed in "
                                   f"strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(stack(r).reshape(out.shape + x.shape) if r else        # (r empty: out is)
                 zeros(out.shape + x.shape, dtype=x.dtype, device=x.device)
                 for r, x in zip(rows, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of func (one-element output) at `inputs`: the Jacobian of its gradient.
    hessian[i][j] has shape input_i.shape + input_j.shape (a Tensor for a single input)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*xs):
        out = func(*xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.reshape(())

    def gradient(*xs):
        g = jacobian(scalar_func, xs, create_graph=True)
        _check_requires_grad(g, "jacobian", strict)
        return g

    h = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                 vectorize=vectorize, strategy=outer_jacobian_strategy)
    return h if in_tuple else h[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), vᵀ·H): the vector-Hessian product of a one-element func, shaped as
    the inputs."""
    with enable_grad():
        in_tuple, inputs, v, outputs = _second_order_setup(func, inputs, v, create_graph,
                                                           strict, "vhp")
        g = _grad(outputs, inputs, None, create_graph=True)
        _check_requires_grad(g, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad(g, inputs, v, create_graph)
        result = _zeros_for_none(found, inputs, strict, create_graph, "double_back")
    return (_detached(outputs, create_graph)[0],
            _untuple(_detached(result, create_graph), in_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(*inputs), H·v): the Hessian-vector product of a one-element func, by the
    double-backward trick (equal to vhp's for a twice continuously differentiable func,
    which costs one backward less)."""
    with enable_grad():
        in_tuple, inputs, v, outputs = _second_order_setup(func, inputs, v, create_graph,
                                                           strict, "hvp")
        g = _grad(outputs, inputs, None, create_graph=True)
        _check_requires_grad(g, "jacobian", strict)
        u = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        uH = _grad(g, inputs, u, create_graph=True)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad(uH, u, v, create_graph)
        result = _zeros_for_none(found, inputs, strict, create_graph, "double_back_trick")
    return (_detached(outputs, create_graph)[0],
            _untuple(_detached(result, create_graph), in_tuple))


def _second_order_setup(func, inputs, v, create_graph, strict, name):
    """vhp's and hvp's common start: the fresh inputs, v checked, func's one output."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    if v is not None:
        v = _fresh(_as_tuple(v, "v", name)[1], create_graph, need_graph=False)
        _validate_v(v, inputs, in_tuple)
    elif len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                   name)
    _check_requires_grad(outputs, "outputs", strict)
    if out_tuple:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           f"contain a single element")
    return in_tuple, inputs, v, outputs


def _as_tuple(value, what, name):
    """(whether value was a tuple, value as a tuple of Tensors)."""
    was_tuple = isinstance(value, tuple)
    values = value if was_tuple else (value,)
    for i, x in enumerate(values):
        if not isinstance(x, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {what}"
            raise TypeError(f"The {what} given to {name} must be either a Tensor or a tuple "
                            f"of Tensors but the {where} has type {type(x)}.")
    return was_tuple, values


def _untuple(values, was_tuple):
    return values if was_tuple else values[0]


def _fresh(tensors, create_graph, need_graph):
    """New tensor objects for `tensors`, so that the function's own uses of them are told
    from tensors it captures: views (differentiable) of those that require grad, with
    create_graph=True; detached copies otherwise, requiring grad if `need_graph`."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else
                 t.detach().requires_grad_(need_graph) for t in tensors)


def _detached(tensors, create_graph):
    """The results, detached unless create_graph (tuples of them too)."""
    if create_graph:
        return tensors
    return tuple(t.detach() if isinstance(t, Tensor) else _detached(t, False)
                 for t in tensors)


def _validate_v(v, other, is_tuple):
    if len(v) != len(other):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                           f"{len(v)}." if is_tuple else
                           "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            where = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """mg.grad of the outputs that require grad (None for each input where none does, or
    where one is not reached)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _autograd_grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs],
                          retain_graph=retain_graph, create_graph=create_graph,
                          allow_unused=True)


def _check_requires_grad(tensors, kind, strict):
    """strict=True: refuse a result that does not depend on the inputs (PyTorch's words
    for each `kind` of result)."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                f"independent of the input. This is not allowed in strict mode. You should "
                f"ensure that your function is thrice differentiable and that the hessian "
                f"depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                f"While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is "
                f"not allowed in strict mode. You should ensure that your function is twice "
                f"differentiable and that the jacobian depends on the inputs (this would be "
                f"violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               f"inputs of the user-provided function. This is not allowed "
                               f"in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           f"gradients. The outputs must be computed in a differentiable "
                           f"manner from the input when running in strict mode.")


def _zeros_for_none(found, refs, strict, create_graph, stage):
    """Zeros (shaped as refs[i]) for each gradient that is None; with strict=True an error
    instead, and also, with create_graph=True, for one that does not require grad."""
    out = []
    for i, g in enumerate(found):
        if g is None:
            if strict:
                raise RuntimeError(_NONE_ERRORS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        out.append(g)
    return tuple(out)


_NONE_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}
