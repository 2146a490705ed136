"""GradScaler, as torch.amp.GradScaler: multiply the loss by a scale so that small float16
gradients do not flush to zero, divide the gradients by it before the optimizer steps,
skip a step whose gradients hold inf or NaN (the scale was too big) and adjust the scale:
times backoff_factor after such a step, times growth_factor after growth_interval steps
in a row without one. The scale is a float32 number; as torch's, each new one is the old
times the factor in double, rounded to float32 (a growth that rounds to inf is not taken)."""
import numbers

from minigrad import backend
from minigrad.backend import np
from minigrad.grad_mode import _GradMode
from minigrad.ops.activations import _overflow_quietly
from minigrad.tensor import Tensor

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


def _f32(x):
    with np.errstate(over="ignore"):     # a product past float32's range is inf: checked
        return float(np.float32(x))


class GradScaler:
    """scale(loss).backward(); scaler.step(optimizer); scaler.update() — torch's loop.
    unscale_(optimizer) first if the gradients are to be read or clipped unscaled.
    `device` (any of minigrad's: "cpu", "cuda") is for torch's signature: the gradients are
    unscaled on whichever device they live."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        try:                             # any device minigrad has ("cpu", "cuda", ...)
            name = str(backend.device_name(getattr(device, "type", device)))
        except ValueError as e:
            raise ValueError(f"GradScaler: {e}") from None
        _check("GradScaler", init_scale, growth_factor, backoff_factor, growth_interval, 0)
        self.device, self._enabled = name, bool(enabled)
        self._scale, self._growth_tracker = _f32(init_scale), 0
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._per_optimizer = {}         # id(optimizer) -> {"stage", "found_inf"}

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        """The scale as a Python float (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self): return self._growth_factor
    def get_backoff_factor(self): return self._backoff_factor
    def get_growth_interval(self): return self._growth_interval

    def scale(self, outputs):
        """outputs (a tensor, or a list/tuple of them, nested) times the scale. A float16
        loss stays float16 (the scale is a 0-d float32, which does not promote)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            s = Tensor._make(outputs.backend.xp.asarray(self._scale, dtype=backend.float32),
                             outputs.device)
            return outputs * s
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise TypeError(f"GradScaler.scale: expected a Tensor or a list/tuple of them, got "
                        f"{type(outputs).__name__}")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer),
                                              {"stage": _READY, "found_inf": None})

    def unscale_(self, optimizer):
        """Divide the gradients of optimizer's parameters by the scale, in place, and note
        whether any holds inf or NaN. Once per optimizer between two update()s."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("GradScaler.unscale_: already called on this optimizer "
                               "since the last update()")
        if state["stage"] is _STEPPED:
            raise RuntimeError("GradScaler.unscale_: called after step(); call update() "
                               "first")
        inv = np.float32(1.0 / np.float64(self._scale))   # as torch: 1/scale in double
        # device -> (its xp, each gradient's 0-d "all finite"), stacked and read back once
        # per device at the end: one read per parameter would make the CPU wait for a GPU
        # once per parameter, and and-ing them as they come would launch once more each
        finite, invs = {}, {}
        with _GradMode(False):
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == backend.float16:
                        raise ValueError("GradScaler.unscale_: a parameter has a float16 "
                                         "gradient; keep parameters in float32 (autocast "
                                         "casts them for the ops that run in float16)")
                    xp = g.backend.xp
                    key = (g.device, g.dtype)        # 1/scale made once per device and dtype
                    if key not in invs:
                        invs[key] = Tensor._make(xp.asarray(inv, dtype=g.dtype), g.device)
                    with _overflow_quietly(xp):      # (an overflow is what is checked)
                        g.mul_(invs[key])
                    # checked after the division (torch checks before, and steps on the
                    # inf): it may overflow itself, a huge gradient over a tiny scale
                    finite.setdefault(g.device, (xp, []))[1].append(xp.isfinite(g._data).all())
        # None: no gradient to check (step refuses it, and update counts it as no check)
        found = any(not bool(xp.stack(oks).all()) for xp, oks in finite.values()) \
            if finite else None
        state["found_inf"], state["stage"] = found, _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(...) with unscaled gradients (unscale_ first unless done), or
        nothing when they hold inf or NaN; returns what step returned, or None if skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: a closure is not supported while the "
                               "scaler is enabled")
        state = self._state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("GradScaler.step: already called on this optimizer since the "
                               "last update()")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:      # as torch: stepping unchecked would be blind
            raise RuntimeError("GradScaler.step: no inf checks were recorded for this "
                               "optimizer: none of its parameters has a gradient (did "
                               "backward run on the scaled loss of these parameters?)")
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Adjust the scale after this iteration's steps (or set it to new_scale, a float or
        a one-element tensor), and start the next iteration's bookkeeping."""
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError("GradScaler.update: new_scale must be a one-element "
                                     "tensor that does not require grad")
                new_scale = new_scale.item()
            # a scale of NaN, inf or 0 would skip every step from here on without a word
            _check("GradScaler.update", new_scale, 2.0, 0.5, 1, 0)
            self._scale = _f32(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["found_inf"] is not None]
            if not found:
                raise RuntimeError("GradScaler.update: no inf checks were recorded; call "
                                   "step(optimizer) (or unscale_) before update()")
            # float32 scale times the factor in double (Python floats), then float32, as
            # torch: a factor such as 0.3 rounded to float32 first gives another scale
            if any(found):
                self._scale = _f32(self._scale * float(self._backoff_factor))
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = _f32(self._scale * float(self._growth_factor))
                if grown != float("inf"):     # never grown to inf
                    self._scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._per_optimizer = {}

    def state_dict(self):
        """scale, growth/backoff factors, growth_interval, _growth_tracker ({} disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty, "
                               "possibly saved from a disabled GradScaler")
        values = [state_dict[k] for k in ("scale", "growth_factor", "backoff_factor",
                                          "growth_interval", "_growth_tracker")]
        # a scale of NaN, inf or 0 would skip every step, or step on NaN gradients, without
        # a word: refused, as what __init__ refuses
        _check("GradScaler.load_state_dict", *values)
        self._scale = _f32(values[0])
        self._growth_factor, self._backoff_factor = float(values[1]), float(values[2])
        self._growth_interval, self._growth_tracker = int(values[3]), int(values[4])


def _check(where, scale, growth_factor, backoff_factor, growth_interval, tracker):
    """Refuse a scaler's settings that would make it misbehave, naming what would be valid."""
    def is_int(v):                       # NumPy's integers too (a state dict read back)
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)
    real = numbers.Real                  # NumPy's floats too: np.float32 is no Python float
    # as the float32 kept: 1e39 would be inf, 1e-46 zero
    if not (isinstance(scale, real) and 0.0 < _f32(scale) < float("inf")):
        raise ValueError(f"{where}: the scale must be a finite number > 0, got {scale!r} "
                         f"(it is kept as a float32: from 1.4e-45 to 3.4e38)")
    if not (isinstance(growth_factor, real) and growth_factor > 1.0):
        raise ValueError(f"{where}: growth_factor must be > 1, got {growth_factor!r}")
    if not (isinstance(backoff_factor, real) and 0.0 < backoff_factor < 1.0):
        raise ValueError(f"{where}: backoff_factor must be in (0, 1), got {backoff_factor!r}")
    if not (is_int(growth_interval) and growth_interval > 0):
        raise ValueError(f"{where}: growth_interval must be a positive int, got "
                         f"{growth_interval!r}")
    if not (is_int(tracker) and 0 <= tracker < growth_interval):
        raise ValueError(f"{where}: _growth_tracker must be an int in [0, growth_interval), "
                         f"got {tracker!r}")
