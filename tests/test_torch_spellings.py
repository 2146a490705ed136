"""PyTorch's spellings a user reaches for first: `import minigrad.nn.functional as F`, the
module-level functions that are tensor methods (mg.max(t, 1) is t.max(1)), and the small
tensor methods (half, int, is_floating_point, grad_fn, fill_, copy_)."""
import importlib

import numpy as np
import pytest

import minigrad as mg

FUNCTIONS = [("max", ()), ("max", (1,)), ("min", (0,)), ("argmax", ()), ("argmin", (1,)),
             ("abs", ()), ("neg", ()), ("add", (2.0,)), ("sub", (1.0,)), ("mul", (3.0,)),
             ("div", (2.0,)), ("pow", (2,)), ("square", ()), ("sin", ()), ("cos", ()),
             ("softmax", (-1,)), ("log_softmax", (0,)), ("reshape", ((6,),)),
             ("transpose", (0, 1)), ("permute", ((1, 0),)), ("unsqueeze", (0,)),
             ("flatten", ()), ("clone", ()), ("detach", ())]


def test_nn_functional_is_the_functional_module():
    F = importlib.import_module("minigrad.nn.functional")
    assert F is mg.functional and mg.nn.functional is mg.functional
    assert F.gelu(mg.zeros(2)).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name, args", FUNCTIONS)
def test_module_functions_are_the_methods(name, args):
    x = mg.tensor([[1.0, -2.0, 0.5], [3.0, 4.0, -0.25]])
    got, want = getattr(mg, name)(x, *args), getattr(x, name)(*args)
    for g, w in zip(got if isinstance(got, tuple) else [got],
                    want if isinstance(want, tuple) else [want]):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert getattr(mg, name).__name__ == name


def test_module_functions_name_a_missing_tensor():
    with pytest.raises(TypeError, match=r"mg.max: expected a Tensor first, got list"):
        mg.max([1, 2])
    assert mg.sqrt(mg.tensor([4.0])).tolist() == [2.0]   # the ops themselves are kept


def test_small_tensor_methods(device):
    x = mg.tensor([1.5, -2.5], device=device)
    assert x.half().dtype == mg.float16 and x.int().dtype == mg.int32
    assert x.is_floating_point() and not x.int().is_floating_point()
    w = mg.zeros(2, 3, device=device, requires_grad=True)
    assert w.grad_fn is None and type((w * 2).grad_fn).__name__ == "Mul"
    with mg.no_grad():
        assert w.fill_(0.5) is w and w.tolist() == [[0.5] * 3] * 2
        assert w.copy_(mg.arange(3.0, device=device)) is w
    assert w.tolist() == [[0.0, 1.0, 2.0]] * 2
    with pytest.raises(RuntimeError, match="fill_: in-place change of a leaf"):
        w.fill_(1.0)
    for src in (mg.ones(1, 2, 3, device=device), mg.ones(3, 2, device=device)):
        with pytest.raises(ValueError, match=r"copy_: the source's shape \(\d, \d"):
            mg.zeros(2, 3, device=device).copy_(src)              # as PyTorch


def test_argsort_and_nonzero_as_torch(device):
    x = mg.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], device=device)
    assert x.argsort(1).tolist() == [[0, 2, 1], [2, 1, 0]]
    assert mg.argsort(x, 0, descending=True).tolist() == [[1, 0, 0], [0, 1, 1]]
    assert x.nonzero().tolist() == [[0, 1], [1, 0], [1, 2]] and x.nonzero().dtype == mg.int64
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2]
    assert x[x.nonzero(as_tuple=True)].tolist() == [1.5, 2.0, -1.0]
    assert mg.tensor(5.0, device=device).nonzero().shape == (1, 0)
    assert mg.zeros(2, 0, device=device).nonzero().shape == (0, 2)


