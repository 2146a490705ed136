"""F.affine_grid and F.grid_sample (ops/sampling_grid.py) against torch: 2-D bilinear,
nearest and bicubic, 3-D trilinear and nearest, every padding mode, align_corners both ways, grids
reaching outside [-1, 1]; gradients to the input and the grid, second order, gradcheck in
float64, the spy device, the align_corners=None warning and errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)

SHAPES = {2: ((2, 3, 4, 5), (2, 3, 4, 2)), 3: ((1, 2, 3, 4, 3), (1, 2, 3, 2, 3))}
SMALL = {2: ((1, 1, 3, 3), (1, 2, 2, 2)), 3: ((1, 1, 2, 2, 2), (1, 1, 1, 2, 3))}
TINY = {2: ((1, 1, 2, 3), (1, 1, 2, 2))}           # bicubic's 16 neighbours cost more


def _grid_case(n, mode, padding_mode, align_corners, shapes=SHAPES):
    def call(Fn, x, g):
        # the grid reaches a little past [-1, 1], so every padding mode matters
        return Fn.grid_sample(x, g * 1.3, mode, padding_mode, align_corners)

    def torch_fn(x, g):
        import torch.nn.functional as TF
        return call(TF, x, g)
    return OpCase(f"grid_sample{n}d_{mode}_{padding_mode}_{align_corners}",
                  lambda x, g: call(F, x, g), shapes[n], torch_fn=torch_fn,
                  domain=("real", "unit"))


def _affine_case(n, align_corners):
    size = (2, 3, 4, 5) if n == 2 else (2, 1, 2, 3, 4)

    def call(Fn, theta):
        return Fn.affine_grid(theta, size, align_corners)

    def torch_fn(theta):
        import torch.nn.functional as TF
        return call(TF, theta)
    return OpCase(f"affine_grid{n}d_{align_corners}", lambda t: call(F, t), ((2, n, n + 1),),
                  torch_fn=torch_fn)


CASES = [_grid_case(n, mode, pad, ac) for n in (2, 3) for mode in ("bilinear", "nearest")
         for pad in ("zeros", "border", "reflection") for ac in (False, True)]
BICUBIC = [_grid_case(2, "bicubic", pad, ac) for pad in ("zeros", "border", "reflection")
           for ac in (False, True)]
AFFINE = [_affine_case(n, ac) for n in (2, 3) for ac in (False, True)]


@pytest.mark.parametrize("case", CASES + BICUBIC + AFFINE, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", [_grid_case(n, "bilinear", pad, ac, SMALL) for n in (2, 3)
                                  for pad, ac in (("zeros", False), ("border", True),
                                                  ("reflection", False))] + AFFINE[::3] +
                         [_grid_case(2, "bicubic", pad, ac, TINY) for pad, ac in
                          (("zeros", True), ("border", False), ("reflection", True))],
                         ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[::5] + BICUBIC[::2], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


def test_double_backward_of_affine_grid_as_torch():
    check_double_backward_vs_torch(AFFINE[0], "cpu")


def test_spatial_transformer_round_trip():
    """The identity θ with align_corners=True reads every input place back exactly."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4, 5)))
    theta = mg.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    out = F.grid_sample(x, F.affine_grid(theta, x.shape, True), align_corners=True)
    np.testing.assert_allclose(out.numpy(), x.numpy(), atol=1e-6)


def test_affine_grid_places_are_computed_in_thetas_dtype():
    """The base coordinates are linspace's in θ's dtype times (n - 1) / n, rounded there
    (PyTorch's): float32's middle place of 7 is -2.6e-8, not 0."""
    theta = mg.tensor([[[1.0, 0, 0], [0, 1, 0]]])
    x = F.affine_grid(theta, (1, 1, 7, 28), align_corners=False)[0, 0, :, 0].numpy()
    expected = mg.linspace(-1, 1, 28).numpy() * np.float32(27) / np.float32(28)
    np.testing.assert_array_equal(x, expected)
    middle = F.affine_grid(theta, (1, 1, 1, 7), align_corners=False)[0, 0, 3, 0].item()
    assert middle == float(np.float32(mg.linspace(-1, 1, 7)[3].item()) * np.float32(6) /
                           np.float32(7)) and middle != 0


def test_affine_grid_sums_left_to_right_in_thetas_dtype():
    """θ·(x, y, 1) as x·θ0 + y·θ1, then + θ2, each step rounded (PyTorch's values; a
    BLAS matmul misses some by an ulp)."""
    rng = np.random.default_rng(0)
    theta = (np.eye(2, 3) + rng.standard_normal((3, 2, 3)) * 1e-3).astype(np.float32)
    eye = np.tile(np.eye(2, 3, dtype=np.float32), (3, 1, 1))
    base = F.affine_grid(mg.tensor(eye), (3, 1, 28, 28), False).numpy().reshape(3, -1, 1, 2)
    t = theta[:, None]
    expected = base[..., 0] * t[..., 0] + base[..., 1] * t[..., 1] + t[..., 2]
    got = F.affine_grid(mg.tensor(theta), (3, 1, 28, 28), False).numpy()
    np.testing.assert_array_equal(got, expected.reshape(got.shape))


@pytest.mark.parametrize("size", [(4, 1, 28, 28), (2, 1, 9, 10, 11)], ids=["2d", "3d"])
def test_affine_grid_bit_for_bit_as_torch(torch, size, dtype):
    n = len(size) - 2
    rng = np.random.default_rng(1)
    theta = (np.eye(n, n + 1) + rng.standard_normal((size[0], n, n + 1)) * 0.3).astype(dtype)
    for align_corners in (False, True):
        mine = F.affine_grid(mg.tensor(theta), size, align_corners).numpy()
        theirs = torch.nn.functional.affine_grid(torch.tensor(theta), size, align_corners)
        np.testing.assert_array_equal(mine, theirs.numpy())


