"""Tensor methods and top-level functions given the arguments PyTorch users pass: what
PyTorch computes is computed (cat with a 1-D empty tensor, where(condition), .to(...,
non_blocking=True, copy=True), view(dtype), a 0-d integer tensor as a size or a dim), and
what it refuses is refused in words naming the op and what is valid, never NumPy's or
Python's bare words (a boolean mask of the wrong shape, None or a string as an operand,
split of a 0-d tensor) nor a silent answer (flatten(5) of a 0-d tensor). Each case states
PyTorch's behaviour."""
import numpy as np
import pytest

import minigrad as mg


def test_cat_takes_pytorchs_legacy_1d_empty_tensor_beside_any_shape():
    """PyTorch skips a tensor of shape (0,) in cat whatever the others' shapes, so the
    `out = torch.tensor([])` then `out = torch.cat([out, x])` loop works; it was refused
    ("shapes [(0,), (2, 3)] must match except in dim 0")."""
    x = mg.arange(6.0).reshape(2, 3)
    e = mg.tensor([])
    assert mg.cat([e, x]).tolist() == x.tolist()
    assert mg.cat([x, e, x], 1).shape == (2, 6) and mg.cat([x, e, x], -1).shape == (2, 6)
    assert mg.cat([e, e]).shape == (0,) and mg.cat([e, mg.ones(3)]).shape == (3,)
    assert mg.cat([e.double(), x]).dtype == mg.float64             # its dtype still counts
    assert mg.cat([mg.zeros(0, dtype=mg.int64), mg.ones(2, dtype=mg.int32).reshape(1, 2)]
                  ).dtype == mg.int64
    out = mg.tensor([])
    for row in x:
        out = mg.cat([out, row[None]])
    assert out.tolist() == x.tolist()
    a, b = mg.zeros(0, requires_grad=True), mg.ones(2, 3, requires_grad=True)
    (mg.cat([a, b]) * 2).sum().backward()
    assert a.grad.shape == (0,) and b.grad.tolist() == [[2.0] * 3] * 2
    with pytest.raises(IndexError, match="cat: dim 2 out of range for a tensor with 2 dims"):
        mg.cat([e, x], 2)                      # dims count in the other tensors, as PyTorch
    with pytest.raises(ValueError, match="must match except in dim 0"):
        mg.cat([x, mg.zeros(2, 0)])            # a 2-D empty tensor is not skipped


def test_zero_d_tensors_check_flatten_dims_and_refuse_split_by_name():
    """flatten(5) of a 0-d tensor gave shape (1,) (PyTorch: dim out of range); split and
    chunk of one failed with a bare 'tuple index out of range'."""
    s = mg.tensor(3.5)
    assert s.flatten().shape == (1,) and s.flatten(0, -1).shape == (1,)
    for bad in (lambda: s.flatten(5), lambda: s.flatten(0, 2), lambda: s.flatten(-2)):
        with pytest.raises(IndexError, match=r"flatten: dim -?\d out of range for a tensor "
                                             r"with 0 dims \(valid: -1..0\)"):
            bad()
    for call, op in ((lambda: s.split(1), "split"), (lambda: mg.chunk(s, 2), "chunk")):
        with pytest.raises(ValueError, match=f"{op}: needs a tensor with at least 1 dim, "
                                             f"got shape"):
            call()


def test_a_boolean_mask_of_the_wrong_shape_is_named():
    """NumPy's 'boolean index did not match indexed array along axis 0; size of axis is 2
    but size of corresponding boolean axis is 3' reached the user; PyTorch names the mask's
    shape and the tensor's."""
    x = mg.arange(6.0).reshape(2, 3)
    cases = [(lambda: x[[True, False, True]], r"\(3,\) .* dims it covers, \(2,\) from dim 0"),
             (lambda: x[:, mg.tensor([True, False])], r"\(2,\) .* \(3,\) from dim 1"),
             (lambda: mg.zeros(2, 3, 4)[0, ..., mg.tensor([True])], r"\(1,\) .* \(4,\) from dim 2"),
             (lambda: x[mg.tensor([[True, False]])], r"\(1, 2\) .* \(2, 3\) from dim 0"),
             (lambda: x.__setitem__(mg.tensor([True] * 3), 0.0), r"\(3,\) .* \(2,\)")]
    for n, (call, words) in enumerate(cases):
        op = "setitem" if n == 4 else "getitem"
        with pytest.raises(IndexError, match=f"{op}: a boolean mask of shape " + words):
            call()
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]                 # nothing written
    assert x[:, mg.tensor([True, False, True])].tolist() == [[0.0, 2.0], [3.0, 5.0]]
    assert x[mg.tensor([[True, False, True], [False, True, False]])].tolist() == [0.0, 2.0, 4.0]
    assert x[..., mg.tensor([False, True, False])].shape == (2, 1)


