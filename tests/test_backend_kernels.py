"""The CUDA backend's fused kernels (minigrad/backend_kernels.py), checked without a GPU:
each kernel's body runs here with NumPy (the bodies are written in the subset of C++ and
Python they share) inside ops on the spy device, and must give what the ops' array chains
give on the CPU; with nvcc installed, each body also compiles as CUDA the way CuPy wraps it.
The fallback (a kernel that fails on its first run) is tested with a fake CuPy."""
import json
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import backend, nn, optim
from minigrad.backend_kernels import KERNELS, Kernels

import spy_backend


def _params(spec):
    """"T x, float64 l2" -> [("T", "x"), ("float64", "l2")]."""
    return [tuple(p.split()) for p in spec.split(",")]


def run_body(name, *args):
    """A kernel as CuPy would run it, on NumPy arrays: inputs, then outputs to update in
    place (or none: new arrays are returned), the body executed as Python."""
    ins, outs, body = KERNELS[name]
    ins, outs = _params(ins), _params(outs)
    T = args[0].dtype.type
    ns = {"T": T, "tanh": np.tanh, "sqrt": np.sqrt, "exp": np.exp, "fmax": np.fmax,
          "fmin": np.fmin}
    ns.update({n: a for (_, n), a in zip(ins, args)})
    given = args[len(ins):]
    ns.update({n: a.copy() for (_, n), a in zip(outs, given)})
    code = "\n".join(line.strip().removeprefix("const T ").rstrip(";")
                     for line in body.strip().splitlines())
    exec(code, ns)
    results = [np.asarray(ns[n], dtype=T if typ == "T" else np.dtype(typ)) for typ, n in outs]
    for a, r in zip(given, results):
        a[...] = r
    return results[0] if len(results) == 1 else tuple(results)


class NumPyKernels(Kernels):
    """Kernels whose 'compiled' kernels are run_body on the spy device's arrays."""

    def __init__(self):
        calls = self.calls = []

        class FakeCupy:
            @staticmethod
            def ElementwiseKernel(ins, outs, body, name):
                def kernel(*args):
                    calls.append(name)
                    out = run_body(name.removeprefix("minigrad_"), *spy_backend.unwrap(args))
                    return spy_backend.wrap(out)
                return kernel
        super().__init__(FakeCupy)


@pytest.fixture
def fused_spy(monkeypatch):
    """The spy device with the fused kernels, as CuPy's backend has them."""
    kernels = NumPyKernels()

    def factory():
        b = spy_backend.make_backend("fused")
        b.kernels = kernels
        return b
    monkeypatch.setitem(backend._FACTORIES, "fused", factory)
    monkeypatch.setattr(backend, "_BACKENDS", dict(backend._BACKENDS))
    return kernels


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-6), ("float64", 1e-13)])
def test_gelu_kernels_match_the_array_chain(fused_spy, dtype, tol):
    x = np.random.default_rng(0).standard_normal((3, 5, 7)) * 3
    g = np.random.default_rng(1).standard_normal(x.shape)
    out = []
    for device in ("cpu", "fused"):
        t = mg.tensor(x, dtype=dtype, device=device, requires_grad=True)
        y = F.gelu(t, approximate="tanh")
        y.backward(mg.tensor(g, dtype=dtype, device=device))
        assert y.dtype == t.grad.dtype == t.dtype
        out.append((y.numpy(), t.grad.numpy()))
    assert fused_spy.calls == ["minigrad_gelu_tanh", "minigrad_gelu_tanh_grad"]
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def test_gelu_of_float16_runs_in_float32_and_answers_in_float16(fused_spy):
    """The tanh form's x³ leaves float16's range from |x| > 40, so float16 runs the float32
    kernels (as PyTorch computes in float32) and casts back."""
    t = mg.tensor([0.5, -1.0, 100.0], dtype="float16", device="fused", requires_grad=True)
    F.gelu(t, approximate="tanh").sum().backward()
    assert fused_spy.calls == ["minigrad_gelu_tanh", "minigrad_gelu_tanh_grad"]
    assert t.grad.dtype == mg.float16 and t.grad.tolist()[-1] == 1.0   # not NaN


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("make", [lambda ps, f: optim.AdamW(ps, lr=0.05, weight_decay=0.1,
                                                            foreach=f),
                                  lambda ps, f: optim.Adam(ps, lr=0.05, weight_decay=0.1,
                                                           foreach=f)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_adam_kernel_matches_the_array_chain(fused_spy, foreach, make, dtype):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s) for s in ((3, 4), (4,), ())]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(4)]
    runs = []
    for device in ("cpu", "fused"):
        ps = [nn.Parameter(mg.tensor(a, dtype=dtype, device=device)) for a in init]
        opt = make(ps, foreach)
        for step in grads:
            for p, gr in zip(ps, step):
                p.grad = mg.tensor(gr, dtype=dtype, device=device)
            opt.step()
        runs.append([p.numpy() for p in ps] + [s[k].numpy() for s in
                                               opt.state_dict()["state"].values()
                                               for k in ("exp_avg", "exp_avg_sq")])
    assert fused_spy.calls and set(fused_spy.calls) == {"minigrad_adam"}
    for a, b in zip(*runs):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-15)


