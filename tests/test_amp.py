"""Automatic mixed precision (minigrad/amp.py, amp_scaler.py): autocast's policy, its
scoping (nesting, threads, decorator), gradients in the parameters' dtype, and GradScaler
against torch.amp.GradScaler."""
import threading

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F


def test_policy_half_float_and_promote():
    lin = mg.nn.Linear(4, 3)
    x = mg.randn(2, 4)
    with mg.autocast("cpu"):
        y = lin(x)
        assert y.dtype == mg.float16                        # GEMM: float16
        assert mg.nn.Linear(3, 2)(y).dtype == mg.float16    # float16 input, float32 weight
        assert (x @ x.T).dtype == mg.float16
        assert F.softmax(y, -1).dtype == mg.float32          # float32 list
        assert F.log_softmax(y, -1).dtype == mg.float32
        assert F.cross_entropy(y, mg.tensor([0, 1])).dtype == mg.float32
        assert y.exp().dtype == mg.float32 and y.sum().dtype == mg.float32
        assert (y + x[:, :3]).dtype == mg.float32            # promote: the widest
        assert F.relu(y).dtype == mg.float16                 # anything else: as it is
        assert (x.double() @ x.double().T).dtype == mg.float64   # float64 is never cast
    assert lin(x).dtype == mg.float32                        # off again after the block
    assert F.softmax(y, -1).dtype == mg.float16              # float16 in, float16 out


def test_values_match_float16_computation():
    lin = mg.nn.Linear(5, 3)
    x = mg.randn(4, 5)
    with mg.autocast("cpu"):
        y = lin(x)
    want = (x.numpy().astype(np.float16) @ lin.weight.numpy().astype(np.float16).T
            + lin.bias.numpy().astype(np.float16))
    np.testing.assert_allclose(y.numpy(), want, rtol=2e-3, atol=2e-3)


def test_gradients_in_the_parameters_dtype():
    lin = mg.nn.Linear(4, 3)
    x = mg.randn(2, 4, requires_grad=True)
    with mg.autocast("cpu"):
        loss = F.cross_entropy(lin(x), mg.tensor([0, 2]))
    loss.backward()
    assert lin.weight.grad.dtype == mg.float32 and lin.bias.grad.dtype == mg.float32
    assert x.grad.dtype == mg.float32
    # the same gradient as float32 to float16 precision
    lin.zero_grad()
    F.cross_entropy(lin(x), mg.tensor([0, 2])).backward()
    want = lin.weight.grad.numpy().copy()
    lin.zero_grad()
    with mg.autocast("cpu"):
        loss = F.cross_entropy(lin(x), mg.tensor([0, 2]))
        loss.backward()               # backward inside the block: not autocast again
    assert lin.weight.grad.dtype == mg.float32
    np.testing.assert_allclose(lin.weight.grad.numpy(), want, rtol=1e-2, atol=1e-3)


def test_attention_computes_in_float32_inside():
    # float16 in, float32 scores inside: autocast used to cast the fused ops' float32
    # inputs back to float16, whose scores (~10^5 here) overflowed into NaN rows
    r = np.random.RandomState(0)
    q = mg.tensor((r.randn(1, 2, 4, 2) * 300).astype(np.float32), requires_grad=True)
    qkv = mg.tensor((r.randn(1, 4, 6) * 300).astype(np.float32), requires_grad=True)
    want = F.scaled_dot_product_attention(q.half(), q.half(), q.half(), is_causal=True)
    want_qkv = F.qkv_attention(qkv.half(), 1, is_causal=True)
    with mg.autocast("cpu"):
        got = F.scaled_dot_product_attention(q, q.half(), q, is_causal=True)  # mixed: cast
        got_qkv = F.qkv_attention(qkv, 1, is_causal=True)
    for g, w in ((got, want), (got_qkv, want_qkv)):
        assert g.dtype == mg.float16 and np.isfinite(g.numpy()).all()
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    (got.float().sum() + got_qkv.float().sum()).backward()
    assert q.grad.dtype == qkv.grad.dtype == mg.float32
    assert np.isfinite(q.grad.numpy()).all() and np.isfinite(qkv.grad.numpy()).all()


