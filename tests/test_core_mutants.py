"""Engine-core properties that the torch comparisons would otherwise be the only check of.

CI runs without PyTorch, so every `check_vs_torch` case is skipped there. Each test here pins
one behaviour of the engine core (autograd.py, tensor.py, gradcheck.py, creation.py, ops/)
with hand-computed values, NumPy formulas or properties, so a plausible one-line bug in it
fails without torch too."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad.autograd import Function
from minigrad.ops.index import GetItem


def _leaf(values, device, dtype=mg.float64):
    return mg.tensor(values, dtype=dtype, device=device, requires_grad=True)


# ---- autograd.py ------------------------------------------------------------------------
def test_a_forward_index_error_names_the_op_and_the_shapes(device):
    """An IndexError raised by an op's forward is reworded like a ValueError: the op's name
    and the input shapes are added."""
    x = mg.zeros(2, 3, device=device)
    mask = x._data[0] == 0                  # 3 Trues for dim 0 of size 2 (x[mask] checks first)
    with pytest.raises(IndexError, match=r"GetItem: .*input shapes: \(2, 3\)"):
        GetItem.apply(x, index=mask)


def test_a_view_of_a_tensor_changed_before_the_view_backprops(device):
    """A view taken after an in-place change shares the (already moved) version count; that
    is not a change after use, so backward must not complain."""
    w = _leaf([1.0, 2.0, 3.0], device)
    with mg.no_grad():
        w[0] = 5.0                                   # w is at version 1 now
    v = w[1:]                                        # a view: shares w's count
    (v * v).sum().backward()
    assert w.grad.tolist() == [0.0, 4.0, 6.0]


def test_mg_grad_never_writes_into_a_gradient_the_caller_passed(device):
    """With several outputs, one of them feeding another, the engine adds gradients up; it
    must not add them into the caller's grad_outputs arrays."""
    x = _leaf([1.0, 2.0], device)
    y = x * 2
    z = y * 3
    gy, gz = mg.ones(2, device=device, dtype=mg.float64), mg.ones(2, device=device,
                                                                  dtype=mg.float64)
    (gx,) = mg.grad([y, z], [x], grad_outputs=[gy, gz])
    assert gx.tolist() == [8.0, 8.0]                 # 2·(1 + 3)
    assert gy.tolist() == [1.0, 1.0] and gz.tolist() == [1.0, 1.0]


def test_indexing_gradient_added_to_a_broadcast_gradient(device):
    """x and x[0] both feed a sum: x's gradient so far is the read-only broadcast of the sum's
    gradient, which the scatter of x[0]'s gradient must copy, not write into."""
    x = _leaf(np.zeros((3, 4)), device)
    (x + x[0]).sum().backward()
    expected = np.ones((3, 4))
    expected[0] += 3                                 # x[0] is broadcast over the 3 rows
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_mg_grad_without_create_graph_returns_detached_gradients(device):
    """Without create_graph the gradients returned are constants, even where the upstream
    gradient the caller passed requires grad (Add hands it through unchanged)."""
    x = _leaf([1.0, 2.0], device)
    v = _leaf([3.0, 4.0], device)
    (gx,) = mg.grad(x + 1, [x], grad_outputs=[v])
    assert gx.tolist() == [3.0, 4.0]
    assert not gx.requires_grad and gx.is_leaf


def test_backward_without_gradient_on_a_one_element_output(device):
    """backward() needs no gradient for any one-element output, not only a 0-d one (as
    PyTorch)."""
    x = _leaf([2.0], device)
    (x * x).backward()
    assert x.grad.tolist() == [4.0]


def test_a_gradient_of_another_dtype_takes_the_outputs_dtype(device):
    """backward(g) with g a float64 Tensor on a float32 output: the ops' backwards see
    float32 (as PyTorch casts it), where a fused GPU kernel would refuse mixed widths."""
    x = mg.tensor([1.0, -2.0], device=device, requires_grad=True)
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.dtype))
    y.backward(mg.tensor([1.0, 0.5], dtype="float64", device=device))
    assert seen == [mg.float32] and x.grad.dtype == mg.float32
    assert x.grad.tolist() == [3.0, 1.5]
    (gx,) = mg.grad(x * 3, [x], grad_outputs=[mg.tensor([2.0, 2.0], dtype="float64",
                                                        device=device)])
    assert gx.dtype == mg.float32 and gx.tolist() == [6.0, 6.0]


