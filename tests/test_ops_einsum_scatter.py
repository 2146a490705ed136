"""einsum, scatter / scatter_add / index_add, narrow, repeat_interleave and unique. Each
differentiable one through the op suite (vs torch in float32 and float64, float64
gradcheck and gradgradcheck with a NumPy forward, double backward vs torch, the spy device),
then edge values and the errors for bad input."""
import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_on_spy)

import spy_backend


def _t(a):
    import torch
    return torch.from_numpy(a)


def _einsum_case(name, equation, *shapes):
    def torch_fn(*ts):
        import torch
        return torch.einsum(equation, *ts)
    return OpCase(f"einsum_{name}", lambda *xs: mg.einsum(equation, *xs), shapes,
                  torch_fn=torch_fn, np_fn=lambda *a: np.einsum(equation, *a, optimize=True))


EINSUM_CASES = [
    _einsum_case("matmul", "ij,jk->ik", (2, 3), (3, 4)),
    _einsum_case("batched", "bij,bjk->bik", (2, 2, 3), (2, 3, 4)),
    _einsum_case("attention", "bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    _einsum_case("attention_out", "bhqk,bhkd->bhqd", (1, 2, 3, 5), (1, 2, 5, 4)),
    _einsum_case("outer", "i,j->ij", (3,), (4,)),
    _einsum_case("dot_implicit", "i,i", (3,), (3,)),
    _einsum_case("trace", "ii->", (3, 3)),
    _einsum_case("diagonal", "ii->i", (3, 3)),
    _einsum_case("batch_diagonal", "bii->bi", (2, 3, 3)),
    _einsum_case("diagonal_times", "ii,i->i", (3, 3), (3,)),
    _einsum_case("repeated_three", "iij->ji", (3, 3, 2)),
    _einsum_case("sum", "ij->", (2, 3)),
    _einsum_case("row_sum", "ij->i", (2, 3)),
    _einsum_case("transpose", "ij->ji", (2, 3)),
    _einsum_case("implicit", "ij,jk", (2, 3), (3, 4)),
    _einsum_case("implicit_alphabetical", "ba", (2, 3)),
    _einsum_case("uppercase", "Ab,bC->AC", (2, 3), (3, 2)),
    _einsum_case("ellipsis", "...ij,...jk->...ik", (2, 1, 2, 3), (4, 3, 2)),
    _einsum_case("ellipsis_implicit", "...ij,jk", (2, 2, 3), (3, 4)),
    _einsum_case("ellipsis_summed", "...i,...i->i", (2, 3), (3,)),
    _einsum_case("ellipsis_middle", "i...j->j...i", (2, 3, 4)),
    _einsum_case("broadcast_label", "ij,ij->ij", (1, 3), (4, 3)),
    _einsum_case("three_operands", "ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    _einsum_case("spaces", " ij , jk -> ik ", (2, 3), (3, 2)),
    OpCase("einsum_same_operand_twice", lambda x: mg.einsum("ij,ij->", x, x), ((2, 3),),
           torch_fn=lambda x: __import__("torch").einsum("ij,ij->", x, x),
           np_fn=lambda a: np.einsum("ij,ij->", a, a)),
    OpCase("einsum_operand_list", lambda a, b: mg.einsum("ij,jk", [a, b]), ((2, 3), (3, 2)),
           torch_fn=lambda a, b: __import__("torch").einsum("ij,jk", [a, b]),
           np_fn=lambda a, b: a @ b),
]

# scatter: no position written twice (PyTorch leaves the winner undefined); scatter_add and
# index_add: positions repeat on purpose, their values add up
_S0 = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])        # dim 0: each column's targets differ
_S1 = np.array([[3, 0], [1, 2]])                    # dim 1: each row's targets differ
_A0 = np.array([[0, 0, 2, 0], [0, 1, 0, 0]])        # repeated targets
_A1 = np.array([[3, 3, 0, 1, 3], [0, 0, 0, 2, 1], [1, 1, 1, 1, 1]])
_S3 = np.array([[[1], [0], [3]], [[2], [2], [0]]])  # (2, 3, 1) into (2, 3, 4) along dim 2
_I0 = np.array([0, 2, 0])


