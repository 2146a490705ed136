"""ModuleList, ModuleDict and Sequential as PyTorch's: how they name their children (state
dict keys must map to PyTorch's by name), index, insert, delete and check keys; and how a
Module prints and replaces children. Each case states PyTorch's answer literally; where
PyTorch is installed one test also asks it."""
from collections import OrderedDict

import pytest

from minigrad import nn


def _keys(m):
    return [k for k in m.state_dict() if k.endswith("weight")]


def _lin(n):
    return nn.Linear(1, n, bias=False)        # n tells the modules apart: weight (n, 1)


def _sizes(container):
    return [m.out_features for m in container]


def test_module_list_renumbers_after_insert_delete_and_pop():
    ml = nn.ModuleList([_lin(1), _lin(2), _lin(3)])
    ml.insert(1, _lin(9))
    assert _sizes(ml) == [1, 9, 2, 3] and _keys(ml) == ["0.weight", "1.weight", "2.weight",
                                                        "3.weight"]
    del ml[0]
    assert _sizes(ml) == [9, 2, 3] and list(ml._modules) == ["0", "1", "2"]
    del ml[::2]
    assert _sizes(ml) == [2]
    assert ml.pop().out_features == 2 and len(ml) == 0
    ml += [_lin(4), _lin(5)]
    ml[-1] = _lin(6)
    assert _sizes(ml) == [4, 6] and _sizes(ml + nn.ModuleList([_lin(7)])) == [4, 6, 7]
    assert _sizes(ml[1:]) == [6] and list(ml[1:]._modules) == ["0"]   # a slice renumbers
    with pytest.raises(IndexError, match="index 2 out of range for 2 modules"):
        ml[2] = _lin(1)
    with pytest.raises(TypeError, match="ModuleList holds Modules"):
        ml.insert(0, "relu")
    with pytest.raises(TypeError, match="extend takes an iterable of Modules"):
        ml.extend(3)


def test_sequential_keeps_names_through_slices_and_indexes_by_position():
    """PyTorch: seq[2:] keeps the keys "2", "3", so its state dict loads into the same
    slice of the same model in PyTorch; named stages (an OrderedDict, add_module) are
    indexed by position."""
    seq = nn.Sequential(_lin(1), _lin(2), _lin(3), _lin(4))
    tail = seq[2:]
    assert isinstance(tail, nn.Sequential) and _keys(tail) == ["2.weight", "3.weight"]
    named = nn.Sequential(OrderedDict(fc=_lin(5), out=_lin(6)))
    assert _keys(named) == ["fc.weight", "out.weight"] and named[1] is named.out
    assert named[-2].out_features == 5 and _keys(named[1:]) == ["out.weight"]
    named.add_module("extra", _lin(7))
    named[2] = _lin(8)                                    # replaced under its own name
    assert named.extra.out_features == 8
    named.append(_lin(9))                                 # PyTorch: str(len(self))
    assert list(named._modules) == ["fc", "out", "extra", "3"]
    del named[0]                                          # PyTorch renumbers after a delete
    assert list(named._modules) == ["0", "1", "2"] and _sizes(named) == [6, 8, 9]
    assert _sizes(seq + named) == [1, 2, 3, 4, 6, 8, 9]
    tail.append(_lin(5))                 # "2" and "3" are taken: a new name, not a replacement
    assert _sizes(tail) == [3, 4, 5] and list(tail._modules) == ["2", "3", "4"]
    with pytest.raises(TypeError, match="assignment takes an integer index, not a slice"):
        tail[0:1] = _lin(1)


def test_module_dict_checks_keys_as_add_module_and_takes_pairs():
    md = nn.ModuleDict([("b", _lin(1)), ("a", _lin(2))])   # pairs: their order
    assert list(md) == ["b", "a"]
    md.update({"c": _lin(3)})
    assert md.pop("b").out_features == 1 and list(md) == ["a", "c"]
    del md["a"]
    assert list(md) == ["c"]
    md.clear()
    assert len(md) == 0
    for key, words in (("a.b", "contain"), ("", "empty"), ("train", "already exists"),
                       ("_parameters", "already exists")):
        with pytest.raises(KeyError, match=words):
            md[key] = _lin(1)
    with pytest.raises(ValueError, match=r"element #0 of the sequence should be a \(key, "
                                         r"module\) pair"):
        nn.ModuleDict(["ab"])
    with pytest.raises(TypeError, match="takes a mapping or an iterable of"):
        nn.ModuleDict(nn.ModuleList([_lin(1)]))


def test_a_parameter_replaces_a_child_or_buffer_of_that_name():
    m = nn.Module()
    m.sub = _lin(1)
    m.register_buffer("buf", nn.Parameter(_lin(1).weight).detach())
    m.sub = nn.Parameter(_lin(2).weight.detach())
    m.buf = nn.Parameter(_lin(3).weight.detach())
    assert [n for n, _ in m.named_parameters()] == ["sub", "buf"]
    assert not list(m.children()) and not list(m.buffers())
    m.register_buffer("cache", _lin(1).weight.detach(), persistent=False)
    m.cache = _lin(4)                                    # a module over a non-persistent buffer
    assert "cache" not in m._non_persistent             # forgets it was one


def test_repr_shows_a_shared_child_under_each_name():
    shared = nn.ReLU()
    text = repr(nn.Sequential(shared, nn.Tanh(), shared))
    assert "(0): ReLU()" in text and "(2): ReLU()" in text


def test_the_same_keys_as_pytorch():
    torch = pytest.importorskip("torch")
    tn = torch.nn
    t = tn.Sequential(OrderedDict(fc=tn.Linear(1, 2), out=tn.Linear(2, 2)))
    m = nn.Sequential(OrderedDict(fc=nn.Linear(1, 2), out=nn.Linear(2, 2)))
    assert list(m[1:].state_dict()) == list(t[1:].state_dict())
    t4 = tn.Sequential(*(tn.Linear(1, 1) for _ in range(4)))
    m4 = nn.Sequential(*(nn.Linear(1, 1) for _ in range(4)))
    assert list(m4[2:].state_dict()) == list(t4[2:].state_dict())
    m4[2:].load_state_dict(t4[2:].state_dict())
    del t4[1]
    del m4[1]
    assert list(m4.state_dict()) == list(t4.state_dict())


def test_sequential_times_n_repeats_the_same_stages():
    relu, tanh = nn.ReLU(), nn.Tanh()
    s = nn.Sequential(relu, tanh)
    for twice in (s * 2, 2 * s):                 # the same modules, as PyTorch: not copies
        assert list(twice._modules) == ["0", "1", "2", "3"]
        assert list(twice) == [relu, tanh, relu, tanh] and len(s) == 2
    s *= 2
    assert list(s) == [relu, tanh, relu, tanh] and list(s._modules) == ["0", "1", "2", "3"]
    with pytest.raises(ValueError, match="positive"):
        s * 0
    with pytest.raises(TypeError):
        s * 1.5