def test_mod_and_floordiv_edges_as_torch(device):
    x = mg.tensor([5.0, 7.0, 9.0], device=device)
    view, alias = x[:2], x
    with mg.no_grad():
        x %= 4                                           # in place: views and aliases see it
    assert x is alias and view.tolist() == [1.0, 3.0] and x.tolist() == [1.0, 3.0, 1.0]
    x //= 2
    assert x.tolist() == [0.0, 1.0, 0.0]
    w = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w %= 2
    for bad in (lambda: mg.tensor([7, -7], device=device) % 0,
                lambda: mg.tensor([7], device=device) // mg.tensor([0], device=device),
                lambda: mg.tensor([7, 7], device=device) // mg.tensor([1, 0], device=device)):
        with pytest.raises(ZeroDivisionError, match="integer division by zero"):
            bad()
    with pytest.raises(TypeError, match="not implemented for two bool tensors"):
        mg.tensor([True], device=device) % mg.tensor([True], device=device)
    a = mg.tensor(1.0, dtype="float64", device=device, requires_grad=True)
    b = mg.tensor(0.1, dtype="float64", device=device, requires_grad=True)
    (a % b).backward()                                   # the quotient forward used: 9
    assert b.grad.item() == -9.0 and a.grad.item() == 1.0


def test_numpy_on_the_left_of_mod_keeps_the_graph():
    w = mg.tensor([2.0, 4.0], requires_grad=True)
    for out in (np.array([5.0, 6.0]) % w, np.array([5.0, 6.0]) // w):
        assert isinstance(out, mg.Tensor) and out.requires_grad


def test_max_and_min_of_two_tensors_are_elementwise_as_torch():
    a, b = mg.tensor([1.0, 5.0]), mg.tensor([3.0, 2.0])
    assert mg.max(a, b).tolist() == [3.0, 5.0] and mg.min(a, other=b).tolist() == [1.0, 2.0]
    assert mg.add(a, b).tolist() == [4.0, 7.0]
    values, indices = mg.max(a, 0)                       # a dim: values and indices
    assert values.item() == 5.0 and indices.item() == 1 and indices.shape == ()
    assert indices._data.ndim == 0                        # an array, not a NumPy scalar


def test_fill_takes_a_number_or_a_0d_tensor(device):
    t = mg.zeros(3, device=device)
    assert t.fill_(mg.tensor(4.0, device=device)).tolist() == [4.0] * 3
    with pytest.raises(TypeError, match="a number or a 0-d tensor, got NoneType"):
        t.fill_(None)
    with pytest.raises(ValueError, match="must be 0-d"):
        t.fill_(mg.tensor([1.0, 2.0, 3.0], device=device))
    s = mg.tensor(2.0, device=device, requires_grad=True)
    t.fill_(s)                                           # recorded: t's sum is 3·s
    t.sum().backward()
    assert t.tolist() == [2.0] * 3 and s.grad.item() == 3.0
    t = mg.zeros(3, device=device)
    with pytest.raises(ValueError, match="without overflow"):
        t.fill_(1e40)


def test_device_answers_torch_device_questions(device):
    import pickle
    x = mg.ones(2, device=device, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    for t in (x, y, x.grad, x.detach(), x.to(device), mg.zeros_like(x)):
        assert t.device.type == device and t.device.index is None
        assert t.device == device and isinstance(t.device, str) and f"{t.device}" == device
    d = mg.device(device)
    assert d.type == device and pickle.loads(pickle.dumps(d)).type == device
    assert mg.device("cuda:0").type == "cuda"            # one GPU: cuda:0 is cuda
    assert mg.from_numpy(np.ones(2)).device.type == "cpu"
    with pytest.raises(ValueError, match="unknown device 'tpu'; valid devices"):
        mg.device("tpu")


def test_device_of_a_spy_tensor(spy):
    assert mg.ones(2, device=spy).device.type == "spy"


def test_new_factories_take_dtype_device_requires_grad(device):
    x = mg.ones(2, device=device)
    z = x.new_zeros(2, 3, dtype=mg.float64)
    assert z.dtype == mg.float64 and z.device == device and z.tolist() == [[0.0] * 3] * 2
    assert x.new_ones((2,), requires_grad=True).requires_grad
    assert x.new_full((2,), 3.0, device="cpu").device == "cpu"
    assert x.new_empty(3, dtype=mg.int64).dtype == mg.int64
    assert x.new_tensor([1.5], dtype=mg.float64).dtype == mg.float64
    assert x.new_zeros(1).dtype == x.dtype                # self's dtype unless given


class _TorchLike:
    """Stands in for a torch.Tensor (so the test runs without PyTorch): what mg.tensor uses
    of one is .detach().cpu().numpy()."""
    def __init__(self, a, requires_grad=False):
        self.a, self.requires_grad = a, requires_grad

    def detach(self):
        return _TorchLike(self.a)

    def cpu(self):
        return self

    def numpy(self):
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad")
        if self.a is None:                                  # as torch's bfloat16
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.a


@pytest.mark.parametrize("make", [mg.tensor, mg.as_tensor])
def test_a_pytorch_tensor_becomes_a_copy_of_its_values(make):
    a = np.array([[1.5, -2.0]], dtype=np.float32)
    t = make(_TorchLike(a, requires_grad=True))
    assert t.dtype == mg.float32 and t.tolist() == [[1.5, -2.0]] and not t.requires_grad
    assert make(_TorchLike(np.arange(3))).dtype == mg.int64
    if make is mg.tensor:
        t.data[0, 0] = 9.0
        assert a[0, 0] == 1.5                       # a copy, as torch.tensor(array)


def test_what_cannot_become_a_tensor_is_named_with_what_can():
    with pytest.raises(TypeError, match=r"builtins\.dict.*scalar.*list.*NumPy.*PyTorch"):
        mg.tensor({"a": 1})
    with pytest.raises(TypeError, match=r"_TorchLike cannot enter a minigrad op; convert it "
                                        r"first with mg.tensor\(t\)"):
        mg.ones(2) * _TorchLike(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"BFloat16.*convert it first, e.g. t.float\(\)"):
        mg.tensor(_TorchLike(None))


def test_a_raw_array_given_for_a_tensor_is_refused_and_data_works():
    """A NumPy array where a tensor is expected: the error names the fix. PyTorch's
    `torch.max(outputs.data, 1)` works, `.data` being a Tensor, as there."""
    with pytest.raises(TypeError, match=r"mg.max: expected a Tensor first, got ndarray; "
                                        r"make one with mg.tensor"):
        mg.max(np.ones((2, 3)), 1)
    values, indices = mg.max(mg.tensor([[1.0, 3.0, 2.0]]).data, 1)
    assert values.tolist() == [3.0] and indices.tolist() == [1]