def _np_scatter(a, dim, index, src, add=False):
    out = a.copy()
    grid = tuple(index if k == dim else
                 np.arange(n).reshape((n,) + (1,) * (index.ndim - k - 1))
                 for k, n in enumerate(index.shape))
    if np.ndim(src):
        src = src[tuple(slice(0, n) for n in index.shape)]
    if add:
        np.add.at(out, grid, src)
    else:
        out[grid] = src
    return out


def _np_index_add(a, dim, index, source, alpha=1):
    out = a.copy()
    np.add.at(out, (slice(None),) * dim + (index,), alpha * source)
    return out


SCATTER_CASES = [
    OpCase("scatter_dim0", lambda x, s: x.scatter(0, mg.tensor(_S0, device=x.device), s),
           ((3, 4), (2, 4)), torch_fn=lambda x, s: x.scatter(0, _t(_S0), s),
           np_fn=lambda a, s: _np_scatter(a, 0, _S0, s)),
    OpCase("scatter_dim1_numpy_index", lambda x, s: mg.scatter(x, 1, _S1, s),
           ((3, 4), (2, 2)), torch_fn=lambda x, s: x.scatter(1, _t(_S1), s),
           np_fn=lambda a, s: _np_scatter(a, 1, _S1, s)),
    OpCase("scatter_value", lambda x: x.scatter(1, _S1, 2.5), ((3, 4),),
           torch_fn=lambda x: x.scatter(1, _t(_S1), 2.5),
           np_fn=lambda a: _np_scatter(a, 1, _S1, 2.5)),
    OpCase("scatter_value_kw", lambda x: x.scatter(0, _S0, value=-1.0), ((3, 4),),
           torch_fn=lambda x: x.scatter(0, _t(_S0), value=-1.0),
           np_fn=lambda a: _np_scatter(a, 0, _S0, -1.0)),
    OpCase("scatter_3d_last_dim", lambda x, s: x.scatter(-1, _S3, s), ((2, 3, 4), (2, 3, 1)),
           torch_fn=lambda x, s: x.scatter(-1, _t(_S3), s),
           np_fn=lambda a, s: _np_scatter(a, 2, _S3, s)),
    OpCase("scatter_add_dim0", lambda x, s: x.scatter_add(0, _A0, s), ((3, 4), (2, 4)),
           torch_fn=lambda x, s: x.scatter_add(0, _t(_A0), s),
           np_fn=lambda a, s: _np_scatter(a, 0, _A0, s, add=True)),
    OpCase("scatter_add_dim1_wide", lambda x, s: mg.scatter_add(x, 1, _A1, s),
           ((3, 4), (3, 5)), torch_fn=lambda x, s: x.scatter_add(1, _t(_A1), s),
           np_fn=lambda a, s: _np_scatter(a, 1, _A1, s, add=True)),
    OpCase("index_add_dim0", lambda x, s: x.index_add(0, _I0, s), ((4, 3), (3, 3)),
           torch_fn=lambda x, s: x.index_add(0, _t(_I0), s),
           np_fn=lambda a, s: _np_index_add(a, 0, _I0, s)),
    OpCase("index_add_dim1_alpha", lambda x, s: mg.index_add(x, 1, _I0, s, alpha=2.0),
           ((2, 3), (2, 3)), torch_fn=lambda x, s: x.index_add(1, _t(_I0), s, alpha=2.0),
           np_fn=lambda a, s: _np_index_add(a, 1, _I0, s, 2.0)),
]

