"""mg.Generator, the CPU generator's state, and the draws of draws.py (normal, bernoulli and
the in-place fills): reproducible from a seed, in their distributions' ranges, refusing bad
arguments with clear messages."""
import numpy as np
import pytest

import minigrad as mg
import spy_backend


def _values(t):
    return t.numpy().copy()


DRAWS = {
    "randn": lambda g: mg.randn(4, 3, generator=g),
    "rand": lambda g: mg.rand(5, dtype=mg.float16, generator=g),
    "randint": lambda g: mg.randint(0, 100, (6,), generator=g),
    "randperm": lambda g: mg.randperm(9, generator=g),
    "multinomial": lambda g: mg.tensor([[0.2, 0.8, 0.0], [1.0, 1.0, 1.0]]).multinomial(
        2, generator=g),
    "multinomial with replacement": lambda g: mg.multinomial(mg.tensor([0.5, 0.5]), 8, True,
                                                             generator=g),
    "normal": lambda g: mg.normal(mg.zeros(3), 2.0, generator=g),
    "bernoulli": lambda g: mg.bernoulli(mg.full((8,), 0.5), generator=g),
    "bernoulli_": lambda g: mg.zeros(8).bernoulli_(0.5, generator=g),
    "exponential_": lambda g: mg.zeros(4).exponential_(generator=g),
    "random_": lambda g: mg.zeros(4, dtype=mg.int32).random_(0, 1000, generator=g),
    "normal_": lambda g: mg.zeros(4).normal_(generator=g),
}


@pytest.mark.parametrize("name", DRAWS)
def test_a_generator_gives_the_same_draws_from_its_seed_and_leaves_the_global_one(name):
    draw = DRAWS[name]
    mg.manual_seed(5)
    first = _values(draw(mg.Generator().manual_seed(7)))
    after_global = _values(mg.rand(3))
    mg.manual_seed(5)
    again = _values(draw(mg.Generator().manual_seed(7)))
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(_values(mg.rand(3)), after_global)   # global untouched
    other = _values(draw(mg.Generator().manual_seed(8)))
    assert not np.array_equal(first, other) or name == "multinomial"   # (few outcomes)


def test_generator_api_as_torch():
    g = mg.Generator()
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert g.device == "cpu" and "initial_seed=3" in repr(g)
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 63
    state = g.get_state()
    a = _values(mg.randn(5, generator=g))
    assert g.set_state(state) is g
    np.testing.assert_array_equal(_values(mg.randn(5, generator=g)), a)
    with pytest.raises(ValueError, match="non-negative integer"):
        g.manual_seed(-1)
    with pytest.raises(TypeError, match="mg.Generator"):
        mg.randn(2, generator="seven")


def test_the_cpu_generators_state_round_trips_every_kind_of_draw():
    mg.manual_seed(0)
    mg.get_rng_state()
    mg.backend.get("cpu").rng.integers(0, 10, dtype=np.int32)   # may hold back half a draw
    state = mg.get_rng_state()
    assert state.dtype == np.uint8 and state.shape == (45,)

    def draws():
        x = mg.ones(1000, requires_grad=True)
        return [_values(mg.rand(3)), _values(mg.randint(0, 10**6, (3,))),
                _values(mg.nn.functional.dropout(x, 0.3)), _values(mg.randn(2))]
    first = draws()
    mg.set_rng_state(state)
    for a, b in zip(first, draws()):
        np.testing.assert_array_equal(a, b)
    assert mg.initial_seed() == 0
    s = mg.seed()
    assert mg.initial_seed() == s


def test_a_state_survives_save_and_load(tmp_path):
    state = mg.get_rng_state()
    x = _values(mg.rand(4))
    mg.save({"rng": state}, tmp_path / "rng.safetensors")
    mg.set_rng_state(mg.load(tmp_path / "rng.safetensors")["rng"])
    np.testing.assert_array_equal(_values(mg.rand(4)), x)