class _BrokenCupy:
    """A CuPy whose kernels fail to compile (or, with `after`, fail after that many runs)."""
    def __init__(self, after=0):
        self.runs, self.after = 0, after

    def ElementwiseKernel(self, *spec):
        def kernel(*args):
            self.runs += 1
            if self.runs > self.after:
                raise RuntimeError("nvrtc: error")
            return "ran"
        return kernel


def test_t_arrays_of_two_dtypes_run_the_chain():
    """CuPy binds a kernel's T to one dtype and refuses a mix (Adam's state left float64
    beside a float32 parameter): such a call runs the array chain, never the compiler."""
    class NoCompiler:
        def ElementwiseKernel(self, *spec):
            raise AssertionError("a kernel was built for mixed dtypes")
    kernels = Kernels(NoCompiler())
    f32, f64 = np.ones(3, np.float32), np.ones(3, np.float64)
    assert kernels("adam", f32, 0.0, 0.1, 0.99, 0.01, 1e-8, 0.1, 1.0, 1.0, f32, f64, f32) is None
    assert kernels("gelu_tanh_grad", f32, f32, f64) is None
    assert not kernels.failed            # not a failure: the next same-dtype call compiles


def test_a_kernel_that_fails_at_first_is_reported_once_and_not_tried_again():
    k = Kernels(_BrokenCupy())
    x = np.ones(3, np.float32)
    with pytest.warns(RuntimeWarning, match="'gelu_tanh' failed.*runs unfused"):
        assert k("gelu_tanh", x) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert k("gelu_tanh", x) is None                # quietly the chain from now on
    assert k.cupy.runs == 1


def test_a_kernel_that_worked_raises_its_later_errors():
    k = Kernels(_BrokenCupy(after=1))
    x = np.ones(3, np.float32)
    assert k("gelu_tanh", x) == "ran"
    with pytest.raises(RuntimeError, match="nvrtc"):
        k("gelu_tanh", x)


def test_softmax_falls_back_when_only_its_second_kernel_fails(fused_spy, monkeypatch):
    """softmax_exp ran (its output took the scores' place), softmax_div fails: the division
    runs as the chain's, on what the first kernel made."""
    real = fused_spy.cupy.ElementwiseKernel

    def some_broken(ins, outs, body, name):
        if name == "minigrad_softmax_div":
            return _BrokenCupy().ElementwiseKernel(ins, outs, body, name)
        return real(ins, outs, body, name)
    monkeypatch.setattr(fused_spy.cupy, "ElementwiseKernel", some_broken)
    x = np.random.default_rng(0).standard_normal((3, 6))
    x[1] = -np.inf
    with pytest.warns(RuntimeWarning, match="'softmax_div' failed"):
        y = mg.tensor(x, device="fused").softmax(-1)
    np.testing.assert_allclose(y.numpy(), mg.tensor(x).softmax(-1).numpy(), rtol=1e-6)
    q = mg.randn(2, 5, 4, device="fused")
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    np.testing.assert_allclose(out.numpy(), F.scaled_dot_product_attention(
        *(mg.tensor(q.numpy()),) * 3, is_causal=True).numpy(), rtol=1e-5)


def test_the_ops_fall_back_when_a_kernel_fails(monkeypatch):
    def factory():
        b = spy_backend.make_backend("broken")
        b.kernels = Kernels(_BrokenCupy())
        return b
    monkeypatch.setitem(backend._FACTORIES, "broken", factory)
    monkeypatch.setattr(backend, "_BACKENDS", dict(backend._BACKENDS))
    x = np.linspace(-3, 3, 7)
    with pytest.warns(RuntimeWarning, match="failed"):
        y = F.gelu(mg.tensor(x, device="broken"), approximate="tanh")
    np.testing.assert_allclose(y.numpy(), F.gelu(mg.tensor(x), approximate="tanh").numpy())