# src larger than index: only its first index.size(d) elements along each dim d are used,
# and the rest get a zero gradient. PyTorch computes these forwards, but its backward fails
# ("ScatterBackward0 returned an invalid gradient ... got [2, 4] but expected shape
# compatible with [3, 4]", torch 2.13), so they are checked without torch's gradients.
LARGER_SRC_CASES = [
    OpCase("scatter_src_larger", lambda x, s: x.scatter(0, _S0, s), ((3, 4), (3, 5)),
           torch_fn=lambda x, s: x.scatter(0, _t(_S0), s),
           np_fn=lambda a, s: _np_scatter(a, 0, _S0, s)),
    OpCase("scatter_add_src_larger", lambda x, s: x.scatter_add(1, _A1[:2], s),
           ((3, 4), (4, 6)), torch_fn=lambda x, s: x.scatter_add(1, _t(_A1[:2]), s),
           np_fn=lambda a, s: _np_scatter(a, 1, _A1[:2], s, add=True)),
]

_R = np.array([1, 0, 2])

RESHAPE_CASES = [
    OpCase("narrow", lambda x: x.narrow(1, 1, 2), ((3, 4),), np_fn=lambda a: a[:, 1:3]),
    OpCase("narrow_negative_start", lambda x: mg.narrow(x, 0, -2, 2), ((3, 4),),
           torch_fn=lambda x: x.narrow(0, -2, 2), np_fn=lambda a: a[1:]),
    OpCase("repeat_interleave_int", lambda x: x.repeat_interleave(2), ((3,),),
           np_fn=lambda a: np.repeat(a, 2)),
    OpCase("repeat_interleave_flattens", lambda x: mg.repeat_interleave(x, 3), ((2, 3),),
           torch_fn=lambda x: x.repeat_interleave(3), np_fn=lambda a: np.repeat(a, 3)),
    OpCase("repeat_interleave_dim0", lambda x: x.repeat_interleave(2, dim=0), ((2, 3),),
           np_fn=lambda a: np.repeat(a, 2, axis=0)),
    OpCase("repeat_interleave_tensor", lambda x: x.repeat_interleave(
        mg.tensor(_R, device=x.device), dim=1), ((2, 3),),
        torch_fn=lambda x: x.repeat_interleave(_t(_R), dim=1),
        np_fn=lambda a: np.repeat(a, _R, axis=1)),
    OpCase("repeat_interleave_list_neg_dim", lambda x: x.repeat_interleave([2, 1], dim=-2),
           ((2, 3),), torch_fn=lambda x: x.repeat_interleave(_t(np.array([2, 1])), dim=-2),
           np_fn=lambda a: np.repeat(a, [2, 1], axis=0)),
    OpCase("repeat_interleave_one_count", lambda x: x.repeat_interleave(
        mg.tensor([2], device=x.device), dim=1), ((2, 3),),
        torch_fn=lambda x: x.repeat_interleave(_t(np.array([2])), dim=1),
        np_fn=lambda a: np.repeat(a, 2, axis=1)),
]

CASES = EINSUM_CASES + SCATTER_CASES + RESHAPE_CASES


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("case", LARGER_SRC_CASES, ids=str)
def test_larger_src_forward_vs_torch_and_gradcheck(case, device, dtype):
    torch = pytest.importorskip("torch")
    arrays = case.arrays()
    got = case.fn(*[mg.tensor(a, dtype=dtype, device=device) for a in arrays])
    want = case.torch_fn(*[torch.tensor(a, dtype=getattr(torch, dtype)) for a in arrays])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    if dtype == "float64":
        check_gradcheck(case, device)
        x, s = [mg.tensor(a, device=device, requires_grad=True) for a in arrays]
        case.fn(x, s).sum().backward()
        used = np.zeros(s.shape, bool)
        used[:2, :5 if "add" in case.name else 4] = True
        assert (s.grad.numpy()[~used] == 0).all() and (s.grad.numpy()[used] == 1).all()


