"""Indexing (`__getitem__`): ints, slices, None/Ellipsis, integer arrays and lists with
REPEATED indices (their gradients must add up), boolean masks, and Tensor indices; plus
embedding (the same gather, with padding_idx)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch

_REPEATED = np.array([0, 2, 0, 0])
_ROWS, _COLS = np.array([0, 1, 1, 3]), np.array([2, 2, 0, 2])
_MASK = np.array([[True, False, True], [False, False, False], [True, True, True],
                  [False, True, False]])
_ROW_MASK = np.array([True, False, True, True])


def _t(a):
    import torch
    return torch.from_numpy(a)


def _index_case(name, index, torch_index=None):
    """x[index] on a (4, 3) input. A Tensor index is built from x (to land on its device) by
    a function; `torch_index` is then torch's spelling of it."""
    mg_fn = (lambda x: x[index(x)]) if callable(index) else (lambda x: x[index])
    t_fn = (lambda x: x[index]) if torch_index is None else (lambda x: x[torch_index()])
    return OpCase(name, mg_fn, ((4, 3),), torch_fn=t_fn)


CASES = [
    _index_case("int", 1),
    _index_case("neg_int", -1),
    _index_case("int_int", (1, 2)),
    _index_case("slice", slice(1, 3)),
    _index_case("step_slice", slice(None, None, 2)),
    _index_case("col", (slice(None), 1)),
    _index_case("slices2d", (slice(1, None), slice(None, 2))),
    _index_case("none_ellipsis", (None, Ellipsis, 0)),
    _index_case("int_array_repeated", _REPEATED),
    _index_case("list_repeated", [3, 3, 1]),
    _index_case("cols_repeated", (slice(None), np.array([2, 2, 0]))),
    _index_case("paired_arrays", (_ROWS, _COLS)),
    _index_case("2d_index_array", np.array([[0, 0], [1, 3]])),
    _index_case("bool_mask", _MASK),
    _index_case("bool_row_mask", _ROW_MASK),
    _index_case("tensor_index", lambda x: mg.tensor(_REPEATED, device=x.device),
                torch_index=lambda: _t(_REPEATED)),
    _index_case("tensor_mask", lambda x: mg.tensor(_MASK, device=x.device),
                torch_index=lambda: _t(_MASK)),
    _index_case("tensor_and_int", lambda x: (mg.tensor(_ROWS, device=x.device), 1),
                torch_index=lambda: (_t(_ROWS), 1)),
]

_IDS = np.array([[0, 2, 2], [4, 0, 1]])


def _torch_embedding(weight, padding_idx=None):
    import torch
    return torch.nn.functional.embedding(_t(_IDS), weight, padding_idx=padding_idx)


CASES += [
    OpCase("embedding", lambda w: F.embedding(mg.tensor(_IDS, device=w.device), w), ((5, 3),),
           torch_fn=_torch_embedding, np_fn=lambda w: w[_IDS]),
    OpCase("embedding_numpy_ids", lambda w: F.embedding(_IDS, w), ((5, 3),),
           torch_fn=_torch_embedding),
    OpCase("embedding_padding", lambda w: F.embedding(_IDS, w, padding_idx=0), ((5, 3),),
           torch_fn=lambda w: _torch_embedding(w, padding_idx=0)),
]

_G = np.array([[2, 0, 2], [1, 1, 0], [0, 2, 1]])         # repeated: gradients add up