def test_a_state_that_is_not_one_is_refused():
    with pytest.raises(TypeError, match="uint8 tensor of 45 bytes"):
        mg.set_rng_state(mg.zeros(45))
    with pytest.raises(TypeError, match="uint8 tensor of 45 bytes"):
        mg.set_rng_state(np.zeros(45, np.uint8))
    with pytest.raises(TypeError, match="uint8 tensor of 45 bytes"):
        mg.set_rng_state(mg.zeros(40, dtype=mg.uint8))
    with pytest.raises(ValueError, match="not a generator state"):
        mg.set_rng_state(mg.zeros(45, dtype=mg.int32).to(np.uint8))   # even increment
    for seed in (-1, 2 ** 64, 1.5):
        with pytest.raises(ValueError, match="non-negative integer below 2..64"):
            mg.manual_seed(seed)
        with pytest.raises(ValueError, match="non-negative integer below 2..64"):
            mg.Generator().manual_seed(seed)


def test_a_numpy_integer_seed_is_taken_and_packed_as_an_int():
    # torch.manual_seed(np.int64(3)); torch.initial_seed() is the int 3
    mg.manual_seed(np.int64(3))
    assert type(mg.initial_seed()) is int and mg.initial_seed() == 3
    state = mg.get_rng_state()
    mg.manual_seed(4)
    mg.set_rng_state(state)
    assert mg.initial_seed() == 3


def test_a_restored_state_brings_its_seed_as_torch():
    # torch: h.set_state(g.get_state()) makes h.initial_seed() g's; torch.set_rng_state
    # likewise for torch.initial_seed()
    g = mg.Generator().manual_seed(5)
    mg.rand(3, generator=g)
    h = mg.Generator().manual_seed(7)
    assert h.set_state(g.get_state()) is h and h.initial_seed() == 5
    np.testing.assert_array_equal(_values(mg.rand(3, generator=h)),
                                  _values(mg.rand(3, generator=g)))
    mg.manual_seed(3)
    state = mg.get_rng_state()
    mg.manual_seed(2 ** 64 - 1)
    assert mg.initial_seed() == 2 ** 64 - 1
    mg.set_rng_state(state)
    assert mg.initial_seed() == 3
    mg.manual_seed(9)
    assert mg.initial_seed() == 9
    old = state[:37].clone()                     # a state saved before seeds were packed
    h.set_state(old)
    mg.set_rng_state(old)
    assert h.initial_seed() == 5 and mg.initial_seed() == 9
    np.testing.assert_array_equal(_values(mg.rand(3, generator=h)), _values(mg.rand(3)))


def test_normal_shapes_dtypes_and_moments():
    mg.manual_seed(1)
    x = mg.normal(3.0, 2.0, (200_000,))
    assert x.dtype == mg.float32 and x.shape == (200_000,)
    assert abs(float(x.mean()) - 3.0) < 0.02 and abs(float(x.std()) - 2.0) < 0.02
    assert mg.normal(0.0, 1.0, 5, dtype=mg.float64).dtype == mg.float64
    mean = mg.tensor([[0.0], [100.0]], dtype=mg.float64)
    y = mg.normal(mean, mg.tensor([1.0, 0.0, 2.0], dtype=mg.float64).expand(1000, 3)[:1])
    assert y.shape == (2, 3) and y.dtype == mg.float64
    np.testing.assert_array_equal(y.numpy()[:, 1], [0.0, 100.0])    # std 0: the mean itself
    z = mg.normal(mg.zeros(50_000, 2) + mg.tensor([-5.0, 5.0]), 0.5)
    np.testing.assert_allclose(z.mean(0).numpy(), [-5.0, 5.0], atol=0.02)
    assert not z.requires_grad
    assert mg.normal(0.0, 1.0, (2,), requires_grad=True).requires_grad