@pytest.mark.parametrize("case", CASES + LARGER_SRC_CASES, ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_on_spy(case, spy)


# ---- einsum: edge values --------------------------------------------------------------
def test_einsum_of_one_operand_is_a_new_tensor(device):
    """NumPy's einsum of one operand ("ij->ji", "ii->i") may be a view of it: the op copies,
    so a later change of x does not show in the result (PyTorch's einsum may return a view,
    but a copy is never wrong)."""
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    t, d = mg.einsum("ij->ji", x), mg.einsum("ii->i", x)
    x[0, 0] = 9.0
    assert t.tolist() == [[1.0, 3.0], [2.0, 4.0]] and d.tolist() == [1.0, 4.0]


def test_einsum_integers_and_gradients_only_where_asked(device):
    a = mg.tensor([[1, 2], [3, 4]], device=device)
    assert mg.einsum("ij,jk->ik", a, a).tolist() == [[7, 10], [15, 22]]
    assert mg.einsum("ij,jk->ik", a, a).dtype == mg.int64
    w = mg.ones(2, 3, device=device, requires_grad=True)
    v = mg.tensor([1.0, 2.0], device=device)
    mg.einsum("i,ij->j", v, w).sum().backward()
    assert w.grad.tolist() == [[1.0] * 3, [2.0] * 3] and v.grad is None


def test_einsum_equals_matmul_and_attention(device):
    rng = np.random.default_rng(0)
    q, k = (mg.tensor(rng.standard_normal((2, 3, 4, 5)), device=device) for _ in range(2))
    np.testing.assert_allclose(mg.einsum("bhqd,bhkd->bhqk", q, k).numpy(),
                               (q @ k.transpose(-1, -2)).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("equation, shapes, match", [
    ("ij,jk->ik", [(2, 3), (4, 5)], r"subscript 'j' has size 3 in operand 0 .* but 4 in "
                                    r"operand 1"),
    ("ij,jk->ik", [(2, 3)], r"names 2 operand\(s\) .* but 1 operand\(s\) were given"),
    ("ij->ik", [(2, 3)], r"output subscript 'k' is in no operand"),
    ("ij->ii", [(2, 2)], r"output subscript 'i' appears more than once"),
    ("i1->i", [(2, 3)], r"invalid subscript '1' in 'i1' \(subscripts are letters"),
    ("i.j->i", [(2, 3)], r"invalid subscript '\.'"),
    ("ijk->i", [(2, 3)], r"operand 0 has 2 dims \(shape \(2, 3\)\), but its subscripts "
                         r"'ijk' need 3"),
    ("...ijk->i", [(2, 3)], r"need 3 or more"),
    ("ij->i->j", [(2, 3)], r"more than one '->'"),
    ("ii->i", [(2, 3)], r"'i' is repeated in operand 0 .* with sizes 2 and 3"),
    ("...ij,...jk", [(2, 2, 3), (3, 3, 2)], r"dim -1 of '\.\.\.' has size 2 in operand 0"),
])
def test_einsum_errors_name_what_is_wrong(equation, shapes, match):
    with pytest.raises(ValueError, match=match):
        mg.einsum(equation, *[mg.zeros(s) for s in shapes])


def test_einsum_argument_errors():
    a = mg.zeros(2, 3)
    with pytest.raises(TypeError, match="the equation must be a string"):
        mg.einsum(a, "ij")
    with pytest.raises(TypeError, match="operand 1 is a ndarray; operands must be Tensors"):
        mg.einsum("ij,jk", a, np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"dtypes \['float32', 'float64'\]"):
        mg.einsum("ij,jk", a, mg.zeros(3, 2, dtype=mg.float64))
    with pytest.raises(ValueError, match="needs at least one operand"):
        mg.einsum("ij")


# ---- scatter, scatter_add, index_add: edge values -----------------------------------------
def test_scatter_gradients_by_hand(device):
    """scatter: the overwritten elements of x get no gradient, src's used elements get the
    gradient of where they went; scatter_add: x gets all of it."""
    x = mg.zeros(2, 3, device=device, requires_grad=True)
    src = mg.tensor([[1.0, 2.0, 3.0]], device=device, requires_grad=True)
    idx = mg.tensor([[1, 0, 1]], device=device)
    out = x.scatter(0, idx, src)
    assert out.tolist() == [[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]
    (out * mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]]
    assert src.grad.tolist() == [[4.0, 2.0, 6.0]]
    x.grad = src.grad = None
    x.scatter_add(1, mg.tensor([[2, 2, 2]], device=device), src).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2 and src.grad.tolist() == [[1.0] * 3]


def test_scatter_edge_values(device):
    x = mg.zeros(3, device=device)
    assert x.scatter_add(0, mg.tensor([2, 2, 0], device=device),
                         mg.tensor([1.0, 2.0, 4.0], device=device)).tolist() == [4.0, 0.0, 3.0]
    assert x.scatter(0, mg.tensor([], dtype=mg.int64, device=device), 1.0).tolist() == [0.0] * 3
    assert mg.tensor(1.0, device=device).scatter(
        0, mg.tensor(0, device=device), mg.tensor(5.0, device=device)).tolist() == 5.0
    assert x.index_add(0, mg.tensor([1, 1], device=device),
                       mg.tensor([1.0, 2.0], device=device), alpha=-1).tolist() == [0, -3, 0]
    y = mg.tensor([1.0, 2.0], device=device)
    out = y.scatter(0, mg.tensor([0], device=device), 7.0)
    assert out.tolist() == [7.0, 2.0] and y.tolist() == [1.0, 2.0]   # a new tensor


@pytest.mark.parametrize("call, error, match", [
    (lambda a: a.scatter(0, mg.tensor([[0, 5, 1]]), 1.0), IndexError,
     r"scatter: index values must lie in \[0, 2\) \(the size of dim 0 of self, shape "
     r"\(2, 3\)\), got values from 0 to 5"),
    (lambda a: a.scatter(0, mg.tensor([[0, -1, 1]]), 1.0), IndexError, r"from -1 to 1"),
    (lambda a: a.scatter(0, mg.tensor([[0.0, 1.0, 1.0]]), 1.0), TypeError,
     r"scatter: index must be a tensor of integers \(int64 or int32\), got float32"),
    (lambda a: a.scatter(0, mg.tensor([0, 1, 1]), 1.0), ValueError,
     r"index has 1 dims \(shape \(3,\)\) but self has 2"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 1]]), mg.zeros(1, 2)), ValueError,
     r"src of shape \(1, 2\) must have the 2 dims of index \(shape \(1, 3\)\) and be at "
     r"least as large"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 1, 0]]), mg.zeros(1, 4)), ValueError,
     r"larger than self \(shape \(2, 3\)\) in dim 1 \(4 > 3\); it may be larger only in "
     r"dim 0"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 1]]), mg.zeros(1, 3, dtype=mg.float64)),
     TypeError, r"src has dtype float64 but self has float32"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 1]]), "x"), TypeError,
     r"src must be a Tensor or a number, got str"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 1]])), TypeError, r"give either src"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 1]]), 1.0, reduce="sum"),
     ValueError, r"reduce must be 'add' or 'multiply', got 'sum' \(for 'sum', .* "
                 r"scatter_reduce\)"),
    (lambda a: a.requires_grad_().scatter(0, mg.tensor([[0, 1, 1]]), 2.0, reduce="multiply"),
     RuntimeError, r"reduce='multiply' is not differentiable .* mg.no_grad\(\)"),
    (lambda a: a.scatter(0, mg.tensor([[0, 1, 5]]), 2.0, reduce="multiply"), IndexError,
     r"scatter: index values must lie in \[0, 2\)"),
    (lambda a: a.scatter_add(0, mg.tensor([[0, 1, 1]]), 1.0), TypeError,
     r"scatter_add: src must be a Tensor, got float"),
    (lambda a: a.scatter(2, mg.tensor([[0, 1, 1]]), 1.0), IndexError,
     r"scatter: dim 2 out of range .* \(valid: -2..1\)"),
    (lambda a: a[0, 0].scatter(0, mg.tensor([0]), 1.0), ValueError,
     r"scatter: self is 0-d, so index must be 0-d too, got shape \(1,\)"),
    (lambda a: a.index_add(0, mg.tensor([0, 2]), mg.zeros(2, 3)), IndexError,
     r"index_add: index values must lie in \[0, 2\)"),
    (lambda a: a.index_add(0, mg.tensor([0, 1]), mg.zeros(3, 3)), ValueError,
     r"source has shape \(3, 3\); .* it must be \(2, 3\)"),
    (lambda a: a.index_add(0, mg.tensor([[0, 1]]), mg.zeros(2, 3)), IndexError,
     r"index must be a vector \(1-D\), got shape \(1, 2\)"),
])
def test_scatter_errors_name_the_argument_and_the_valid_range(call, error, match):
    with pytest.raises(error, match=match):
        call(mg.zeros(2, 3))