CASES += [
    OpCase("gather_dim1", lambda x: x.gather(1, mg.tensor(_G, device=x.device)), ((4, 3),),
           torch_fn=lambda x: x.gather(1, _t(_G)),
           np_fn=lambda x: np.take_along_axis(x[:3], _G, 1)),
    OpCase("gather_dim0", lambda x: mg.gather(x, 0, _G[:2, :2] + 1), ((4, 3),),
           torch_fn=lambda x: x.gather(0, _t(_G[:2, :2] + 1)),
           np_fn=lambda x: np.take_along_axis(x[:, :2], _G[:2, :2] + 1, 0)),
    OpCase("sort", lambda x: x.sort(1)[0], ((4, 3),), np_fn=lambda x: np.sort(x, 1)),
    OpCase("sort_descending", lambda x: x.sort(0, descending=True)[0], ((4, 3),),
           np_fn=lambda x: -np.sort(-x, 0)),
    OpCase("topk", lambda x: x.topk(2)[0], ((4, 3),), np_fn=lambda x: -np.sort(-x, 1)[:, :2]),
    OpCase("topk_smallest", lambda x: mg.topk(x, 3, dim=0, largest=False)[0], ((4, 3),),
           torch_fn=lambda x: x.topk(3, dim=0, largest=False)[0],
           np_fn=lambda x: np.sort(x, 0)[:3]),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


# padding_idx holds a row's gradient at zero on purpose: not the numerical derivative
@pytest.mark.parametrize("case", [c for c in CASES if c.name != "embedding_padding"], ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


def test_repeated_indices_accumulate(device):
    x = mg.zeros(4, device=device, requires_grad=True)
    x[[0, 0, 0, 2]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0, 0.0]


def test_embedding_padding_row_gets_zero_grad(device):
    w = mg.randn(5, 3, device=device, requires_grad=True)
    F.embedding(mg.tensor(_IDS, device=device), w, padding_idx=0).sum().backward()
    grad = w.grad.numpy()
    np.testing.assert_array_equal(grad[0], 0.0)
    np.testing.assert_array_equal(grad[:, 0], [0, 1, 2, 0, 1])  # row 2 used twice


def test_setitem_under_no_grad(device):
    x = mg.zeros(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        x[0, 1] = 5.0
    with mg.no_grad():
        x[0, 1] = 5.0
        x[mg.tensor([1], device=device)] = mg.ones(3, device=device)
    assert x.tolist() == [[0.0, 5.0, 0.0], [1.0, 1.0, 1.0]]


def test_numpy_integer_scalars_index_like_python_ints(device):
    a = np.arange(12.0).reshape(4, 3)
    x = mg.tensor(a, device=device)
    np.testing.assert_array_equal(x[np.int64(1)].numpy(), a[1])
    np.testing.assert_array_equal(x[np.int32(-1), np.int64(2)].numpy(), a[-1, 2])
    with mg.no_grad():
        x[np.int64(0)] = 0.0
    assert x.numpy()[0].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("index, value, dim", [
    (np.array([0, 4]), 4, 0), (np.array([[1], [-5]]), -5, 0), ((slice(None), [0, 3]), 3, 1),
    ((Ellipsis, np.array([2, 7])), 7, 1), ((None, 1, np.array([-4])), -4, 1),
    ((np.array([True, False, True, False]), np.array([3, 0])), 3, 1),
])
def test_out_of_range_integer_array_index_names_value_dim_and_shape(index, value, dim, device):
    """Checked explicitly (CuPy would wrap such an index around silently)."""
    x = mg.zeros(4, 3, device=device)
    idx = tuple(mg.tensor(i, device=device) if isinstance(i, np.ndarray) else i
                for i in (index if isinstance(index, tuple) else (index,)))
    for given in (index, idx):
        with pytest.raises(IndexError, match=rf"getitem: index {value} is out of range for "
                                             rf"dim {dim} of size {x.shape[dim]} \(tensor of "
                                             rf"shape \(4, 3\); valid: "):
            x[given]


@pytest.mark.parametrize("rows,index,value_shape", [
    (5, np.array([3, 1, 3, -1, 0, 4, 1]), (7, 2, 3)),    # repeats, and -1 beside 4
    (5, np.array([[0, 2], [2, 2]]), (2, 2, 2, 3)),         # an embedding's (B, T) ids
    (5, np.array([], dtype=np.int64), (0, 2, 3)),
    (50, np.array([1, 1, 0, -2]), (4, 2, 3)),              # a table bigger than the batch
    (10, np.array([9, 1, 1, 0, -2, 3, 3, 3]), (8, 2, 3)),  # a bit bigger: dense, no sort
    (5, (np.array([0, 1, 1]), np.array([1, 0, 1])), (3, 3)),  # a tuple: np.add.at itself
])
def test_host_index_add_is_add_at(rows, index, value_shape):
    """The CPU's scatter-add (a sparse product) gives what np.add.at gives, to rounding (it
    sums a row's values before adding them to the target, not one by one into it)."""
    from minigrad import backend
    rng = np.random.default_rng(8)
    start = rng.standard_normal((rows, 2, 3))
    values = rng.standard_normal(value_shape)
    want, got = start.copy(), start.copy()
    np.add.at(want, index, values)
    backend.get("cpu").index_add(got, index, values)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_host_index_add_into_a_flat_table_sums_with_bincount(dtype, monkeypatch):
    """A 1-wide table filled densely (max pool's gradient into a flattened input) sums each
    row's values with np.bincount: what np.add.at gives (repeats, -1 beside n-1), to the
    rounding of a float64 sum."""
    from minigrad import backend
    calls = []
    bincount = np.bincount
    monkeypatch.setattr(np, "bincount", lambda *a, **k: calls.append(1) or bincount(*a, **k))
    rng = np.random.default_rng(9)
    index = np.array([[3, 1, 3, -1], [0, 4, 1, 4]])
    values = rng.standard_normal(index.shape).astype(dtype)
    start = rng.standard_normal(5).astype(dtype)
    want, got = start.copy(), start.copy()
    np.add.at(want, index, values)
    backend.get("cpu").index_add(got, index, values)
    assert calls and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_host_index_add_of_big_slices_along_a_later_axis_is_add_at(dtype, monkeypatch):
    """x[:, :, rows] += values with big slices (interpolation's gradient) adds one slice per
    entry in order: np.add.at's sums, repeats and -1 included, exactly (each place adds its
    values in the same order)."""
    from minigrad import backend, backend_numpy
    taken = []
    check = backend_numpy._slices_then_one_array
    monkeypatch.setattr(backend_numpy, "_slices_then_one_array",
                        lambda *a: taken.append(check(*a)) or taken[-1])
    rng = np.random.default_rng(3)
    rows = np.array([0, 0, 1, 3, -1, 2, 2, 0])
    values = rng.standard_normal((2, 64, rows.size, 40)).astype(dtype)
    start = rng.standard_normal((2, 64, 4, 40)).astype(dtype)
    want, got = start.copy(), start.copy()
    np.add.at(want, (slice(None), slice(None), rows), values)
    backend.get("cpu").index_add(got, (slice(None), slice(None), rows), values)
    assert taken == [True]
    np.testing.assert_array_equal(got, want)


def test_the_gradient_of_indexing_is_differentiable(device):
    """IndexAdd (scatter-add, the gradient of x[idx]) checked as an op of its own: its value
    (repeated indices add up) and its gradient (indexing again), in float64."""
    x = mg.randn(5, 3, dtype=mg.float64, device=device, requires_grad=True)
    idx = np.array([0, 2, 2, 4, 2])

    def scatter(v):                               # = IndexAdd(v): zeros(5, 3) with v added
        return mg.grad((x[idx] * v).sum(), x, create_graph=True)[0]
    v = np.random.default_rng(0).standard_normal((5, 3))
    want = np.zeros((5, 3))
    np.add.at(want, idx, v)
    np.testing.assert_allclose(scatter(mg.tensor(v, device=device)).numpy(), want, 1e-12)
    assert mg.gradcheck(scatter, [mg.tensor(v, dtype=mg.float64, device=device,
                                            requires_grad=True)])


def test_embedding_negative_padding_idx_counts_from_the_end(device):
    w = mg.randn(5, 3, device=device, requires_grad=True)
    F.embedding(mg.tensor(_IDS, device=device), w, padding_idx=-5).sum().backward()
    grad = w.grad.numpy()                                # -5 is row 0, as PyTorch
    np.testing.assert_array_equal(grad[:, 0], [0, 1, 2, 0, 1])
    with pytest.raises(ValueError, match="padding_idx 5 is outside the table of 5 rows"):
        F.embedding(mg.tensor(_IDS, device=device), w, padding_idx=5)


def test_integers_apply_before_arrays_as_torch(device):
    """x[0, :, idx]: PyTorch selects with the int first, so idx's dim stays in place (3, 2);
    NumPy would broadcast the int with idx and move that dim to the front (2, 3)."""
    a = np.arange(24.0).reshape(2, 3, 4)
    x = mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True)
    idx = np.array([3, 0])
    cases = [((0, slice(None), idx), a[0][:, idx]),                # (3, 2)
             ((-1, Ellipsis, idx), a[-1][..., idx]),
             ((np.array([1]), slice(None), 1), a[:, :, 1][[1]]),      # (1, 3)
             ((1, None, slice(None), a[0, 0] > 1), a[1][None][:, :, a[0, 0] > 1]),
             ((mg.tensor(1, device=device), slice(None), mg.tensor(idx, device=device)),
              a[1][:, idx])]                                    # a 0-d tensor is an int
    for index, expected in cases:
        y = x[index]
        assert y.shape == expected.shape
        np.testing.assert_array_equal(y.numpy(), expected)
    w = np.random.default_rng(0).standard_normal((3, 2))
    (x[0, :, idx] * mg.tensor(w, device=device)).sum().backward()
    expected_grad = np.zeros_like(a)
    expected_grad[0][:, idx] = w
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad)
    mg.gradcheck(lambda t: t[0, :, idx], [x])
    y = mg.zeros(2, 3, 4, dtype=mg.float64, device=device)     # setitem: the same places
    y[0, :, idx] = mg.tensor(w, device=device)
    np.testing.assert_array_equal(y.numpy(), expected_grad)


def test_setitem_of_a_value_that_requires_grad_is_recorded(device):
    """As PyTorch: x becomes a non-leaf whose gradient reaches the value written (and not
    the part it overwrote); detached, or under no_grad, nothing is recorded."""
    w = mg.ones(3, device=device, requires_grad=True)
    x = mg.zeros(2, 3, device=device)
    x[0] = w * 2
    x[1] = (w * 2).detach()
    with mg.no_grad():
        x[1] = w * 3
    assert x.tolist() == [[2.0] * 3, [3.0] * 3] and not x.is_leaf
    (x * mg.tensor([[1.0], [10.0]], device=device)).sum().backward()
    assert w.grad.tolist() == [2.0] * 3


def test_sort_and_topk_indices(device):
    """Indices point where each value came from; ties keep their order (a stable sort, also
    descending); topk takes the first k of the descending sort; a 0-d tensor sorts to
    itself at index 0."""
    x = mg.tensor([[3, 1, 2, 1, 3], [0, 0, 5, -1, 5]], device=device)
    v, i = x.sort(1)
    assert v.tolist() == [[1, 1, 2, 3, 3], [-1, 0, 0, 5, 5]]
    assert i.tolist() == [[1, 3, 2, 0, 4], [3, 0, 1, 2, 4]]
    v, i = x.sort(1, descending=True)
    assert v.tolist() == [[3, 3, 2, 1, 1], [5, 5, 0, 0, -1]]
    assert i.tolist() == [[0, 4, 2, 1, 3], [2, 4, 0, 1, 3]]
    assert x.topk(2, dim=1).indices.tolist() == [[0, 4], [2, 4]]
    b = mg.tensor([True, False, True], device=device)
    assert b.sort(descending=True).indices.tolist() == [0, 2, 1]
    f = mg.tensor([1.0, float("nan"), -2.0], device=device)
    assert f.sort().indices.tolist() == [2, 0, 1]        # NaN last (first when descending)
    assert f.sort(descending=True).indices.tolist() == [1, 0, 2]
    v, i = mg.tensor(2.0, device=device).sort()
    assert v.item() == 2.0 and i.item() == 0
    assert mg.tensor([1.0, 2.0], device=device).topk(0).values.shape == (0,)


def test_gather_and_topk_bad_input(device):
    x = mg.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match=r"\[0, 4\).*got values from -1 to 2"):
        x.gather(1, mg.tensor([[-1, 2]], device=device))
    with pytest.raises(IndexError, match=r"\[0, 3\).*from 0 to 3"):
        x.gather(0, mg.tensor([[3, 0]], device=device))
    with pytest.raises(ValueError, match="must have the 2 dims"):
        x.gather(1, mg.tensor([1, 2], device=device))
    with pytest.raises(ValueError, match="no larger except dim 1"):
        x.gather(1, mg.zeros(4, 1, dtype=mg.int64, device=device))
    with pytest.raises(TypeError, match="tensor of integers, got float32"):
        x.gather(1, mg.zeros(1, 1, device=device))
    with pytest.raises(IndexError, match="dim 2 out of range"):
        x.gather(2, mg.zeros(1, 1, dtype=mg.int64, device=device))
    with pytest.raises(ValueError, match=r"k must be an int in \[0, 4\]"):
        x.topk(5)
    with pytest.raises(ValueError, match=r"k must be an int in \[0, 3\]"):
        x.topk(1.5, dim=0)


