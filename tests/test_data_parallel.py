"""data_parallel.py: a batch split over forked processes gives the gradient of the whole
batch's mean loss (float64: equal to one process's to rounding), sees the optimiser's updates
without copies, reseeds dropout per part, and names every failure."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
from minigrad.data_parallel import ProcessDataParallel, default_processes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork")


class Net(nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(3, 8), nn.Linear(8, 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.fc2(self.drop(mg.tanh(self.fc1(x))))


def mse(model, x, y):
    return ((model(x) - y) ** 2).mean()


def data(rows=7, seed=0):
    rng = np.random.default_rng(seed)
    return mg.tensor(rng.standard_normal((rows, 3))), mg.tensor(rng.standard_normal((rows, 2)))


def net(**kw):
    mg.manual_seed(0)
    return Net(**kw).double()


def reference(model, x, y, loss_fn=mse):
    """The loss and gradients of one process, the model's own .grad left as it was."""
    params = list(model.parameters())
    loss = loss_fn(model, x, y)
    return loss.item(), [g.numpy() for g in mg.grad(loss, params)]


def grads(model):
    return [p.grad.numpy() for p in model.parameters()]


@pytest.mark.parametrize("processes,rows", [(2, 8), (2, 7), (3, 7), (4, 3)])
def test_gradients_are_the_whole_batch_mean_losss(processes, rows):
    model = net()
    x, y = data(rows)
    want_loss, want = reference(model, x, y)
    with ProcessDataParallel(model, mse, processes) as dp:
        loss = dp.forward_backward(x, y)
    assert loss == pytest.approx(want_loss, rel=1e-12)
    for g, w in zip(grads(model), want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


def test_gradients_add_into_grad_with_scale_as_backward_does():
    model, x, y = net(), *data(8)
    _, want = reference(model, x, y)
    with ProcessDataParallel(model, mse, 2) as dp:
        dp.forward_backward(x, y, scale=0.25)
        held = model.fc1.weight.grad               # a held .grad sees the next sum
        dp.forward_backward(x, y, scale=0.75)
    assert model.fc1.weight.grad is held
    for g, w in zip(grads(model), want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


def test_workers_see_the_optimisers_update_and_assigned_data():
    model, x, y = net(), *data(8)
    opt = mg.optim.AdamW(model.parameters(), lr=0.1)
    with ProcessDataParallel(model, mse, 2) as dp:
        for _ in range(3):
            opt.zero_grad()
            dp.forward_backward(x, y)
            opt.step()                        # in place, in shared memory
        model.fc2.weight.data = np.full((2, 8), 0.5)     # a new array: copied in
        opt.zero_grad()
        loss = dp.forward_backward(x, y)
    want_loss, want = reference(model, x, y)
    assert loss == pytest.approx(want_loss, rel=1e-12)
    for g, w in zip(grads(model), want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


def test_frozen_and_unused_parameters_get_no_gradient():
    model, x, y = net(), *data(6)
    model.fc1.bias.requires_grad = False
    extra = nn.Linear(2, 2).double()
    model.unused = extra
    with ProcessDataParallel(model, mse, 2) as dp:
        dp.forward_backward(x, y)
    assert model.fc1.bias.grad is None and extra.weight.grad is None
    assert model.fc1.weight.grad is not None


def test_dropout_is_reseeded_per_part_reproducibly():
    def run(seed):
        model, x, y = net(dropout=0.5), *data(8)
        with ProcessDataParallel(model, mse, 2) as dp:
            mg.manual_seed(seed)
            return dp.forward_backward(x, y), grads(model)
    (a, ga), (b, gb), (c, _) = run(1), run(1), run(2)
    assert a == b and all(np.array_equal(u, v) for u, v in zip(ga, gb))
    assert a != c


def test_eval_mode_and_buffers_come_from_the_calling_process():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()
    x, y = data(8)

    def loss_fn(m, x, y):
        return ((m(x) - y) ** 2).mean()
    with ProcessDataParallel(model, loss_fn, 2) as dp:
        model.eval()                           # after the fork: sent with each part
        model[1].running_mean.data[...] = 0.3  # a buffer changed here: copied to workers
        model[1].running_var.data[...] = 2.0
        loss = dp.forward_backward(x, y)
    want_loss, want = reference(model, x, y, loss_fn)
    assert loss == pytest.approx(want_loss, rel=1e-12)
    for g, w in zip(grads(model), want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


def test_a_failing_part_is_reported_with_its_traceback_and_the_next_call_works():
    model, x, y = net(), *data(8)

    def loss_fn(m, x, y):
        if float(x.data[0, 0]) == 99.0:
            raise ValueError("a bad row in this part")
        return mse(m, x, y)
    with ProcessDataParallel(model, loss_fn, 2) as dp:
        bad = x.detach().clone()
        bad.data[4, 0] = 99.0                  # the first row of the worker's half
        with pytest.raises(RuntimeError, match="worker 1 failed(.|\n)*a bad row"):
            dp.forward_backward(bad, y)
        model.zero_grad()
        loss = dp.forward_backward(x, y)
    assert loss == pytest.approx(reference(model, x, y)[0], rel=1e-12)


def test_a_killed_worker_is_named_and_the_object_refuses_further_work():
    model, x, y = net(), *data(8)
    dp = ProcessDataParallel(model, mse, 2)
    os.kill(dp.pids[0], signal.SIGKILL)
    with pytest.raises(RuntimeError, match=f"worker process {dp.pids[0]} exited"):
        dp.forward_backward(x, y)
    with pytest.raises(RuntimeError, match="build a new one"):
        dp.forward_backward(x, y)
    dp.close()


def test_close_stops_the_workers():
    dp = ProcessDataParallel(net(), mse, 3)
    procs = [p for p, _, _ in dp._workers]
    assert len(dp.pids) == 2 and all(p.is_alive() for p in procs)
    dp.close()
    assert not any(p.is_alive() for p in procs) and dp.pids == []
    with pytest.raises(RuntimeError, match="closed"):
        dp.forward_backward(*data(4))


def test_close_lets_the_workers_buffers_go_and_keeps_the_optimiser_working():
    import gc
    import weakref
    model, (x, y) = net(), data(8)
    opt = mg.optim.AdamW(model.parameters(), lr=1e-2)
    dp = ProcessDataParallel(model, mse, 2, optimizer=opt)
    dp.train_step(x, y, max_norm=1.0)
    held = [weakref.ref(dp._grads[1][0]), weakref.ref(next(iter(dp._sharded.main_grads.values())))]
    dp.close()
    gc.collect()
    assert [r() for r in held] == [None, None]
    bn = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))         # buffers' shared copies
    with ProcessDataParallel(bn, lambda m, x: m(x).sum(), 2) as bdp:
        held = [weakref.ref(b) for b in bdp._shared_buffers]
    gc.collect()
    assert held and [r() for r in held] == [None] * len(held)
    before = [p.numpy().copy() for p in model.parameters()]
    mse(model, x, y).backward()
    opt.step()                                  # its state survives the close
    assert all(not np.array_equal(b, p.numpy()) for b, p in zip(before, model.parameters()))


def test_one_process_is_plain_backward():
    model, x, y = net(), *data(5)
    want_loss, want = reference(model, x, y)
    dp = ProcessDataParallel(model, mse, 1)
    assert dp.pids == [] and dp.forward_backward(x, y) == want_loss
    for g, w in zip(grads(model), want):
        np.testing.assert_array_equal(g, w)


def test_bad_arguments_are_named(spy):
    model, (x, y) = net(), data(4)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="processes must be a positive integer"):
            ProcessDataParallel(model, mse, bad)
    with ProcessDataParallel(model, mse, 2) as dp:
        with pytest.raises(ValueError, match=r"share a non-empty first \(batch\) dim"):
            dp.forward_backward(x, y[:3])
        with pytest.raises(TypeError, match="input 1 must be an array or Tensor"):
            dp.forward_backward(x, 3.0)
        with pytest.raises(ValueError, match="inputs must be on the CPU"):
            dp.forward_backward(x.to(spy), y.to(spy))
        model.fc3 = nn.Linear(2, 2).double()
        with pytest.raises(RuntimeError, match="modules, parameters or buffers changed"):
            dp.forward_backward(x, y)
    with pytest.raises(TypeError, match="one-element Tensor that requires grad"):
        with ProcessDataParallel(net(), lambda m, x, y: m(x), 2) as dp:
            dp.forward_backward(x, y)
    with pytest.raises(ValueError, match="the model is on spy"):
        ProcessDataParallel(net().to(spy), mse, 2)
    assert 1 <= default_processes() <= 8


def test_unfreezing_after_the_build_reaches_the_workers():
    model, x, y = net(), *data(8)
    model.fc1.weight.requires_grad = False
    with ProcessDataParallel(model, mse, 2) as dp:
        dp.forward_backward(x, y)
        assert model.fc1.weight.grad is None
        model.fc1.weight.requires_grad = True
        model.zero_grad()
        dp.forward_backward(x, y)
    _, want = reference(model, x, y)
    np.testing.assert_allclose(model.fc1.weight.grad.numpy(), want[0], rtol=1e-10)


class Shifted(nn.Module):
    """A buffer replaced by assignment (an EMA-style update), not written in place."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("shift", mg.zeros(2))

    def forward(self, x):
        return self.fc(x) + self.shift


def test_a_buffer_replaced_by_assignment_reaches_the_workers():
    mg.manual_seed(0)
    model, (x, y) = Shifted().double(), data(8)
    with ProcessDataParallel(model, mse, 2) as dp:
        model.shift = mg.tensor([1.0, -2.0], dtype=mg.float64)
        loss = dp.forward_backward(x, y)
        want_loss, want = reference(model, x, y)
        assert loss == pytest.approx(want_loss, rel=1e-12)
        model.shift = mg.zeros(3, dtype=mg.float64)       # another shape: refused
        with pytest.raises(RuntimeError, match="buffers changed"):
            dp.forward_backward(x, y)


def test_a_swapped_layer_is_refused_not_ignored():
    model, x, y = net(), *data(8)
    model.act = nn.ReLU()                        # a module without parameters, added
    with ProcessDataParallel(net(), mse, 2) as dp:
        dp.model.fc1 = nn.Linear(3, 8).double()
        with pytest.raises(RuntimeError, match="modules, parameters or buffers changed"):
            dp.forward_backward(x, y)
    with ProcessDataParallel(model, mse, 2) as dp:
        del model.act
        with pytest.raises(RuntimeError, match="modules, parameters or buffers changed"):
            dp.forward_backward(x, y)


def test_workers_exit_when_the_calling_process_is_killed(tmp_path):
    """However the caller dies (SIGKILL, the OOM killer), its workers see their pipe close
    and exit, rather than live on holding its output open."""
    script = tmp_path / "victim.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        import minigrad as mg
        from minigrad.data_parallel import ProcessDataParallel
        dp = ProcessDataParallel(mg.nn.Linear(2, 2), lambda m, x: m(x).sum(), 3)
        print(*dp.pids, flush=True)
        time.sleep(60)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2
    proc.kill()
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(_running(p) for p in pids):
        time.sleep(0.05)
    assert not any(_running(p) for p in pids)


def _running(pid):
    """Alive and not a zombie (an orphan's zombie is reaped by init, not by us)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_close_reaps_a_worker_busy_on_a_long_part():
    model, x, y = net(), *data(4)

    def slow(m, x, y):
        time.sleep(30)
        return mse(m, x, y)
    dp = ProcessDataParallel(model, slow, 2)
    proc, conn, _ = dp._workers[0]
    conn.send(("part", 1, [x._data[2:], y._data[2:]], 0, [True] * 4, [0, 1, 2, 3], False))
    time.sleep(0.2)                              # the worker is inside the part
    start = time.time()
    dp.close()
    assert time.time() - start < 10 and proc.exitcode is not None


def test_a_message_out_of_step_ends_the_worker_and_is_named():
    model, x, y = net(), *data(8)
    dp = ProcessDataParallel(model, mse, 2)
    proc, conn, _ = dp._workers[0]
    conn.send(("no such job", 1))
    proc.join(10)
    assert proc.exitcode == 0
    with pytest.raises(RuntimeError, match=f"worker process {proc.pid} exited"):
        dp.forward_backward(x, y)
    dp.close()


# ---- train_step: the sum, the clipping and the update split over the processes too ------
def optimisers(params):
    """One of each kind, with groups and options that make every branch count."""
    params = list(params)
    return {
        "adamw": lambda: mg.optim.AdamW([{"params": params[::2], "weight_decay": 0.1},
                                         {"params": params[1::2], "weight_decay": 0.0}],
                                        lr=0.05, betas=(0.9, 0.99)),
        "adam-amsgrad": lambda: mg.optim.Adam(params, lr=0.05, weight_decay=0.01,
                                              amsgrad=True),
        "sgd-nesterov": lambda: mg.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True,
                                             weight_decay=0.01),
        "rmsprop": lambda: mg.optim.RMSprop(params, lr=0.01, momentum=0.5, centered=True),
        "adam-maximize": lambda: mg.optim.Adam(params, lr=0.05, weight_decay=0.01,
                                               maximize=True),
    }


def take_step(dp, x, y, split, max_norm):
    """train_step, or the three calls it stands for."""
    if split:
        return dp.train_step(x, y, max_norm=max_norm)
    loss = dp.forward_backward(x, y)
    if max_norm is not None:
        mg.nn.utils.clip_grad_norm_(dp.model.parameters(), max_norm)
    dp.optimizer.step()
    return loss


def twins(kind, processes, rows=8, max_norm=None, steps=4, between=None, dtype=None):
    """The same steps taken by train_step and by forward_backward + clip_grad_norm_ +
    optimizer.step() on twin models: (train_step's model, optimiser), (the others')."""
    runs = []
    for split in (True, False):
        model = net() if dtype is None else net().to(dtype=dtype)
        opt = optimisers(model.parameters())[kind]()
        with ProcessDataParallel(model, mse, processes, optimizer=opt) as dp:
            finish, split_steps = dp._sharded.finish, []
            dp._sharded.finish = lambda *a: (split_steps.append(1), finish(*a))
            for it in range(steps):
                x, y = data(rows, seed=it)
                if dtype is not None:
                    x, y = x.to(dtype=dtype), y.to(dtype=dtype)
                if between is not None:
                    between(it, model, opt)
                opt.zero_grad()
                runs.append(take_step(dp, x, y, split, max_norm))
            assert len(split_steps) == (steps if split else 0)     # none fell back
        runs.append((model, opt))
    assert runs[:steps] == runs[steps + 1:-1]          # the losses
    return runs[steps], runs[-1]


def assert_same(a, b):
    """Parameters, gradients and optimiser state dicts equal to the bit."""
    (ma, oa), (mb, ob) = a, b
    for p, q in zip(ma.parameters(), mb.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    sa, sb = oa.state_dict(), ob.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sa["state"].keys() == sb["state"].keys()
    for i in sa["state"]:
        assert sa["state"][i].keys() == sb["state"][i].keys()
        for k, v in sa["state"][i].items():
            if isinstance(v, mg.Tensor):
                np.testing.assert_array_equal(v.numpy(), sb["state"][i][k].numpy())
            else:
                assert v == sb["state"][i][k]


@pytest.mark.parametrize("kind", ["adamw", "adam-amsgrad", "sgd-nesterov", "rmsprop",
                                  "adam-maximize"])
@pytest.mark.parametrize("max_norm", [None, 0.05, 100.0])
@pytest.mark.parametrize("processes,rows", [(2, 8), (3, 7)])
def test_train_step_is_the_three_calls_to_the_bit(kind, max_norm, processes, rows):
    """Every parameter's gradient summed over the parts, the norm over all of them, each
    optimiser's update: the same numbers as one process doing it all (max_norm 0.05 clips
    every step, 100 never)."""
    assert_same(*twins(kind, processes, rows, max_norm))


@pytest.mark.parametrize("kind", ["adamw", "sgd-nesterov"])
def test_train_step_in_float32_is_the_three_calls_to_the_bit(kind):
    assert_same(*twins(kind, 2, max_norm=0.05, dtype=mg.float32))


def test_a_state_entry_set_to_none_reaches_the_workers():
    """Momentum reset by setting its buffer to None: the workers' parameters start it
    again too, rather than keep the shared copy of the old one."""
    def between(it, model, opt):
        if it == 2:
            for state in opt.state.values():
                state["momentum_buffer"] = None
    assert_same(*twins("sgd-nesterov", 2, between=between))


def test_train_step_follows_loads_option_changes_and_frozen_parameters():
    """A state loaded mid-run (copied into the shared pool), a learning rate changed (a
    scheduler's), amsgrad switched on (the workers' new state arrays come back), a
    parameter frozen and another outside the optimiser: all as the three calls."""
    saved = {}

    def between(it, model, opt):
        if it == 1:
            saved[id(opt)] = opt.state_dict()
        if it == 2:
            opt.load_state_dict(saved[id(opt)])          # fresh arrays: back into the pool
            mg.optim.set_lr(opt, 0.01)
            model.fc1.bias.requires_grad = False
        if it == 3:
            for g in opt.param_groups:
                g["amsgrad"] = True
    assert_same(*twins("adamw", 2, steps=5, max_norm=0.5, between=between))


def test_train_step_for_a_parameter_the_optimiser_does_not_hold():
    runs = []
    for split in (True, False):
        model = net()
        opt = mg.optim.Adam(model.fc2.parameters(), lr=0.1)      # fc1 is not optimised
        with ProcessDataParallel(model, mse, 2, optimizer=opt) as dp:
            for it in range(3):
                x, y = data(8, seed=it)
                opt.zero_grad()
                model.fc1.zero_grad()
                take_step(dp, x, y, split, 0.1)
        runs.append((model, opt))
    assert_same(*runs)
    assert len(runs[0][1].state) == 2          # fc2's weight and bias


class ManyArrays(mg.optim.SGD):
    """SGD keeping a dozen arrays of state per parameter: more than the shared pool's room
    (four arrays a parameter, and their alignment)."""
    def _update(self, param, g, state, group):
        for k in range(12):
            state.setdefault(f"extra{k}", param._data * 0)
        super()._update(param, g, state, group)


class Failing(mg.optim.SGD):
    def _update(self, param, g, state, group):
        if param.shape == (2, 8):                       # fc2.weight: a worker's
            import os as _os
            if _os.getpid() != PARENT[0]:
                raise ValueError("this update cannot be done")
        super()._update(param, g, state, group)


PARENT = [os.getpid()]


def test_train_step_falls_back_to_the_three_calls_where_it_cannot_split():
    """Gradients already in .grad (accumulation), fewer rows than processes, or a state too
    big for the shared pool: the three calls, with their numbers."""
    for rows, accumulate, make in ((8, True, mg.optim.SGD), (2, False, mg.optim.SGD),
                                   (8, False, ManyArrays)):
        runs = []
        for split in (True, False):
            model = net()
            opt = make(model.parameters(), lr=0.1, momentum=0.9)
            with ProcessDataParallel(model, mse, 3, optimizer=opt) as dp:
                finish, split_steps = dp._sharded.finish, []
                dp._sharded.finish = lambda *a: (split_steps.append(1), finish(*a))
                for it in range(3):
                    x, y = data(rows, seed=it)
                    opt.zero_grad()
                    if accumulate:
                        dp.forward_backward(x, y, scale=0.5)
                    if split and make is ManyArrays and it == 1:
                        with pytest.warns(UserWarning, match="outgrew its shared pool"):
                            dp.train_step(x, y, max_norm=0.1)
                    else:
                        take_step(dp, x, y, split, 0.1)
                # (the first step of ManyArrays has no state to place yet: split)
                assert len(split_steps) == (1 if split and make is ManyArrays else 0)
            runs.append((model, opt))
        assert_same(*runs)


def test_a_worker_ended_by_system_exit_sends_the_cause_before_it_goes():
    def quits_in_workers(model, x, y):
        if os.getpid() != PARENT[0]:
            sys.exit("the loss function quit")
        return mse(model, x, y)
    model, (x, y) = net(), data(8)
    with ProcessDataParallel(model, quits_in_workers, 2) as dp:
        with pytest.raises(RuntimeError, match="(?s)worker 1 failed.*SystemExit: the loss "
                                               "function quit"):
            dp.forward_backward(x, y)
        with pytest.raises(RuntimeError, match="exited"):     # and the worker is gone
            dp.forward_backward(x, y)


def test_train_step_errors_are_named():
    model, (x, y) = net(), data(8)
    with ProcessDataParallel(model, mse, 2) as dp:
        with pytest.raises(ValueError, match="build it with optimizer="):
            dp.train_step(x, y)
    opt = mg.optim.SGD(model.parameters(), lr=0.1)
    with ProcessDataParallel(model, mse, 2, optimizer=opt) as dp:
        for bad in (0, -1.0, "1", True, np.float32(0)):
            with pytest.raises(ValueError, match="max_norm must be a positive number or None"):
                dp.train_step(x, y, max_norm=bad)
        dp.train_step(x, y, max_norm=np.float32(1.0))           # as clip_grad_norm_
        opt.add_param_group({"params": [mg.nn.Parameter(mg.zeros(2))]})
        with pytest.raises(ValueError, match="not the model's"):
            ProcessDataParallel(model, mse, 2, optimizer=opt)
        with pytest.raises(RuntimeError, match="parameter groups changed"):
            dp.train_step(x, y)
    with pytest.raises(TypeError, match="must be a minigrad optimiser"):
        ProcessDataParallel(model, mse, 2, optimizer=object())
    with pytest.raises(TypeError, match="must be a minigrad optimiser"):
        ProcessDataParallel(model, mse, 1, optimizer=object())


def test_a_failing_update_in_a_worker_is_named_and_ends_the_object():
    model, (x, y) = net(), data(8)
    opt = Failing(model.parameters(), lr=0.1)
    with ProcessDataParallel(model, mse, 2, optimizer=opt) as dp:
        assert dp._sharded.owner[2] == 1                  # fc2.weight is the worker's
        with pytest.raises(RuntimeError, match="update in worker 1 failed(.|\n)*cannot be"):
            dp.train_step(x, y)
        with pytest.raises(RuntimeError, match="failed in the step's update; build a new"):
            dp.train_step(x, y)


def test_train_step_on_one_process_is_the_three_calls():
    runs = []
    for split in (True, False):
        model = net()
        opt = mg.optim.AdamW(model.parameters(), lr=0.1)
        dp = ProcessDataParallel(model, mse, 1, optimizer=opt)
        for it in range(3):
            x, y = data(5, seed=it)
            opt.zero_grad()
            take_step(dp, x, y, split, 0.2)
        runs.append((model, opt))
    assert_same(*runs)


@pytest.mark.parametrize("processes,rows", [(1, 5), (2, 8), (3, 7)])
def test_loss_is_the_whole_batch_loss_without_gradients(processes, rows):
    """An evaluation split over the processes: the model's eval mode reaches the workers
    (dropout off), no gradient is made, and requires_grad stays as it was."""
    model, (x, y) = net(dropout=0.5), data(rows)
    with ProcessDataParallel(model, mse, processes) as dp:
        model.eval()
        loss = dp.loss(x, y)
        model.train()
        train_loss = dp.forward_backward(x, y)     # dropout on again, in every part
    model.eval()
    assert loss == pytest.approx(mse(model, x, y).item(), rel=1e-12)
    assert train_loss != pytest.approx(loss, rel=1e-6)
    with ProcessDataParallel(net(), mse, processes) as dp:
        dp.model.eval()
        before = mg.backend.host_rng().bit_generator.state
        dp.loss(x, y)                         # no dropout to seed: the generator untouched
        assert mg.backend.host_rng().bit_generator.state == before
        assert all(p.grad is None for p in dp.model.parameters())


@pytest.mark.parametrize("where", ["right after sending an update", "waiting for the workers",
                                   "in its own update"])
def test_a_step_cut_short_during_its_update_ends_the_object(where):
    """Cut short once the workers have begun their updates (a Ctrl-C held back during the
    send of an "update" and raised after it, or while waiting; an error in this process's
    own), the model and the optimiser state no longer agree: the next call says so instead
    of training on."""
    model, (x, y) = net(), data(8)
    opt = mg.optim.Adam(model.parameters(), lr=0.1)
    with ProcessDataParallel(model, mse, 2, optimizer=opt) as dp:
        if where == "right after sending an update":
            send, cut = dp._send, []

            def interrupted(conn, message):
                send(conn, message)
                if message[0] == "update" and not cut:    # once
                    cut.append(1)
                    raise KeyboardInterrupt
            dp._send = interrupted
            error = KeyboardInterrupt
        elif where == "waiting for the workers":
            answer, cut = dp._answer, []

            def interrupted(worker, what):
                if what == "update" and not cut:          # once
                    cut.append(1)
                    raise KeyboardInterrupt
                return answer(worker, what)
            dp._answer = interrupted
            error = KeyboardInterrupt
        else:
            opt._update = lambda *a: 1 / 0
            error = ZeroDivisionError
        with pytest.raises(error):
            dp.train_step(x, y)
        opt.zero_grad()
        with pytest.raises(RuntimeError, match="cut short during its update.*build a new"):
            dp.train_step(x, y)


def test_post_accumulate_hooks_run_once_per_step_as_after_backward():
    """A hook registered with register_post_accumulate_grad_hook sees each parameter's
    summed .grad once per step, before the update, in forward_backward and in train_step
    (which then takes its three calls)."""
    model, x, y = net(), *data(8)
    _, want = reference(model, x, y)
    seen = []

    def hook(p):
        seen.append(p.grad.numpy().copy())
    model.fc1.weight.register_post_accumulate_grad_hook(hook)
    opt = mg.optim.SGD(model.parameters(), lr=0.1)
    with ProcessDataParallel(model, mse, 2, optimizer=opt) as dp:
        dp.forward_backward(x, y)
        assert len(seen) == 1
        np.testing.assert_allclose(seen[0], want[0], rtol=1e-10, atol=1e-13)
        opt.zero_grad()
        dp.train_step(x, y)
    assert len(seen) == 2


@pytest.mark.parametrize("where", ["own", "global"])
def test_optimizer_step_hooks_run_in_train_step(where):
    """The optimiser's step hooks (its own, or every optimiser's) run once per train_step,
    around the update, as around optimizer.step(): such a step takes the three calls."""
    model, x, y = net(), *data(8)
    opt = mg.optim.SGD(model.parameters(), lr=0.1)
    seen = []

    def pre(o, args, kwargs):
        seen.append(("pre", model.fc1.weight.numpy().copy()))

    def post(o, args, kwargs):
        seen.append(("post", model.fc1.weight.numpy().copy()))
    register = (mg.optim.optimizer.register_optimizer_step_pre_hook,
                mg.optim.optimizer.register_optimizer_step_post_hook) if where == "global" \
        else (opt.register_step_pre_hook, opt.register_step_post_hook)
    with register[0](pre), register[1](post):
        with ProcessDataParallel(model, mse, 2, optimizer=opt) as dp:
            before = model.fc1.weight.numpy().copy()
            dp.train_step(x, y)
    assert [k for k, _ in seen] == ["pre", "post"]
    np.testing.assert_array_equal(seen[0][1], before)          # before the update
    assert not np.array_equal(seen[1][1], before)              # after it