@pytest.mark.parametrize("name, args", [
    ("addmm", [(2, 2), (2, 3), (3, 2)]), ("baddbmm", [(1, 2, 2), (1, 2, 3), (1, 3, 2)]),
    ("addbmm", [(2, 2), (1, 2, 3), (1, 3, 2)]), ("addmv", [(2,), (2, 3), (3,)]),
    ("addr", [(2, 3), (2,), (3,)]), ("linalg.vecdot", [(2, 3), (2, 3)]),
    ("linalg.multi_dot", [(2, 3), (3, 2), (2, 2)])])
def test_composed_products_are_float16(name, args):
    # on torch's float16 list: the input term too (addmm's float32 input promoted the sum
    # to float32; baddbmm and the others refused a float16 operand beside float32 ones)
    fn = mg
    for part in name.split("."):
        fn = getattr(fn, part)
    ts = [mg.randn(*s, dtype=mg.float16 if i == 1 else mg.float32, requires_grad=True)
          for i, s in enumerate(args)]
    with mg.autocast("cpu"):
        out = fn(ts) if name.endswith("multi_dot") else fn(*ts)
    assert out.dtype == mg.float16
    want = fn([t.half() for t in ts]) if name.endswith("multi_dot") else \
        fn(*(t.half() for t in ts))
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=2e-3, atol=2e-3)
    out.float().sum().backward()
    assert [t.grad.dtype for t in ts] == [t.dtype for t in ts]


_LABELS = mg.tensor([1.0, -1.0, 1.0])
_CLASSES = mg.tensor([0, 3, 1])


# torch's CUDA float32 autocast list, each with float16 inputs (3, 4) a, b in (0.5, 1.5)
@pytest.mark.parametrize("name, fn", [
    ("__pow__", lambda a, b: a ** 2), ("__rtruediv__", lambda a, b: 1 / a),
    ("__rpow__", lambda a, b: 2 ** a), ("acos", lambda a, b: (a - 1).acos()),
    ("asin", lambda a, b: (a - 1).asin()),
    ("binary_cross_entropy_with_logits",
     lambda a, b: F.binary_cross_entropy_with_logits(a, b / 2, reduction="none")),
    ("cosh", lambda a, b: a.cosh()),
    ("cosine_embedding_loss", lambda a, b: F.cosine_embedding_loss(a, b, _LABELS)),
    ("cdist", lambda a, b: mg.cdist(a, b)), ("cosine_similarity", F.cosine_similarity),
    ("cross_entropy", lambda a, b: F.cross_entropy(a, _CLASSES, reduction="none")),
    ("cumprod", lambda a, b: a.cumprod(1)), ("cumsum", lambda a, b: a.cumsum(1)),
    ("dist", lambda a, b: mg.dist(a, b)), ("erfinv", lambda a, b: (a - 1).erfinv()),
    ("exp", lambda a, b: a.exp()), ("expm1", lambda a, b: a.expm1()),
    ("group_norm", lambda a, b: F.group_norm(a, 2)),
    ("hinge_embedding_loss", lambda a, b: F.hinge_embedding_loss(a, b.sign(), reduction="none")),
    ("kl_div", lambda a, b: F.kl_div(a.log(), b, reduction="none")),
    ("l1_loss", lambda a, b: F.l1_loss(a, b, reduction="none")),
    ("layer_norm", lambda a, b: F.layer_norm(a, (4,))), ("log", lambda a, b: a.log()),
    ("log_softmax", lambda a, b: F.log_softmax(a, -1)), ("log10", lambda a, b: a.log10()),
    ("log1p", lambda a, b: a.log1p()), ("log2", lambda a, b: a.log2()),
    ("margin_ranking_loss",
     lambda a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], _LABELS, reduction="none")),
    ("mse_loss", lambda a, b: F.mse_loss(a, b, reduction="none")),
    ("multilabel_margin_loss", lambda a, b: F.multilabel_margin_loss(
        a, mg.tensor([[0, 2, -1, 0]] * 3), reduction="none")),
    ("multi_margin_loss", lambda a, b: F.multi_margin_loss(a, _CLASSES, reduction="none")),
    ("nll_loss", lambda a, b: F.nll_loss(a, _CLASSES, reduction="none")),
    ("norm", lambda a, b: a.norm(dim=1)), ("normalize", lambda a, b: F.normalize(a)),
    ("F.pdist", lambda a, b: F.pdist(a)), ("pdist", lambda a, b: mg.pdist(a)),
    ("poisson_nll_loss", lambda a, b: F.poisson_nll_loss(a, b, reduction="none")),
    ("pow", lambda a, b: a.pow(b)), ("prod", lambda a, b: a.prod(1)),
    ("reciprocal", lambda a, b: a.reciprocal()), ("rsqrt", lambda a, b: a.rsqrt()),
    ("sinh", lambda a, b: a.sinh()),
    ("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b, reduction="none")),
    ("soft_margin_loss", lambda a, b: F.soft_margin_loss(a, b.sign(), reduction="none")),
    ("softmax", lambda a, b: F.softmax(a, -1)), ("softmin", lambda a, b: F.softmin(a, -1)),
    ("softplus", lambda a, b: F.softplus(a)), ("sum", lambda a, b: a.sum(1)),
    ("renorm", lambda a, b: a.renorm(2, 0, 1.0)), ("tan", lambda a, b: a.tan()),
    ("triplet_margin_loss",
     lambda a, b: F.triplet_margin_loss(a, b, a.flip(0), reduction="none"))])