def test_topk_of_a_0d_tensor_and_gather_with_an_empty_index(device):
    v, i = mg.tensor(3.0, device=device).topk(1)
    assert mg.tensor(3.0, device=device).topk(1).values.item() == 3.0 and i.item() == 0
    empty = mg.zeros(5, 0, dtype=mg.int64, device=device)  # bigger than x along dim 0: empty
    assert mg.zeros(2, 3, device=device).gather(1, empty).shape == (5, 0)
    x = mg.tensor(5.0, device=device, requires_grad=True)   # 0-d input and index
    x.gather(0, mg.tensor(0, device=device)).backward()
    assert x.grad.item() == 1.0
    w = mg.ones(4, 3, device=device)                         # a 0-d index picks one row
    assert F.embedding(mg.tensor(2, device=device), w).shape == (3,)


BOOL_INDEXES = [(0, True, [1, 2]), (True, 0, [1, 2]), (0, [1, 2], True), (0, slice(None), True),
                (True,), (0, True), (slice(None), True, 1), (1, slice(None), [0, 3], True),
                (True, [0, 1], slice(None), 2), (Ellipsis, True, 0), (None, 0, True, [1])]


@pytest.mark.parametrize("index", BOOL_INDEXES, ids=str)
def test_a_python_bool_among_ints_and_arrays_indexes_as_torch(index):
    """True in an index is a 0-d mask (a new dim of 1) and an array to the split of ints
    from arrays: x[0, True, [1, 2]] read the wrong shape and its write was lost."""
    torch = pytest.importorskip("torch")
    a = np.arange(24.0).reshape(2, 3, 4)
    ti = tuple(torch.tensor(i) if isinstance(i, list) else i for i in index)
    mi = tuple(mg.tensor(i) if isinstance(i, list) else i for i in index)
    np.testing.assert_array_equal(mg.tensor(a)[mi].numpy(), torch.tensor(a)[ti].numpy())
    x, t = mg.tensor(a), torch.tensor(a)
    x[mi], t[ti] = -1.0, -1.0
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    w = mg.tensor(a, requires_grad=True)
    w[mi].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), t.numpy() == -1)