_SCATTER_X = np.arange(1.0, 13.0).reshape(3, 4)
_SCATTER_I = np.array([[0, 1, 2, 0], [0, 1, 0, 0]])       # repeated positions in columns
_SCATTER_S = np.array([[2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0]])


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_reduce_adds_or_multiplies_at_every_repeat(device, reduce, dim):
    """Each (index, src) pair applied in turn: out[i[j][k]][k] += or *= src[j][k] for dim 0,
    a repeated position twice; a number likewise."""
    index = _SCATTER_I if dim == 0 else _SCATTER_I[:, :3]
    src = _SCATTER_S if dim == 0 else _SCATTER_S[:, :3]
    want, want_value = _SCATTER_X.copy(), _SCATTER_X.copy()
    for j, k in np.ndindex(index.shape):
        at = (index[j, k], k) if dim == 0 else (j, index[j, k])
        if reduce == "add":
            want[at] += src[j, k]
            want_value[at] += 3.0
        else:
            want[at] *= src[j, k]
            want_value[at] *= 3.0
    x = mg.tensor(_SCATTER_X, device=device)
    i = mg.tensor(index, device=device)
    got = x.scatter(dim, i, mg.tensor(src, device=device), reduce=reduce)
    assert got.device == device
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(x.scatter(dim, i, 3.0, reduce=reduce).numpy(), want_value)
    np.testing.assert_array_equal(x.numpy(), _SCATTER_X)          # a new tensor


