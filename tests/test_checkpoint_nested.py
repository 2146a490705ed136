"""Nested checkpoints (torch.save's objects: nanoGPT's {"model", "optimizer", "iter_num",
...}) through mg.save/mg.load in .safetensors: round trips with types kept, training that
resumes exactly, every optimiser's state dict, entry names, refusals naming the path, and
flat state dicts' files unchanged."""
import math
import os
from collections import namedtuple

import numpy as np
import pytest
import safetensors.numpy

import minigrad as mg
from minigrad import nn, checkpoint
from minigrad.checkpoint_tree import TREE_KEY


def same(a, b, where="obj"):
    """a and b equal in structure, types, key order, dtypes and values (nan equal to nan)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, (mg.Tensor, np.ndarray, np.generic)):
        x, y = (v.numpy() if isinstance(v, mg.Tensor) else np.asarray(v) for v in (a, b))
        assert x.dtype == y.dtype and x.shape == y.shape, where
        np.testing.assert_array_equal(x, y, err_msg=where)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b and repr(a) == repr(b), f"{where}: {a!r} != {b!r}"   # -0.0 is not 0.0


class TinyGPT(nn.Module):
    """An embedding and a head sharing its weight (nanoGPT's tied wte/lm_head)."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(8, 4)
        self.ln = nn.LayerNorm(4)
        self.lm_head = nn.Linear(4, 8, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        return self.lm_head(self.ln(self.wte(idx)))


def _train(model, opt, steps):
    idx, targets = mg.tensor([[1, 2, 3], [4, 5, 6]]), mg.tensor([[2, 3, 4], [5, 6, 7]])
    losses = []
    for _ in range(steps):
        logits = model(idx)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 8), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _model_and_optimizer(seed):
    mg.manual_seed(seed)
    model = TinyGPT()
    return model, mg.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95),
                                 weight_decay=0.1)


def test_nanogpt_checkpoint_round_trips_and_training_resumes_exactly(tmp_path):
    model, opt = _model_and_optimizer(0)
    _train(model, opt, 3)
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(),
            "model_args": {"n_layer": 1, "n_embd": 4, "bias": False, "vocab_size": 8,
                           "dropout": 0.0},
            "iter_num": 3, "best_val_loss": mg.tensor(1.47),
            "config": {"learning_rate": 6e-4, "decay_lr": True, "init_from": "scratch",
                       "wandb_run_name": None, "betas": (0.9, 0.95)}}
    path = tmp_path / "ckpt.safetensors"
    mg.save(ckpt, path)
    loaded = mg.load(path, map_location="cpu", weights_only=True)
    same(ckpt, loaded)
    assert list(loaded["optimizer"]["state"]) == [0, 1, 2]             # int keys
    assert loaded["best_val_loss"].shape == () and loaded["best_val_loss"].device == "cpu"
    # the tied weight is one entry, and comes back as one memory
    names = safetensors.numpy.load_file(path)
    assert "model.wte.weight" in names and "model.lm_head.weight" not in names
    assert loaded["model"]["lm_head.weight"]._data is loaded["model"]["wte.weight"]._data
    expected = _train(model, opt, 3)
    model2, opt2 = _model_and_optimizer(1)                    # other weights before loading
    model2.load_state_dict(loaded["model"])
    opt2.load_state_dict(loaded["optimizer"])
    assert _train(model2, opt2, 3) == expected


OPTIMISERS = {
    "SGD": lambda p: mg.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "Adam": lambda p: mg.optim.Adam(p, amsgrad=True), "AdamW": mg.optim.AdamW,
    "RMSprop": lambda p: mg.optim.RMSprop(p, momentum=0.5, centered=True),
    "Adagrad": mg.optim.Adagrad, "Adadelta": mg.optim.Adadelta, "Adamax": mg.optim.Adamax,
    "NAdam": mg.optim.NAdam, "RAdam": mg.optim.RAdam, "Rprop": mg.optim.Rprop,
    "ASGD": lambda p: mg.optim.ASGD(p, t0=1), "Adafactor": mg.optim.Adafactor,
    "LBFGS": lambda p: mg.optim.LBFGS(p, history_size=3, max_iter=2),
    "Muon": lambda p: mg.optim.Muon(p[:1])}


