"""nn.utils.prune (prune.py): masks against PyTorch's where it is installed (the `torch`
fixture) for the magnitude methods, counts and structure for the random ones, composition
of repeated pruning, masked gradients, state dicts both ways, remove, and the errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.utils.prune as prune


def _w(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def _pair(torch, n_in=6, n_out=4, seed=0):
    """A minigrad and a torch Linear with the same weights."""
    m, t = mg.nn.Linear(n_in, n_out), torch.nn.Linear(n_in, n_out)
    w, b = _w(n_out, n_in, seed=seed), _w(n_out, seed=seed + 1)
    m.weight.data, m.bias.data = w.copy(), b.copy()
    t.weight.data, t.bias.data = torch.tensor(w), torch.tensor(b)
    return m, t


@pytest.fixture
def tprune(torch):
    """torch.nn.utils.prune (a module torch does not import by itself)."""
    import torch.nn.utils.prune as p
    return p


def _same_mask(m, t, name="weight"):
    np.testing.assert_array_equal(getattr(m, name + "_mask").numpy(),
                                  getattr(t, name + "_mask").numpy())


def test_import_paths():
    assert mg.nn.utils.prune is prune
    from minigrad.nn.utils.prune import L1Unstructured
    assert L1Unstructured is prune.L1Unstructured


@pytest.mark.parametrize("amount", [0.3, 0.5, 5, 0, 0.0, 24, 1.0])
def test_l1_unstructured_mask_matches_torch(torch, tprune, amount):
    m, t = _pair(torch)
    prune.l1_unstructured(m, "weight", amount)
    tprune.l1_unstructured(t, "weight", amount)
    _same_mask(m, t)
    np.testing.assert_array_equal(m.weight.numpy(), t.weight.detach().numpy())


def test_l1_unstructured_by_importance_scores_matches_torch(torch, tprune):
    m, t = _pair(torch)
    s = _w(4, 6, seed=9)
    prune.l1_unstructured(m, "bias", 2, importance_scores=mg.tensor(s[:, 0]))
    tprune.l1_unstructured(t, "bias", 2, importance_scores=torch.tensor(s[:, 0]))
    _same_mask(m, t, "bias")


def test_ln_structured_on_conv2d_dim0_matches_torch(torch, tprune):
    m, t = mg.nn.Conv2d(3, 6, 3), torch.nn.Conv2d(3, 6, 3)
    w, b = _w(6, 3, 3, 3), _w(6, seed=1)
    m.weight.data, t.weight.data = w.copy(), torch.tensor(w)
    m.bias.data, t.bias.data = b.copy(), torch.tensor(b)
    prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0)
    tprune.ln_structured(t, "weight", amount=0.5, n=2, dim=0)
    _same_mask(m, t)
    kept = m.weight_mask.numpy().reshape(6, -1)
    assert (kept.min(1) == kept.max(1)).all() and kept[:, 0].sum() == 3   # whole filters
    x = _w(2, 3, 5, 5, seed=3)
    np.testing.assert_allclose(m(mg.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n,dim", [(1, -1), (float("inf"), 1), (float("-inf"), 0),
                                   ("fro", 0), (3, 1)])
def test_ln_structured_norms_match_torch(torch, tprune, n, dim):
    m, t = _pair(torch)
    prune.ln_structured(m, "weight", 2, n, dim)
    tprune.ln_structured(t, "weight", 2, n, dim)
    _same_mask(m, t)


def test_repeated_pruning_matches_torch(torch, tprune):
    """Each method acts on what the ones before left: unstructured on the unpruned entries,
    structured on the channels not yet all zero."""
    m, t = _pair(torch, 8, 6)
    for f, args in ((prune.l1_unstructured, (0.25,)), (prune.ln_structured, (2, 1, 0)),
                    (prune.l1_unstructured, (5,)), (prune.ln_structured, (0.5, 2, 1))):
        f(m, "weight", *args)
        getattr(tprune, f.__name__)(t, "weight", *args)
        _same_mask(m, t)
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(h).__name__ for h in hooks[0]] == ["L1Unstructured", "LnStructured",
                                                    "L1Unstructured", "LnStructured"]


def test_repeated_amounts_count_the_remaining_entries():
    m = mg.nn.Linear(5, 4)                                   # 20 entries
    prune.l1_unstructured(m, "weight", 0.5)
    assert m.weight_mask.sum().item() == 10
    prune.l1_unstructured(m, "weight", 0.5)                  # half of the 10 left
    assert m.weight_mask.sum().item() == 5
    prune.random_unstructured(m, "weight", 2)
    assert m.weight_mask.sum().item() == 3
    w = m.weight_orig.numpy()
    # the l1 steps pruned the 15 smallest |w| overall (the random one 2 of the rest)
    pruned = set(np.flatnonzero(m.weight_mask.numpy() == 0))
    assert set(np.argsort(np.abs(w).ravel())[:15]) <= pruned


def test_global_unstructured_matches_torch(torch, tprune):
    (m1, t1), (m2, t2) = _pair(torch, 6, 4, seed=0), _pair(torch, 4, 5, seed=5)
    prune.l1_unstructured(m2, "weight", 3)                      # pruned before: composed
    tprune.l1_unstructured(t2, "weight", 3)
    s = _w(4, seed=7)
    prune.global_unstructured([(m1, "weight"), (m2, "weight"), (m1, "bias")],
                              prune.L1Unstructured, amount=0.4,
                              importance_scores={(m1, "bias"): mg.tensor(s)})
    tprune.global_unstructured(
        [(t1, "weight"), (t2, "weight"), (t1, "bias")], tprune.L1Unstructured,
        amount=0.4, importance_scores={(t1, "bias"): torch.tensor(s)})
    for m, t, name in ((m1, t1, "weight"), (m2, t2, "weight"), (m1, t1, "bias")):
        _same_mask(m, t, name)
    with pytest.raises(TypeError, match="unstructured"):
        prune.global_unstructured([(m1, "weight")], prune.RandomStructured, amount=1)


def test_global_importance_scores_of_a_wrong_shape_are_named():
    """A wrong-sized score would shift every later parameter's slice: refused by name."""
    m = mg.nn.Linear(6, 4)
    with pytest.raises(ValueError, match=r"Linear.weight should have its shape \(4, 6\)"):
        prune.global_unstructured([(m, "weight"), (m, "bias")], prune.L1Unstructured,
                                  amount=2, importance_scores={(m, "weight"): mg.ones(3)})
    assert not prune.is_pruned(m)


