"""mg.multinomial (draw category indices from weights) and F.one_hot: the pieces a user needs
to write their own sampling loop or bigram model, as in PyTorch."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F


def test_multinomial_with_replacement_follows_the_weights(device):
    """Frequencies match the normalised weights (within 5 standard errors of 40,000 draws),
    a zero weight is never drawn, and rows are independent distributions."""
    mg.manual_seed(0)
    w = mg.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 0.0, 2.0]], device=device)
    n = 40_000
    s = mg.multinomial(w, n, replacement=True)
    assert s.shape == (2, n) and s.dtype == mg.int64 and s.device == device
    for row, want in zip(s.numpy(), ([0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.0, 0.5])):
        freq = np.bincount(row, minlength=4) / n
        se = np.sqrt(np.asarray(want) * (1 - np.asarray(want)) / n)
        assert np.all(np.abs(freq - want) <= 5 * se + 1e-12), (freq, want)


def test_multinomial_without_replacement_draws_distinct_categories_in_draw_order(device):
    """Each row's draws are distinct; asking for every positive category gives a permutation
    of them; the first draw follows the weights and the second is drawn from the rest, so
    with weights (0.5, 0.3, 0.2) the pair (1, 0) comes with probability 0.3·0.5/0.7."""
    mg.manual_seed(1)
    w = mg.tensor([0.5, 0.3, 0.2, 0.0], device=device)
    draws = np.array([mg.multinomial(w, 3).numpy() for _ in range(6000)])
    assert (np.sort(draws, axis=1) == [0, 1, 2]).all()   # distinct, and never the zero
    first = np.bincount(draws[:, 0], minlength=4) / len(draws)
    np.testing.assert_allclose(first, [0.5, 0.3, 0.2, 0.0], atol=0.03)
    pair = np.mean((draws[:, 0] == 1) & (draws[:, 1] == 0))
    assert abs(pair - 0.3 * 0.5 / 0.7) < 0.03
    assert mg.multinomial(mg.tensor([[0.0, 2.0, 0.0]], device=device), 1).tolist() == [[1]]


def test_multinomial_is_seeded_and_has_a_method_spelling(device):
    w = mg.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    mg.manual_seed(7)
    a = mg.multinomial(w, 5, replacement=True).tolist()
    mg.manual_seed(7)
    assert w.multinomial(5, replacement=True).tolist() == a


@pytest.mark.parametrize("weights, n, replacement, error, words", [
    ([1.0, -1.0], 1, True, ValueError, "finite and >= 0"),
    ([1.0, float("nan")], 1, True, ValueError, "finite and >= 0"),
    ([1.0, float("inf")], 1, True, ValueError, "finite and >= 0"),
    ([0.0, 0.0], 1, True, ValueError, "positive sum"),
    ([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], 2, False, ValueError, "1 category of positive"),
    ([1.0, 1.0], 0, True, ValueError, "1 <= num_samples"),
    ([1, 2], 1, True, TypeError, "floating-point weights, got int64"),
    ([[[1.0]]], 1, True, ValueError, r"\(K,\) or \(N, K\)"),
    ([1.0, 1.0], 1.5, True, TypeError, "num_samples must be an int"),
])
def test_multinomial_bad_input(weights, n, replacement, error, words):
    with pytest.raises(error, match=words):
        mg.multinomial(mg.tensor(weights), n, replacement=replacement)


def test_one_hot(device):
    x = mg.tensor([[0, 2], [1, 0]], device=device)
    h = F.one_hot(x)
    assert h.dtype == mg.int64 and h.device == device and h.shape == (2, 2, 3)
    assert h.tolist() == [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [1, 0, 0]]]
    assert F.one_hot(x, num_classes=5).shape == (2, 2, 5)
    assert F.one_hot(x).float().argmax(-1).tolist() == x.tolist()
    with pytest.raises(ValueError, match=r"\[0, 2\), got values from 0 to 2"):
        F.one_hot(x, num_classes=2)
    with pytest.raises(TypeError, match="integer class indices, got float32"):
        F.one_hot(mg.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="empty tensor; pass num_classes"):
        F.one_hot(mg.zeros(0, dtype=mg.int64))
    assert F.one_hot(mg.zeros(0, dtype=mg.int64), 3).shape == (0, 3)


def test_uniform_draws_never_reach_their_upper_bound():
    """[0, 1) and [a, b), as PyTorch: float32 draws rounded to float16 reached 1.0 (229 in
    10⁶), and uniform_(1000, 1001) in float32 reached 1001."""
    mg.manual_seed(1)
    u = mg.rand(10 ** 6, dtype=mg.float16).numpy()
    assert u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    h, x = mg.zeros(10 ** 6, dtype=mg.float16), mg.zeros(10 ** 6)
    h.uniform_(-2, 2)
    x.uniform_(1000, 1001)
    assert h.numpy().max() < 2 and x.numpy().max() < 1001 and h.numpy().min() >= -2


def test_randint_takes_pytorchs_forms_and_refuses_what_its_dtype_cannot_hold():
    mg.manual_seed(0)
    for t in (mg.randint(5, size=(3,)), mg.randint(high=5, size=(3,)), mg.randint(5, (3,))):
        assert t.shape == (3,) and t.dtype == mg.int64 and 0 <= t.numpy().min() <= \
            t.numpy().max() < 5
    for call, words in ((lambda: mg.randint(0, 100000, (8,), dtype=mg.float16),
                         r"does not fit float16 \(-2048 .. 2048\)"),
                        (lambda: mg.randint(0, 5, (8,), dtype=mg.bool), "does not fit bool"),
                        (lambda: mg.randperm(5000, dtype=mg.float16),
                         "float16 cannot hold every integer below 5000")):
        with pytest.raises(ValueError, match=words):
            call()
    with pytest.raises(TypeError, match="low and high must be integers, got 0.5 and 2.5"):
        mg.randint(0.5, 2.5, (3,))
    with pytest.raises(TypeError, match="low and high must be integers, got 1.5 and 10"):
        mg.randint(1.5, 10, (3,))
    with pytest.raises(TypeError, match=r"give randint\(high, size\)"):
        mg.randint(3, 10)                                 # no size: not high=3, size=10
    assert sorted(mg.randperm(2049, dtype=mg.float16).tolist()) == list(range(2049))
    with pytest.raises(ValueError, match="cannot hold every integer below 2050"):
        mg.randperm(2050, dtype=mg.float16)


def test_multinomial_of_no_rows_draws_nothing():
    out = mg.multinomial(mg.ones(0, 3), 2)
    assert out.shape == (0, 2) and out.dtype == mg.int64
    with pytest.raises(ValueError, match="cannot draw 5 samples without replacement from a "
                                         "row with 3 categories"):
        mg.multinomial(mg.ones(0, 3), 5)


def test_randint_takes_zero_d_integer_tensors_as_bounds():
    mg.manual_seed(0)
    for t in (mg.randint(mg.tensor(5), (50,)), mg.randint(2, mg.tensor(5), (50,))):
        assert t.dtype == mg.int64 and t.numpy().max() < 5


def test_float16_rand_covers_the_float16_grid_below_one():
    """A float32 draw rounded down to float16: every float16 value in [0, 1) can come out
    (not only multiples of 2⁻¹¹), and none is 1."""
    mg.manual_seed(3)
    u = mg.rand(200_000, dtype=mg.float16).numpy()
    assert u.max() < 1 and len(np.unique(u)) > 8000 and abs(u.mean() - 0.5) < 0.005
    assert (u < 1e-3).mean() == pytest.approx(1e-3, rel=0.2)