def test_float32_list_gives_float32(name, fn):
    # rsqrt, reciprocal, 1 / x, renorm, pdist, margin_ranking, hinge_embedding,
    # multilabel_margin and nll_loss (reduction="none") used to stay float16
    r = np.random.RandomState(0)
    a, b = (mg.tensor((r.rand(3, 4) + 0.5).astype(np.float16)) for _ in range(2))
    with mg.autocast("cpu"):
        out = fn(a, b)
    assert out.dtype == mg.float32
    want = fn(a.float(), b.float())             # the same inputs, computed in float32
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def _rnn_cell(kind, x, hx=None):
    """mg.nn.<kind>(4, 3) (the same weights each call) run on x."""
    mg.manual_seed(0)
    out = getattr(mg.nn, kind)(4, 3)(x, hx)
    return out[1] if kind == "LSTMCell" else out


# torch's CUDA float16 autocast list, each with float32 inputs: x (2, 4), w (3, 4)
@pytest.mark.parametrize("name, fn", [
    ("__matmul__", lambda x, w: x @ w.T), ("matmul", lambda x, w: mg.matmul(x, w.T)),
    ("mm", lambda x, w: mg.mm(x, w.T)), ("mv", lambda x, w: mg.mv(w, x[0])),
    ("bmm", lambda x, w: mg.bmm(x[None], w.T[None])),
    ("addmm", lambda x, w: mg.addmm(x[:, :3], x, w.T)),
    ("addmv", lambda x, w: mg.addmv(w[:, 0], w, x[0])),
    ("addr", lambda x, w: mg.addr(w, w[:, 0], x[0])),
    ("baddbmm", lambda x, w: mg.baddbmm(x[None, :, :3], x[None], w.T[None])),
    ("addbmm", lambda x, w: mg.addbmm(x[:, :3], x[None], w.T[None])),
    ("chain_matmul", lambda x, w: mg.chain_matmul(x, w.T, w)),
    ("multi_dot", lambda x, w: mg.linalg.multi_dot([x, w.T, w])),
    ("linear", lambda x, w: F.linear(x, w, w[:, 0])),
    ("conv1d", lambda x, w: F.conv1d(x[None], w[:, :2, None])),
    ("conv2d", lambda x, w: F.conv2d(x[None, None], w[:, None, None, :2])),
    ("conv3d", lambda x, w: F.conv3d(x[None, None, None], w[:, None, None, None, :2])),
    ("conv_tbc", lambda x, w: F.conv_tbc(x.T[:, None], w[:2, :, None].transpose(0, 2)
                                         .transpose(1, 2)[..., :2].contiguous(), w[:2, 0])),
    ("conv_transpose1d", lambda x, w: F.conv_transpose1d(x[None], w[:2, None])),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x[None, None], w[None, None])),
    ("conv_transpose3d",
     lambda x, w: F.conv_transpose3d(x[None, None, None], w[None, None, None])),
    ("prelu", lambda x, w: F.prelu(x, w[0, :1])),
    ("prelu float16 input", lambda x, w: F.prelu(  # (float32 for the reference)
        x.half() if mg.is_autocast_enabled("cpu") else x, w[0, :1])),
    ("GRUCell", lambda x, w: _rnn_cell("GRUCell", x)),
    ("GRUCell with a state", lambda x, w: _rnn_cell("GRUCell", x, w[:2, :3])),
    ("LSTMCell", lambda x, w: _rnn_cell("LSTMCell", x)),
    ("LSTMCell with a state", lambda x, w: _rnn_cell("LSTMCell", x, (w[:2, :3], w[:2, 1:]))),
    ("RNNCell", lambda x, w: _rnn_cell("RNNCell", x, w[:2, :3])),
    ("GRU", lambda x, w: _rnn_cell("GRU", x[None])[0]),
    ("LSTM", lambda x, w: _rnn_cell("LSTM", x[None], (w[None, :2, :3], w[None, :2, 1:]))[1][1])])