@pytest.mark.parametrize("name", sorted(OPTIMISERS))
def test_every_optimisers_state_dict_round_trips(tmp_path, name):
    def setup():
        mg.manual_seed(0)
        m = nn.Linear(3, 2)
        opt = OPTIMISERS[name]([m.weight, m.bias])
        x = mg.randn(4, 3)

        def closure():
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            return loss
        return m, opt, closure
    m, opt, closure = setup()
    for _ in range(3):
        opt.step(closure)
    mg.save({"optimizer": opt.state_dict()}, tmp_path / "opt.safetensors")
    loaded = mg.load(tmp_path / "opt.safetensors")["optimizer"]
    same(opt.state_dict(), loaded)
    m2, opt2, closure2 = setup()
    m2.load_state_dict(m.state_dict())
    opt2.load_state_dict(loaded)
    for _ in range(2):
        opt.step(closure)
        opt2.step(closure2)
    for a, b in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_leaves_keys_and_empty_containers_keep_their_types(tmp_path):
    shared = mg.arange(3.0)
    array = np.arange(4, dtype=np.int16).reshape(2, 2)
    obj = {0: None, 1: (1, 2.5, "é"), "ints": [True, False, 0, -7, 2 ** 70],
           "floats": [float("inf"), float("-inf"), float("nan"), -0.0, 1e-310],
           "empty": [[], {}, (), ""], "ü🙂 κλειδί": {"a.b": shared, "a": {"b": shared}},
           "collide": {0: mg.ones(1), "0": mg.zeros(1)}, "array": array, "again": array,
           "np": [np.float32(2.5), np.bool_(True), np.int64(3)], "scalar": mg.tensor(7),
           "param": nn.Linear(1, 1).weight}
    mg.save(obj, tmp_path / "x.safetensors")
    loaded = mg.load(tmp_path / "x.safetensors")
    same(obj, loaded)
    tree = loaded["ü🙂 κλειδί"]
    assert tree["a.b"] is tree["a"]["b"] and loaded["array"] is loaded["again"]
    assert loaded["param"].requires_grad and not loaded["scalar"].requires_grad
    loaded["array"][0, 0] = 9                            # our own memory, writable
    # the entries are named by their paths; a second path to a name gets "~1"
    names = safetensors.numpy.load_file(tmp_path / "x.safetensors")
    assert sorted(names) == ["array", "collide.0", "collide.0~1", "np.0", "np.1", "np.2",
                             "param", "scalar", "ü🙂 κλειδί.a.b"]
    assert names["collide.0~1"].tolist() == [0.0] and names["np.0"].dtype == np.float32
    # a root that is no dict
    for root in (mg.ones(2), [1, (2, None)], 3.5, None):
        mg.save(root, tmp_path / "r.safetensors")
        same(root, mg.load(tmp_path / "r.safetensors"))