def test_where_of_a_condition_alone_gives_its_indices_as_pytorch():
    """torch.where(condition) is condition.nonzero(as_tuple=True); it was a bare 'missing 2
    required positional arguments'."""
    c = mg.tensor([[True, False, True], [False, True, False]])
    rows, cols = mg.where(c)
    assert rows.tolist() == [0, 0, 1] and cols.tolist() == [0, 2, 1]
    assert [t.tolist() for t in mg.where(mg.tensor([0, 3, 0, 1]))] == [[1, 3]]
    with pytest.raises(TypeError, match="where: cannot make a tensor from a builtins.NoneType"):
        mg.where(c, mg.ones(2, 3))                 # one of input and other: named


def test_masked_fill_takes_one_value():
    """PyTorch's value is a number or a 0-d tensor; a tensor of several values reached
    NumPy's broadcasting words under the name Where, or was used elementwise, and None said
    'cannot make a tensor from a builtins.NoneType'."""
    x, m = mg.arange(6.0).reshape(2, 3), mg.tensor([[True, False, True], [False, True, False]])
    for value, got in ((mg.tensor([7.0, 8.0]), r"shape \(2,\)"), (mg.ones(2, 3), r"shape \(2, 3\)"),
                       ([7.0, 8.0], "list"), (None, "NoneType"), ("a", "str")):
        for fill in (x.masked_fill, x.clone().masked_fill_):
            with pytest.raises(TypeError, match="masked_fill: value must be a number or a "
                                                "tensor of one element, got " + got):
                fill(m, value)
    assert x.masked_fill(m, mg.tensor(7.0)).tolist() == [[7.0, 1.0, 7.0], [3.0, 7.0, 5.0]]
    assert x.masked_fill(m, np.float32(7)).sum().item() == 30.0
    v = mg.tensor(2.0, requires_grad=True)
    x.masked_fill(m, v).sum().backward()
    assert v.grad.item() == 3.0                       # a 0-d value keeps its gradient


@pytest.mark.parametrize("call, op", [
    (lambda x: x + None, r"add \(\+\)"), (lambda x: None - x, r"sub \(-\)"),
    (lambda x: x * "a", r"mul \(\*\)"), (lambda x: x / None, r"div \(/\)"),
    (lambda x: x ** None, r"pow \(\*\*\)"), (lambda x: x < None, "less"),
    (lambda x: x.eq("a"), "equal"), (lambda x: x @ None, r"matmul \(@\)"),
    (lambda x: x % None, "%"), (lambda x: x // None, "//"),
    (lambda x: x.maximum(None), "maximum"), (lambda x: x.long() & None, "bitwise_and"),
    (lambda x: x.long() << None, r"bitwise_left_shift \(<<\)"),
    (lambda x: x.__setitem__(0, None), "setitem"), (lambda x: x.__setitem__(0, "a"), "setitem"),
])
def test_an_operand_that_is_no_number_names_the_op(call, op):
    """`x < None` said only 'cannot make a tensor from a builtins.NoneType' (PyTorch:
    "'<' not supported between instances of 'Tensor' and 'NoneType'")."""
    with pytest.raises(TypeError, match=op + ": cannot make a tensor from a builtins"):
        call(mg.ones(2, 2))
    assert (mg.ones(2, 2) == None) is False                      # noqa: E711 (still False)


def test_to_takes_non_blocking_and_copy_as_pytorch():
    """`batch.to(device, non_blocking=True)` and `.to(dtype, copy=True)` were bare
    TypeErrors ('unexpected keyword argument'); PyTorch's positional order is (device,
    dtype, non_blocking, copy), or (dtype | tensor, non_blocking, copy)."""
    x = mg.arange(3.0, requires_grad=True)
    assert x.to("cpu", non_blocking=True) is x and x.to(mg.float32, non_blocking=True) is x
    assert x.to("cpu", mg.float64, True).dtype == mg.float64
    assert x.to("cpu", mg.float64, False, True).dtype == mg.float64
    assert x.to(mg.int64, False, True).dtype == mg.int64
    assert x.to(mg.zeros(1, dtype=mg.float64), True, True).dtype == mg.float64
    for copy in (x.to(copy=True), x.to(mg.float32, copy=True), x.to(x, False, True)):
        assert copy is not x and copy.tolist() == [0.0, 1.0, 2.0]
    y = x.to(copy=True)
    with mg.no_grad():
        y[0] = 9.0
    assert x[0].item() == 0.0                                 # a copy, not the tensor
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]                 # differentiable, as PyTorch
    assert x.numpy(force=True).tolist() == [0.0, 1.0, 2.0] and x.cpu(
        memory_format=mg.preserve_format) is x


def test_cuda_takes_pytorchs_device_and_non_blocking(monkeypatch):
    seen = []
    monkeypatch.setattr(mg.Tensor, "to", lambda self, device, **kw: seen.append(device))
    x = mg.ones(1)
    x.cuda(), x.cuda(0, non_blocking=True), x.cuda("cuda:0", True)
    assert seen == ["cuda", "cuda:0", "cuda:0"]


