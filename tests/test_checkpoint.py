"""Checkpoints: .safetensors round trips, interop with safetensors' own readers, atomic
saves (a crash mid-save keeps the old file), and clear errors for damaged files."""
import os

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, checkpoint


def _state():
    rng = np.random.default_rng(0)
    return {"layer.weight": mg.tensor(rng.standard_normal((3, 4)).astype(np.float32)),
            "layer.bias": mg.tensor(rng.standard_normal(3).astype(np.float32)),
            "table": mg.tensor(rng.standard_normal((2, 2))),              # float64 kept
            "counts": mg.tensor([1, 2, 3]),                                # int64 kept
            "mask": mg.tensor(np.array([True, False]))}


def test_round_trip_names_values_dtypes_and_metadata(tmp_path):
    path = tmp_path / "ck.safetensors"
    state = _state()
    mg.save(state, path, metadata={"step": "7", "lr": 0.001, "tags": ["a", "b"]})
    loaded, meta = mg.load(path, with_metadata=True)
    assert list(loaded) == list(state) or set(loaded) == set(state)
    for k, t in state.items():
        assert isinstance(loaded[k], mg.Tensor) and loaded[k].dtype == t.dtype
        np.testing.assert_array_equal(loaded[k].numpy(), t.numpy())
    assert meta["step"] == "7" and meta["lr"] == "0.001" and meta["tags"] == '["a", "b"]'
    assert mg.load_metadata(path) == meta
    assert isinstance(mg.load(str(path)), dict)


def test_loaded_tensors_are_writable_and_independent(tmp_path):
    path = tmp_path / "ck.safetensors"
    mg.save({"w": mg.ones(3)}, path)
    t = mg.load(path)["w"]
    t.data[0] = 5.0                      # our own array, not a read-only view of the file
    assert mg.load(path)["w"].numpy().tolist() == [1, 1, 1]


def test_module_round_trip(tmp_path):
    mg.manual_seed(0)
    a = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.LayerNorm(4))
    b = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.LayerNorm(4))
    mg.save(a, tmp_path / "m.safetensors")             # a Module is accepted too
    b.load_state_dict(mg.load(tmp_path / "m.safetensors"))
    x = mg.randn(2, 3)
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_non_contiguous_tensors_are_saved_correctly(tmp_path):
    x = mg.tensor(np.arange(12.0).reshape(3, 4))
    mg.save({"t": x.T, "s": x[:, ::2]}, tmp_path / "v.safetensors")
    got = mg.load(tmp_path / "v.safetensors")
    np.testing.assert_array_equal(got["t"].numpy(), x.numpy().T)
    np.testing.assert_array_equal(got["s"].numpy(), x.numpy()[:, ::2])


def test_safetensors_numpy_reader_sees_the_same(tmp_path):
    from safetensors.numpy import load_file
    path = tmp_path / "ck.safetensors"
    state = _state()
    mg.save(state, path)
    raw = load_file(str(path))
    assert set(raw) == set(state)
    for k, t in state.items():
        assert raw[k].dtype == t.dtype
        np.testing.assert_array_equal(raw[k], t.numpy())


