"""torch's other names for dtypes and its math constants: mg.float, mg.double, mg.half,
mg.long, mg.int, mg.short (float32, float64, float16, int64, int32, int16, as torch's),
mg.dtype (the class every dtype is an instance of: `isinstance(t.dtype, mg.dtype)`), and
mg.pi, mg.e, mg.inf, mg.nan, mg.newaxis. mg.bfloat16 exists so that code naming it runs,
and is refused wherever it is used as a dtype (NumPy and CuPy have none).

minigrad/__init__.py imports these last of all: `float` and `int` shadow the builtins in
the module that holds them, so no code may follow them there (nor here)."""
import math

from minigrad import backend

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None                           # x[:, mg.newaxis] is x[:, None], as torch's

dtype = backend.DTYPE_CLASS              # NumPy's dtype class: minigrad's dtypes are its
double, half = backend.float64, backend.float16
bfloat16 = backend.UnavailableDtype("bfloat16")
long, short = backend.int64, backend.dtype("int16")
float, int = backend.float32, backend.int32      # noqa: A001  (last: they shadow builtins)
