"""Fractional max pooling (ops/pool_fractional.py, nn/pool_extra.py): F.fractional_max_pool2d
/ 3d and nn.FractionalMaxPool2d / 3d against torch given the same _random_samples (values,
indices, gradients, second order), the window places' float32 rounding, NaN and -inf
windows, samples drawn from minigrad's generator, gradcheck in float64, the spy device,
modules and errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_spy_matches_cpu,
                        check_double_backward_vs_torch)


def _case(name, n, shape, kw):
    """An OpCase of fractional_max_pool{n}d(x, **kw), both libraries given the same samples
    (one per (sample, channel, dim), in the input's dtype)."""
    batched = len(shape) == n + 2
    u = np.random.default_rng(7).random(((shape[0] if batched else 1), shape[-n - 1], n))

    def torch_fn(x):
        import torch
        return getattr(torch.nn.functional, f"fractional_max_pool{n}d")(
            x, _random_samples=torch.tensor(u, dtype=x.dtype), **kw)
    return OpCase(f"fractional_max_pool{n}d_{name}",
                  lambda x: getattr(F, f"fractional_max_pool{n}d")(
                      x, _random_samples=mg.tensor(u, dtype=x.dtype, device=x.device), **kw),
                  (shape,), torch_fn=torch_fn)


CASES = [
    _case("size", 2, (2, 3, 9, 11), dict(kernel_size=3, output_size=(4, 5))),
    _case("tight", 2, (2, 2, 7, 8), dict(kernel_size=(3, 2), output_size=(5, 7))),
    _case("ratio", 2, (1, 2, 10, 7), dict(kernel_size=2, output_ratio=(0.5, 0.75))),
    _case("indices", 2, (2, 2, 8, 6), dict(kernel_size=2, output_size=3,
                                           return_indices=True)),
    _case("unbatched", 2, (3, 6, 7), dict(kernel_size=(2, 3), output_size=(3, 2))),
    _case("size", 3, (1, 2, 5, 6, 7), dict(kernel_size=2, output_size=(3, 2, 4))),
    _case("ratio", 3, (2, 1, 6, 5, 6), dict(kernel_size=(2, 1, 3), output_ratio=0.5,
                                            return_indices=True)),
    _case("unbatched", 3, (2, 4, 5, 4), dict(kernel_size=2, output_size=2))]
SMALL = [_case("small", 2, (1, 2, 4, 5), dict(kernel_size=2, output_size=(2, 3))),
         _case("small", 3, (1, 1, 3, 3, 3), dict(kernel_size=(2, 1, 2),
                                                  output_size=(1, 2, 1)))]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", SMALL, ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[1::3], ids=str)
def test_double_backward_as_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", CASES[::3], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_places_round_as_torch(dtype):
    """⌊(i + u)·α⌋ - ⌊u·α⌋ in the samples' dtype, as torch's: samples at simple fractions
    (and random ones) put (i + u)·α on or within rounding of integers."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    u = rng.random((1, 24, 2))
    u[0, :10, 1] = [0, 0.5, 0.25, 0.75, 1 / 3, 2 / 3, 0.1, 0.9, 0.7, 0.3]
    for length, k, out in [(9, 2, 8), (21, 3, 7), (21, 1, 10), (38, 2, 13), (38, 3, 36),
                           (30, 2, 11), (12, 3, 10)]:
        x = rng.standard_normal((1, 24, length, 3))
        mine = F.fractional_max_pool2d(mg.tensor(x, dtype=dtype), (k, 1), (out, 3),
                                       return_indices=True,
                                       _random_samples=mg.tensor(u, dtype=dtype))[1]
        theirs = torch.nn.functional.fractional_max_pool2d(
            torch.tensor(x, dtype=getattr(torch, dtype)), (k, 1), (out, 3),
            return_indices=True, _random_samples=torch.tensor(u, dtype=getattr(torch, dtype)))
        np.testing.assert_array_equal(mine.numpy(), theirs[1].numpy(), err_msg=f"{length}")


def test_nan_and_minus_inf_windows_as_torch():
    """A NaN wins (the last one in row-major order); a window of -inf keeps its first place;
    an empty batch or output is empty."""
    torch = pytest.importorskip("torch")
    x = np.full((1, 2, 5, 5), -np.inf)
    x[0, 1] = np.random.default_rng(0).standard_normal((5, 5))
    x[0, 1, [0, 1, 1, 3], [1, 0, 2, 4]] = np.nan
    u = np.full((1, 2, 2), 0.5)
    mine = F.fractional_max_pool2d(mg.tensor(x), 2, 3, return_indices=True,
                                   _random_samples=mg.tensor(u))
    theirs = torch.nn.functional.fractional_max_pool2d(
        torch.tensor(x), 2, 3, return_indices=True, _random_samples=torch.tensor(u))
    np.testing.assert_array_equal(mine[0].numpy(), theirs[0].numpy())
    np.testing.assert_array_equal(mine[1].numpy(), theirs[1].numpy())
    assert F.fractional_max_pool2d(mg.zeros(0, 2, 5, 5), 2, 3).shape == (0, 2, 3, 3)
    assert F.fractional_max_pool3d(mg.zeros(1, 2, 5, 5, 5), 2, (0, 2, 1)).shape == \
        (1, 2, 0, 2, 1)


def test_samples_come_from_minigrads_generator():
    x = mg.randn(2, 3, 9, 9)
    mg.manual_seed(4)
    drawn = F.fractional_max_pool2d(x, 2, 4, return_indices=True)[1]
    mg.manual_seed(4)
    given = F.fractional_max_pool2d(x, 2, 4, return_indices=True,
                                    _random_samples=mg.rand(2, 3, 2))[1]
    assert np.array_equal(drawn.numpy(), given.numpy())
    places = {tuple(F.fractional_max_pool2d(mg.arange(81.0).reshape(1, 1, 9, 9), 2, 4)
                    .reshape(-1).tolist()) for _ in range(20)}
    assert len(places) > 1                           # new samples at every call


@pytest.mark.parametrize("make, shape", [
    (lambda nn, u: nn.FractionalMaxPool2d(3, output_size=(4, 5), _random_samples=u(2, 3, 2)),
     (2, 3, 9, 11)),
    (lambda nn, u: nn.FractionalMaxPool2d((2, 3), output_ratio=(0.5, 0.6), return_indices=True,
                                          _random_samples=u(1, 2, 2)), (2, 8, 10)),
    (lambda nn, u: nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=u(1, 2, 3)),
     (1, 2, 6, 5, 6))])
def test_modules_as_torch(make, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)

    def samples(*s):
        return np.random.default_rng(5).random(s)
    mine = make(nn, lambda *s: mg.tensor(samples(*s)))
    theirs = make(torch.nn, lambda *s: torch.tensor(samples(*s)))
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == ["_random_samples"]
    outs, refs = mine(mg.tensor(x)), theirs(torch.tensor(x))
    for a, b in zip(*(o if isinstance(o, tuple) else (o,) for o in (outs, refs))):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert list(nn.FractionalMaxPool2d(2, output_size=3).state_dict()) == []


@pytest.mark.parametrize("call, error, words", [
    (lambda x: F.fractional_max_pool2d(x, 3), ValueError,
     "either an output_size or an output_ratio"),
    (lambda x: F.fractional_max_pool2d(x, 3, (8, 5)), ValueError,
     "pool height 3 too large relative to input height 9"),
    (lambda x: F.fractional_max_pool3d(x[..., None].expand(2, 3, 9, 11, 5), 2, (3, 3, 4)),
     ValueError, "pool width 2 too large relative to input width 5"),
    (lambda x: F.fractional_max_pool2d(x, 3, 4, _random_samples=mg.rand(2, 3, 2).double()),
     TypeError, "input's dtype"),
    (lambda x: F.fractional_max_pool2d(x, 3, 4, _random_samples=np.full((2, 3, 2), 0.5,
                                                                       np.float32)),
     TypeError, "must be a Tensor .* got numpy.ndarray; wrap it"),
    (lambda x: F.fractional_max_pool2d(x, 3, 4, _random_samples=mg.rand(1, 3, 2)),
     ValueError, r"shape \(at least 2, 3, 2\)"),
    (lambda x: F.fractional_max_pool2d(x, 3, 4, _random_samples=mg.rand(2, 3, 3)),
     ValueError, r"shape \(at least 2, 3, 2\)"),
    (lambda x: F.fractional_max_pool2d(x, 3, 4, _random_samples=mg.rand(2, 3, 2) + 1),
     ValueError, r"must lie in \[0, 1\)"),
    (lambda x: F.fractional_max_pool2d(x, (3, 2, 1), 4), TypeError, "kernel_size must be"),
    (lambda x: F.fractional_max_pool2d(x, 0, 4), ValueError, "kernel_size must be positive"),
    (lambda x: F.fractional_max_pool2d(x, 2, (4, 5, 6)), TypeError, "output_size must be"),
    (lambda x: F.fractional_max_pool2d(x, 2, output_ratio=(0.5,) * 3), ValueError,
     "output_ratio to either be"),
    (lambda x: F.fractional_max_pool2d(x.long(), 2, 4), TypeError, "floating-point"),
    (lambda x: F.fractional_max_pool2d(x[None], 2, 4), ValueError, "expected a 3D or 4D"),
    (lambda x: nn.FractionalMaxPool2d(2), ValueError, "either an output size, or a pooling"),
    (lambda x: nn.FractionalMaxPool2d(2, 3, 0.5), ValueError, "only one of output_size"),
    (lambda x: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0, 0.5)), ValueError,
     "output_ratio must be between 0 and 1")])
def test_errors_name_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(2, 3, 9, 11))