def _cuda_harness(name):
    """The kernel wrapped as CuPy wraps it: inputs read as `const T`, outputs as `T&`; a
    template named k_<name>, instantiated for float and double."""
    ins, outs, body = KERNELS[name]
    ctype = {"T": "T", "bool": "bool", "float32": "float"}    # arrays; float64: a scalar
    args, reads = [], []
    for typ, n in _params(ins):
        if typ in ctype:
            args.append(f"const {ctype[typ]}* _raw_{n}")
            reads.append(f"const {ctype[typ]} {n} = _raw_{n}[i];")
        else:
            args.append(f"{ {'float64': 'double'}[typ]} {n}")
    for typ, n in _params(outs):
        args.append(f"{ctype[typ]}* _raw_{n}")
        reads.append(f"{ctype[typ]} &{n} = _raw_{n}[i];")
    k = f"k_{name}"
    return (f"template <typename T> __global__ void {k}({', '.join(args)}, long n) {{\n"
            f"  for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;"
            f" i += blockDim.x * gridDim.x) {{\n    {' '.join(reads)}\n{body}  }}\n}}\n"
            f"template __global__ void {k}<float>({', '.join(args).replace('T*', 'float*')}, "
            f"long);\n"
            f"template __global__ void {k}<double>({', '.join(args).replace('T*', 'double*')}, "
            f"long);\n")


def _nvcc_ptx(names, folder):
    """(nvcc's return code, its stderr, the source, the PTX) of `names`' harnesses in one file."""
    src = folder / "kernels.cu"
    src.write_text("".join(_cuda_harness(n) for n in names))
    r = subprocess.run(["nvcc", "-ptx", "-arch=compute_80", str(src), "-o",
                        str(folder / "k.ptx")], capture_output=True, text=True, timeout=300)
    ptx = (folder / "k.ptx").read_text() if r.returncode == 0 else ""
    return r.returncode, r.stderr, src.read_text(), ptx


@pytest.fixture(scope="module")
def every_kernel_ptx(tmp_path_factory):
    """All the kernels compiled in one nvcc run (about a second each, one by one); None
    where that fails, so that each test compiles its own and the failing one is named."""
    rc, _, _, ptx = _nvcc_ptx(sorted(KERNELS), tmp_path_factory.mktemp("nvcc"))
    return ptx if rc == 0 else None


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_each_kernel_compiles_as_cuda(name, tmp_path, every_kernel_ptx):
    ptx, src = every_kernel_ptx, None
    if ptx is None:
        rc, err, src, ptx = _nvcc_ptx([name], tmp_path)
        assert rc == 0, err + "\n" + src
    # the float instance's PTX, up to the next kernel's (C++ mangles k_<name><float> so)
    entry = f".entry _Z{len(name) + 2}k_{name}IfEv"
    assert entry in ptx, (entry, src)
    float_kernel = ptx[ptx.index(entry):]
    end = float_kernel.find(".entry", len(entry))
    float_kernel = float_kernel if end < 0 else float_kernel[:end]
    # float32 stays float32 (no silent double math; the float64 scalars are loaded and
    # converted once)
    assert not re.search(r"\b(add|sub|mul|fma|div|sqrt|rcp|ex2|lg2)(\.\w+)*\.f64",
                         float_kernel), float_kernel


@pytest.mark.parametrize("affine", ["none", "weight", "both"])
@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-12)])
def test_layer_norm_kernels_match_the_array_chain(fused_spy, affine, dtype, tol):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 6)) * 3 + 1
    g = rng.standard_normal(x.shape)
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    out = []
    for device in ("cpu", "fused"):
        def t(a):
            return mg.tensor(a, dtype=dtype, device=device, requires_grad=True)
        xt, wt, bt = t(x), t(w), t(b)
        y = F.layer_norm(xt, (6,), wt if affine != "none" else None,
                         bt if affine == "both" else None)
        y.backward(mg.tensor(g, dtype=dtype, device=device))
        grads = [xt.grad] + ([wt.grad] if affine != "none" else []) + (
            [bt.grad] if affine == "both" else [])
        out.append([y.numpy()] + [a.numpy() for a in grads])
    assert {"minigrad_ln_out", "minigrad_ln_grad_x"} <= set(fused_spy.calls)
    for a, b_ in zip(*out):
        np.testing.assert_allclose(b_, a, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-6), ("float64", 1e-14)])