def test_scatter_reduce_add_is_differentiable():
    x = mg.tensor(_SCATTER_X, requires_grad=True)
    s = mg.tensor(_SCATTER_S, requires_grad=True)
    assert mg.gradcheck(lambda x, s: x.scatter(0, mg.tensor(_SCATTER_I), s, reduce="add"),
                        [x, s])
    with mg.no_grad():                       # multiply: fine without a graph
        x.scatter(0, mg.tensor(_SCATTER_I), s, reduce="multiply")


# ---- narrow, repeat_interleave: edge values -----------------------------------------------
def test_narrow_is_a_view_and_takes_the_ends(device):
    x = mg.arange(12.0, device=device).reshape(3, 4)
    y = x.narrow(1, 1, 2)
    x[0, 1] = 100.0                                     # a view: the change shows in y
    assert y.tolist() == [[100.0, 2.0], [5.0, 6.0], [9.0, 10.0]]
    assert x.narrow(0, 3, 0).shape == (0, 4) and x.narrow(-1, -4, 4).shape == (3, 4)
    assert x.narrow(0, mg.tensor(2, device=device), 1).tolist() == [[8, 9, 10, 11]]


@pytest.mark.parametrize("args, error, match", [
    ((1, 5, 0), IndexError, r"start 5 is out of range for dim 1 of size 4 .* valid: -4..4"),
    ((1, -5, 1), IndexError, r"start -5 is out of range"),
    ((1, 1, 4), IndexError, r"length 4 from start 1 does not fit dim 1 of size 4 .* valid "
                            r"lengths: 0..3"),
    ((1, 1, -1), IndexError, r"length -1 from start 1 does not fit"),
    ((2, 0, 1), IndexError, r"narrow: dim 2 out of range"),
    ((0, 0.5, 1), TypeError, r"start and length must be ints"),
])
def test_narrow_errors(args, error, match):
    with pytest.raises(error, match=match):
        mg.zeros(3, 4).narrow(*args)