def test_what_cannot_be_stored_is_refused_naming_where_it_is(tmp_path):
    path = tmp_path / "ck.safetensors"
    mg.save({"w": mg.ones(2)}, path)
    before = path.read_bytes()
    Point = namedtuple("Point", "x y")
    cases = [({"config": {"fn": len}}, r"obj\['config'\]\['fn'\] is of type builtins"
                                       r".builtin_function_or_method"),
             ({"opt": [1, {2, 3}]}, r"obj\['opt'\]\[1\] is of type builtins.set"),
             ({"b": b"bytes"}, r"obj\['b'\] is of type builtins.bytes"),
             ({"p": Point(1, 2)}, r"obj\['p'\] is of type .*Point"),
             ({"m": nn.Linear(1, 1)}, r"obj\['m'\] is of type minigrad.nn"),
             ({"k": {1.5: 2}}, r"obj\['k'\] has the key 1.5 of type float.*str or int"),
             ({"c": [mg.ones(1), np.ones(2, np.complex128)]},
              r"obj\['c'\]\[1\] has dtype complex128")]
    loop = [1]
    loop.append(loop)
    cases.append(({"x": loop}, r"obj\['x'\]\[1\] contains itself"))
    for obj, message in cases:
        with pytest.raises(TypeError, match=message):
            mg.save(obj, path)
    with pytest.raises(TypeError, match="it stores dicts .*lists, tuples"):
        mg.save({"s": {1}}, path)
    with pytest.raises(ValueError, match=f"{TREE_KEY}.* is reserved"):
        mg.save({"n": 1}, path, metadata={TREE_KEY: "x"})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ck.safetensors"]


