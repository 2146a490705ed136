"""torch.backends for code written against PyTorch (nanoGPT's train.py sets
`torch.backends.cuda.matmul.allow_tf32 = True` and `torch.backends.cudnn.allow_tf32 = True`).

One flag acts: `cuda.matmul.allow_tf32` (and `cuda.matmul.fp32_precision`, `fp32_precision`)
is minigrad's float32 matmul precision (mg.set_float32_matmul_precision): True is "high",
False "highest", and setting either side shows on the other, as in PyTorch; the global
`fp32_precision` moves it only while it is unset (never set, or set to "none"), as
PyTorch's. The rest are recorded and read back, changing nothing: minigrad's conv on CuPy runs no cuDNN algorithm
search (`cudnn.benchmark`), is deterministic on the CPU (`cudnn.deterministic`; as in
PyTorch, a flag apart from mg.use_deterministic_algorithms), and its attention has one path,
so the SDPA switches (`cuda.enable_flash_sdp` ...) choose nothing.

Availability: `cudnn.is_available()` is mg.cuda.is_available() (the GPU backend the cudnn
flags stand for); mps and mkldnn are False (neither exists here); openmp is False too:
minigrad's CPU ops share out their work on its own threads (parallel.py), not OpenMP's.

Assigning a name a flag group does not have raises AttributeError listing the valid ones:
a typo such as `matmul.alow_tf32 = True` would otherwise set nothing, silently.
"""
import sys
import types

from minigrad import backend

_TF32_OF = {"highest": "ieee", "high": "tf32", "medium": "tf32"}
_PRECISION_OF = {"ieee": "highest", "tf32": "high"}
_FP32_PRECISIONS = ("none", "ieee", "tf32")
_GLOBAL_FP32 = ["none"]


def _check_bool(where, value):
    if not isinstance(value, bool):
        raise TypeError(f"{where} must be a bool, got {type(value).__name__}")


class _Flags:
    """A group of switches: recorded bool flags, and the properties a subclass defines."""

    def __init__(self, path, **flags):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_flags", dict(flags))

    def _valid(self):
        props = [n for n in dir(type(self)) if isinstance(getattr(type(self), n), property)]
        return ", ".join(sorted(set(self._flags) | set(props))) or "none"

    def __getattr__(self, name):          # only for names the class and instance lack
        if "_flags" not in self.__dict__:     # half-built (copy, pickle): nothing to list
            raise AttributeError(name)
        if name in self._flags:
            return self._flags[name]
        raise AttributeError(f"{self._path} has no attribute {name!r}; its flags: "
                             f"{self._valid()}")

    def __setattr__(self, name, value):
        if name in self._flags:
            _check_bool(f"{self._path}.{name}", value)
            self._flags[name] = value
        elif isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(f"{self._path}.{name} is not a flag; valid: {self._valid()}")

    def __repr__(self):
        return f"<{self._path}>"


class _Matmul(_Flags):
    """torch.backends.cuda.matmul: allow_tf32 and fp32_precision are minigrad's float32
    matmul precision; the reduced-precision-reduction flags are recorded (minigrad's
    float16 GEMMs are the library's)."""

    @property
    def allow_tf32(self):
        return backend.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _check_bool(f"{self._path}.allow_tf32", value)
        backend.set_float32_matmul_precision("high" if value else "highest")

    @property
    def fp32_precision(self):
        """"ieee" or "tf32", the precision in effect (PyTorch reads "none" until one is set:
        inherit the global, whose effect is "ieee")."""
        return _TF32_OF[backend.get_float32_matmul_precision()]

    @fp32_precision.setter
    def fp32_precision(self, value):
        if value not in _FP32_PRECISIONS:
            raise ValueError(f"{self._path}.fp32_precision: unknown precision {value!r}; "
                             f"valid: {', '.join(_FP32_PRECISIONS)}")
        if value == "none":               # follow the global setting (again)
            backend._PRECISION_SET[0] = False
            backend._apply_precision("high" if _GLOBAL_FP32[0] == "tf32" else "highest")
        else:
            backend.set_float32_matmul_precision(_PRECISION_OF[value])