def test_safetensors_torch_reader_sees_the_same_and_back(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file
    path = tmp_path / "ck.safetensors"
    state = _state()
    mg.save(state, path)
    raw = load_file(str(path))
    assert set(raw) == set(state)
    for k, t in state.items():
        np.testing.assert_array_equal(raw[k].numpy(), t.numpy())
    # and a torch model's weights load into the same minigrad architecture
    tl = torch.nn.Linear(3, 2)
    save_file(tl.state_dict(), str(tmp_path / "torch.safetensors"))
    ml = nn.Linear(3, 2)
    ml.load_state_dict(mg.load(tmp_path / "torch.safetensors"))
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(ml(mg.tensor(x)).numpy(), tl(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_crash_mid_save_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ck.safetensors"
    mg.save({"w": mg.ones(4)}, path, metadata={"step": "1"})
    before = path.read_bytes()

    def crashing_writer(arrays, tmp, metadata):
        with open(tmp, "wb") as f:
            f.write(b"half a file")          # the new file is partly written, then ...
        raise KeyboardInterrupt("simulated crash")
    monkeypatch.setattr(checkpoint, "_write_safetensors", crashing_writer)
    with pytest.raises(KeyboardInterrupt):
        mg.save({"w": mg.zeros(4)}, path, metadata={"step": "2"})
    assert path.read_bytes() == before
    assert mg.load(path)["w"].numpy().tolist() == [1, 1, 1, 1]
    assert os.listdir(tmp_path) == ["ck.safetensors"]   # no temporary file left behind


def test_a_full_disk_is_an_os_error_naming_the_file(tmp_path, monkeypatch):
    import safetensors
    path = tmp_path / "ck.safetensors"
    mg.save({"w": mg.ones(4)}, path)

    def full_disk(arrays, tmp, metadata):      # what safetensors raises for ENOSPC
        raise safetensors.SafetensorError("Error while serializing: I/O error: No space left "
                                          "on device (os error 28)")
    monkeypatch.setattr(checkpoint.safetensors.numpy, "save_file", full_disk)
    with pytest.raises(OSError, match=r"mg.save: writing .*ck\.safetensors.* No space left"):
        mg.save({"w": mg.zeros(4)}, path)
    monkeypatch.undo()
    assert mg.load(path)["w"].numpy().tolist() == [1, 1, 1, 1]
    assert os.listdir(tmp_path) == ["ck.safetensors"]
    with pytest.raises(FileNotFoundError, match="the directory .*nope.* does not exist"):
        mg.save({"w": mg.ones(1)}, tmp_path / "nope" / "ck.safetensors")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        mg.load(tmp_path)
    with pytest.raises(IsADirectoryError, match=r"is a directory; give the path of a file"):
        mg.save({"w": mg.ones(1)}, tmp_path)
    assert os.listdir(tmp_path) == ["ck.safetensors"]           # no temporary file left


def test_save_replaces_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "ck.safetensors"
    mg.save({"w": mg.ones(2)}, path)
    mg.save({"w": mg.zeros(2), "v": mg.ones(1)}, path)
    assert set(mg.load(path)) == {"w", "v"} and os.listdir(tmp_path) == ["ck.safetensors"]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_damaged_file_gives_a_clear_error(tmp_path, damage):
    path = tmp_path / "ck.safetensors"
    mg.save(_state(), path)
    data = path.read_bytes()
    path.write_bytes({"truncate": data[:-10], "garbage": b"not a checkpoint at all",
                      "empty": b""}[damage])
    with pytest.raises(checkpoint.CheckpointError, match=r"ck\.safetensors.*corrupted or trunc"):
        mg.load(path)
    with pytest.raises(ValueError, match="corrupted or truncated"):
        mg.load_metadata(path)


def test_missing_file_and_bad_entries():
    with pytest.raises(FileNotFoundError):
        mg.load("/nonexistent/dir/ck.safetensors")
    with pytest.raises(TypeError, match=r"obj\['step'\] is of type builtins.set, which a "):
        mg.save({"step": {3}}, "/tmp/never-written.safetensors")
    with pytest.raises(TypeError, match="metadata keys"):
        mg.save({}, "/tmp/never-written.safetensors", metadata={1: "x"})
    assert not os.path.exists("/tmp/never-written.safetensors")


def test_strip_prefix():
    d = {"model.w": 1, "model.b": 2, "optimizer.state.0.x": 3}
    assert checkpoint.strip_prefix(d, "model.") == {"w": 1, "b": 2}


def test_a_model_with_a_scalar_parameter_reloads_its_own_checkpoint(tmp_path):
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(mg.tensor(2.5))      # 0-d, as torch allows

    path = tmp_path / "ck.safetensors"
    mg.save(Scaled(), path)
    loaded = mg.load(path)
    assert loaded["scale"].shape == () and loaded["scale"].item() == 2.5
    fresh = Scaled()
    fresh.load_state_dict(loaded)                         # no shape mismatch
    assert fresh.scale.shape == ()


def test_the_reserved_name_metadata_is_refused(tmp_path):
    with pytest.raises(ValueError, match="'__metadata__' is reserved.*rename"):
        mg.save({"__metadata__": mg.ones(1)}, tmp_path / "ck.safetensors")
    assert os.listdir(tmp_path) == []


def test_save_through_a_symlink_replaces_its_target_and_keeps_permissions(tmp_path):
    target, link = tmp_path / "real.safetensors", tmp_path / "latest.safetensors"
    mg.save({"w": mg.ones(2)}, target)
    os.chmod(target, 0o640)
    os.symlink(target.name, link)
    mg.save({"w": mg.zeros(2)}, link)
    assert os.path.islink(link) and os.readlink(link) == target.name
    assert mg.load(target)["w"].tolist() == [0.0, 0.0]
    assert (os.stat(target).st_mode & 0o777) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["latest.safetensors", "real.safetensors"]
    umask = os.umask(0o022)
    os.umask(umask)
    mg.save({"w": mg.ones(2)}, tmp_path / "new.safetensors")     # a new file: the umask's
    assert (os.stat(tmp_path / "new.safetensors").st_mode & 0o777) == 0o666 & ~umask


def test_strip_prefix_takes_names_that_start_with_it_only():
    tensors = {"model.w": 1, "ema.model.w": 2, "model": 3, "optimizer.state.0.m": 4}
    assert mg.checkpoint.strip_prefix(tensors, "model.") == {"w": 1}


def test_pytorch_habits_get_pytorch_answers(tmp_path):
    # a file torch.save wrote is named as one (it was 'corrupted or truncated'); a safetensors
    # file whose header length starts with the pickle byte 0x80 still loads
    (tmp_path / "zip.pt").write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    (tmp_path / "pickle.pt").write_bytes(b"\x80\x02}q\x00." + b"\x00" * 60)
    for name in ("zip.pt", "pickle.pt"):
        with pytest.raises(checkpoint.CheckpointError, match="is a PyTorch file.*save_file"):
            mg.load(tmp_path / name)
    for n in range(1, 100):             # some header length has 0x80 as its first byte
        mg.save({"w" * n: mg.ones(2)}, tmp_path / "ck.safetensors")
        assert mg.load(tmp_path / "ck.safetensors", map_location="cpu")["w" * n].tolist() == \
            [1.0, 1.0]
        if (tmp_path / "ck.safetensors").read_bytes()[0] == 0x80:
            break
    assert (tmp_path / "ck.safetensors").read_bytes()[0] == 0x80
    # cut short, it is corrupted, not a PyTorch file; nor is a header length of 0x0280
    cut = tmp_path / "cut.safetensors"
    for data in ((tmp_path / "ck.safetensors").read_bytes()[:-4],
                 b"\x80\x02\x00\x00\x00\x00\x00\x00{" + b" " * 100):
        cut.write_bytes(data)
        with pytest.raises(checkpoint.CheckpointError, match="corrupted or truncated"):
            mg.load(cut)
    m = nn.Linear(2, 2)
    keys = m.load_state_dict({"weight": m.weight}, strict=False)
    assert keys.missing_keys == ["bias"] and keys.unexpected_keys == []
    missing, unexpected = keys                           # and still a pair
    opt = mg.optim.Adam(m.parameters())             # a nested object: saved as it is
    mg.save(opt.state_dict(), tmp_path / "opt.safetensors")
    assert mg.load(tmp_path / "opt.safetensors") == opt.state_dict()


def test_dtypes_numpy_lacks_or_safetensors_cannot_store_are_named(tmp_path):
    """A bfloat16 file (PyTorch's and Hugging Face's usual checkpoints) was a bare NumPy
    'data type not understood'; a complex128 entry failed as if the disk had. Both now name
    the entry, its dtype and what to do. A PyTorch tensor saves as load_state_dict takes it."""
    import json
    import struct
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})
    header += " " * (-len(header) % 8)
    (tmp_path / "bf16.safetensors").write_bytes(struct.pack("<Q", len(header)) +
                                                header.encode() + b"\x80\x3f\x00\x40")
    with pytest.raises(checkpoint.CheckpointError, match=r"stores 'w' as BF16, a dtype NumPy "
                                                         r".*save the weights as float32"):
        mg.load(tmp_path / "bf16.safetensors")
    with pytest.raises(TypeError, match=r"entry 'c' has dtype complex128, which "
                                        r"\.safetensors cannot store"):
        mg.save({"c": np.ones(2, np.complex128)}, tmp_path / "c.safetensors")
    assert not list(tmp_path.glob("*.tmp")) and not (tmp_path / "c.safetensors").exists()
    torch = pytest.importorskip("torch")
    mg.save({"t": torch.arange(3)}, tmp_path / "t.safetensors")
    assert mg.load(tmp_path / "t.safetensors")["t"].tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match=r"mg.save: entry 'b': .*bfloat16.*t.float\(\)"):
        mg.save({"b": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "b.safetensors")


def test_save_to_a_name_near_the_file_systems_limit(tmp_path):
    path = tmp_path / ("a" * 240 + ".safetensors")      # 252 of the 255 allowed
    mg.save({"x": mg.ones(2)}, path)
    np.testing.assert_array_equal(mg.load(path)["x"].numpy(), [1.0, 1.0])
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_save_to_a_name_long_in_bytes(tmp_path):
    path = tmp_path / ("é" * 120 + ".safetensors")       # 252 bytes: 2 bytes a letter
    mg.save({"x": mg.ones(2)}, path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_save_errors_name_the_file_asked_for_and_leave_nothing_behind(tmp_path, monkeypatch):
    import safetensors
    path = tmp_path / "ck.safetensors"
    mg.save({"w": mg.ones(2)}, path)
    before = path.read_bytes()
    (tmp_path / "afile").write_bytes(b"")
    with pytest.raises(NotADirectoryError, match="afile' is a file, not a directory"):
        mg.save({"w": mg.ones(1)}, tmp_path / "afile" / "ck.safetensors")
    with pytest.raises(TypeError, match="metadata must be a dict of strings, got list"):
        mg.save({"w": mg.ones(1)}, path, metadata=[("a", "b")])
    loop = []
    loop.append(loop)
    with pytest.raises(TypeError, match=r"metadata\['a'\] is of type list"):
        mg.save({"w": mg.ones(1)}, path, metadata={"a": loop})
    real_open = os.open

    def no_permission(name, *args, **kwargs):    # as a directory we may not write in (root may)
        if str(name).endswith(".tmp"):
            raise PermissionError(13, "Permission denied", name)
        return real_open(name, *args, **kwargs)
    monkeypatch.setattr(checkpoint.os, "open", no_permission)
    with pytest.raises(PermissionError,
                       match=r"cannot write .*ck\.safetensors'.*Permission denied"):
        mg.save({"w": mg.zeros(2)}, path)
    monkeypatch.undo()

    def too_large(arrays, tmp, metadata):        # what safetensors raises past its 100 MB
        raise safetensors.SafetensorError("Error while serializing: header too large")
    monkeypatch.setattr(checkpoint.safetensors.numpy, "save_file", too_large)
    with pytest.raises(ValueError, match="header over the format's limit of 100 MB"):
        mg.save({"w": mg.zeros(2), "log": ["x"] * 3}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["afile", "ck.safetensors"]
