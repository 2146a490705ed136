"""mg.profiler: which events it records, that self times leave out the events inside, that
off it records nothing, its table and trace, and that on a GPU it waits for the device."""
import json
import os
import threading
import time

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.profiler import ProfilerActivity, profile, record_function


def names(prof, kind=None):
    return [e.name for e in prof.events() if kind is None or e.kind == kind]


def test_records_each_op_forward_and_backward():
    x = mg.randn(3, 4, requires_grad=True)
    with profile() as fwd:
        y = (x * 2).exp().sum()
    with profile() as bwd:
        y.backward()
    assert names(fwd) == ["Mul", "Exp", "Sum"]
    assert names(bwd, "backward") == ["SumBackward", "ExpBackward", "MulBackward"]
    counts = {r.key: r.count for r in fwd.key_averages()}
    assert counts == {"Mul": 1, "Exp": 1, "Sum": 1}


def test_self_time_leaves_out_the_events_inside():
    x = mg.randn(50, 50)
    with profile() as prof:
        with record_function("outer"):
            time.sleep(0.002)                 # the outer region's own time
            with record_function("inner"):
                time.sleep(0.002)
                x @ x
    ev = {e.name: e for e in prof.events()}
    inner, outer, mm = ev["inner"], ev["outer"], ev["MatMul"]
    assert inner.self_cpu_time_total == pytest.approx(
        inner.cpu_time_total - mm.cpu_time_total, abs=1e-3)
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - inner.cpu_time_total, abs=1e-3)
    assert outer.self_cpu_time_total >= 1900 and inner.self_cpu_time_total >= 1900
    # the self times add up to the outermost event's total, nothing counted twice
    whole = sum(e.self_cpu_time_total for e in prof.events())
    assert whole == pytest.approx(outer.cpu_time_total, abs=1e-2)
    assert prof.key_averages().total_average().self_cpu_time_total == pytest.approx(whole)


def test_create_graph_backward_nests_the_ops_it_runs():
    x = mg.randn(4, dtype=mg.float64, requires_grad=True)
    y = (x.sin() * x).sum()
    with profile() as prof:
        (g,) = mg.grad(y, x, create_graph=True)
    ev = prof.events()
    sin_bwd = next(e for e in ev if e.name == "SinBackward")
    inside = [e for e in ev if e.kind == "forward"
              and sin_bwd.start_us <= e.start_us < sin_bwd.start_us + sin_bwd.cpu_time_total]
    assert inside                              # cos and mul, recorded as ops of their own
    assert sin_bwd.self_cpu_time_total < sin_bwd.cpu_time_total


def test_optimizer_step_and_custom_function_are_regions():
    class Double(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    lin = nn.Linear(3, 2)
    opt = mg.optim.AdamW(lin.parameters(), lr=0.1)
    with profile() as prof:
        Double.apply(lin(mg.randn(4, 3))).sum().backward()
        opt.step()
    got = names(prof, "user_annotation")
    assert got == ["Double", "Optimizer.step#AdamW.step"]
    assert "DoubleBackward" in names(prof, "backward")


def test_off_it_records_nothing_and_costs_no_state():
    x = mg.randn(3)
    prof = profile()
    with record_function("alone"):             # no profiler: nothing to do
        x + 1
    with prof:
        x + 1
    x * 3                                       # after stop: not recorded
    with record_function("after"):
        x - 1
    assert names(prof) == ["Add"]
    assert mg.profiler.active is None
    off = profile(enabled=False)
    with off, profile() as on:                  # a disabled one does not block another
        x + 1
    assert names(off) == [] and names(on) == ["Add"]


def test_one_profiler_at_a_time():
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            profile().start()
    assert mg.profiler.active is None


def test_a_failing_op_leaves_the_nesting_intact():
    a, b = mg.randn(2, 3), mg.randn(4, 5)
    with profile() as prof:
        with record_function("outer"):
            with pytest.raises(ValueError, match="input shapes"):
                a + b                           # refused inside the op's forward
            a.exp()
    ev = {e.name: e for e in prof.events()}
    assert names(prof) == ["Add", "Exp", "outer"]
    assert ev["outer"].self_cpu_time_total == pytest.approx(
        ev["outer"].cpu_time_total - ev["Add"].cpu_time_total - ev["Exp"].cpu_time_total,
        abs=1e-3)


def test_record_function_as_decorator_and_bad_name():
    @record_function("helper")
    def helper(t):
        return t.relu()

    with profile() as prof:
        helper(mg.randn(3))
        helper(mg.randn(3))
    assert names(prof) == ["Relu", "helper", "Relu", "helper"]
    with pytest.raises(TypeError, match="name must be a str"):
        record_function(3)


def test_shapes_grouping_and_table():
    x, y = mg.randn(2, 3), mg.randn(5, 3)
    with profile(record_shapes=True) as prof:
        x.exp()
        y.exp()
        y.exp()
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert sorted((r.key, r.count, str(r.input_shapes)) for r in by_shape) == \
        [("Exp", 1, "[[2, 3]]"), ("Exp", 2, "[[5, 3]]")]
    table = by_shape.table(sort_by="count")
    lines = table.splitlines()
    assert lines[1].split()[:7] == ["Name", "Self", "%", "Self", "Total", "%", "Total"]
    assert "[[5, 3]]" in lines[3] and "[[2, 3]]" in lines[4]   # the commoner first
    assert len(prof.key_averages().table(row_limit=0).splitlines()) == 5   # head, rules
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="self_time")
    with profile() as bare:
        x.exp()
    with pytest.raises(ValueError, match="record_shapes=True"):
        bare.key_averages(group_by_input_shape=True)