class _Cuda(_Flags):
    """torch.backends.cuda: `matmul`, and the SDPA switches (recorded: one attention path)."""

    def __init__(self):
        super().__init__("backends.cuda")
        object.__setattr__(self, "matmul", _Matmul(
            "backends.cuda.matmul", allow_fp16_reduced_precision_reduction=True,
            allow_bf16_reduced_precision_reduction=True))
        object.__setattr__(self, "_sdp", {"flash": True, "mem_efficient": True,
                                          "math": True, "cudnn": True})

    def _valid(self):
        return (f"none here: matmul's ({self.matmul._valid()}); the SDPA switches are "
                f"functions (enable_flash_sdp(False) ...)")

    def _enable(self, kind, enabled):
        _check_bool(f"{self._path}.enable_{kind}_sdp's argument", enabled)
        self._sdp[kind] = enabled

    def enable_flash_sdp(self, enabled):
        self._enable("flash", enabled)

    def enable_mem_efficient_sdp(self, enabled):
        self._enable("mem_efficient", enabled)

    def enable_math_sdp(self, enabled):
        self._enable("math", enabled)

    def enable_cudnn_sdp(self, enabled):
        self._enable("cudnn", enabled)

    def flash_sdp_enabled(self):
        return self._sdp["flash"]

    def mem_efficient_sdp_enabled(self):
        return self._sdp["mem_efficient"]

    def math_sdp_enabled(self):
        return self._sdp["math"]

    def cudnn_sdp_enabled(self):
        return self._sdp["cudnn"]

    def is_built(self):
        """Whether the GPU backend can run (CuPy and a GPU): minigrad is not compiled."""
        return backend.cuda_is_available()


class _Cudnn(_Flags):
    """torch.backends.cudnn: flags recorded (no cuDNN algorithm search runs here)."""

    def __init__(self):
        super().__init__("backends.cudnn", enabled=True, allow_tf32=True, benchmark=False,
                         deterministic=False)

    def is_available(self):
        return backend.cuda_is_available()

    def version(self):
        """None: minigrad calls no cuDNN version of its own (PyTorch's CPU build says None)."""
        return None


class _Absent(_Flags):
    """A backend minigrad has not (mps, mkldnn, openmp): is_available() is False."""

    def is_available(self):
        return False

    def is_built(self):
        return False


cuda = _Cuda()
cudnn = _Cudnn()
mps = _Absent("backends.mps")
mkldnn = _Absent("backends.mkldnn", enabled=True)
openmp = _Absent("backends.openmp")


class _BackendsModule(types.ModuleType):
    """This module, with torch.backends.fp32_precision as a property and no new names
    assigned (a typo raises, as on the flag groups)."""

    @property
    def fp32_precision(self):
        return _GLOBAL_FP32[0]

    @fp32_precision.setter
    def fp32_precision(self, value):
        if value not in _FP32_PRECISIONS:
            raise ValueError(f"backends.fp32_precision: unknown precision {value!r}; valid: "
                             f"{', '.join(_FP32_PRECISIONS)} (no bfloat16 matmuls here)")
        _GLOBAL_FP32[0] = value
        # the matmuls follow while their own precision is unset, as PyTorch's (one set by
        # allow_tf32, cuda.matmul.fp32_precision or set_float32_matmul_precision stays)
        if not backend._PRECISION_SET[0]:
            backend._apply_precision("high" if value == "tf32" else "highest")

    def __setattr__(self, name, value):
        if not (name.startswith("__") or name == "fp32_precision" or name in self.__dict__):
            raise AttributeError(f"backends.{name} is not a flag; valid: fp32_precision, or "
                                 f"those of cuda, cuda.matmul, cudnn, mkldnn")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _BackendsModule