def test_float16_list_gives_float16(name, fn):
    # prelu stayed float32 (and refused a float16 input beside its float32 weight), the
    # cells and GRU/RNN refused a float32 state beside their float16 gates, LSTM ran float32
    r = np.random.RandomState(1)
    x, w = mg.tensor(r.randn(2, 4).astype(np.float32)), mg.tensor(r.randn(3, 4).astype(np.float32))
    with mg.autocast("cpu"):
        out = fn(x, w)
    assert out.dtype == mg.float16
    want = fn(x, w)                              # in float32: float16's rounding apart
    np.testing.assert_allclose(out.numpy(), want.numpy().astype(np.float16), rtol=1e-2,
                               atol=1e-2)


def test_vector_norm_is_float32():
    # on torch's float32 list (as norm): float16 squares overflow past 256
    x = mg.tensor(np.full(4, 300.0, np.float16))
    with mg.autocast("cpu"):
        n = mg.linalg.vector_norm(x)
    assert n.dtype == mg.float32 and float(n) == 600.0


def test_checkpoint_recomputes_in_the_forwards_precision():
    lin = mg.nn.Linear(4, 4)
    x = mg.randn(3, 4, requires_grad=True)
    with mg.autocast("cpu"):
        y = mg.utils.checkpoint.checkpoint(lambda t: lin(t).relu(), x, use_reentrant=False)
    assert y.dtype == mg.float16
    y.float().sum().backward()        # its dtype check would refuse a float32 recompute
    assert lin.weight.grad.dtype == mg.float32


def test_nesting_disable_and_restore():
    x = mg.randn(2, 2)
    with mg.autocast("cpu"):
        with mg.autocast("cpu", enabled=False):
            assert not mg.is_autocast_enabled("cpu")
            assert (x @ x).dtype == mg.float32
        assert mg.is_autocast_enabled("cpu") and (x @ x).dtype == mg.float16
        with mg.autocast("cuda"):     # another device type: cpu tensors still autocast
            assert (x @ x).dtype == mg.float16 and mg.is_autocast_enabled("cuda")
        assert not mg.is_autocast_enabled("cuda")
    assert not mg.is_autocast_enabled("cpu") and mg.get_autocast_dtype("cpu") == mg.float16