def test_nested_grad_modes_restore_the_outer_mode(device):
    """Leaving an inner no_grad/enable_grad restores the mode that was on before it, not
    always 'enabled'."""
    x = _leaf([1.0], device)
    with mg.no_grad():
        with mg.no_grad():
            pass
        assert not mg.is_grad_enabled() and not (x * 2).requires_grad
        with mg.enable_grad():
            assert (x * 2).requires_grad
        assert not mg.is_grad_enabled() and not (x * 2).requires_grad
    assert mg.is_grad_enabled()


# ---- tensor.py --------------------------------------------------------------------------
def test_np_array_of_a_tensor_is_a_copy():
    """np.array(t) (copy=True) gives an array of its own: writing it leaves t unchanged."""
    t = mg.tensor([1.0, 2.0])
    a = np.array(t)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]


def test_requires_grad_false_is_allowed_on_integer_tensors(device):
    """Only *requiring* gradients is limited to floating tensors."""
    t = mg.tensor([1, 2], device=device).requires_grad_(False)
    assert not t.requires_grad


def test_var_and_std_unbiased_flag(device):
    """unbiased=True divides by n - 1, unbiased=False by n (NumPy's ddof)."""
    a = np.array([1.0, 2.0, 4.0, 7.0])
    x = mg.tensor(a, dtype=mg.float64, device=device)
    np.testing.assert_allclose(x.var(unbiased=False).item(), np.var(a))
    np.testing.assert_allclose(x.var(unbiased=True).item(), np.var(a, ddof=1))
    np.testing.assert_allclose(x.std(unbiased=False).item(), np.std(a))
    np.testing.assert_allclose(x.std(unbiased=True).item(), np.std(a, ddof=1))


def test_flatten_defaults_to_every_dim(device):
    """flatten() with no arguments merges every dim into one."""
    assert mg.zeros(2, 3, 4, device=device).flatten().shape == (24,)


# ---- gradcheck.py -----------------------------------------------------------------------
class IgnoresUpstream(Function):
    """2x with a backward that forgets to multiply by the upstream gradient: right only when
    that gradient is all ones."""
    def forward(self, a): return 2 * a
    def backward(self, g): return self.const(self.xp.full(g.shape, 2.0, g.dtype))


class SlightlyOff(Function):
    """A constant (0·x) whose backward claims a small gradient, 1e-3·g."""
    def forward(self, a): return 0 * a
    def backward(self, g): return g * 1e-3


def test_gradcheck_catches_a_backward_that_ignores_the_upstream_gradient():
    """gradcheck weighs the outputs with random weights, so a backward that is right only
    for an all-ones upstream gradient fails."""
    x = _leaf(np.linspace(0.5, 2, 6).reshape(2, 3), "cpu")
    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(lambda a: IgnoresUpstream.apply(a), [x])


def test_gradcheck_default_tolerance_catches_small_absolute_errors():
    """The default atol is tight: a gradient of 1e-3 where the true one is 0 fails."""
    x = _leaf(np.linspace(0.5, 2, 6).reshape(2, 3), "cpu")
    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(lambda a: SlightlyOff.apply(a), [x])


# ---- creation.py ------------------------------------------------------------------------
def test_randn_refuses_an_integer_dtype(device):
    """randn needs a floating dtype and says so with a TypeError."""
    with pytest.raises(TypeError, match="randn"):
        mg.randn(2, dtype=mg.int64, device=device)


def test_arange_can_require_grad(device):
    """arange(..., requires_grad=True) gives a leaf that collects gradients."""
    t = mg.arange(0.0, 3.0, device=device, requires_grad=True)
    assert t.requires_grad and t.dtype == mg.float32
    (t * t).sum().backward()
    assert t.grad.tolist() == [0.0, 2.0, 4.0]


