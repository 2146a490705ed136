"""Custom autograd Functions written as PyTorch's (staticmethod forward(ctx, ...) and
backward(ctx, *grads), custom_function.py): each Function is written once for both
libraries and the results compared with PyTorch's."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None


def lib_of(name):
    return mg if name == "mg" else pytest.importorskip("torch")


def leaf(lib, a, requires_grad=True):
    if lib is mg:
        return mg.tensor(a, dtype=mg.float64, requires_grad=requires_grad)
    return torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad)


def grad(lib, *args, **kw):
    return (mg.grad if lib is mg else torch.autograd.grad)(*args, **kw)


def arr(t):
    return np.asarray(t.detach().numpy())


def make_exp(lib):
    class MyExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=2.0):          # a non-Tensor argument, with a default
            y = (x * k).exp()
            ctx.save_for_backward(y)
            ctx.k = k
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y * ctx.k, None
    return MyExp


def make_two_outputs(lib):
    class SinCos(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return (x * w).sin(), (x * w).cos()

        @staticmethod
        def backward(ctx, gs, gc):
            x, w = ctx.saved_tensors
            d = gs * (x * w).cos() - gc * (x * w).sin()
            return d * w, d * x
    return SinCos


A = np.array([[0.3, -1.2, 0.7], [1.5, 0.1, -0.4]])
W = np.array([0.5, -2.0, 1.1])


def test_exp_like_function_matches_torch_to_second_order(torch):
    for lib in (mg, torch):        # the same code, checked against PyTorch
        x = leaf(lib, A)
        y = make_exp(lib).apply(x, 0.5)
        assert type(y.grad_fn).__name__ == "MyExpBackward"
        gx, = grad(lib, (y * y).sum(), x, create_graph=True)
        ggx, = grad(lib, (gx * gx).sum(), x)     # double backward through the user's backward
        want = 2 * 0.5 * np.exp(2 * 0.5 * A)
        np.testing.assert_allclose(arr(gx), want, rtol=1e-12)
        np.testing.assert_allclose(arr(ggx), 2 * want * 2 * 0.5 * want, rtol=1e-12)


def test_keyword_arguments_bind_to_forward_parameters_as_torch():
    x = leaf(mg, A)
    MyExp = make_exp(mg)
    y = MyExp.apply(x, k=3.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(3 * A), rtol=1e-12)


def test_two_outputs_and_gradcheck_against_torch(torch):
    outs = {}
    for name in ("mg", "torch"):
        lib = lib_of(name)
        x, w = leaf(lib, A), leaf(lib, W)
        s, c = make_two_outputs(lib).apply(x, w)
        (s * 2 + c * 3).sum().backward()
        outs[name] = arr(x.grad), arr(w.grad)
        s, c = make_two_outputs(lib).apply(x, w)
        xs, = grad(lib, s.sum(), x)          # c got no gradient: zeros are passed
        outs[name] += (arr(xs),)
    for m, t in zip(outs["mg"], outs["torch"]):
        np.testing.assert_allclose(m, t, rtol=1e-12)
    assert mg.gradcheck(lambda x, w: make_two_outputs(mg).apply(x, w),
                        (leaf(mg, A), leaf(mg, W)))


def test_mark_non_differentiable_and_materialized_zeros(torch):
    for lib in (mg, torch):        # the same code, checked against PyTorch
        seen = []

        class MaxAndArg(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                i = x.argmax()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                ctx.shape = x.shape
                return x.max() * 1.0, i

            @staticmethod
            def backward(ctx, g, gi):
                seen.append(float(gi.sum()))
                i, = ctx.saved_tensors
                onehot = lib.zeros(ctx.shape, dtype=lib.float64).reshape(-1)
                onehot[int(i)] = 1.0
                return onehot.reshape(ctx.shape) * g
        x = leaf(lib, A)
        m, i = MaxAndArg.apply(x)
        assert not i.requires_grad and m.requires_grad
        m.backward()
        assert seen == [0.0] and int(i) == 3
        np.testing.assert_array_equal(arr(x.grad), (A == A.max()).astype(float))


def test_set_materialize_grads_false_passes_none(torch):
    for lib in (mg, torch):        # the same code, checked against PyTorch
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append(gb)
                return ga * 2 + (0 if gb is None else gb * 3)
        x = leaf(lib, A)
        a, _ = Two.apply(x)
        a.sum().backward()
        assert seen == [None]
        np.testing.assert_allclose(arr(x.grad), np.full(A.shape, 2.0))


def test_needs_input_grad_and_non_tensor_outputs_pass_through():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, w, k):
            seen.append(ctx.needs_input_grad)
            return x * w * k, "note"

        @staticmethod
        def backward(ctx, g, g_note):
            seen.append(g_note)
            return None, g.sum(0) * 0 + 1.0, None
    x, w = leaf(mg, A, requires_grad=False), leaf(mg, W)
    y, note = Scale.apply(x, w, 2)
    assert note == "note"
    y.sum().backward()
    assert seen == [(False, True, False), None]
    np.testing.assert_array_equal(w.grad.numpy(), np.ones(3))


def test_saved_tensor_modified_in_place_is_refused_as_torch(torch):
    for name in ("mg", "torch"):
        lib = lib_of(name)
        x = leaf(lib, A)
        y = make_exp(lib).apply(x)
        with lib.no_grad():
            y.mul_(2)                        # the saved output changed since the forward
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_wrong_number_of_gradients_is_refused_as_torch(torch):
    for name in ("mg", "torch"):
        lib = lib_of(name)

        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * 2                 # one gradient for two forward arguments
        y = Bad.apply(leaf(lib, A), 2.0)
        with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect "
                                               r"number of gradients \(expected 2, got 1\)"):
            y.sum().backward()


def test_bad_gradient_shape_or_non_none_for_a_number_is_refused(torch):
    for lib in (mg, torch):        # the same code, checked against PyTorch
        k_grad = [None]

        class Shape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return (g[0], None) if k_grad[0] is None else (g, k_grad[0])
        x = leaf(lib, A)
        with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[3\] but "
                                               r"expected shape compatible with \[2, 3\]"):
            Shape.apply(x, 2.0).sum().backward()
        k_grad[0] = 1.0
        with pytest.raises(RuntimeError, match="gradient different than None at position 2"):
            Shape.apply(x, 2.0).sum().backward()


def test_broadcast_gradient_is_summed_back_as_torch():
    class Wide(Function):
        @staticmethod
        def forward(ctx, w):
            return w * 1.0

        @staticmethod
        def backward(ctx, g):
            return g.expand(4, 3)            # broadcasts from w's (3,): summed back
    w = leaf(mg, W)
    Wide.apply(w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 4.0))


def test_no_graph_under_no_grad_and_forward_runs_without_grad():
    modes = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            modes.append(mg.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = leaf(mg, A)
    with mg.no_grad():
        y = Probe.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    z = Probe.apply(x)
    assert z.requires_grad and modes == [False, False]
    assert not Probe.apply(leaf(mg, A, requires_grad=False)).requires_grad


def test_input_returned_as_is_stays_a_leaf():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5
    x = leaf(mg, A)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(A.shape, 5.0))


def test_function_inside_a_module_trains_its_parameter():
    MyExp = make_exp(mg)

    class ExpLayer(mg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mg.nn.Linear(3, 2)

        def forward(self, x):
            return MyExp.apply(self.lin(x), 0.1)
    mg.manual_seed(0)
    layer = ExpLayer()
    x = mg.tensor(A, dtype=mg.float32)
    layer(x).sum().backward()
    h = layer.lin(x).detach().numpy()
    want = (0.1 * np.exp(0.1 * h)).sum(0)            # d/db of sum(exp(0.1 h))
    np.testing.assert_allclose(layer.lin.bias.grad.numpy(), want, rtol=1e-5)


def test_gradcheck_and_gradgradcheck_float64():
    MyExp = make_exp(mg)
    x = leaf(mg, A)
    assert mg.gradcheck(lambda x: MyExp.apply(x, 0.7), (x,))
    assert mg.gradgradcheck(lambda x: MyExp.apply(x, 0.7), (x,))


def test_setup_context_form_and_mark_dirty_refused():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    x = leaf(mg, A)
    Square.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * A)

    class Dirty(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(NotImplementedError, match="mark_dirty"):
        Dirty.apply(leaf(mg, A))


def test_second_backward_without_retain_graph_is_refused():
    y = make_exp(mg).apply(leaf(mg, A))
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_graph_is_freed_without_the_garbage_collector():
    import gc
    import weakref
    gc.disable()
    try:
        y = make_exp(mg).apply(leaf(mg, A))        # saves its own output
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None                      # no reference cycle output <-> node
    finally:
        gc.enable()


def test_input_returned_as_is_under_no_grad_does_not_require_grad_as_torch(torch):
    for lib in (mg, torch):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        x = leaf(lib, A)
        with lib.no_grad():
            y = Identity.apply(x)
        assert y is not x and not y.requires_grad, lib.__name__
        np.testing.assert_array_equal(arr(y), A)


@pytest.mark.parametrize("name", ["mg", "torch"])
def test_saved_input_that_is_also_returned_stays_the_input(name):
    lib = lib_of(name)

    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x
    x = leaf(lib, A)
    g, = grad(lib, Same.apply(x).sum(), x, create_graph=True)
    g2, = grad(lib, g.sum(), x)
    np.testing.assert_allclose(arr(g), A)
    np.testing.assert_allclose(arr(g2), np.ones(A.shape))    # d(1·x)/dx, not x


@pytest.mark.parametrize("name", ["mg", "torch"])
def test_saved_output_dropped_by_the_caller_keeps_its_graph(name):
    lib = lib_of(name)

    class ExpAndDouble(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a = x.exp()
            ctx.save_for_backward(a)
            return a, x * 2

        @staticmethod
        def backward(ctx, ga, gb):
            a, = ctx.saved_tensors
            return ga * a + gb * a
    x = leaf(lib, A)
    a, b = ExpAndDouble.apply(x)
    del a                               # only the node's saved copy of it is left
    g, = grad(lib, b.sum(), x, create_graph=True)
    g2, = grad(lib, g.sum(), x)
    np.testing.assert_allclose(arr(g), np.exp(A))
    np.testing.assert_allclose(arr(g2), np.exp(A))


def test_a_tensor_returned_twice_gets_two_outputs():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            return y, y

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3
    x = leaf(mg, A)
    a, b = Twice.apply(x)
    assert a is not b
    (a + 10 * b).sum().backward()       # crashed with a bare IndexError
    np.testing.assert_array_equal(x.grad.numpy(), np.full(A.shape, 32.0))
    np.testing.assert_array_equal(b.numpy(), 2 * A)
