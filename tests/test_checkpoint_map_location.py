"""mg.load's map_location in torch.load's forms: a device, a dict of saved locations to
devices, a function (tensor, location) -> tensor or None. A .safetensors file records no
device, so every tensor's saved location is 'cpu'. The spy device (tests/spy_backend.py)
stands in for a GPU."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def nested_file(tmp_path):
    """A nested checkpoint with a tied pair (one stored tensor), a Parameter and an array."""
    w = mg.arange(6.0).reshape(2, 3)
    obj = {"model": {"wte": w, "head": w, "bias": nn.Parameter(mg.ones(3))},
           "opt": {"m": mg.zeros(2)}, "table": np.arange(3)}
    path = tmp_path / "ck.safetensors"
    mg.save(obj, path)
    return path


def flat_file(tmp_path):
    path = tmp_path / "flat.safetensors"
    mg.save({"w": mg.ones(2, 2), "b": mg.zeros(2)}, path)
    return path


def tensors_of(obj):
    return [obj["model"]["wte"], obj["model"]["head"], obj["model"]["bias"], obj["opt"]["m"]]


def test_a_device_in_any_spelling(tmp_path):
    path = nested_file(tmp_path)
    for where in ("cpu", "cpu:0", mg.device("cpu")):
        assert all(t.device == "cpu" for t in tensors_of(mg.load(path, map_location=where)))
    with pytest.raises(ValueError, match="unknown device 'tpu'; valid devices"):
        mg.load(tmp_path / "absent.safetensors", map_location="tpu")  # before reading
    with pytest.raises(TypeError, match="map_location must be a device .* got list"):
        mg.load(path, map_location=["cpu"])


def test_a_dict_maps_the_saved_location_cpu(tmp_path, spy):
    path, flat = nested_file(tmp_path), flat_file(tmp_path)
    # a GPU checkpoint's {'cuda:0': 'cpu'}: nothing here was saved from cuda:0; all stay
    for mapping in ({"cuda:0": "cpu"}, {"cuda:0": spy}, {}):
        assert all(t.device == "cpu" for t in tensors_of(mg.load(path, map_location=mapping)))
    moved = mg.load(path, map_location={"cpu": spy})
    assert all(t.device == spy for t in tensors_of(moved))
    assert type(moved["model"]["bias"]).__name__ == "Parameter"
    assert moved["model"]["bias"].requires_grad
    assert isinstance(moved["table"], np.ndarray)      # NumPy arrays stay NumPy's
    moved["model"]["wte"].add_(1)                      # the tied pair: still one memory
    assert moved["model"]["head"].numpy()[0, 0] == 1.0
    assert all(t.device == spy for t in mg.load(flat, map_location={"cpu": spy}).values())


def test_a_bad_dict_is_refused_before_reading(tmp_path):
    absent = tmp_path / "absent.safetensors"
    for mapping, error, match in (({0: "cpu"}, TypeError, "both strings .* got 0: 'cpu'"),
                                  ({"cpu": 1}, TypeError, "both strings .* got 'cpu': 1"),
                                  ({"cpu": "tpu"}, ValueError,
                                   r"map_location\['cpu'\]: unknown device 'tpu'"),
                                  # (checked even where unused, unlike torch.load)
                                  ({"cuda:1": "tpu"}, ValueError, "unknown device 'tpu'")):
        with pytest.raises(error, match=match):
            mg.load(absent, map_location=mapping)


def test_a_function_is_called_once_per_stored_tensor(tmp_path, spy):
    path = nested_file(tmp_path)
    calls = []

    def record(tensor, location):
        calls.append((tensor.shape, tensor.device, location))
        return None                                    # the default: stays on the CPU
    loaded = mg.load(path, map_location=record)
    assert sorted(calls) == [((2,), "cpu", "cpu"), ((2, 3), "cpu", "cpu"),
                             ((3,), "cpu", "cpu")]     # the tied pair: one call
    assert all(t.device == "cpu" for t in tensors_of(loaded))
    moved = mg.load(path, map_location=lambda t, loc: t.to(spy))
    assert all(t.device == spy for t in tensors_of(moved))
    moved["model"]["wte"].add_(1)
    assert moved["model"]["head"].numpy()[0, 0] == 1.0
    # torch's idiom, `lambda storage, loc: storage`, keeps everything where it is
    flat = mg.load(flat_file(tmp_path), map_location=lambda storage, loc: storage)
    assert flat["w"].numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_a_function_returning_what_is_not_the_tensor_moved_is_refused(tmp_path):
    path = flat_file(tmp_path)
    for fn, error, match in ((lambda t, loc: t.numpy(), TypeError,
                              "returned ndarray for 'b'; it must return a minigrad Tensor"),
                             (lambda t, loc: 5, TypeError, "returned int"),
                             (lambda t, loc: t.sum(), ValueError,
                              r"shape \(\) .* stored as \(2,\)"),
                             (lambda t, loc: t.double(), ValueError, "dtype float64")):
        with pytest.raises(error, match=match):
            mg.load(path, map_location=fn)

    def fails(t, loc):
        raise KeyError("mine")
    with pytest.raises(KeyError, match="mine"):         # its own errors pass through
        mg.load(path, map_location=fails)


def test_device_and_map_location_are_one_argument(tmp_path, spy):
    path = flat_file(tmp_path)
    # torch.load's second positional is map_location: a dict or function goes there too
    assert mg.load(path, {"cuda:0": "cpu"})["w"].device == "cpu"
    assert mg.load(path, lambda t, loc: t.to(spy))["w"].device == spy
    assert mg.load(path, device="cpu", map_location=mg.device("cpu"))["w"].device == "cpu"
    for device, where in (("cpu", {"cpu": "cpu"}), (spy, "cpu"), ("cpu", lambda t, l: t)):
        with pytest.raises(ValueError, match="disagree; they are one argument"):
            mg.load(path, device=device, map_location=where)


@pytest.mark.parametrize("weights_only", [True, False, None])
@pytest.mark.parametrize("mmap", [True, False, None])
def test_weights_only_and_mmap_go_with_every_form(tmp_path, weights_only, mmap):
    path = nested_file(tmp_path)
    for where in ("cpu", {"cuda:0": "cpu"}, lambda t, loc: None):
        loaded = mg.load(path, map_location=where, weights_only=weights_only, mmap=mmap)
        assert loaded["model"]["wte"].numpy().tolist() == [[0, 1, 2], [3, 4, 5]]


def test_locations_and_calls_as_torch_loads_a_cpu_checkpoint(tmp_path, torch):
    """torch.load calls the function once per storage with location 'cpu' for a CPU-saved
    file; mg.load once per stored tensor, with 'cpu' too. torch.device is a device."""
    w, v = torch.ones(2, 3), torch.zeros(4)
    torch.save({"a": w, "b": w, "c": v}, tmp_path / "t.pt")
    mg.save({"a": mg.ones(2, 3), "c": mg.zeros(4)}, tmp_path / "m.safetensors")
    theirs, mine = [], []
    torch.load(tmp_path / "t.pt", map_location=lambda s, loc: theirs.append(loc))
    mg.load(tmp_path / "m.safetensors", map_location=lambda t, loc: mine.append(loc))
    assert theirs == mine == ["cpu", "cpu"]
    loaded = mg.load(tmp_path / "m.safetensors", map_location=torch.device("cpu"))
    assert loaded["a"].device == "cpu"