# ---- elementwise.py ---------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 ** -1 in the unused branch
def test_pow_gradients_at_zero_base(device):
    """d(xᵇ)/dx at x = 0: 1 for b = 1, 0 for b = 0 and b = 2 (PyTorch's values, no NaN)."""
    x = _leaf([0.0, 0.0, 0.0], device)
    b = mg.tensor([1.0, 0.0, 2.0], dtype=mg.float64, device=device)
    (gx,) = mg.grad((x ** b).sum(), [x])
    assert gx.tolist() == [1.0, 0.0, 0.0]


def test_relu_at_zero_and_minus_infinity(device):
    """relu'(0) = 0 (as PyTorch) and relu(-inf) = 0, not NaN."""
    x = _leaf([0.0, -np.inf, 2.0], device)
    y = x.relu()
    assert y.tolist() == [0.0, 0.0, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_maximum_and_minimum_split_the_gradient_of_ties(device):
    """Equal inputs share the gradient evenly; otherwise it goes to the chosen one."""
    for op in ("maximum", "minimum"):
        a, b = _leaf([1.0, 2.0, 3.0], device), _leaf([1.0, 5.0, 0.0], device)
        getattr(a, op)(b).sum().backward()
        chosen_a = [0.5, 0.0, 1.0] if op == "maximum" else [0.5, 1.0, 0.0]
        assert a.grad.tolist() == chosen_a, op
        assert b.grad.tolist() == [1 - g for g in chosen_a], op


def test_clip_gradient_is_one_on_the_bounds(device):
    """clip passes the gradient where the value lies on a bound (as PyTorch's clamp), and
    only one given bound limits the range."""
    x = _leaf([-1.0, 0.0, 0.5, 1.0, 2.0], device)
    x.clip(0.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    y = _leaf([-3.0, 0.5, 2.0], device)
    y.clip(max=1.0).sum().backward()
    assert y.grad.tolist() == [1.0, 1.0, 0.0]


def test_clip_needs_a_bound(device):
    """clip() with neither min nor max is an error, not a no-op."""
    with pytest.raises(ValueError, match="min and max"):
        mg.ones(2, device=device).clip()


def test_masked_fill_keeps_the_tensors_dtype(device):
    """masked_fill writes the value in the tensor's dtype (an int tensor stays int)."""
    x = mg.tensor([1, 2, 3], device=device)
    y = x.masked_fill(mg.tensor([True, False, True], device=device), 0.5)
    assert y.dtype == mg.int64 and y.tolist() == [0, 2, 0]


def test_abs_of_integers_stays_integer(device):
    """abs keeps an integer tensor's dtype (only exp-like ops go to float32)."""
    y = mg.tensor([-3, 2], device=device).abs()
    assert y.dtype == mg.int64 and y.tolist() == [3, 2]


# ---- reduce.py --------------------------------------------------------------------------
def test_max_over_everything_shares_the_gradient_among_ties(device):
    """max() over all elements splits the gradient evenly among tied maxima."""
    x = _leaf([1.0, 3.0, 3.0, 2.0], device)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_max_and_min_of_a_tensor_with_nan_send_the_gradient_to_the_nans(device):
    """A NaN is the max and the min, as PyTorch: its gradient goes to the NaNs, shared evenly
    among them (an equality test alone finds no element equal to NaN: 0/0 everywhere)."""
    nan = float("nan")
    for values, want in (([1.0, nan, 2.0], [0.0, 1.0, 0.0]), ([1.0, nan, nan], [0.0, 0.5, 0.5])):
        for kind in ("max", "min"):
            x = _leaf(values, device)
            getattr(x, kind)().backward()
            assert x.grad.tolist() == want, (kind, values)


def test_max_with_keepdim_keeps_the_dim_of_the_indices_too(device):
    """max(dim, keepdim=True) returns indices shaped like the values, with or without a graph."""
    for requires_grad in (False, True):
        x = mg.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], device=device,
                      requires_grad=requires_grad)
        values, indices = x.max(1, keepdim=True)
        assert values.shape == indices.shape == (2, 1)
        assert indices.tolist() == [[1], [0]]