def test_view_of_a_dtype_reads_the_same_bytes():
    """x.view(mg.int32) was refused as 'sizes and dims must be integers, got
    dtype('int32')'; PyTorch reads the bytes as the other dtype (a view, outside the graph),
    scaling the last dim for a dtype of another size."""
    x = mg.tensor([[1.0, 2.0], [3.0, -0.5]], requires_grad=True)
    bits = x.view(mg.int32)
    assert bits.dtype == mg.int32 and bits.tolist()[0] == [1065353216, 1073741824]
    assert not bits.requires_grad and x.view(dtype=mg.float32).shape == (2, 2)
    assert x.view(mg.int16).shape == (2, 4) and x.view(mg.uint8).shape == (2, 8)
    assert x.view(mg.float64).shape == (2, 1) and x.t().view(mg.int32).shape == (2, 2)
    assert mg.tensor([True, False]).view(mg.uint8).tolist() == [1, 0]
    y = mg.zeros(2, 2)
    z = y.view(mg.int32)
    z[0, 0] = 1065353216                               # shares y's memory
    assert y[0, 0].item() == 1.0 and y._version == z._version
    refusals = [(lambda: mg.tensor(1.0).view(mg.int16), "a 0-d tensor cannot be viewed"),
                (lambda: mg.ones(2, 3).view(mg.float64), r"shape \(2, 3\)"),
                (lambda: mg.ones(2, 4)[:, ::2].view(mg.int16), r"strides \(4, 2\)"),
                (lambda: mg.ones(2, 3)[:, 1:].view(mg.float64), "offset 1"),
                (lambda: mg.ones(2, 3).view(6, dtype=mg.int32), "a shape or a dtype, not both")]
    for call, words in refusals:
        with pytest.raises((RuntimeError, TypeError), match="view: .*" + words):
            call()
    with pytest.raises(TypeError, match="sizes and dims must be integers, got 2.5"):
        mg.ones(2).view(2.5)                            # not a dtype: still a bad size


def test_a_0d_integer_tensor_serves_as_a_size_or_a_dim():
    """PyTorch takes one wherever an int goes (x.view(n) with n = mask.sum()); it was
    'sizes and dims must be integers, got tensor(6)' or 'dim must be an int'."""
    x, n, d = mg.arange(6.0).reshape(2, 3), mg.tensor(6), mg.tensor(1)
    assert x.view(n).shape == (6,) and x.reshape(n).shape == (6,)
    assert x.reshape(mg.tensor(3, dtype=mg.int32), -1).shape == (3, 2)
    assert x.expand(mg.tensor(2), 3).shape == (2, 3) and x.repeat(d, 2).shape == (2, 6)
    assert x.sum(d).tolist() == [3.0, 12.0] and x.transpose(mg.tensor(0), d).shape == (3, 2)
    assert x.unsqueeze(mg.tensor(-1)).shape == (2, 3, 1) and x.flip(d)[0].tolist() == [2.0, 1.0, 0.0]
    assert x.index_select(d, mg.tensor([2])).tolist() == [[2.0], [5.0]]
    for bad in (lambda: x.sum(mg.tensor(True)), lambda: x.view(mg.tensor(6.0))):
        with pytest.raises(TypeError, match="must be an int|must be integers"):
            bad()                                   # a bool or a float is no dim


def test_a_negative_size_other_than_minus_one_is_named():
    for call in (lambda: mg.ones(2, 3).view(-2, 3), lambda: mg.ones(6).reshape(-2)):
        with pytest.raises(ValueError, match="each >= 0 but one -1 at most"):
            call()


CASES_VS_TORCH = [
    lambda L, x: L.cat([L.zeros(0), x, L.zeros(0)], 1),
    lambda L, x: L.cat([L.zeros(0, dtype=L.float64), x]),
    lambda L, x: L.where(x > 2),
    lambda L, x: x.to(L.float64, False, True),
    lambda L, x: x.view(L.int32),
    lambda L, x: x.view(L.int16),
    lambda L, x: x[:, :2].view(L.float64),
    lambda L, x: x.view(L.tensor(8)),
    lambda L, x: x.sum(L.tensor(1)),
    lambda L, x: x.masked_fill(x > 2, L.tensor(-1.0)),
]


@pytest.mark.parametrize("case", range(len(CASES_VS_TORCH)))
def test_the_new_answers_match_torch(torch, case):
    make = CASES_VS_TORCH[case]
    ours = make(mg, mg.arange(8.0).reshape(2, 4))
    theirs = make(torch, torch.arange(8.0).reshape(2, 4))
    if isinstance(theirs, tuple):
        assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]
    else:
        assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype)[6:]


def test_the_refusals_are_torchs_too(torch):
    for lib in (mg, torch):
        x = lib.arange(6.0).reshape(2, 3)
        for bad in (lambda: x[lib.tensor([True, False, True])], lambda: lib.tensor(1.0).split(1),
                    lambda: lib.tensor(1.0).flatten(1), lambda: x + None,
                    lambda: x.masked_fill(x > 2, lib.tensor([1.0, 2.0])),
                    lambda: x.view(lib.float64), lambda: x.view(6, dtype=lib.int32)):
            with pytest.raises((IndexError, ValueError, RuntimeError, TypeError)):
                bad()
