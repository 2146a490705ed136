"""The modules GLU, Hardtanh, ReLU6, LogSigmoid, Mish, Softsign, SELU, PReLU, SmoothL1Loss,
HuberLoss, KLDivLoss, CosineSimilarity and PairwiseDistance: reprs and state_dict names as
PyTorch's, forward equal to the function, outputs and gradients against PyTorch with copied
weights, gradcheck; the errors of the new functions and modules; and a run of every new
function on the spy device (no NumPy on device data, no device sync)."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
import spy_backend
from nn_helpers import compare_with_torch, gradcheck_module


def _tnn():
    return pytest.importorskip("torch").nn


# ---- reprs, state dicts, forward = the function ---------------------------------------------
# (minigrad module, its repr, the same module spelled for torch.nn)
MODULES = [
    (lambda: nn.GLU(), "GLU(dim=-1)", "GLU()"),
    (lambda: nn.GLU(0), "GLU(dim=0)", "GLU(0)"),
    (lambda: nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)", "Hardtanh()"),
    (lambda: nn.Hardtanh(-2, 3, inplace=True), "Hardtanh(min_val=-2, max_val=3, inplace=True)",
     "Hardtanh(-2, 3, inplace=True)"),
    (lambda: nn.ReLU6(), "ReLU6()", "ReLU6()"),
    (lambda: nn.ReLU6(True), "ReLU6(inplace=True)", "ReLU6(True)"),
    (lambda: nn.LogSigmoid(), "LogSigmoid()", "LogSigmoid()"),
    (lambda: nn.Mish(), "Mish()", "Mish()"),
    (lambda: nn.Mish(inplace=True), "Mish(inplace=True)", "Mish(inplace=True)"),
    (lambda: nn.Softsign(), "Softsign()", "Softsign()"),
    (lambda: nn.SELU(), "SELU()", "SELU()"),
    (lambda: nn.SELU(True), "SELU(inplace=True)", "SELU(True)"),
    (lambda: nn.PReLU(), "PReLU(num_parameters=1)", "PReLU()"),
    (lambda: nn.PReLU(3, 0.1), "PReLU(num_parameters=3)", "PReLU(3, 0.1)"),
    (lambda: nn.SmoothL1Loss(), "SmoothL1Loss()", "SmoothL1Loss()"),
    (lambda: nn.HuberLoss(delta=0.5), "HuberLoss()", "HuberLoss(delta=0.5)"),
    (lambda: nn.KLDivLoss(reduction="batchmean"), "KLDivLoss()",
     "KLDivLoss(reduction='batchmean')"),
    (lambda: nn.CosineSimilarity(), "CosineSimilarity()", "CosineSimilarity()"),
    (lambda: nn.PairwiseDistance(keepdim=True), "PairwiseDistance()",
     "PairwiseDistance(keepdim=True)"),
]


@pytest.mark.parametrize("case", MODULES, ids=lambda c: c[1])
def test_repr_and_state_dict_as_pytorch(case):
    make, text, torch_spelling = case
    m = make()
    assert repr(m) == text
    torch_nn = _tnn()
    t = eval("torch_nn." + torch_spelling, {"torch_nn": torch_nn})
    assert repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())
    for (name, p), (t_name, tp) in zip(m.named_parameters(), t.named_parameters()):
        assert name == t_name and p.shape == tuple(tp.shape)
        np.testing.assert_array_equal(p.numpy(), tp.detach().numpy())


def test_prelu_parameter():
    m = nn.PReLU(3, init=0.1, dtype="float64")
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert m.weight.shape == (3,) and m.weight.dtype == mg.float64 and m.weight.requires_grad
    np.testing.assert_array_equal(m.weight.numpy(), 0.1)
    with mg.no_grad():
        m.weight.fill_(2.0)
    m.reset_parameters()
    np.testing.assert_array_equal(m.weight.numpy(), 0.1)
    x = mg.randn(2, 3, 4, dtype="float64")
    m(x).sum().backward()
    assert m.weight.grad.shape == (3,)
    np.testing.assert_allclose(m.weight.grad.numpy(),
                               np.where(x.numpy() > 0, 0, x.numpy()).sum((0, 2)))


def test_modules_are_their_functions(device):
    x = mg.randn(4, 6, device=device)
    y = mg.randn(4, 6, device=device)
    w = mg.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], device=device)
    pairs = [
        (nn.GLU(0), lambda: F.glu(x, 0)), (nn.Hardtanh(-0.5, 2.0), lambda: F.hardtanh(x, -0.5, 2)),
        (nn.ReLU6(), lambda: F.relu6(x * 5)), (nn.LogSigmoid(), lambda: F.logsigmoid(x)),
        (nn.Mish(), lambda: F.mish(x)), (nn.Softsign(), lambda: F.softsign(x)),
        (nn.SELU(), lambda: F.selu(x)),
    ]
    for m, fn in pairs:
        arg = x * 5 if isinstance(m, nn.ReLU6) else x
        np.testing.assert_array_equal(m(arg).numpy(), fn().numpy(), err_msg=repr(m))
    prelu = nn.PReLU(6).to(device)
    with mg.no_grad():
        prelu.weight.copy_(w)
    np.testing.assert_array_equal(prelu(x).numpy(), F.prelu(x, w).numpy())
    two = [(nn.SmoothL1Loss(reduction="sum", beta=0.5),
            lambda: F.smooth_l1_loss(x, y, reduction="sum", beta=0.5)),
           (nn.HuberLoss("none", delta=0.3), lambda: F.huber_loss(x, y, "none", 0.3)),
           (nn.KLDivLoss(reduction="batchmean", log_target=True),
            lambda: F.kl_div(x, y, reduction="batchmean", log_target=True)),
           (nn.CosineSimilarity(0, 1e-3), lambda: F.cosine_similarity(x, y, 0, 1e-3)),
           (nn.PairwiseDistance(1.0, 1e-3, True), lambda: F.pairwise_distance(x, y, 1.0, 1e-3,
                                                                             True))]
    for m, fn in two:
        np.testing.assert_array_equal(m(x, y).numpy(), fn().numpy(), err_msg=repr(m))


def test_kl_div_loss_module_warns_for_mean_as_pytorch():
    x, t = mg.randn(2, 3).log_softmax(1), mg.randn(2, 3).softmax(1)
    with pytest.warns(UserWarning, match="batchmean"):
        nn.KLDivLoss()(x, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.KLDivLoss(reduction="sum")(x, t)


# ---- against torch, with copied weights -------------------------------------------------------
def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _torch_pairs():
    tnn = _tnn()
    torch = pytest.importorskip("torch")
    prelu = tnn.PReLU(3)
    with torch.no_grad():
        prelu.weight.uniform_(-0.5, 0.5)               # copied by name into minigrad's
    return [
        ("glu", nn.GLU(1), tnn.GLU(1), [_x(2, 4, 3)]),
        ("hardtanh", nn.Hardtanh(-0.5, 0.7), tnn.Hardtanh(-0.5, 0.7), [_x(3, 4)]),
        ("relu6", nn.ReLU6(), tnn.ReLU6(), [_x(3, 4) * 4]),
        ("logsigmoid", nn.LogSigmoid(), tnn.LogSigmoid(), [_x(3, 4)]),
        ("mish", nn.Mish(), tnn.Mish(), [_x(3, 4)]),
        ("softsign", nn.Softsign(), tnn.Softsign(), [_x(3, 4)]),
        ("selu", nn.SELU(), tnn.SELU(), [_x(3, 4)]),
        ("prelu", nn.PReLU(3), prelu, [_x(2, 3, 4)]),
        ("prelu_one", nn.PReLU(), tnn.PReLU(init=0.4), [_x(2, 3, 4)]),
        ("smooth_l1", nn.SmoothL1Loss(beta=0.5), tnn.SmoothL1Loss(beta=0.5),
         [_x(3, 4), _x(3, 4, seed=1)]),
        ("huber", nn.HuberLoss("sum", 0.7), tnn.HuberLoss("sum", 0.7),
         [_x(3, 4), _x(3, 4, seed=1)]),
        ("kl_div", nn.KLDivLoss(reduction="batchmean"), tnn.KLDivLoss(reduction="batchmean"),
         [_x(3, 4), np.abs(_x(3, 4, seed=1))]),
        ("kl_div_log_target", nn.KLDivLoss(reduction="sum", log_target=True), tnn.KLDivLoss(
            reduction="sum", log_target=True), [_x(3, 4), _x(3, 4, seed=1)]),
        ("cosine_similarity", nn.CosineSimilarity(0), tnn.CosineSimilarity(0),
         [_x(3, 4), _x(3, 4, seed=1)]),
        ("pairwise_distance", nn.PairwiseDistance(3.0), tnn.PairwiseDistance(3.0),
         [_x(3, 4), _x(3, 4, seed=1)]),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_modules_match_torch(dtype):
    for name, m, t, inputs in _torch_pairs():
        compare_with_torch(m, t, inputs, dtype)


MODULE_GRADCHECKS = [
    ("glu", lambda: nn.GLU(0), lambda: [mg.randn(4, 3)]),
    ("selu", nn.SELU, lambda: [mg.tensor([[-1.3, 0.4, 2.0]])]),
    ("mish", nn.Mish, lambda: [mg.randn(2, 3)]),
    ("prelu", lambda: nn.PReLU(3, init=-0.3), lambda: [mg.tensor([[[-1.0, 0.5], [0.3, -2.0],
                                                                   [-0.7, 1.1]]])]),
    ("smooth_l1", lambda: nn.SmoothL1Loss(beta=0.5), lambda: [mg.randn(2, 3), mg.randn(2, 3)]),
    ("huber", lambda: nn.HuberLoss("none"), lambda: [mg.randn(2, 3), mg.randn(2, 3)]),
    ("kl_div", lambda: nn.KLDivLoss(reduction="batchmean"),
     lambda: [mg.randn(2, 3), mg.rand(2, 3) + 0.1]),
    ("pairwise_distance", nn.PairwiseDistance, lambda: [mg.randn(2, 3), mg.randn(2, 3)]),
]


@pytest.mark.parametrize("case", MODULE_GRADCHECKS, ids=lambda c: c[0])
def test_module_gradcheck(case):
    mg.manual_seed(0)
    _, make, inputs = case
    gradcheck_module(make(), *inputs())


# ---- errors: what PyTorch refuses, with messages that name the op and what was wrong ---------
_X = lambda: mg.randn(2, 3)  # noqa: E731
ERRORS = [
    ("glu odd dim", lambda: F.glu(_X()), ValueError, ["glu", "dimension 1", "size 3"]),
    ("glu odd dim 0", lambda: F.glu(mg.randn(3, 2), 0), ValueError, ["dimension 0", "size 3"]),
    ("glu scalar", lambda: F.glu(mg.tensor(1.0)), ValueError, ["glu", "0-d"]),
    ("glu int", lambda: F.glu(mg.tensor([1, 2])), TypeError, ["glu", "int64"]),
    ("prelu weight size", lambda: F.prelu(_X(), mg.ones(2)), ValueError,
     ["prelu", "2 parameters", "3 channels"]),
    ("prelu weight size 1-d", lambda: F.prelu(mg.randn(3), mg.ones(3)), ValueError,
     ["prelu", "3 parameters", "1 channel"]),
    ("prelu weight 2-d", lambda: F.prelu(_X(), mg.ones(1, 3)), ValueError,
     ["prelu", "(1, 3)"]),
    ("prelu weight dtype", lambda: F.prelu(_X(), mg.ones(3, dtype="float64")), TypeError,
     ["prelu", "float32", "float64"]),
    ("prelu int input", lambda: F.prelu(mg.tensor([1, -2]), mg.ones(1)), TypeError,
     ["prelu", "int64"]),
    ("prelu weight number", lambda: F.prelu(_X(), 0.25), TypeError, ["prelu", "float"]),
    ("PReLU wrong size", lambda: nn.PReLU(2)(_X()), ValueError, ["prelu", "2 parameters"]),
    ("PReLU negative size", lambda: nn.PReLU(-1), TypeError, ["PReLU", "num_parameters"]),
    ("hardtanh min > max", lambda: F.hardtanh(_X(), 1.0, -1.0), ValueError,
     ["hardtanh", "min_val", "max_val"]),
    ("hardtanh bool", lambda: F.hardtanh(mg.tensor([True])), TypeError, ["hardtanh", "bool"]),
    ("relu6 bool", lambda: F.relu6(mg.tensor([True])), TypeError, ["hardtanh", "bool"]),
    ("Hardtanh max <= min", lambda: nn.Hardtanh(1.0, 1.0), ValueError,
     ["Hardtanh", "max_val", "min_val"]),
    ("logsigmoid int", lambda: F.logsigmoid(mg.tensor([1])), TypeError, ["logsigmoid", "int"]),
    ("mish int", lambda: F.mish(mg.tensor([1])), TypeError, ["mish", "int64"]),
    ("selu int", lambda: F.selu(mg.tensor([1])), TypeError, ["selu", "int64"]),
    ("smooth_l1 negative beta", lambda: F.smooth_l1_loss(_X(), _X(), beta=-0.5), ValueError,
     ["smooth_l1_loss", "beta", "-0.5"]),
    ("huber zero delta", lambda: F.huber_loss(_X(), _X(), delta=0.0), ValueError,
     ["huber_loss", "delta", "0.0"]),
    ("huber negative delta", lambda: F.huber_loss(_X(), _X(), delta=-1), ValueError,
     ["huber_loss", "delta", "-1"]),
    ("kl_div shapes", lambda: F.kl_div(_X(), mg.rand(4), reduction="sum"), ValueError,
     ["kl_div", "(2, 3)", "(4,)"]),
    ("kl_div int input",
     lambda: F.kl_div(mg.tensor([1, 2]), mg.rand(2), reduction="sum"), TypeError,
     ["kl_div", "int64"]),
    ("smooth_l1 reduction", lambda: F.smooth_l1_loss(_X(), _X(), reduction="avg"), ValueError,
     ["smooth_l1_loss", "'avg'", "'mean'"]),
    ("huber reduction", lambda: F.huber_loss(_X(), _X(), reduction="batchmean"), ValueError,
     ["huber_loss", "'batchmean'"]),
    ("kl_div reduction", lambda: F.kl_div(_X(), _X(), reduction="avg"), ValueError,
     ["kl_div", "'avg'", "'batchmean'"]),
    ("SmoothL1Loss reduction", lambda: nn.SmoothL1Loss(reduction="x"), ValueError,
     ["SmoothL1Loss", "'x'"]),
    ("HuberLoss reduction", lambda: nn.HuberLoss(reduction="x"), ValueError, ["HuberLoss"]),
    ("KLDivLoss reduction", lambda: nn.KLDivLoss(reduction="x"), ValueError, ["KLDivLoss"]),
    ("SmoothL1Loss beta", lambda: nn.SmoothL1Loss(beta=-1.0), ValueError,
     ["SmoothL1Loss", "beta"]),
    ("HuberLoss delta", lambda: nn.HuberLoss(delta=0), ValueError, ["HuberLoss", "delta"]),
    ("pairwise_distance shapes", lambda: F.pairwise_distance(_X(), mg.randn(4)), ValueError,
     ["pairwise_distance", "(2, 3)", "(4,)"]),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[0])
def test_errors_name_the_op_and_what_was_wrong(case):
    _, call, kind, words = case
    with pytest.raises(kind) as info:
        call()
    for w in words:
        assert w in str(info.value), f"{w!r} not in: {info.value}"


def _torch_calls():
    torch = pytest.importorskip("torch")
    tf, tnn = torch.nn.functional, torch.nn
    x = torch.randn(2, 3)
    return {
        "glu odd dim": lambda: tf.glu(x), "glu odd dim 0": lambda: tf.glu(torch.randn(3, 2), 0),
        "glu scalar": lambda: tf.glu(torch.tensor(1.0)),
        "glu int": lambda: tf.glu(torch.tensor([1, 2])),
        "prelu weight size": lambda: tf.prelu(x, torch.ones(2)),
        "prelu weight size 1-d": lambda: tf.prelu(torch.randn(3), torch.ones(3)),
        "prelu weight 2-d": lambda: tf.prelu(x, torch.ones(1, 3)),
        "prelu weight dtype": lambda: tf.prelu(x, torch.ones(3, dtype=torch.float64)),
        "prelu int input": lambda: tf.prelu(torch.tensor([1, -2]), torch.ones(1)),
        "prelu weight number": lambda: tf.prelu(x, 0.25),
        "PReLU wrong size": lambda: tnn.PReLU(2)(x),
        "hardtanh min > max": lambda: tf.hardtanh(x, 1.0, -1.0),
        "hardtanh bool": lambda: tf.hardtanh(torch.tensor([True])),
        "relu6 bool": lambda: tf.relu6(torch.tensor([True])),
        "Hardtanh max <= min": lambda: tnn.Hardtanh(1.0, 1.0),
        "logsigmoid int": lambda: tf.logsigmoid(torch.tensor([1])),
        "mish int": lambda: tf.mish(torch.tensor([1])),
        "selu int": lambda: tf.selu(torch.tensor([1])),
        "smooth_l1 negative beta": lambda: tf.smooth_l1_loss(x, x, beta=-0.5),
        "huber zero delta": lambda: tf.huber_loss(x, x, delta=0.0),
        "huber negative delta": lambda: tf.huber_loss(x, x, delta=-1),
        "kl_div shapes": lambda: tf.kl_div(x, torch.rand(4), reduction="sum"),
        "smooth_l1 reduction": lambda: tf.smooth_l1_loss(x, x, reduction="avg"),
        "huber reduction": lambda: tf.huber_loss(x, x, reduction="batchmean"),
        "kl_div reduction": lambda: tf.kl_div(x, x, reduction="avg"),
        "pairwise_distance shapes": lambda: tf.pairwise_distance(x, torch.randn(4)),
    }


# not compared: PyTorch computes kl_div of integers (to a float), builds the modules with a
# bad reduction or beta (they fail on first use), and PReLU(-1) fails inside torch.empty
_NOT_IN_TORCH = ("kl_div int input", "SmoothL1Loss reduction", "HuberLoss reduction",
                 "KLDivLoss reduction", "SmoothL1Loss beta", "HuberLoss delta",
                 "PReLU negative size")


@pytest.mark.parametrize("case", [c for c in ERRORS if c[0] not in _NOT_IN_TORCH],
                         ids=lambda c: c[0])
def test_pytorch_refuses_the_same(case):
    """Each error case is one PyTorch refuses too (its exception classes differ: it raises
    RuntimeError for dtypes and values, we TypeError and ValueError, as the rest of
    minigrad)."""
    call = _torch_calls()[case[0]]
    with pytest.raises((RuntimeError, ValueError, TypeError, NotImplementedError,
                        AssertionError)):
        call()


# ---- the spy device: no op of these reaches NumPy with device data ---------------------------
def _spy_const(a, x):
    return mg.tensor(a, dtype=x.dtype, device=x.device)


_T = np.array([[0.0, 0.2, 0.8], [0.5, 0.5, 0.0]])
SPY_CASES = [
    ("activations", lambda x: (F.glu(x, 0), F.hardtanh(x, -0.5, 0.5), F.relu6(x * 4),
                               F.logsigmoid(x), F.mish(x), F.softsign(x), F.selu(x),
                               F.elu(x)), (2, 3)),
    ("prelu", lambda x: (F.prelu(x, x[0].abs()), F.prelu(x, x[0, :1])), (3, 3)),
    ("smooth_l1_huber", lambda x: (F.smooth_l1_loss(x, _spy_const(_T, x), reduction="none",
                                                    beta=0.5),
                                   F.smooth_l1_loss(x, _spy_const(_T, x), beta=0.0),
                                   F.huber_loss(x, _spy_const(_T, x), "sum", 0.3)), (2, 3)),
    ("kl_div", lambda x: (F.kl_div(x, _spy_const(_T, x), reduction="batchmean"),
                          F.kl_div(x, x.softmax(1), reduction="none"),
                          F.kl_div(x, x * 0.5, reduction="sum", log_target=True)), (2, 3)),
    ("distances", lambda x: (F.pairwise_distance(x, x.flip(0)),
                             F.pairwise_distance(x, x[0], 1.0, keepdim=True)), (2, 3)),
]


def _run(fn, a, device):
    x = mg.tensor(a, dtype="float64", device=device, requires_grad=True)
    outs = list(fn(x))
    loss = sum((o * mg.tensor(np.linspace(-1, 1, o.numel()).reshape(o.shape),
                              device=device)).sum() for o in outs)
    (g,) = mg.grad(loss, [x], create_graph=True)
    (gg,) = mg.grad((g * g).sum(), [x])
    return outs + [g, gg]


@pytest.mark.parametrize("case", SPY_CASES, ids=lambda c: c[0])
def test_stays_on_the_device(case, spy):
    name, fn, shape = case
    a = np.random.default_rng(0).standard_normal(shape)
    for i, (s, c) in enumerate(zip(_run(fn, a, spy), _run(fn, a, "cpu"))):
        assert isinstance(s._data, spy_backend.SpyArray) and s.device == "spy", f"{name} {i}"
        np.testing.assert_allclose(s.numpy(), c.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name} {i}: spy != cpu")


def test_no_device_sync(spy):
    """Nothing here validates values on the device: forward and backward never wait for
    it (the checks are on shapes, dtypes and arguments)."""
    x = mg.randn(4, 6, device=spy, requires_grad=True)
    w = mg.rand(6, device=spy, requires_grad=True)
    t = mg.rand(4, 6, device=spy)
    with spy_backend.counted() as n:
        outs = [F.glu(x), F.hardtanh(x), F.relu6(x), F.logsigmoid(x), F.mish(x), F.softsign(x),
                F.selu(x), F.prelu(x, w), F.smooth_l1_loss(x, t), F.huber_loss(x, t),
                F.kl_div(x, t, reduction="batchmean"), F.pairwise_distance(x, t),
                nn.CosineSimilarity()(x, t)]
        sum(o.sum() for o in outs).backward()
    assert n["sync"] == 0
