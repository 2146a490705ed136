"""mg.save and mg.load take a file object, as torch.save and torch.load do (the
word_language_model example: `with open(path, "wb") as f: torch.save(model, f)`): the
same .safetensors bytes as a path gets, written at the object's position and read from
there to its end."""
import io

import numpy as np
import pytest

import minigrad as mg


def test_a_state_dict_round_trips_through_a_file_object(tmp_path):
    model = mg.nn.Linear(3, 2)
    with open(tmp_path / "model.pt", "wb") as f:
        mg.save(model, f)
    assert (tmp_path / "model.pt").read_bytes() == _bytes_of_path(model, tmp_path)
    with open(tmp_path / "model.pt", "rb") as f:
        loaded = mg.load(f)
    assert list(loaded) == ["bias", "weight"]
    fresh = mg.nn.Linear(3, 2)
    fresh.load_state_dict(loaded)
    assert np.array_equal(fresh.weight.numpy(), model.weight.numpy())


def _bytes_of_path(obj, tmp_path):
    mg.save(obj, tmp_path / "by_path.safetensors")
    return (tmp_path / "by_path.safetensors").read_bytes()


def test_a_nested_object_and_metadata_in_memory():
    buffer = io.BytesIO(b"header!")                        # written from its position on
    buffer.seek(7)
    saved = {"model": {"w": mg.ones(2, dtype=mg.float64)}, "step": 3, "names": ["a", "b"]}
    mg.save(saved, buffer, metadata={"run": "x"})
    buffer.seek(7)
    obj, meta = mg.load(buffer, with_metadata=True, map_location="cpu")
    assert meta == {"run": "x"} and obj["step"] == 3 and obj["names"] == ["a", "b"]
    assert obj["model"]["w"].dtype == mg.float64 and obj["model"]["w"].tolist() == [1.0, 1.0]


def test_bad_file_objects_are_refused_clearly(tmp_path):
    with open(tmp_path / "t.txt", "w") as f:
        with pytest.raises(TypeError, match=r"text mode \('w'\).*open\(path, 'wb'\)"):
            mg.save({"a": mg.ones(1)}, f)
    with open(tmp_path / "t.txt", "r") as f:
        with pytest.raises(TypeError, match=r"text mode \('r'\).*open\(path, 'rb'\)"):
            mg.load(f)
    with pytest.raises(TypeError, match="gave str, not bytes"):
        mg.load(io.StringIO("abc"))
    with pytest.raises(mg.checkpoint.CheckpointError, match="the file object is corrupted"):
        mg.load(io.BytesIO(b"not a safetensors file"))


def test_a_torch_file_object_is_named_as_such(torch):
    buffer = io.BytesIO()
    torch.save({"a": torch.ones(2)}, buffer)
    buffer.seek(0)
    with pytest.raises(mg.checkpoint.CheckpointError, match="is a PyTorch file"):
        mg.load(buffer)


def test_torch_reads_the_bytes_written_to_a_file_object(torch):
    import safetensors.torch
    buffer = io.BytesIO()
    mg.save({"w": mg.arange(4, dtype=mg.float32).view(2, 2)}, buffer)
    assert safetensors.torch.load(buffer.getvalue())["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]]
