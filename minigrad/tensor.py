"""`Tensor`: an array on a device, plus what autograd needs (`requires_grad`, `grad`, and the
`Function` that produced it). Its in-place operators (t[i] = v, x += y) are defined here;
the others (+ - * / @, comparisons) are inherited from tensor_operators.py, the method
spellings of the other ops (x.exp(), x.sum(dim), x.reshape(...)) from tensor_methods.py,
and PyTorch's in-place methods (x.add_(y), x.zero_()) from tensor_inplace.py, each a
one-line call into the op that implements it in `minigrad/ops/`."""
import builtins

from minigrad import backend, printing
from minigrad.size import Size
from minigrad import memory_format as _mf
from minigrad.autograd import _initial_grad, alive as _alive
from minigrad.backward import run_backward
from minigrad.args import (split_device_dtype, stack_values as _stack_values,  # noqa: F401
                           is_device_array as _is_device_array, data_value as _data_value,
                           host_values as _host_values, check_numbers as _check_numbers,
                           check_values_fit as _check_values_fit)
from minigrad.tensor_copy import TensorCopy
from minigrad.tensor_operators import TensorOperators
from minigrad.tensor_inplace import TensorInplace
from minigrad.tensor_methods import TensorMethods


class Tensor(TensorOperators, TensorMethods, TensorInplace, TensorCopy):
    # _data: the raw NumPy/CuPy array (`.data` is PyTorch's detached alias, below); _ctx:
    # the Function that made this tensor (None for a leaf; `grad_fn`); _version_counter: a
    # list counting in-place changes of that memory, shared by every tensor that views it
    # (see `_version`; a write through `.data` counts apart), and after the count a weak
    # reference to the tensor views were made of outside the graph (autograd.py's
    # _note_view_base); _hooks: None, or
    # the functions register_hook added; _retains_grad: retain_grad() was called; _uses:
    # None, or weak references to the recorded ops that took this tensor as an input
    # (autograd.py)
    __slots__ = ("_data", "_grad", "requires_grad", "_ctx", "device", "_version_counter",
                 "_hooks", "_retains_grad", "_uses", "__weakref__")
    # for array types that go by priority alone: `array * Tensor` defers to Tensor.__rmul__
    # (NumPy's `array * Tensor` comes to __array_ufunc__, at the end of the class)
    __array_priority__ = 1000

    def __init__(self, data, dtype=None, device=None, requires_grad=False):
        """The low-level constructor: an array already on `device` with that dtype is
        shared, not copied (mg.tensor copies; mg.from_numpy and mg.as_tensor say they
        share). Tensor(t) of a tensor is then an alias of its memory that shares its count
        of in-place changes, as PyTorch's Tensor(t), but detached from t's graph (PyTorch's
        alias stays in it: gradients flow back to t)."""
        dtype = backend.dtype(dtype)
        source = data if isinstance(data, Tensor) else None
        if source is not None:
            data = data._data
        elif isinstance(data, (list, tuple)) and any(map(_typed, data)) and \
                all(_typed(x) or backend.is_scalar(x) for x in data):
            data = _stack_values(data)      # tensors or NumPy values: in their dtype
        if device is None:
            device = backend.device_of_array(data) if _is_device_array(data) else "cpu"
        device = backend.device_name(device)
        b = backend.get(device)
        if _is_device_array(data) and backend.device_of_array(data) == device:
            arr = _check_numbers(data, data)
        else:
            arr = _host_values(data, dtype)
            if not hasattr(data, "dtype"):                 # Python numbers: must fit
                _check_values_fit(arr, dtype)
            if arr.dtype.kind == "f" and not hasattr(data, "dtype") and dtype is None:
                arr = arr.astype(backend.DEFAULT_FLOAT)  # Python floats and lists -> float32
            elif arr.dtype.kind in "iu" and not hasattr(data, "dtype") and dtype is None:
                arr = arr.astype(backend.int64)
            arr = b.from_numpy(arr)
        if dtype is not None and arr.dtype != dtype:
            arr = arr.astype(dtype)
        self._data, self.device, self._grad, self._ctx = arr, device, None, None
        # an alias of a tensor's memory counts its writes with it: a graph that saved the
        # tensor sees a change made through the alias
        shared = source is not None and arr is source._data
        self.requires_grad = False
        self._version_counter = source._version_counter if shared else [0]
        self._hooks, self._retains_grad, self._uses = None, False, None
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(array, device, requires_grad=False):
        """Wrap an array already on `device` (no checks, no copy): the ops' fast constructor."""
        t = Tensor.__new__(Tensor)
        t._data, t.device, t._grad, t._ctx = array, device, None, None
        t.requires_grad = requires_grad
        t._version_counter, t._hooks, t._retains_grad, t._uses = [0], None, False, None
        return t

    # ---- properties -------------------------------------------------------------------
    @property
    def data(self):
        """PyTorch's `.data`: a new Tensor of these values outside autograd (no grad, a leaf)
        that shares this tensor's memory, so ported code works (`p.data.add_(g, alpha=-lr)`,
        `m.weight.data.normal_(0, 0.02)`, `x.data.numpy()`). Unlike detach() it counts its
        in-place changes apart, so autograd does not see a write made through it (that is
        what `.data` is for; detach()'s is checked). The raw NumPy/CuPy array, for
        minigrad's internals, is `._data` (`.numpy()` gives a host array)."""
        return Tensor._make(self._data, self.device)

    @data.setter
    def data(self, value):
        """`p.data = new` (a Tensor, or an array of p's device) swaps p's array outside
        autograd, as PyTorch's (e.g. to re-initialise a parameter); its shape and dtype may
        change, as there."""
        self._data = _data_value(self, value._data if isinstance(value, Tensor) else value,
                                 value)

    @property
    def grad(self):
        """The gradient backward() accumulated here (a leaf's, or a retain_grad() one's)."""
        return self._grad

    @grad.setter
    def grad(self, g):                   # checked as PyTorch checks it: the optimiser and
        if g is not None:                # the next backward would trip on it later
            if not isinstance(g, Tensor):
                raise TypeError(f"assigned grad must be a Tensor or None, got "
                                f"{type(g).__name__}")
            for what, mine, given in (("shape", self.shape, g.shape),
                                      ("dtype", self.dtype, g.dtype),
                                      ("device", self.device, g.device)):
                if mine != given:
                    raise RuntimeError(f"assigned grad has {what} {given}, but the tensor's "
                                       f"is {mine}")
        self._grad = g

    @property
    def backend(self):
        return backend.get(self.device)

    @property
    def shape(self):
        return Size(self._data.shape)

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def ndim(self):
        return self._data.ndim

    def size(self, dim=None):
        """The shape (PyTorch's spelling), or the length of one dim."""
        if dim is None:
            return self.shape
        if not backend.is_integer(dim) or not -self.ndim <= dim < self.ndim:
            raise IndexError(f"size: dim {dim!r} is out of range for a tensor of {self.ndim} "
                             f"dims" + (f" (valid: {-self.ndim} .. {self.ndim - 1})"
                                        if self.ndim else ""))
        return self._data.shape[dim]
    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    @property
    def _version(self):
        """How many times this tensor's memory has been changed in place (PyTorch's
        `_version`). Views of one memory share the count; Function.apply records it and
        backward refuses to use a tensor whose count has moved since."""
        return self._version_counter[0]

    @property
    def is_leaf(self):
        return self._ctx is None

    @property
    def grad_fn(self):      # the op that made this tensor (its .inputs), None for a leaf
        return self._ctx

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        """The slices along dim 0 (as unbind(0)); a 0-d tensor has none to give."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self):     # the dtype named unless PyTorch's defaults (NumPy's differ)
        with printing.options():                         # (mg.set_printoptions)
            # NumPy's array repr, less its dtype and shape, indented under "tensor("
            body = "tensor(" + backend.np.array2string(
                self.numpy(), separator=", ", prefix="tensor(", suffix=")") + ")"
        # (an empty tensor shows no values to tell its dtype by: named unless float32)
        implied = ("float32",) if self._data.size == 0 else ("float32", "int64", "bool")
        extra = [f"dtype={self.dtype.name}"] * (self.dtype.name not in implied)
        extra += [f"device='{self.device}'"] if self.device != "cpu" else []
        if self.requires_grad:
            extra.append("requires_grad=True" if self.is_leaf else
                         f"grad_fn={type(self._ctx).__name__}")
        if extra:
            body = body[:-1] + ", " + ", ".join(extra) + ")"
        return body

    __hash__ = object.__hash__  # == is elementwise, so hash by identity

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"the truth value of a tensor of shape {self.shape} is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):                 # only an integer tensor is an index (as PyTorch):
        if self.dtype.kind not in "iub":  # a float one would be truncated silently
            raise TypeError(f"only an integer tensor of one element can be an index, got "
                            f"dtype {self.dtype}")
        return int(self.item())

    def __format__(self, spec):
        """f"{loss:.4f}": a 0-d tensor formats as its number (as PyTorch)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __abs__(self):
        return self.abs()

    def __pos__(self):
        return self

    # ---- conversion and autograd state ------------------------------------------------
    def numpy(self, *, force=False):
        """A host NumPy array: on the CPU the tensor's own array (`_data`, sharing its
        memory, as PyTorch's), a copy when the tensor is on the GPU. (force=True, PyTorch's
        leave to detach and copy first, changes nothing: that is what happens anyway.)"""
        return self.backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        """np.asarray(t): the values (without grad). Only on the CPU: a GPU tensor is copied
        to the host explicitly, with .cpu() or .numpy() (as PyTorch)."""
        if self.device != "cpu":
            raise TypeError(f"cannot convert a tensor on {self.device!r} to a NumPy array "
                            f"implicitly; call .cpu() or .numpy() first")
        a = self._data if dtype is None else self._data.astype(dtype, copy=False)
        return a.copy() if copy else a

    def item(self):
        if self._data.size != 1:
            raise ValueError(f"item(): only one-element tensors can be converted to a Python "
                             f"scalar, got shape {self.shape}")
        return self._data.item()

    def tolist(self):
        return self.numpy().tolist()

    def to(self, device=None, dtype=None, non_blocking=False, copy=False, *,
           memory_format=_mf.preserve_format):
        """A copy on another device and/or of another dtype (self when nothing changes, but
        a copy with copy=True), and/or laid out in memory_format (see memory_format.to).
        Differentiable: gradients flow back to the original device and dtype. non_blocking
        is taken, as PyTorch's, and changes nothing (every copy here is synchronous)."""
        if isinstance(dtype, bool):     # t.to(dtype or tensor, non_blocking, copy): shifted
            dtype, non_blocking, copy = None, dtype, non_blocking
        device, dtype = split_device_dtype(device, dtype)
        out = self
        if dtype is not None and backend.dtype(dtype) != self.dtype:
            out = ops.shape.astype(out, backend.dtype(dtype))
        if device is not None and backend.device_name(device) != self.device:
            out = ops.shape.to_device(out, backend.device_name(device))
        out = _mf.to(self, out, memory_format)
        return out.clone(memory_format=memory_format) if copy and out is self else out

    def cpu(self, memory_format=_mf.preserve_format):
        return self.to("cpu", memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, memory_format=_mf.preserve_format):
        device = f"cuda:{device}" if isinstance(device, int) else device or "cuda"
        return self.to(device, memory_format=memory_format)

    # (float() ... bool(), with memory_format=: tensor_more.py, beside byte/short/char)
    def is_floating_point(self): return backend.is_floating(self.dtype)

    def type_as(self, other):                            # as PyTorch: both
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as: expected a Tensor, got {type(other).__name__}")
        return self.to(other.device, other.dtype)
    # new tensors on self's device, of self's dtype, outside any graph (PyTorch's new_*)
    def new_zeros(self, *size, **kw): return creation.zeros(*size, **self._like(**kw))
    def new_ones(self, *size, **kw): return creation.ones(*size, **self._like(**kw))
    def new_full(self, size, fill_value, **kw):
        return creation.full(size, fill_value, **self._like(**kw))
    def new_tensor(self, data, **kw): return creation.tensor(data, **self._like(**kw))
    def new_empty(self, *size, **kw): return creation.empty(*size, **self._like(**kw))

    def _like(self, *, dtype=None, device=None, requires_grad=False):
        return {"dtype": self.dtype if dtype is None else dtype,
                "device": self.device if device is None else device,
                "requires_grad": requires_grad}

    def detach(self):
        """The same data, cut from the graph (an in-place change of either is seen by both,
        so they share the version count)."""
        t = Tensor._make(self._data, self.device)
        t._version_counter = self._version_counter
        return t

    def detach_(self):
        """Cut this tensor from its graph in place: it becomes a leaf that needs no grad, as
        PyTorch's. A view of another tensor cannot be (it shares that tensor's history).
        Nor can a tensor that a recorded op still uses: the graph's nodes here are the
        tensors themselves, so results already computed from it would lose their gradient
        through it (PyTorch keeps it). Truncated backprop's `h.detach_()` after backward is
        fine: backward released those ops."""
        ctx = self._ctx
        if ctx is not None and ctx.inputs is not None and any(
                p._version_counter is self._version_counter for p in ctx.inputs):
            raise RuntimeError("detach_: the tensor is a view of another (a reshape, slice, "
                               "transpose...), which cannot be detached in place; use "
                               ".detach() instead")
        if ctx is not None and _used_by_a_recorded_op(self):
            raise RuntimeError("detach_: results already computed from this tensor would "
                               "lose their gradient through it (here the graph's nodes are "
                               "the tensors themselves); write t = t.detach() instead, or "
                               "detach_ before using it")
        self._ctx, self.requires_grad = None, False
        return self

    def clone(self, *, memory_format=_mf.preserve_format):
        """A differentiable copy; its layout as PyTorch's (minigrad/memory_format.py)."""
        return _mf.clone(self, memory_format)

    def contiguous(self, memory_format=_mf.contiguous_format):
        """self if laid out in memory_format, else a (differentiable) copy that is."""
        return _mf.contiguous(self, memory_format)

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not backend.is_floating(self.dtype):
            raise RuntimeError(f"only floating-point tensors can require gradients, "
                               f"got dtype {self.dtype}; convert with .float() first")
        if requires_grad is False and not self.is_leaf:
            raise RuntimeError("requires_grad_(False) on a non-leaf tensor; use .detach()")
        self.requires_grad = builtins.bool(requires_grad)
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's `.grad`. The saved arrays of the
        graph are freed afterwards unless `retain_graph=True` (default: `create_graph`).
        With create_graph=True each leaf's `.grad` holds a graph that refers back to the leaf:
        a reference cycle, freed by zero_grad() or the garbage collector, as in PyTorch;
        `mg.grad(..., create_graph=True)` returns the gradients instead and makes no cycle.
        inputs= (tensors): only these get a `.grad`, as mg.autograd.backward's."""
        if inputs is not None:
            from minigrad.autograd import backward
            return backward(self, gradient, retain_graph, create_graph, inputs)
        g = _initial_grad(self, gradient)
        run_backward([self], [g], create_graph if retain_graph is None else retain_graph,
                     create_graph)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in `.grad` when backward computes it (a leaf
        keeps its gradient anyway), e.g. to check a hand-derived backward step by step."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: the tensor does not require grad, so no "
                               "gradient will reach it")
        if not self.is_leaf:
            self._retains_grad = True

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """Call hook(grad) each time backward computes this tensor's gradient; a Tensor it
        returns replaces the gradient (same shape and dtype) before it flows on or into
        `.grad`. Returns a handle: handle.remove() takes the hook off again."""
        from minigrad.grad_hooks import HookHandle
        if not self.requires_grad:
            raise RuntimeError("register_hook: the tensor does not require grad, so no "
                               "gradient will reach it")
        if not callable(hook):
            raise TypeError(f"register_hook: expected a function of the gradient, got "
                            f"{type(hook).__name__}")
        if self._hooks is None:
            self._hooks = {}
        return HookHandle(self._hooks, hook)

    # ---- in-place operators (ops/inplace.py): each checks it may, writes, then counts
    # itself in `_version`. Without them Python would rebind x += y to a new tensor: a loop
    # `p -= lr * p.grad` over parameters would change none of them
    def __setitem__(self, index, value): ops.inplace.setitem(self, index, value)
    def __iadd__(self, o): return ops.inplace.update(self, "+=", ops.elementwise.add, o)
    def __isub__(self, o): return ops.inplace.update(self, "-=", ops.elementwise.sub, o)
    def __imul__(self, o): return ops.inplace.update(self, "*=", ops.elementwise.mul, o)
    def __itruediv__(self, o): return ops.inplace.update(self, "/=", ops.elementwise.div, o)
    def __ipow__(self, o): return ops.inplace.update(self, "**=", ops.elementwise.pow, o)
    def __imod__(self, o): return ops.inplace.update(self, "%=", ops.math.remainder, o)
    def __ifloordiv__(self, o): return ops.inplace.update(self, "//=", ops.math.floor_divide, o)
    # NumPy on the left: `array + tensor` (and -, *, /, **, @, comparisons) is the tensor op,
    # as `tensor + array`; `array += tensor` writes into the array (`a += -lr * p.grad`);
    # any other NumPy function of a tensor works on its values
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ops.elementwise.numpy_ufunc(ufunc, method, inputs, kwargs)


def _used_by_a_recorded_op(t):
    """Whether an op of a graph still alive (not yet released by backward) took t as an
    input (see _live_consumers)."""
    return bool(_live_consumers(t))


def _live_consumers(t):
    """The ops of graphs still alive (not yet released by backward) that took t as an
    input, read from the weak references each op leaves on its inputs when it is recorded
    (autograd.py's note_use): asked by detach_ and by an in-place write
    (ops/inplace_autograd.py), which must re-route those ops."""
    if not t._uses:
        return []
    return [f for f in (r() for r in t._uses)
            if _alive(f) and any(p is t for p in f.inputs)]


def _typed(x):
    """A tensor, or a NumPy value (a list of them keeps their dtype, as in PyTorch)."""
    return isinstance(x, Tensor) or isinstance(getattr(x, "dtype", None), backend.DTYPE_CLASS)



from minigrad import ops, creation, nn  # noqa: E402  (last: they need Tensor, its methods them)
from minigrad import tensor_methods, tensor_inplace, tensor_operators  # noqa: E402
tensor_methods.ops = tensor_inplace.ops = tensor_operators.ops = ops
tensor_inplace.nn = nn