def test_repeat_interleave_edge_values(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    assert x.repeat_interleave(0, dim=1).shape == (2, 0)
    assert x.repeat_interleave(mg.tensor([0, 3], device=device), dim=0,
                               output_size=3).tolist() == [[3.0, 4.0]] * 3
    y = x.repeat_interleave(1)                            # a new tensor, not x's memory
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0] and y.requires_grad
    assert mg.tensor(5.0, device=device).repeat_interleave(2, dim=0).tolist() == [5.0, 5.0]
    counts = mg.tensor([1, 0, 2], device=device)
    assert mg.repeat_interleave(counts).tolist() == [0, 2, 2]     # torch's one-argument form
    x.repeat_interleave(mg.tensor([2, 1], device=device), dim=1).sum().backward()
    assert x.grad.tolist() == [[2.0, 1.0], [2.0, 1.0]]           # the copies' gradients add


@pytest.mark.parametrize("repeats, kw, error, match", [
    (mg.tensor([1, 2]), {"dim": 1}, ValueError, r"repeats has 2 entries, but the dim "
                                                r"repeated has 3 slices"),
    (-1, {}, ValueError, r"repeats must be non-negative, got -1"),
    (mg.tensor([1, -2, 0]), {"dim": 1}, ValueError, r"non-negative, got -2 among them"),
    (mg.tensor([1.0, 2.0, 0.0]), {"dim": 1}, TypeError, r"repeats must be integers, got "
                                                        r"float32"),
    (mg.tensor([[1, 2, 0]]), {"dim": 1}, ValueError, r"repeats must be an int or a 1-D "
                                                     r"tensor, got shape \(1, 3\)"),
    (2, {"output_size": 5}, ValueError, r"output_size=5, but the repeats make 12"),
    ("x", {}, TypeError, r"repeats must be an int or a 1-D tensor of integers, got str"),
])
def test_repeat_interleave_errors(repeats, kw, error, match):
    with pytest.raises(error, match=match):
        mg.zeros(2, 3).repeat_interleave(repeats, **kw)


# ---- unique ----------------------------------------------------------------------------
_VALUES = np.array([[3.0, 1.0, 2.0], [3.0, -1.0, 1.0]])


@pytest.mark.parametrize("kw", [{}, {"return_inverse": True}, {"return_counts": True},
                                {"return_inverse": True, "return_counts": True},
                                {"sorted": False, "return_counts": True}])
def test_unique_vs_numpy_and_torch(device, dtype, kw):
    x = mg.tensor(_VALUES, dtype=dtype, device=device, requires_grad=True)
    got = x.unique(**kw)
    got = list(got) if isinstance(got, tuple) else [got]
    want = np.unique(_VALUES, return_inverse=kw.get("return_inverse", False),
                     return_counts=kw.get("return_counts", False))
    want = list(want) if isinstance(want, tuple) else [want]
    if kw.get("return_inverse"):
        want[1] = want[1].reshape(_VALUES.shape)         # x's shape, as PyTorch
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device == device and not g.requires_grad   # not differentiable
        np.testing.assert_array_equal(g.numpy(), w)
    assert str(got[0].dtype) == dtype and all(g.dtype == mg.int64 for g in got[1:])
    torch = pytest.importorskip("torch")
    ref = torch.unique(torch.tensor(_VALUES), **kw)
    for g, r in zip(got, ref if isinstance(ref, tuple) else [ref]):
        np.testing.assert_array_equal(g.numpy(), r.numpy())


