"""mg.testing.assert_close (testing.py) and mg.random (random.py) against torch.testing
and torch.random: tolerances, what fails and the messages that say so; fork_rng."""
import pytest

import minigrad as mg


# ---- mg.testing.assert_close -----------------------------------------------------------
def test_assert_close_passes_within_the_dtypes_tolerance():
    a = mg.tensor([1.0, 2.0, float("nan")])
    mg.testing.assert_close(a, a + 5e-6, equal_nan=True)            # float32: atol 1e-5
    mg.testing.assert_close([a[:2], {"k": 1.0}], (a[:2], {"k": 1.0}))
    mg.testing.assert_close(mg.tensor([1, 2]), mg.tensor([1, 2]))
    mg.testing.assert_close(1.0, 1.0 + 1e-9)
    mg.testing.assert_close(a[:2], a[:2].double(), check_dtype=False)


def test_assert_close_failures_say_what_and_how_much(torch):
    a = mg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(AssertionError) as info:
        mg.testing.assert_close(a, mg.tensor([1.0, 2.5, 3.0]))
    text = str(info.value)
    assert "Mismatched elements: 1 / 3 (33.3%)" in text
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)" in text
    assert "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)" in text
    with pytest.raises(AssertionError):                 # torch fails the same comparison
        torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 3e-5]))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        mg.testing.assert_close(mg.tensor([1.0, 2.0]), mg.tensor([1.0, 2.0 + 3e-5]))
    with pytest.raises(AssertionError, match="'dtype' do not match: float32 != float64"):
        mg.testing.assert_close(a, a.double())
    with pytest.raises(AssertionError, match=r"'shape' do not match: \(3,\) != \(2,\)"):
        mg.testing.assert_close(a, a[:2])
    with pytest.raises(AssertionError, match="Scalars are not close!\n\nExpected nan but got"):
        mg.testing.assert_close(mg.tensor(float("nan")), mg.tensor(float("nan")))
    with pytest.raises(AssertionError, match=r"item \[1\]"):
        mg.testing.assert_close([a, a], [a, a + 1])
    with pytest.raises(AssertionError, match="custom"):
        mg.testing.assert_close(a, a + 1, msg="custom")
    with pytest.raises(TypeError, match="cannot compare a Tensor with a float"):
        mg.testing.assert_close(a, 1.0)
    with pytest.raises(ValueError, match="both rtol and atol"):
        mg.testing.assert_close(a, a, rtol=1e-3)


def test_assert_close_misses_nothing_a_float64_copy_would_hide(torch):
    """Infinities of opposite signs and integers past 2**53 differ (compared as float64
    with inf tolerances they passed). (Complex values make no tensor here.)"""
    pairs = [([1.0, float("inf")], [1.0, -float("inf")]),
             ([2 ** 53], [2 ** 53 + 1]), (2 ** 60, 2 ** 60 + 1)]
    for a, e in pairs:
        for lib in (mg, torch):
            wrap = (lambda v: v) if isinstance(a, int) else lib.tensor
            with pytest.raises(AssertionError):
                lib.testing.assert_close(wrap(a), wrap(e))
    mg.testing.assert_close(mg.tensor([float("inf")]), mg.tensor([float("inf")]))


def test_assert_close_messages_for_exact_dtypes_and_scalars_as_torch(torch):
    cases = [(lambda lib: lib.tensor([[1, 2], [3, 4]]), lambda lib: lib.tensor([[1, 3], [3, 8]])),
             (lambda lib: lib.tensor([True, False]), lambda lib: lib.tensor([True, True])),
             (lambda lib: 1, lambda lib: 2),
             (lambda lib: lib.tensor(1.0, dtype=lib.float64),
              lambda lib: lib.tensor(1.5, dtype=lib.float64))]
    for actual, expected in cases:
        texts = []
        for lib in (mg, torch):
            with pytest.raises(AssertionError) as info:
                lib.testing.assert_close(actual(lib), expected(lib))
            texts.append(str(info.value))
        assert texts[0] == texts[1]


# ---- mg.random ---------------------------------------------------------------------------
def test_random_module_and_fork_rng():
    mg.random.manual_seed(3)
    assert mg.random.initial_seed() == 3
    first = mg.rand(3).tolist()
    mg.random.manual_seed(3)
    with mg.random.fork_rng():
        inside = mg.rand(3).tolist()
        mg.manual_seed(99)
        mg.rand(2)
    assert inside == first and mg.rand(3).tolist() == first    # the state came back
    assert mg.random.initial_seed() == 3
    before = mg.random.get_rng_state().tolist()
    with pytest.raises(RuntimeError):
        with mg.random.fork_rng():
            mg.rand(5)
            raise RuntimeError("inside")
    assert mg.random.get_rng_state().tolist() == before                  # on an error too
    state = mg.random.get_rng_state()
    with mg.random.fork_rng(enabled=False):
        mg.rand(2)
    assert mg.random.get_rng_state().tolist() != state.tolist()
    mg.random.set_rng_state(state)
    assert mg.random.get_rng_state().tolist() == state.tolist()


def test_fork_rng_puts_back_the_seed_kept_for_a_device_not_started():
    from minigrad import backend
    mg.cuda.manual_seed(7)                   # without a GPU: kept for one started later
    try:
        with mg.random.fork_rng():
            mg.manual_seed(1)                # (clears the kept seed)
        assert backend.device_seed("cuda") == 7
    finally:
        mg.manual_seed(0)