@pytest.mark.parametrize("call, error, match", [
    (lambda: mg.normal(0.0, -1.0, (2,)), ValueError, "std must be >= 0"),
    (lambda: mg.normal(mg.zeros(2), mg.tensor([1.0, float("nan")])), ValueError, ">= 0"),
    (lambda: mg.normal(0.0, 1.0), TypeError, "give size="),
    (lambda: mg.normal(mg.zeros(2), 1.0, (2,)), TypeError, "size= goes with a number"),
    (lambda: mg.normal(mg.tensor([0, 1]), 1.0), TypeError, "must be floating"),
    (lambda: mg.normal(mg.zeros(2), mg.ones(2, dtype=mg.float64)), TypeError, "one dtype"),
    (lambda: mg.normal("0", 1.0, (2,)), TypeError, "mean must be"),
    (lambda: mg.normal(mg.zeros(2, 3), mg.ones(3, 2)), ValueError, "do not broadcast"),
])
def test_normal_refuses(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_bernoulli_frequencies_and_ends():
    mg.manual_seed(2)
    p = mg.tensor([0.0, 0.25, 1.0]).expand(100_000, 3)
    b = mg.bernoulli(p)
    assert b.dtype == mg.float32 and b.shape == (100_000, 3)
    assert set(np.unique(b.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(b.mean(0).numpy(), [0.0, 0.25, 1.0], atol=0.01)
    assert float(mg.bernoulli(mg.ones(10_000), 0.0).sum()) == 0.0            # p overrides
    assert float(mg.zeros(10_000).bernoulli(1.0).sum()) == 10_000.0


def test_bernoulli_in_place_takes_any_dtype_and_a_broadcast_p():
    mg.manual_seed(3)
    t = mg.zeros(20_000, 2, dtype=mg.int64).bernoulli_(mg.tensor([0.1, 0.9]))
    assert t.dtype == mg.int64
    np.testing.assert_allclose(t.float().mean(0).numpy(), [0.1, 0.9], atol=0.01)
    with pytest.raises(ValueError, match="does not broadcast"):
        mg.zeros(2, 3).bernoulli_(mg.tensor([0.1, 0.2]))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        mg.zeros(3).bernoulli_(1.5)
    with pytest.raises(TypeError, match="floating tensor of probabilities"):
        mg.bernoulli(mg.tensor([1, 0]))


def test_exponential_mean_and_refusals():
    mg.manual_seed(4)
    e = mg.zeros(200_000, dtype=mg.float64).exponential_(4.0)
    assert float(e.min()) >= 0 and abs(float(e.mean()) - 0.25) < 0.005
    with pytest.raises(TypeError, match="floating-point"):
        mg.zeros(2, dtype=mg.int64).exponential_()
    with pytest.raises(ValueError, match="lambd must be a number > 0"):
        mg.zeros(2).exponential_(0.0)


@pytest.mark.parametrize("dtype, bounds, low, high", [
    (mg.float32, (), 0, 2 ** 24),            # both ends included: torch's random_()
    (np.uint8, (), 0, 255),
    (mg.bool, (), 0, 1),
    (mg.int64, (5,), 0, 4),
    (mg.float16, (-3, 4), -3, 3),
    (mg.int32, (2, None), 2, 2 ** 31 - 1),
])
def test_random_draws_from_its_range(dtype, bounds, low, high):
    mg.manual_seed(6)
    t = mg.zeros(5000, dtype=dtype).random_(*bounds)
    v = t.numpy().astype(np.float64)
    assert t.dtype == dtype and v.min() >= low and v.max() <= high
    if high - low < 100:
        assert set(v) == set(range(low, high + 1))       # every value comes up


@pytest.mark.parametrize("call, error, match", [
    (lambda: mg.zeros(2).random_(5, 3), ValueError, "needs from < to"),
    (lambda: mg.zeros(2, dtype=np.int8).random_(0, 200), ValueError, "does not fit int8"),
    (lambda: mg.zeros(2, dtype=mg.float16).random_(0, 5000), ValueError, "does not fit"),
    (lambda: mg.zeros(2).random_(0.5, 3), TypeError, "must be integers"),
    (lambda: mg.zeros(2).random_(1, 2, 3), TypeError, "at most"),
])
def test_random_refuses(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_in_place_draws_respect_autograd_and_broadcast_views():
    w = mg.zeros(3, requires_grad=True)
    for fill in (lambda t: t.bernoulli_(), lambda t: t.exponential_(), lambda t: t.random_()):
        with pytest.raises(RuntimeError, match="requires grad"):
            fill(w)
        with mg.no_grad():
            fill(w)
        with pytest.raises(ValueError, match="broadcast view"):
            fill(mg.zeros(1).expand(3))
    assert w._version > 0


@pytest.mark.parametrize("fill", [lambda t: t.normal_(), lambda t: t.bernoulli_(),
                                  lambda t: t.exponential_(), lambda t: t.random_(0, 5)])
def test_a_refused_in_place_draw_leaves_the_generator_as_it_was(fill):
    # torch checks before it draws: a refusal takes nothing from the generator
    mg.manual_seed(0)
    expected = mg.rand(2).tolist()
    mg.manual_seed(0)
    for t in (mg.zeros(3, requires_grad=True), mg.zeros(1).expand(3)):
        with pytest.raises((RuntimeError, ValueError)):
            fill(t)
    assert mg.rand(2).tolist() == expected


@pytest.mark.parametrize("fill", [lambda t: t.normal_(), lambda t: t.uniform_(),
                                  lambda t: t.bernoulli_(), lambda t: t.exponential_(),
                                  lambda t: t.random_(0, 5)])
def test_in_place_draws_into_a_tensor_with_a_history_as_torch(fill):
    # torch: new values with no gradient, recorded (the old history gets zeros); a leaf
    # that requires grad, or a view of one, refused
    x = mg.ones(2, 3, requires_grad=True)
    h = x * 2
    v = h[1]                                       # a view sees the new values
    w = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert fill(h[0]) is not None and fill(h) is h
    assert h._version == 2 and not h.is_leaf and h[1].tolist() == v.tolist()
    (h * w).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2 and w.grad.tolist() == h.sum(0).tolist()
    for t in (x, x[0]):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            fill(t)
    h = x * 2
    with mg.no_grad():                             # not recorded: h keeps its history
        fill(h)
    assert type(h.grad_fn).__name__ == "Mul" and h._version == 1


def test_a_generator_draws_the_same_numbers_on_another_device():
    spy_backend.register()
    try:
        for name, draw in (("randn", lambda d, g: mg.randn(3, device=d, generator=g)),
                           ("normal", lambda d, g: mg.normal(mg.zeros(3, device=d), 1.0,
                                                             generator=g)),
                           ("bernoulli", lambda d, g: mg.bernoulli(mg.full((6,), 0.5, device=d),
                                                                   generator=g)),
                           ("random_", lambda d, g: mg.zeros(3, device=d).random_(9,
                                                                                 generator=g)),
                           ("multinomial", lambda d, g: mg.ones(4, device=d).multinomial(
                               4, generator=g))):
            on_spy = draw("spy", mg.Generator().manual_seed(1))
            assert on_spy.device == "spy", name
            np.testing.assert_array_equal(on_spy.to("cpu").numpy(),
                                          draw("cpu", mg.Generator().manual_seed(1)).numpy())
    finally:
        spy_backend.unregister()


def test_like_draws_take_a_generator_and_random_takes_to():
    g = mg.Generator().manual_seed(1)
    a = mg.randn_like(mg.zeros(3), generator=g)
    g.manual_seed(1)
    np.testing.assert_array_equal(a.numpy(), mg.randn_like(mg.zeros(3), generator=g).numpy())
    assert mg.rand_like(mg.zeros(2), generator=3).shape == (2,)
    assert set(mg.zeros(200, dtype=mg.int64).random_(to=3).tolist()) == {0, 1, 2}
    assert set(mg.zeros(200).random_(2, to=4).tolist()) == {2.0, 3.0}


def test_generator_details_that_matter():
    with pytest.raises(ValueError, match="non-negative integer"):
        mg.Generator().manual_seed(1.5)
    assert mg.Generator().initial_seed() == 0                       # a fixed default, as torch
    np.testing.assert_array_equal(mg.randn(3, generator=mg.Generator()).numpy(),
                                  mg.randn(3, generator=0).numpy())
    for state in (mg.get_rng_state(), mg.Generator().get_state()):
        state[33] = 0                                               # a tensor of its own
    bad = mg.get_rng_state().clone()
    bad[32] = 2                                                     # has_uint32 is 0 or 1
    with pytest.raises(ValueError, match="not a generator state"):
        mg.set_rng_state(bad)


def test_random_refuses_a_from_below_the_dtype():
    with pytest.raises(ValueError, match="does not fit bool"):
        mg.zeros(3, dtype=mg.bool).random_(-1, 2)
    with pytest.raises(ValueError, match="does not fit float32"):
        mg.zeros(3).random_(-2 ** 30, 0)