@pytest.mark.parametrize("cls,name", [("LSTM", "bias_ih_l0"), ("GRU", "weight_hh_l0"),
                                      ("LSTM", "weight_hr_l0")])
def test_pruned_rnn_weights_reach_the_forward(cls, name):
    """The RNNs read their weights by name: a pruned one (a plain attribute) is used, not
    taken as absent (a bias silently dropped, a weight a crash); as an unpruned copy holding
    the masked values, its gradient masked."""
    kw = {"proj_size": 2} if name == "weight_hr_l0" else {}
    mg.manual_seed(0)
    m, ref = getattr(mg.nn, cls)(4, 3, **kw), getattr(mg.nn, cls)(4, 3, **kw)
    ref.load_state_dict(m.state_dict())
    shape = getattr(m, name).shape
    mask = (np.arange(np.prod(shape)).reshape(shape) % 2).astype("float32")
    prune.custom_from_mask(m, name, mg.tensor(mask))
    getattr(ref, name).data = getattr(ref, name).numpy() * mask
    x = mg.tensor(_w(5, 2, 4, seed=3))
    out, expected = m(x)[0], ref(x)[0]
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(getattr(m, name + "_orig").grad.numpy(),
                               getattr(ref, name).grad.numpy() * mask, rtol=1e-6, atol=1e-7)

def test_gradients_are_masked_and_match_torch_after_a_step(torch, tprune):
    m, t = _pair(torch)
    orig = m.weight
    prune.l1_unstructured(m, "weight", 0.5)
    tprune.l1_unstructured(t, "weight", 0.5)
    assert m.weight_orig is orig            # the same Parameter: an optimiser keeps it
    opt = mg.optim.SGD(m.parameters(), lr=0.1)
    x = _w(3, 6, seed=4)
    for _ in range(2):
        opt.zero_grad()
        (m(mg.tensor(x)) ** 2).sum().backward()
        opt.step()
        t.zero_grad()
        (t(torch.tensor(x)) ** 2).sum().backward()
        with torch.no_grad():          # SGD by hand: torch.optim's first import is slow
            for p in t.parameters():
                p -= 0.1 * p.grad
    g, mask = m.weight_orig.grad.numpy(), m.weight_mask.numpy()
    assert (g[mask == 0] == 0).all() and (g[mask == 1] != 0).all()
    np.testing.assert_allclose(g, t.weight_orig.grad.numpy(), rtol=1e-5, atol=1e-6)
    m(mg.tensor(x))                         # the pre-hook recomputes weight from the new orig
    t(torch.tensor(x))
    np.testing.assert_allclose(m.weight.numpy(), t.weight.detach().numpy(), rtol=1e-5)
    assert (m.weight.numpy()[mask == 0] == 0).all()