def test_var_with_too_few_elements_divides_by_zero(device):
    """n ≤ correction: no estimate. Σ(x - μ)²/0 as PyTorch (its divisor is max(0, n - c)):
    inf, or NaN where Σ = 0; never a negative divisor; and a warning that says why."""
    with pytest.warns(RuntimeWarning, match=r"correction=2 leaves no degrees of freedom "
                                            r"among 1 element\(s\) \(n - correction <= 0\)"):
        assert np.isnan(mg.ones(1, device=device).var(correction=2).item())
    with pytest.warns(RuntimeWarning, match="no degrees of freedom"):
        assert np.isnan(mg.zeros(0, device=device).var().item())
    x = mg.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], device=device)
    with pytest.warns(RuntimeWarning, match="correction=5"):
        got = x.var(1, correction=5).tolist()
    assert got[0] == float("inf") and np.isnan(got[1])
    with pytest.warns(RuntimeWarning):
        assert x.std(1, correction=3).tolist()[0] == float("inf")


def test_var_refuses_integer_tensors(device):
    """var of an integer tensor is refused, and the error names var itself (not the mean
    it is computed from)."""
    with pytest.raises(RuntimeError, match=r"var\(\): input dtype must be floating point"):
        mg.tensor([1, 2, 3], device=device).var()


def test_an_empty_list_of_dims_reduces_everything(device):
    """dim=() or dim=[] sums every dim, as PyTorch (NumPy's axis=() would sum none)."""
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert x.sum(()).item() == 10.0 and x.sum([]).item() == 10.0


# ---- shape.py ---------------------------------------------------------------------------
def test_split_sizes_must_add_up_to_the_dim(device):
    """split refuses sizes that do not cover the dim, and a split_size of 0, with clear errors."""
    x = mg.zeros(5, device=device)
    with pytest.raises(ValueError, match="sum to 3"):
        x.split([1, 2])
    with pytest.raises(ValueError, match="positive integer"):
        x.split(0)


def test_flatten_of_a_0d_tensor_is_1d(device):
    """flatten of a 0-d tensor has shape (1,), as PyTorch."""
    assert mg.tensor(3.0, device=device).flatten().shape == (1,)


# ---- index.py ---------------------------------------------------------------------------
def _arange(*shape, device):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return a, mg.tensor(a, device=device)


def test_a_2d_mask_then_an_int_index(device):
    """x[mask, 0] with a mask over the first two dims: the int picks from the third dim."""
    a, x = _arange(2, 3, 4, device=device)
    m = np.array([[True, False, True], [False, True, True]])
    np.testing.assert_array_equal(x[mg.tensor(m, device=device), 0].numpy(), a[m][:, 0])


def test_an_int_then_an_ellipsis_then_an_array(device):
    """x[0, ..., [0, 1]]: the int applies first, the ellipsis keeps the middle dims and the
    array indexes the last dim (PyTorch's result, shape (3, 4, 2))."""
    a, x = _arange(2, 3, 4, 5, device=device)
    y = x[0, ..., [0, 1]]
    assert y.shape == (3, 4, 2)
    np.testing.assert_array_equal(y.numpy(), a[0][..., [0, 1]])


def test_an_array_index_after_a_2d_mask_is_checked_against_its_own_dim(device):
    """After a mask over two dims, an integer array indexes the third dim: 3 is in range
    there (size 4) though not in the second dim (size 3)."""
    a, x = _arange(2, 3, 4, device=device)
    m = np.array([[True, False, True], [False, True, True]])
    y = x[mg.tensor(m, device=device), mg.tensor([3], device=device)]
    np.testing.assert_array_equal(y.numpy(), a[m, [3]])


def test_embedding_refuses_float_indices(device):
    """embedding indices must be integers: a float tensor is a TypeError."""
    w = mg.zeros(3, 2, device=device)
    with pytest.raises(TypeError, match="integer"):
        F.embedding(mg.tensor([0.0, 1.0], device=device), w)