def test_a_mask_among_ints_covers_its_dims_as_torch():
    torch = pytest.importorskip("torch")
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    mask = np.zeros((3, 4), dtype=bool)
    mask[0, 1] = mask[2, 3] = True
    got = mg.tensor(a)[0, mg.tensor(mask), 1]
    np.testing.assert_array_equal(got.numpy(), torch.tensor(a)[0, torch.tensor(mask), 1])
    assert got.tolist() == [6.0, 56.0]


# ---- topk and median select in O(n) on the CPU: the same answers as the full sort -------------
def _with_ties_and_nans(rng, shape, dtype):
    """Few distinct values (many ties), -0.0 beside 0.0, and for floats NaNs, some slices
    all NaN."""
    a = rng.integers(-3, 4, shape).astype(dtype)
    if a.dtype.kind == "f":
        a[rng.random(shape) < 0.2] = -0.0
        a[rng.random(shape) < 0.15] = np.nan
        a[(slice(None),) * (a.ndim - 1) + (0,)] = np.nan
    return a


@pytest.fixture(params=["long slices", "every slice", "no slice"])
def select_from(request, monkeypatch):
    """Slices from 64 long select by argpartition, shorter ones sort; "every slice" makes
    short ones select too, "no slice" makes every one sort (the reference path)."""
    from minigrad.ops import order as index
    if request.param != "long slices":
        monkeypatch.setattr(index, "_SELECT_FROM", 1 if request.param == "every slice" else
                            10 ** 9)
    return index._SELECT_FROM


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_topk_is_the_first_k_of_the_stable_sort(dtype, select_from):
    """topk picks its k with argpartition (not stable) and sorts only those: the indices must
    be exactly the first k of the stable sort (ties: the lower index first; NaN the
    largest), for every dim, k, largest and sorted."""
    rng = np.random.default_rng(3)
    for shape in [(130,), (9, 70), (3, 64, 5)] if select_from == 64 else \
            [(40,), (9, 32), (12, 5, 16)]:
        a = _with_ties_and_nans(rng, shape, dtype if dtype != "bool" else "int64")
        a = a > 0 if dtype == "bool" else a
        for d in range(len(shape)):
            for k in sorted({1, 2, shape[d] // 4, shape[d] // 2, shape[d]}):
                for largest in (True, False):
                    x = mg.tensor(a)
                    values, order = x.sort(d, descending=largest)
                    first = (slice(None),) * d + (slice(0, k),)
                    for is_sorted in (True, False):
                        got = x.topk(k, d, largest=largest, sorted=is_sorted)
                        what = f"shape {shape} dim {d} k {k} largest {largest}"
                        np.testing.assert_array_equal(got.indices.numpy(),
                                                      order.numpy()[first], what)
                        np.testing.assert_array_equal(got.values.numpy(),
                                                      values.numpy()[first], what)


def test_topk_gradient_goes_where_the_values_came_from():
    rng = np.random.default_rng(4)
    a = _with_ties_and_nans(rng, (80, 64), "float64")
    for d, k in ((0, 3), (1, 5), (1, 1)):
        x = mg.tensor(a, requires_grad=True)
        w = mg.tensor(rng.standard_normal((k, 64) if d == 0 else (80, k)))
        (x.topk(k, d).values.nan_to_num() * w).sum().backward()
        y = mg.tensor(a, requires_grad=True)
        first = (slice(None),) * d + (slice(0, k),)
        (y.sort(d, descending=True).values[first].nan_to_num() * w).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())
    x = mg.tensor(rng.standard_normal((3, 64)), dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda t: t.topk(3, 1).values, [x])
    assert mg.gradgradcheck(lambda t: t.topk(3, 1).values ** 2, [x])


def _np_median_index(a, d):
    """The reference: the stable sort's (n - 1) // 2-th, or the first NaN of a slice."""
    order = np.argsort(a, axis=d, kind="stable")
    n = a.shape[d]
    k = np.full(a.shape[:d] + (1,) + a.shape[d + 1:], (n - 1) // 2)
    if a.dtype.kind == "f":
        nans = np.isnan(a).sum(axis=d, keepdims=True)
        k = np.where(nans > 0, n - nans, k)
    return np.take_along_axis(order, k, axis=d)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_median_matches_the_stable_sort_with_ties_and_nans(dtype, select_from):
    rng = np.random.default_rng(5)
    for shape in [(64,), (65,), (3, 70), (66, 2, 3)] if select_from == 64 else \
            [(1,), (2,), (31,), (8, 30), (5, 4, 7)]:
        a = _with_ties_and_nans(rng, shape, dtype)
        if shape[-1] > 2 and a.dtype.kind == "f":
            a[0] = rng.integers(-2, 3, shape[1:])             # a slice without NaN
        for d in range(len(shape)):
            values, indices = mg.tensor(a).median(d, keepdim=True)
            want = _np_median_index(a, d)
            np.testing.assert_array_equal(indices.numpy(), want, f"{shape} dim {d}")
            np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, want, d))
        flat = a.reshape(-1)
        want = flat[_np_median_index(flat, 0)[0]]
        np.testing.assert_array_equal(mg.tensor(a).median().numpy(), want)