def test_state_dict_round_trips_with_torch(torch, tprune):
    m, t = _pair(torch)
    prune.l1_unstructured(m, "weight", 0.5)
    tprune.l1_unstructured(t, "weight", 0.5)
    assert list(m.state_dict()) == list(t.state_dict()) == ["bias", "weight_orig",
                                                            "weight_mask"]
    m2, t2 = _pair(torch, seed=8)
    prune.identity(m2, "weight")
    tprune.identity(t2, "weight")
    m2.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    t2.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(m2.state_dict()[k].numpy(), v.numpy())
        np.testing.assert_array_equal(t2.state_dict()[k].numpy(), v.numpy())
    x = _w(2, 6, seed=2)
    np.testing.assert_allclose(m2(mg.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5)


def test_remove_makes_it_permanent():
    m = mg.nn.Linear(4, 3)
    orig = m.weight
    prune.l1_unstructured(m, "weight", 6)
    assert prune.is_pruned(mg.nn.Sequential(mg.nn.ReLU(), m))
    pruned = m.weight.numpy()
    assert prune.remove(m, "weight") is m
    assert m.weight is orig and isinstance(m.weight, mg.nn.Parameter)
    np.testing.assert_array_equal(m.weight.numpy(), pruned)
    assert (m.weight.numpy() == 0).sum() == 6
    assert list(m.state_dict()) == ["bias", "weight"] and not prune.is_pruned(m)
    assert not m.__dict__.get("_forward_pre_hooks")
    with pytest.raises(ValueError, match="has to be pruned before"):
        prune.remove(m, "weight")


def test_random_methods_prune_the_right_count_and_structure():
    mg.manual_seed(0)
    m = mg.nn.Linear(5, 6)                                    # weight (6, 5)
    prune.random_structured(m, "weight", 2, dim=0)
    rows = m.weight_mask.numpy()
    assert sorted(rows.min(1) == rows.max(1)) == [True] * 6 and rows[:, 0].sum() == 4
    prune.random_structured(m, "weight", 0.5, dim=0)          # half of the 4 rows left
    assert m.weight_mask.numpy()[:, 0].sum() == 2
    prune.random_unstructured(m, "weight", 0.3)               # 3 of the 10 entries left
    assert m.weight_mask.sum().item() == 7
    assert set(np.flatnonzero(rows.ravel() == 0)) <= set(np.flatnonzero(m.weight_mask.numpy()
                                                                        .ravel() == 0))
    masks = []
    for _ in range(2):                                        # mg.manual_seed decides
        mg.manual_seed(3)
        masks.append(prune.random_unstructured(mg.nn.Linear(5, 6), "weight", 9).weight_mask)
    np.testing.assert_array_equal(masks[0].numpy(), masks[1].numpy())


def test_equal_magnitudes_prune_the_earlier_entries_first():
    """PyTorch's choice among ties is its topk's (not reproducible); minigrad's is
    deterministic: row-major order, for entries and channels alike."""
    m = mg.nn.Linear(3, 2)
    m.weight.data = np.array([[1, -2, 1], [2, 1, -1]], dtype="float32")
    prune.l1_unstructured(m, "weight", 2)
    np.testing.assert_array_equal(m.weight_mask.numpy(), [[0, 1, 0], [1, 1, 1]])
    m = mg.nn.Linear(3, 2)
    m.weight.data = np.array([[1, 2, 1], [1, 2, -1]], dtype="float32")
    prune.ln_structured(m, "weight", 1, 1, dim=1)             # columns' L1: 2, 4, 2
    np.testing.assert_array_equal(m.weight_mask.numpy(), [[0, 1, 1], [0, 1, 1]])


def test_custom_from_mask_identity_and_a_custom_method():
    m = mg.nn.Linear(3, 2)
    prune.identity(m, "weight")
    np.testing.assert_array_equal(m.weight.numpy(), m.weight_orig.numpy())
    prune.custom_from_mask(m, "weight", mg.tensor([[1.0, 0, 1], [0, 1, 1]]))
    np.testing.assert_array_equal(m.weight_mask.numpy(), [[1, 0, 1], [0, 1, 1]])

    class EveryOther(prune.BasePruningMethod):      # the PyTorch tutorial's own method
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask
    b = m.bias.numpy().copy()
    EveryOther.apply(m, "bias")
    np.testing.assert_array_equal(m.bias.numpy(), [0, b[1]])
    t = mg.tensor([3.0, -1.0, 2.0, 0.5])
    np.testing.assert_array_equal(prune.L1Unstructured(2).prune(t).numpy(), [3, 0, 2, 0])


@pytest.mark.parametrize("amount,err,match", [
    (7, ValueError, "smaller than the number of parameters to prune=6"),
    (-1, ValueError, "non-negative integer"), (1.5, ValueError, r"range \[0, 1\]"),
    (-0.1, ValueError, r"range \[0, 1\]"), ("0.5", TypeError, "Must be int or float"),
    (None, TypeError, "Must be int or float"), (True, TypeError, "Must be int or float")])
def test_amount_errors(amount, err, match):
    m = mg.nn.Linear(3, 2)
    with pytest.raises(err, match=match):
        prune.l1_unstructured(m, "weight", amount)
    assert "weight" in m._parameters and not prune.is_pruned(m)     # left as it was


def test_errors_name_the_problem():
    m = mg.nn.Linear(3, 2)
    m.register_buffer("buf", mg.ones(3))
    with pytest.raises(AttributeError, match="no attribute 'nope'.*parameters: weight, bias"):
        prune.l1_unstructured(m, "nope", 1)
    with pytest.raises(TypeError, match="buf is not a Parameter"):
        prune.l1_unstructured(m, "buf", 1)
    with pytest.raises(ValueError, match="multidimensional"):
        prune.ln_structured(m, "bias", 1, 2, 0)
    with pytest.raises(IndexError, match="Invalid index -3"):
        prune.ln_structured(m, "weight", 1, 2, -3)
    with pytest.raises(ValueError, match="same shape"):
        prune.l1_unstructured(m, "weight", 1, importance_scores=mg.ones(3))
    with pytest.raises(ValueError, match="shape"):
        prune.custom_from_mask(m, "weight", mg.ones(3))
    assert list(m.state_dict()) == ["weight", "bias", "buf"] and not prune.is_pruned(m)
    prune.l1_unstructured(m, "weight", 1)
    with pytest.raises(ValueError, match="smaller than"):       # a failed second step keeps
        prune.l1_unstructured(m, "weight", 6)                    # the first one's hook
    assert len(m._forward_pre_hooks) == 1 and m.weight_mask.sum().item() == 5


def test_masks_stay_on_the_device(spy):
    """Every method on the spy device (which refuses NumPy on its data): masks are computed
    with the tensor's own array library, and the magnitude ones agree with the cpu's."""
    masks = {}
    for dev in ("cpu", spy):
        mg.manual_seed(0)
        c = mg.nn.Conv1d(3, 4, 3).to(dev)
        prune.l1_unstructured(c, "weight", 0.2)
        prune.ln_structured(c, "weight", 1, "nuc", 0)
        prune.global_unstructured([(c, "weight"), (c, "bias")], prune.L1Unstructured, amount=2)
        masks[dev] = [c.weight_mask.cpu().numpy(), c.bias_mask.cpu().numpy()]
        left = c.bias_mask.sum().item()
        prune.random_structured(c, "weight", 1, -1)            # (each device's own draws)
        prune.random_unstructured(c, "bias", 1)
        c(mg.ones(2, 3, 5, device=dev)).sum().backward()
        assert c.weight_mask.device == c.weight_orig.grad.device == dev
        assert c.bias_mask.sum().item() == left - 1
        prune.remove(c, "weight")
    for a, b in zip(*masks.values()):
        np.testing.assert_array_equal(a, b)


def test_forward_pre_hooks_hold_the_pruning_methods_themselves():
    # regression: the dict held (hook, with_kwargs, always_call) tuples, so the tutorial's
    # `for hook in m._forward_pre_hooks.values(): if hook._tensor_name == "weight"` failed
    m = mg.nn.Linear(3, 2)
    prune.l1_unstructured(m, name="weight", amount=2)
    calls = []
    handle = m.register_forward_pre_hook(lambda mod, args, kw: calls.append(1),
                                         with_kwargs=True)
    hooks = list(m._forward_pre_hooks.values())
    assert hooks[0]._tensor_name == "weight" and callable(hooks[1])
    m(mg.ones(1, 3))
    assert calls == [1] and len(m._forward_pre_hooks_with_kwargs) == 1
    handle.remove()
    assert len(m._forward_pre_hooks) == 1 and not m._forward_pre_hooks_with_kwargs