def test_table_sorts_by_self_time():
    with profile() as prof:
        with record_function("slow"):
            time.sleep(0.003)
        with record_function("fast"):
            pass
    rows = prof.key_averages().table(sort_by="self_cpu_time_total").splitlines()
    assert rows[3].startswith("slow") and rows[4].startswith("fast")


def test_chrome_trace(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text("old")
    with profile(record_shapes=True) as prof:
        mg.randn(2, 2).exp()
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())["traceEvents"]
    assert [(e["name"], e["ph"], e["cat"]) for e in trace] == [("Exp", "X", "forward")]
    assert trace[0]["args"]["Input Shapes"] == [[2, 2]] and trace[0]["dur"] >= 0
    assert os.listdir(tmp_path) == ["trace.json"]            # no temporary file left


def test_bad_arguments():
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])
    with pytest.raises(TypeError, match="bools"):
        profile(record_shapes=1)


def test_threads_keep_their_own_nesting():
    x = mg.randn(20, 20)
    with profile() as prof:
        def work():
            with record_function("in thread"):
                x @ x
        t = threading.Thread(target=work)
        with record_function("main"):
            t.start()
            t.join()
    ev = {e.name: e for e in prof.events()}
    assert ev["in thread"].thread != ev["main"].thread
    # the thread's events are not the main region's children
    assert ev["main"].self_cpu_time_total == pytest.approx(ev["main"].cpu_time_total)


def test_waits_for_the_device_only_with_cuda_activity(spy):
    import spy_backend
    x = mg.randn(3, 3, device=spy, requires_grad=True)
    with spy_backend.counted() as n, profile() as prof:
        (x * x).sum().backward()
    assert n["wait"] == 2 * len(prof.events()) > 0   # before and after each event
    with spy_backend.counted() as n, profile(activities=[ProfilerActivity.CPU]):
        (x * x).sum().backward()
    assert n["wait"] == 0
    with spy_backend.counted() as n:
        (x * x).sum().backward()
    assert n["wait"] == 0                      # no profiler, no waiting
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy(), rtol=1e-6)   # three passes


def test_a_generators_region_closed_out_of_order():
    x = mg.randn(40, 40)

    def gen():
        with record_function("gen"):
            yield 1
            yield 2
    with profile() as prof:
        g = gen()
        next(g)                                 # "gen" open, suspended
        with record_function("outer"):
            x @ x
            g.close()                           # "gen" ends inside "outer"
    ev = {e.name: e for e in prof.events()}
    # outer's own time leaves out its matmul, not the generator's region begun before it
    assert ev["outer"].self_cpu_time_total == pytest.approx(
        ev["outer"].cpu_time_total - ev["MatMul"].cpu_time_total, abs=1e-3)
    assert ev["gen"].self_cpu_time_total == pytest.approx(ev["gen"].cpu_time_total)


def test_a_region_open_across_a_restart_is_not_recorded():
    x, prof = mg.randn(3), profile()
    region = record_function("early")
    prof.start()
    region.__enter__()
    prof.stop()
    prof.start()                                # the same object again: a new run
    x + 1
    region.__exit__(None, None, None)
    prof.stop()
    assert names(prof) == ["Add"] and prof.events()[0].start_us >= 0
    prof.start()
    with pytest.raises(RuntimeError, match="this profiler is already running"):
        prof.start()
    prof.stop()


def test_one_record_function_entered_twice():
    x, region = mg.randn(3), record_function("r")
    with profile() as prof:
        with region:
            with region:
                x + 1
    assert names(prof) == ["Add", "r", "r"]
    outer = prof.events()[2]
    assert outer.self_cpu_time_total < outer.cpu_time_total


def test_chrome_trace_to_a_bad_path_says_so_and_leaves_nothing(tmp_path):
    with profile() as prof:
        mg.randn(2).exp()
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError, match="cannot write the trace to .*folder"):
        prof.export_chrome_trace(tmp_path / "folder")
    with pytest.raises(FileNotFoundError, match="cannot write the trace to .*t.json"):
        prof.export_chrome_trace(tmp_path / "missing" / "t.json")
    assert os.listdir(tmp_path) == ["folder"]              # no temporary file left


@pytest.mark.parametrize("layer,op", [(nn.LSTM, "LSTMScan"), (nn.GRU, "GRUScan")])
def test_recurrent_scans_forward_is_an_event(layer, op):
    rnn = layer(3, 4)
    with profile(record_shapes=True) as prof:
        rnn(mg.randn(5, 2, 3))[0].sum().backward()
    assert op in names(prof, "forward") and op + "Backward" in names(prof, "backward")


def test_regions_wait_for_the_device_too(spy):
    import spy_backend
    p = mg.randn(3, device=spy, requires_grad=True)
    p.grad = mg.ones(3, device=spy)
    opt = mg.optim.SGD([p], lr=0.1)
    with spy_backend.counted() as n, profile() as prof:
        opt.step()                              # array updates: its kernels, no ops
    assert names(prof) == ["Optimizer.step#SGD.step"]
    assert n["wait"] == 2                       # so its time is that of its kernels