def test_other_device_type_leaves_cpu_tensors():
    x = mg.randn(2, 2)
    with mg.autocast("cuda"), mg.cuda.amp.autocast():
        assert (x @ x).dtype == mg.float32


def test_per_thread_and_decorator():
    seen = []

    @mg.autocast("cpu")
    def product(a):
        return a @ a

    x = mg.randn(2, 2)
    assert product(x).dtype == mg.float16 and not mg.is_autocast_enabled("cpu")
    with mg.amp.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((x @ x).dtype))
        t.start()
        t.join()
    assert seen == [mg.float32]       # the other thread's ops are not autocast


@pytest.mark.parametrize("args, kwargs, err, words", [
    (("mps",), {}, ValueError, "device_type must be one of"),
    (("cpu",), {"dtype": "bfloat16"}, TypeError, "bfloat16 is not available"),
    (("cpu",), {"dtype": mg.float32}, TypeError, "must be float16"),
    (("cpu",), {"enabled": 1}, TypeError, "enabled must be a bool"),
])
def test_bad_arguments(args, kwargs, err, words):
    with pytest.raises(err, match=words):
        mg.autocast(*args, **kwargs)


def test_training_loop_with_scaler_lowers_the_loss():
    mg.manual_seed(0)
    model = mg.nn.Sequential(mg.nn.Linear(4, 16), mg.nn.ReLU(), mg.nn.Linear(16, 3))
    opt = mg.optim.SGD(model.parameters(), lr=0.5)
    scaler = mg.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    x = mg.randn(32, 4)
    t = (x[:, :3] * 2).argmax(1)      # learnable classes
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with mg.autocast("cpu"):
            loss = F.cross_entropy(model(x), t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert all(p.dtype == mg.float32 for p in model.parameters())


def _torch_run(torch, w0, xs, inject):
    w = torch.nn.Parameter(torch.tensor(w0))
    opt = torch.optim.SGD([w], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    scales, skipped = [], []
    for i, x in enumerate(xs):
        opt.zero_grad()
        loss = ((torch.tensor(x) @ w) ** 2).sum()
        scaler.scale(loss).backward()
        if i == inject:
            w.grad[0, 0] = float("inf")
        skipped.append(scaler.step(opt) is None and i == inject)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, skipped, w.detach().numpy()


def test_grad_scaler_matches_torch_with_an_injected_inf(torch):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(6)]
    w = mg.nn.Parameter(mg.tensor(w0))
    opt = mg.optim.SGD([w], lr=0.1)
    scaler = mg.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    scales, skipped = [], []
    for i, x in enumerate(xs):
        opt.zero_grad()
        loss = ((mg.tensor(x) @ w) ** 2).sum()
        scaler.scale(loss).backward()
        if i == 2:
            w.grad[0, 0] = float("inf")
        before = w.numpy().copy()
        skipped.append(scaler.step(opt) is None and i == 2)
        if i == 2:
            np.testing.assert_array_equal(w.numpy(), before)    # the step was skipped
        scaler.update()
        scales.append(scaler.get_scale())
    t_scales, t_skipped, t_w = _torch_run(torch, w0, xs, 2)
    assert scales == t_scales == [16.0, 32.0, 16.0, 16.0, 32.0, 32.0]
    assert skipped == t_skipped
    np.testing.assert_allclose(w.numpy(), t_w, rtol=1e-5, atol=1e-6)


def test_grad_scaler_bookkeeping_and_state():
    w = mg.nn.Parameter(mg.ones(2))
    opt = mg.optim.SGD([w], lr=1.0)
    scaler = mg.amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale(w.sum()).backward()
    assert w.grad.tolist() == [8.0, 8.0]
    scaler.unscale_(opt)
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already called"):
        scaler.unscale_(opt)
    scaler.step(opt)                  # not unscaled a second time
    assert w.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already called"):
        scaler.step(opt)
    scaler.update(new_scale=2.0)
    assert scaler.get_scale() == 2.0
    with pytest.raises(RuntimeError, match="no inf checks"):
        scaler.update()
    state = scaler.state_dict()
    other = mg.cuda.amp.GradScaler()
    other.load_state_dict(state)
    assert other.state_dict() == state == {"scale": 2.0, "growth_factor": 2.0,
                                           "backoff_factor": 0.5, "growth_interval": 2000,
                                           "_growth_tracker": 0}
    off = mg.amp.GradScaler("cpu", enabled=False)
    assert not off.is_enabled() and off.get_scale() == 1.0 and off.state_dict() == {}
    loss = w.sum()
    assert off.scale(loss) is loss
    with pytest.raises(RuntimeError, match="empty"):
        other.load_state_dict({})
    with pytest.raises(ValueError, match="unknown device .tpu.; valid devices"):
        mg.amp.GradScaler("tpu")


def test_grad_scaler_step_refuses_an_optimizer_without_gradients():
    # as torch: all gradients None means nothing was checked for inf, and the step used to
    # run blind (here: weight decay moved w although backward never reached it)
    w = mg.nn.Parameter(mg.ones(2))
    opt = mg.optim.SGD([w], lr=1.0, weight_decay=0.5)
    scaler = mg.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="no inf checks were recorded for this optimizer"):
        scaler.step(opt)
    assert w.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="no inf checks"):
        scaler.update()