def test_identity_spatial_transformer_grads_as_torch(torch):
    """The identity θ (the spatial transformer tutorial's start) puts places on pixel
    centres, up to rounding: the side grid_sample's floor falls on decides θ's gradient,
    so the places must be PyTorch's bit for bit."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 28, 13)).astype(np.float32)
    eye = np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    grads = []
    for lib, fn in ((mg, F), (torch, torch.nn.functional)):
        theta = lib.tensor(eye, requires_grad=True)
        grid = fn.affine_grid(theta, x.shape, align_corners=False)
        out = fn.grid_sample(lib.tensor(x), grid, align_corners=False)
        (out * lib.tensor(x)).sum().backward()
        grads.append((grid.detach().numpy(), theta.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-4, atol=1e-4)


def test_nearest_rounds_halves_to_even_as_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(5.0).reshape(1, 1, 1, 5)
    g = np.zeros((1, 1, 4, 2))
    g[0, 0, :, 0] = [-0.5, 0.0, 0.5, -1.0]          # places 1.5, 2.5, 3.5 and 0.5 in x
    mine = F.grid_sample(mg.tensor(x), mg.tensor(g), "nearest", align_corners=True)
    theirs = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), "nearest",
                                             align_corners=True)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_nan_and_infinite_places_and_an_empty_batch_as_torch(mode):
    # torch: a NaN place (or an infinite one reflected) reads the first element under
    # 'border' and 'reflection'; an infinite one the end element under 'border'; outside
    # under 'zeros' (torch's bilinear gives NaN there; NumPy used to raise casting NaN to
    # an index)
    x = mg.arange(12.0).reshape(1, 1, 3, 4).requires_grad_()
    g = mg.tensor([[[[np.nan, 0.0], [np.inf, 0.5], [-np.inf, np.nan]]]], requires_grad=True)
    bilinear = mode == "bilinear"
    expected = {"zeros": [0.0, 0.0, 0.0], "border": [4.0, 10.0 if bilinear else 11.0, 0.0],
                "reflection": [4.0, 7.0 if bilinear else 8.0, 0.0]}
    for padding, want in expected.items():
        out = F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)
        out.sum().backward()
        assert out.reshape(-1).tolist() == want and np.isfinite(x.grad.numpy()).all()
    empty = F.grid_sample(mg.zeros(0, 2, 3, 4), mg.zeros(0, 5, 6, 2), mode=mode,
                          align_corners=True)
    assert empty.shape == (0, 2, 5, 6)


def test_bicubic_far_outside_and_at_nan_or_infinite_places_as_torch():
    """Each of the 4×4 neighbours is folded in by itself, not the place: far outside,
    'border' reads the edge and 'reflection' the folded neighbours; a NaN or infinite place
    gives NaN under every padding mode, as torch's (its cubic weights are NaN)."""
    torch = pytest.importorskip("torch")
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    g = np.array([[[[np.nan, 0.0], [np.inf, 0.5], [-np.inf, np.nan], [5.0, 0.2],
                    [-3.7, 2.6], [0.9, -1.2]]]])
    for padding in ("zeros", "border", "reflection"):
        for corners in (False, True):
            mine = F.grid_sample(mg.tensor(x), mg.tensor(g), "bicubic", padding, corners)
            theirs = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g),
                                                     "bicubic", padding, corners)
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12,
                                       atol=1e-12, err_msg=f"{padding} {corners}")


def test_align_corners_none_warns_as_torch():
    x, g = mg.randn(1, 1, 2, 2), mg.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(mg.zeros(1, 2, 3), (1, 1, 2, 2))


@pytest.mark.parametrize("call, error, words", [
    (lambda x, g: F.grid_sample(x, g, "bilinaer", align_corners=False), ValueError,
     "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    (lambda x, g: F.grid_sample(x[:, :, None], mg.zeros(2, 1, 1, 1, 3), "bicubic",
                                align_corners=False), ValueError,
     "bicubic interpolation only supports 4D input"),
    (lambda x, g: F.grid_sample(x, g, padding_mode="wrap", align_corners=False), ValueError,
     "expected padding_mode to be"),
    (lambda x, g: F.grid_sample(x, g[:1], align_corners=False), ValueError,
     "same batch size"),
    (lambda x, g: F.grid_sample(x, g[..., :1], align_corners=False), ValueError,
     "size 2 in last dimension"),
    (lambda x, g: F.grid_sample(x, g.double(), align_corners=False), TypeError, "one dtype"),
    (lambda x, g: F.grid_sample(x[0], g[0], align_corners=False), ValueError, "4D input"),
    (lambda x, g: F.grid_sample(x[:, :, :0], g, align_corners=False), ValueError,
     "non-empty spatial"),
    (lambda x, g: F.affine_grid(mg.zeros(2, 2, 3), (2, 3, 4, 5, 6), False), ValueError,
     "shape Nx3x4"),
    (lambda x, g: F.affine_grid(mg.zeros(2, 2, 3), (2, 3, 4), False), NotImplementedError,
     "only supports 4D and 5D sizes"),
    (lambda x, g: F.affine_grid(mg.zeros(2, 2, 3, dtype="int64"), (2, 3, 4, 5), False),
     ValueError, "floating point"),
    (lambda x, g: F.affine_grid(mg.zeros(2, 2, 3), (2, 3, 0, 5), False), ValueError,
     "non-zero, positive output size"),
    (lambda x, g: F.affine_grid(mg.zeros(2, 2, 3), (3, 3, 4, 5), False), ValueError,
     "batch of 3"),
])
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(2, 3, 4, 5), mg.zeros(2, 6, 7, 2))