# ---- linear.py, loss.py, layer_norm.py: argument checks ---------------------------------
def test_linear_checks_the_bias_shape(device):
    """A bias that is not (out_features,) and does not broadcast to the output is refused
    (PyTorch's addmm adds one that does, as here)."""
    x, w = mg.zeros(2, 3, device=device), mg.zeros(4, 3, device=device)
    with pytest.raises(ValueError, match="bias has shape"):
        F.linear(x, w, mg.zeros(3, device=device))
    with pytest.raises(ValueError, match="bias has shape"):
        F.linear(x, w, mg.zeros(3, 2, 4, device=device))    # would grow the output
    assert F.linear(x, w, mg.ones(1, device=device)).tolist() == [[1.0] * 4] * 2


def test_cross_entropy_checks_its_targets_and_smoothing(device):
    """Negative or float targets and label_smoothing outside [0, 1] are refused."""
    logits = mg.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match="out of range"):
        F.cross_entropy(logits, mg.tensor([-1, 0], device=device))
    with pytest.raises(TypeError, match="integer class indices"):
        F.cross_entropy(logits, mg.tensor([0.0, 1.0], device=device))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(logits, mg.tensor([0, 1], device=device), label_smoothing=1.5)


def test_layer_norm_with_a_bias_and_no_weight(device):
    """A bias alone is added to the normalised values (the scale is 1), not used as a
    scale."""
    a = np.array([[1.0, 2.0, 6.0], [0.0, -1.0, 4.0]])
    b = np.array([0.5, -1.0, 2.0])
    y = F.layer_norm(mg.tensor(a, dtype=mg.float64, device=device), (3,),
                     bias=mg.tensor(b, dtype=mg.float64, device=device))
    xhat = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), xhat + b, rtol=1e-12)


def test_layer_norm_checks_the_weight_shape(device):
    """A weight not shaped like normalized_shape is refused, even if it has as many elements."""
    x = mg.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="weight has shape"):
        F.layer_norm(x, (3,), mg.ones(1, 3, device=device))


def test_layer_norm_uses_the_given_eps(device):
    """eps goes inside the square root: (x - μ) / √(σ² + eps)."""
    a = np.array([[1.0, 2.0, 4.0]])
    y = F.layer_norm(mg.tensor(a, dtype=mg.float64, device=device), (3,), eps=0.5)
    expected = (a - a.mean()) / np.sqrt(a.var() + 0.5)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12)


# ---- attention.py, random.py: argument checks and dtypes --------------------------------
def test_attention_argument_checks(device):
    """dropout_p > 1, a mask with more dims than the scores and a 1-D query are refused."""
    q = mg.zeros(2, 3, 4, device=device)
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(ValueError, match="attn_mask"):       # more dims than the scores
        F.scaled_dot_product_attention(q, q, q, attn_mask=mg.ones(1, 2, 3, 3, device=device,
                                                                  dtype=mg.bool))
    with pytest.raises(ValueError, match="at least 2 dims"):
        F.scaled_dot_product_attention(mg.zeros(4, device=device), q, q)


def test_a_float_mask_takes_the_queries_dtype(device):
    """A float64 additive mask with float32 q, k, v gives float32 results in the composed
    attention too."""
    q = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)), dtype=mg.float32,
                  device=device)
    mask = mg.tensor(np.zeros((3, 3)), dtype=mg.float64, device=device)
    out, weights = F.attention_with_weights(q, q, q, attn_mask=mask)
    assert out.dtype == weights.dtype == mg.float32


def test_dropout_refuses_integer_tensors(device):
    """dropout needs a floating tensor."""
    with pytest.raises(TypeError, match="floating"):
        F.dropout(mg.tensor([1, 2, 3], device=device), 0.5)


def test_linear_on_a_1d_input_differentiates_twice_through_its_bias(device):
    """With create_graph=True the reference backward runs: for one input vector the bias
    gradient is the upstream gradient itself, shape (out,)."""
    x = _leaf([1.0, 2.0], device)
    w = _leaf([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], device)
    b = _leaf([0.0, 0.0, 0.0], device)
    y = F.linear(x, w, b)
    (gb,) = mg.grad((y * y).sum(), [b], create_graph=True)
    assert gb.tolist() == [2.0, 4.0, 6.0]                  # 2y, y = W·x = (1, 2, 3)
    (hx,) = mg.grad(gb.sum(), [x])                         # d/dx Σ 2W·x = 2·Σ_rows W
    assert hx.tolist() == [4.0, 4.0]