def test_median_without_dim_shares_the_gradient_among_equal_values():
    a = np.array([[3.0, 1.0, 2.0, 2.0], [2.0, 5.0, 2.0, 0.0]])
    x = mg.tensor(a, dtype=mg.float64, requires_grad=True)
    (x.median() * 3).backward()                           # 2 is the lower median, 4 times
    np.testing.assert_array_equal(x.grad.numpy(), np.where(a == 2, 0.75, 0.0))
    x = mg.tensor([1.0, np.nan, 0.0, np.nan], requires_grad=True)
    m = x.median()
    m.backward()
    assert np.isnan(m.item()) and x.grad.tolist() == [0.0, 0.5, 0.0, 0.5]
    y = mg.tensor(np.random.default_rng(6).permutation(40) * 0.5, dtype=mg.float64,
                  requires_grad=True)
    assert mg.gradcheck(lambda t: t.median(), [y])
    assert mg.gradgradcheck(lambda t: t.median() ** 2, [y])


def test_topk_keeps_only_its_k_elements():
    """The first k of a full sort, as arrays of their own: a view into the sorted rows kept
    all n alive (a (B, vocab) buffer behind a top-200 in generate) and had strides torch's
    topk does not (x.topk(2)[0].stride() is (2, 1) there)."""
    x = mg.randn(4, 4, requires_grad=True)
    values, indices = x.topk(2, 1)
    assert values.stride() == indices.stride() == (2, 1)
    assert values._data.base is None or values._data.base.size == 8
    values.sum().backward()
    assert x.grad.sum().item() == 8.0


@pytest.mark.parametrize("take", [lambda x, i: x[:, [0, 2]], lambda x, i: x.index_select(1, i),
                                  lambda x, i: x[:, :, [1, 0, 1]], lambda x, i: x[..., [0, 2]],
                                  lambda x, i: x[:, [0, 2], 1:3]])
def test_an_array_index_along_a_middle_dim_gives_a_row_major_tensor(take):
    """NumPy lays such a pick out index-first; PyTorch's result is row-major, so code that
    views it (x.index_select(1, i).view(n, -1)) works the same here."""
    x = mg.arange(120.0).reshape(2, 3, 4, 5)
    y = take(x, mg.tensor([0, 2]))
    assert y.is_contiguous()
    np.testing.assert_array_equal(y.view(2, -1).numpy(), y.numpy().reshape(2, -1))