def test_softmax_kernels_match_the_array_chain(fused_spy, dtype, tol):
    """Rows as they come, a row of -inf (every key masked: zeros, not NaN), a row with +inf
    and one with NaN (both NaN, as PyTorch), forward and backward."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7)) * 4
    x[1] = -np.inf
    x[2, 3] = np.inf
    x[3, 0] = np.nan
    x[4, :3] = -np.inf
    g = rng.standard_normal(x.shape)
    out = []
    for device in ("cpu", "fused"):
        t = mg.tensor(x, dtype=dtype, device=device, requires_grad=True)
        with np.errstate(all="ignore"):                  # the inf and NaN rows, both ways
            y = t.softmax(-1)
            y.backward(mg.tensor(g, dtype=dtype, device=device))
        out.append((y.numpy(), t.grad.numpy()))
    assert fused_spy.calls == ["minigrad_softmax_exp", "minigrad_softmax_div"]
    assert (out[1][0][1] == 0).all() and np.isnan(out[1][0][3]).all()
    assert np.isnan(out[1][0][2]).all()
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


@pytest.mark.parametrize("mask", ["causal", "bool", "none"])
def test_attention_with_the_softmax_kernels_matches_the_cpu(fused_spy, mask):
    rng = np.random.default_rng(0)
    q, k, v, g = (rng.standard_normal((2, 3, 5, 4)) for _ in range(4))
    allowed = rng.random((5, 5)) < 0.7
    allowed[:, 0] = True
    allowed[2] = False                                   # a query that sees no key
    out = []
    for device in ("cpu", "fused"):
        ts = [mg.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
        y = F.scaled_dot_product_attention(
            *ts, is_causal=mask == "causal",
            attn_mask=mg.tensor(allowed, device=device) if mask == "bool" else None)
        y.backward(mg.tensor(g, device=device))
        out.append([y.numpy()] + [t.grad.numpy() for t in ts])
    assert "minigrad_softmax_exp" in fused_spy.calls
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.fixture
def plain_spy(monkeypatch):
    """The spy device without kernels: the same random draws as `fused_spy` for a seed."""
    monkeypatch.setitem(backend._FACTORIES, "plain", lambda: spy_backend.make_backend("plain"))
    return "plain"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_kernels_match_the_array_chain(fused_spy, plain_spy, dtype):
    """Same seed, same uniform draws: the same mask, output and gradient to the bit."""
    x = np.random.default_rng(0).standard_normal((4, 50))
    g = np.random.default_rng(1).standard_normal(x.shape)
    out = []
    for device in (plain_spy, "fused"):
        mg.manual_seed(3)
        t = mg.tensor(x, dtype=dtype, device=device, requires_grad=True)
        y = F.dropout(t, 0.3)
        y.backward(mg.tensor(g, dtype=dtype, device=device))
        out.append((y.numpy(), t.grad.numpy()))
    assert fused_spy.calls == ["minigrad_dropout", "minigrad_dropout_grad"]
    for a, b in zip(*out):
        np.testing.assert_array_equal(b, a)
    kept = out[1][0] != 0
    assert 0.5 < kept.mean() < 0.9                       # p = 0.3 of 200 dropped
    np.testing.assert_allclose(out[1][0][kept], x[kept] / 0.7, rtol=1e-6)


def test_attention_dropout_kernel_matches_the_array_chain(fused_spy, plain_spy):
    rng = np.random.default_rng(0)
    q, k, v, g = (rng.standard_normal((2, 3, 6, 4)) for _ in range(4))
    out = []
    for device in (plain_spy, "fused"):
        mg.manual_seed(5)
        ts = [mg.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
        y = F.scaled_dot_product_attention(*ts, is_causal=True, dropout_p=0.25)
        y.backward(mg.tensor(g, device=device))
        out.append([y.numpy()] + [t.grad.numpy() for t in ts])
    assert "minigrad_dropout" in fused_spy.calls
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_gpt_training_steps_with_the_kernels_match_the_cpu(fused_spy):
    """Everything a GPU step would take that the CPU does not, together: the fused GELU,
    layer-norm and Adam kernels, AdamW's flat (foreach) update and clip_grad_norm_'s
    concatenated norm (both on by default off the CPU). Three steps of a small GPT in
    float64 on the spy device with the kernels, against the CPU: the same losses and
    weights. (Dropout off: its masks come from different draws on the two devices.)"""
    from minitransformer.gpt import GPT, GPTConfig
    cfg = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8, dropout=0.0)
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, 11, (3, 8)) for _ in range(3)]
    runs = []
    for device in ("cpu", "fused"):
        mg.manual_seed(0)
        model = GPT(cfg).to(dtype=mg.float64).to(device)
        opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-2,
                                         betas=(0.9, 0.99))
        losses = []
        for x in batches:
            _, loss = model(mg.tensor(x, device=device), mg.tensor(x, device=device))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            losses.append(float(loss))
        runs.append((losses, [p.numpy() for p in model.parameters()], opt))
    assert runs[1][2]._flat and not runs[0][2]._flat
    assert {"minigrad_gelu_tanh", "minigrad_gelu_tanh_grad", "minigrad_ln_out",
            "minigrad_ln_grad_x", "minigrad_adam", "minigrad_softmax_exp",
            "minigrad_softmax_div"} <= set(fused_spy.calls)
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-12)
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


def _trainer_metrics(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_the_whole_trainer_on_the_gpu_stand_in(fused_spy, tmp_path):
    """`train()` end to end on a CuPy-like device with the fused kernels: evaluations,
    checkpoints written from device arrays and read back onto the device, a run stopped
    and resumed (with dropout: the same losses as the run never stopped), the CPU's losses
    without dropout, and sampling from the checkpoint on the device, the same tokens with
    and without the KV cache."""
    from minitransformer.train import TrainConfig, load_checkpoint, train
    text = tmp_path / "text.txt"
    text.write_text("ROMEO:\nBut soft, what light through yonder window breaks?\n" * 40)
    kw = dict(n_layer=2, n_head=2, n_embd=16, block_size=16, batch_size=4, max_iters=6,
              lr_decay_iters=6, eval_interval=3, eval_iters=2, data=str(text),
              progress=False, plot=False, processes=1)
    quiet = lambda *a: None                                          # noqa: E731

    def run(name, device, resume=False, **more):
        cfg = TrainConfig.from_preset("baby", device=device, out=str(tmp_path / name),
                                      **{**kw, **more})
        train(cfg, resume=resume, log=quiet)
        return _trainer_metrics(tmp_path / name)

    cpu, dev = run("cpu", "cpu", dropout=0.0), run("dev", "fused", dropout=0.0)
    assert {"minigrad_adam", "minigrad_ln_out", "minigrad_gelu_tanh"} <= set(fused_spy.calls)
    for a, b in zip(cpu, dev):
        assert a["iter"] == b["iter"]
        np.testing.assert_allclose([b["train_loss"], b["val_loss"]],
                                   [a["train_loss"], a["val_loss"]], rtol=1e-5)
    whole = run("whole", "fused", dropout=0.1)
    run("cut", "fused", dropout=0.1, max_iters=3)
    resumed = run("cut", "fused", resume=True, dropout=0.1)
    assert [m["iter"] for m in resumed] == [0, 3, 6]
    assert [(m["train_loss"], m["val_loss"]) for m in resumed] == \
        [(m["train_loss"], m["val_loss"]) for m in whole]
    model, tok, _ = load_checkpoint(tmp_path / "whole", device="fused")
    assert isinstance(next(model.parameters())._data, spy_backend.SpyArray)
    samples = []
    for cache in (True, False):
        mg.manual_seed(1)
        samples.append(model.generate([tok.encode("ROMEO:")], 30, top_k=5,
                                      use_cache=cache).numpy())
    np.testing.assert_array_equal(samples[0], samples[1])


def test_the_whole_float16_trainer_on_the_gpu_stand_in(fused_spy, tmp_path, monkeypatch):
    """`train(dtype="float16")` on the CuPy-like device with the fused kernels: autocast and
    the GradScaler through the trainer give the CPU's losses and loss scales, with a
    scaler (init 2^19, growing every step) that both skips overflowing steps (halved) and
    steps (doubled), and a run stopped and resumed gives the run never stopped."""
    from minitransformer import train as train_module
    from minitransformer.train import TrainConfig, train
    monkeypatch.setattr(train_module, "grad_scaler", lambda dtype, device: mg.amp.GradScaler(
        device, init_scale=2.0 ** 19, growth_interval=1))
    text = tmp_path / "text.txt"
    text.write_text("ROMEO:\nBut soft, what light through yonder window breaks?\n" * 40)
    kw = dict(n_layer=2, n_head=2, n_embd=16, block_size=16, batch_size=4, max_iters=6,
              lr_decay_iters=6, eval_interval=1, eval_iters=1, data=str(text),
              progress=False, plot=False, processes=1, dtype="float16", dropout=0.0)

    def run(name, device, resume=False, **more):
        cfg = TrainConfig.from_preset("baby", device=device, out=str(tmp_path / name),
                                      **{**kw, **more})
        train(cfg, resume=resume, log=lambda *a: None)
        return _trainer_metrics(tmp_path / name)

    cpu, dev = run("cpu", "cpu"), run("dev", "fused")
    assert {"minigrad_adam", "minigrad_ln_out"} <= set(fused_spy.calls)
    scales = [m["loss_scale"] for m in dev]
    assert scales == [m["loss_scale"] for m in cpu]
    assert any(b < a for a, b in zip(scales, scales[1:])) and \
        any(b > a for a, b in zip(scales, scales[1:])), scales    # skipped and stepped
    np.testing.assert_allclose([[m["train_loss"], m["val_loss"]] for m in dev],
                               [[m["train_loss"], m["val_loss"]] for m in cpu], rtol=1e-5)
    run("cut", "fused", max_iters=3)
    resumed = run("cut", "fused", resume=True)
    assert [(m["iter"], m["train_loss"], m["loss_scale"]) for m in resumed] == \
        [(m["iter"], m["train_loss"], m["loss_scale"]) for m in dev]


def test_an_autocast_gpt_step_reads_the_device_only_for_the_scaler(spy):
    """An autocast forward + scaled backward + unscale_/clip/step/update of the GPT never
    waits for the device but for the float32 step's 3 reads (the forward's index and
    target checks) and the scaler's one inf check per step: on a GPU every read stalls the
    host until the queued kernels finish."""
    from minitransformer.gpt import GPT, GPTConfig
    cfg = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8, dropout=0.1)
    mg.manual_seed(0)
    model = GPT(cfg).to(spy)
    opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-2, betas=(0.9, 0.99))
    scaler = mg.amp.GradScaler(spy)
    x = mg.tensor(np.random.default_rng(0).integers(0, 11, (3, 8)), device=spy)

    def step():
        counts = {}
        with spy_backend.counted() as counts["forward"]:
            with mg.autocast(spy):
                _, loss = model(x, x)
        opt.zero_grad(set_to_none=True)
        with spy_backend.counted() as counts["backward"]:
            scaler.scale(loss).backward()
        with spy_backend.counted() as counts["unscale"]:
            scaler.unscale_(opt)
        with spy_backend.counted() as counts["update"]:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
        assert loss.dtype == mg.float32 and opt.state     # autocast on, the step taken
        return {k: n["sync"] for k, n in counts.items()}
    step()                                               # the first step builds state
    assert step() == {"forward": 3, "backward": 0, "unscale": 1, "update": 0}


def test_a_gpt_training_step_launch_budget(fused_spy):
    """How many kernels a GPU training step launches, counted on the spy device (each array
    operation but views and allocations, plus each fused kernel): on a GPU each launch
    costs microseconds of host time whatever its size, so for the small preset's step the
    count, not the arithmetic, can set the pace. 2 layers with dropout: 294 (it was 385 + 31
    before constants were kept, gradients stolen, clipping scaled once and softmax and
    dropout fused). If a change adds launches on purpose, raise the budget here; if not,
    find the per-step or per-parameter loop that grew. Also: 3 host syncs (the embedding's
    index checks and cross-entropy's target check), none in backward or the update."""
    from minitransformer.gpt import GPT, GPTConfig
    cfg = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8, dropout=0.1)
    mg.manual_seed(0)
    model = GPT(cfg).to("fused")
    opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-2, betas=(0.9, 0.99))
    x = mg.tensor(np.random.default_rng(0).integers(0, 11, (3, 8)), device="fused")

    def step():
        _, loss = model(x, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    step()                                               # the first step builds state
    fused_spy.calls.clear()
    with spy_backend.counted() as n:
        step()
    assert n["launch"] + len(fused_spy.calls) <= 300, (n["launch"], len(fused_spy.calls))
    assert n["sync"] <= 3