def test_a_crash_mid_save_of_a_nested_object_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ck.safetensors"
    mg.save({"model": {"w": mg.ones(2)}, "iter_num": 1}, path)
    before = path.read_bytes()

    def crashing_writer(arrays, tmp, metadata):
        with open(tmp, "wb") as f:
            f.write(b"half a file")
        raise KeyboardInterrupt("simulated crash")
    monkeypatch.setattr(checkpoint, "_write_safetensors", crashing_writer)
    with pytest.raises(KeyboardInterrupt):
        mg.save({"model": {"w": mg.zeros(2)}, "iter_num": 2}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ck.safetensors"]
    assert mg.load(path)["iter_num"] == 1


def test_a_flat_state_dict_makes_the_same_file_as_before(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    state = {**model.state_dict(), "counts": mg.tensor([1, 2]), "raw": np.ones(2, np.int8)}
    # (one metadata key: safetensors writes several in an order of its own each time)
    mg.save(state, tmp_path / "flat.safetensors", metadata={"lr": 0.5})
    expected = safetensors.numpy.save(
        {k: v.numpy() if isinstance(v, mg.Tensor) else v for k, v in state.items()},
        metadata={"lr": "0.5"})
    assert (tmp_path / "flat.safetensors").read_bytes() == expected
    tensors, got = mg.load(tmp_path / "flat.safetensors", with_metadata=True)
    assert got == {"lr": "0.5"} and list(tensors) == sorted(state)
    assert all(isinstance(t, mg.Tensor) for t in tensors.values())     # arrays too, as ever
    mg.save(model, tmp_path / "module.safetensors")                    # a Module: the same
    assert (tmp_path / "module.safetensors").read_bytes() == safetensors.numpy.save(
        {k: v.numpy() for k, v in model.state_dict().items()})


def test_metadata_beside_a_nested_object_and_safetensors_reads_its_tensors(tmp_path):
    path = tmp_path / "ck.safetensors"
    obj = {"model": {"w": mg.arange(4.0)}, "optimizer": {"state": {0: {"m": mg.ones(2)}}}}
    mg.save(obj, path, metadata={"note": "run 3", "step": 10})
    loaded, meta = mg.load(path, with_metadata=True)
    same(obj, loaded)
    assert meta == {"note": "run 3", "step": "10"} == mg.load_metadata(path)
    plain = safetensors.numpy.load_file(path)           # safetensors' own reader
    assert sorted(plain) == ["model.w", "optimizer.state.0.m"]
    np.testing.assert_array_equal(plain["model.w"], [0, 1, 2, 3])


def test_load_takes_torchs_keywords_and_refuses_a_damaged_structure(tmp_path):
    path = tmp_path / "ck.safetensors"
    mg.save({"w": [mg.ones(2)]}, path)
    for weights_only in (True, False, None):
        for mmap in (True, False, None):
            assert mg.load(path, weights_only=weights_only, mmap=mmap)["w"][0].tolist() == \
                [1.0, 1.0]
    with pytest.raises(TypeError, match="weights_only must be True, False or None"):
        mg.load(path, weights_only="yes")
    for tree in ("{not json", '{"format": 1, "root": {"tensor": "gone", "object": 0}}',
                 '{"format": 99, "root": null}', '{"format": 1, "root": {"what": 1}}'):
        safetensors.numpy.save_file({"w": np.ones(1)}, str(path), metadata={TREE_KEY: tree})
        with pytest.raises(checkpoint.CheckpointError, match="structure .* is damaged"):
            mg.load(path)


def test_an_edited_structure_of_the_wrong_shape_or_depth_is_refused(tmp_path):
    # a float key came back as one, a 2-element "scalar" as an array, and nesting past
    # Python's recursion limit raised a bare RecursionError
    path = tmp_path / "ck.safetensors"
    deep = '{"list": [' * 3000 + ']}' * 3000
    for root, why in (('{"dict": [[1.5, 1]]}', "dict key 1.5 of type float"),
                      ('{"numpy_scalar": "w", "object": 0}', "has shape \\(2,\\), not"),
                      (deep, "RecursionError")):
        safetensors.numpy.save_file({"w": np.ones(2)}, str(path),
                                    metadata={TREE_KEY: '{"format": 1, "root": %s}' % root})
        with pytest.raises(checkpoint.CheckpointError, match=f"is damaged: .*{why}"):
            mg.load(path)


def test_the_structure_key_is_reserved_for_a_flat_state_dict_too(tmp_path):
    # a flat dict's file took it, and load then read the user's value as a structure
    path = tmp_path / "flat.safetensors"
    with pytest.raises(ValueError, match=f"metadata key {TREE_KEY!r} is reserved"):
        mg.save({"w": mg.ones(2)}, path, metadata={TREE_KEY: '{"format": 1, "root": 5}'})
    assert not path.exists()


def test_a_module_inside_the_object_is_refused_naming_state_dict(tmp_path):
    with pytest.raises(TypeError, match=r"save obj\['model'\].state_dict\(\) instead"):
        mg.save({"model": nn.Linear(2, 2)}, tmp_path / "m.safetensors")


def test_a_pytorch_optimisers_state_dict_loads_through_a_file(tmp_path, torch):
    """torch's AdamW keeps its step count as a 0-d tensor: it comes back as a Tensor and
    loads as the count."""
    w = torch.nn.Parameter(torch.ones(2, 3))
    opt = torch.optim.AdamW([w], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    mg.save({"optimizer": opt.state_dict()}, tmp_path / "t.safetensors")
    loaded = mg.load(tmp_path / "t.safetensors")["optimizer"]
    assert isinstance(loaded["state"][0]["step"], mg.Tensor)
    p = mg.tensor(w.detach().numpy()).requires_grad_()
    ours = mg.optim.AdamW([p], lr=0.1)
    ours.load_state_dict(loaded)
    assert ours.state[p]["step"] == 2
    np.testing.assert_allclose(ours.state[p]["exp_avg"], opt.state[w]["exp_avg"].numpy())


def test_a_parameter_or_a_grad_tensor_in_a_flat_dict_comes_back_as_saved(tmp_path):
    path = tmp_path / "ck.safetensors"
    frozen = nn.Parameter(mg.ones(2), requires_grad=False)
    mg.save({"w": nn.Parameter(mg.ones(2)), "f": frozen, "t": mg.zeros(3).requires_grad_(),
             "plain": mg.ones(1)}, path)
    got = mg.load(path)
    assert type(got["w"]) is nn.Parameter and got["w"].requires_grad
    assert type(got["f"]) is nn.Parameter and not got["f"].requires_grad
    assert type(got["t"]) is mg.Tensor and got["t"].requires_grad
    assert type(got["plain"]) is mg.Tensor and not got["plain"].requires_grad
    # the same names for safetensors' own reader
    assert sorted(safetensors.numpy.load_file(path)) == ["f", "plain", "t", "w"]