def test_unscale_reads_the_device_once_not_per_parameter(spy):
    """The inf check is one device-to-host read per device: one per parameter would make
    the CPU wait for a GPU that many times each step."""
    import spy_backend
    params = [mg.randn(3, device=spy, requires_grad=True) for _ in range(5)]
    opt = mg.optim.SGD(params, lr=0.1)
    scaler = mg.amp.GradScaler(spy, init_scale=4.0)
    sum((p * p).sum() for p in params).backward()
    params[3].grad.data[1] = float("inf")
    with spy_backend.counted() as n:
        scaler.unscale_(opt)
    assert n["sync"] == 1
    # per parameter the multiply and its write, isfinite, all; once: 1/scale, stack, all
    # (it was 6 a parameter: 1/scale made and the results and-ed one by one)
    assert n["launch"] == 4 * 5 + 3
    assert scaler.step(opt) is None                      # the inf was still found


def test_unscale_checks_the_unscaled_gradients():
    """The inf check is of the gradients after the division (torch's is before, and steps
    on the inf): a huge gradient over a tiny scale overflows there, and is skipped."""
    w = mg.nn.Parameter(mg.ones(2))
    opt = mg.optim.SGD([w], lr=0.1)
    scaler = mg.amp.GradScaler("cpu", init_scale=2.0 ** -10)
    w.grad = mg.tensor([1e36, 1.0])              # finite, but 1e36 * 2**10 is not (float32)
    scaler.unscale_(opt)
    assert not mg.isfinite(w.grad).all().item()
    assert scaler.step(opt) is None
    np.testing.assert_array_equal(w.data, [1.0, 1.0])     # not stepped


@pytest.mark.parametrize("key, value, words", [
    ("scale", float("nan"), "scale must be a finite number > 0"),
    ("scale", float("inf"), "scale must be a finite number > 0"),
    ("scale", 0.0, "scale must be a finite number > 0"),
    ("growth_factor", 1.0, "growth_factor must be > 1"),
    ("backoff_factor", 1.5, "backoff_factor must be in"),
    ("growth_interval", 0, "growth_interval must be a positive int"),
    ("_growth_tracker", 2000, "_growth_tracker must be an int in"),
])
def test_load_state_dict_refuses_what_init_refuses(key, value, words):
    scaler = mg.amp.GradScaler("cpu")
    state = dict(scaler.state_dict(), **{key: value})
    with pytest.raises(ValueError, match=words):
        scaler.load_state_dict(state)
    assert scaler.get_scale() == 2.0 ** 16                # unchanged