def test_unique_keeps_each_nan_apart_as_torch(device):
    """NaN != NaN: torch.unique gives each NaN on its own, sorted last; NumPy's and
    CuPy's unique collapse them into one unless told not to."""
    x = mg.tensor([1.0, np.nan, 2.0, np.nan, 1.0], device=device)
    values, inverse, counts = x.unique(return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, np.nan, np.nan])
    assert inverse.tolist() == [0, 2, 1, 3, 0] and counts.tolist() == [2, 1, 1, 1]


def test_unique_spellings():
    x = mg.tensor([2, 2, 0])
    assert mg.unique(x).tolist() == [0, 2] and x.unique().dtype == mg.int64
    assert mg.tensor(4.0).unique().tolist() == [4.0]


_ROWS = np.array([[1, 2, 1], [1, 2, 1], [0, 5, 0], [1, 2, 1], [0, 4, 0]])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_slices_along_a_dim_vs_torch(device, dim):
    """The distinct rows (or columns), sorted; each slice's position among them; their counts;
    and the slices rebuilt from the two."""
    x = mg.tensor(_ROWS, device=device)
    values, inverse, counts = x.unique(dim=dim, return_inverse=True, return_counts=True)
    assert values.device == device and inverse.dtype == counts.dtype == mg.int64
    np.testing.assert_array_equal(np.take(values.numpy(), inverse.numpy(), axis=dim), _ROWS)
    assert counts.numpy().sum() == _ROWS.shape[dim]
    assert mg.unique(x, dim=dim).shape == values.shape
    if dim == 0:
        assert values.tolist() == [[0, 4, 0], [0, 5, 0], [1, 2, 1]]
        assert inverse.tolist() == [2, 2, 1, 2, 0] and counts.tolist() == [1, 1, 3]
    torch = pytest.importorskip("torch")
    ref = torch.unique(torch.tensor(_ROWS), dim=dim, return_inverse=True, return_counts=True)
    for g, r in zip((values, inverse, counts), ref):
        np.testing.assert_array_equal(g.numpy(), r.numpy())


def test_unique_along_a_dim_that_is_not_there_is_named():
    with pytest.raises(IndexError, match="unique"):
        mg.tensor(_ROWS).unique(dim=2)


# ---- the spy device: no op leaves it -------------------------------------------------------
def test_non_differentiable_ones_stay_on_the_gpu_stand_in(spy):
    x = mg.tensor(_VALUES, device=spy)
    made = list(x.unique(return_inverse=True, return_counts=True))
    made += list(x.unique(dim=1, return_inverse=True, return_counts=True))
    made += [mg.repeat_interleave(mg.tensor([1, 0, 2], device=spy)),
             x.repeat_interleave(mg.tensor([2, 1, 1], device=spy), dim=1),
             x.narrow(0, 1, 1), mg.einsum("ij->j", x),
             x.scatter(1, mg.tensor([[0], [2]], device=spy), 0.0),
             x.scatter(1, mg.tensor([[0], [2]], device=spy), 2.0, reduce="multiply"),
             x.index_add(0, mg.tensor([1], device=spy), x[:1])]
    for t in made:
        assert t.device == spy and isinstance(t._data, spy_backend.SpyArray), repr(t)
    assert made[0].tolist() == [-1.0, 1.0, 2.0, 3.0]


def test_scatter_checks_its_index_with_one_read(spy):
    """The bounds of a scatter index are checked with one device sync, as gather's."""
    x = mg.zeros(3, 4, device=spy)
    idx, src = mg.tensor(_S0, device=spy), mg.ones(2, 4, device=spy)
    with spy_backend.counted() as n:
        x.scatter(0, idx, src)
    assert n["sync"] == 1
