"""Weight normalisations as parametrizations (parametrize.py), as
torch.nn.utils.parametrizations: `weight_norm` (the weight as a magnitude g times a direction
v/‖v‖) and `spectral_norm` (the weight divided by its largest singular value, estimated by
power iteration), and `orthogonal` (the weight kept orthogonal). Their state-dict keys
are PyTorch's, so its state dicts load."""
from minigrad.autograd import no_grad
from minigrad.backend import float32, float64
from minigrad.creation import eye, randn, zeros
from minigrad.dtypes import finfo
from minigrad.nn.module import Module
from minigrad.nn.parametrize import register_parametrization
from minigrad.ops.elementwise import where
from minigrad.ops.linalg import mv, solve, vdot
from minigrad.ops.linalg_householder import householder_product
from minigrad.ops.linalg_solvers import matrix_exp
from minigrad.ops.math import allclose
from minigrad.ops.shape import cat
from minigrad.ops.norms import norm, normalize
from minigrad.tensor import Tensor


def _norm_except_dim(v, dim):
    """‖v‖₂ over every dim but `dim`, kept as size-1 dims (dim=-1: of the whole tensor,
    a 0-d tensor), as torch.norm_except_dim."""
    if dim == -1:
        return norm(v)
    others = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return norm(v, 2, others, keepdim=True) if others else v.abs()


class _WeightNorm(Module):
    """weight = g · v / ‖v‖, the norm over every dim but `dim` (None: over all)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize module.<name> as g · v/‖v‖ (Salimans & Kingma, 2016): `g`
    (parametrizations.<name>.original0, the norms, one per slice along `dim`) and `v`
    (original1, the direction) become the parameters. dim=None: one norm of the whole
    tensor. A state dict of the old torch.nn.utils.weight_norm (<name>_g, <name>_v) loads
    too. Returns module."""
    if not isinstance(getattr(module, name, None), Tensor):
        raise ValueError(f"weight_norm: {type(module).__name__} has no parameter or buffer "
                         f"named '{name}'")
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def old_keys(_module, state_dict, prefix, *_):
        g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g in state_dict and v in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v)
    old_keys.parametrized_tensor = name      # remove_parametrizations removes it with it
    module.register_load_state_dict_pre_hook(old_keys)
    return module


class _SpectralNorm(Module):
    """weight / σ, σ ≈ the largest singular value of the weight as a matrix (`dim` its rows),
    u·(W v) from the buffers _u, _v, which one power iteration per call refines in training
    mode, as PyTorch. A 1-D weight is divided by its norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < max(ndim, 1):
            raise IndexError(f"spectral_norm: dim must be in [-{ndim}, {ndim - 1}] for a "
                             f"weight of {ndim} dims, got {dim}")
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: n_power_iterations must be positive, got "
                             f"{n_power_iterations}")
        self.dim = dim % max(ndim, 1)
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            w = self._matrix(weight)
            h, wd = w.shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", normalize(randn(h, **kw), dim=0, eps=eps))
            self.register_buffer("_v", normalize(randn(wd, **kw), dim=0, eps=eps))
            self._power_method(w, 15)

    def _matrix(self, weight):
        """The weight as a matrix: dim `dim` its rows, the other dims flattened."""
        if self.dim:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    @no_grad()
    def _power_method(self, w, n):
        """u ← Wv/‖Wv‖, v ← Wᵀu/‖Wᵀu‖, n times, written into the buffers' own memory (a
        state dict taken before follows them, as PyTorch's)."""
        u, v = self._u, self._v
        for _ in range(n):
            u = normalize(mv(w, v), dim=0, eps=self.eps)
            v = normalize(mv(w.T, u), dim=0, eps=self.eps)
        for buf, new in ((self._u, u), (self._v, v)):
            buf._data[...] = new._data
            buf._version_counter[0] += 1

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        # copies: a later iteration writes the buffers, which backward must not see
        u, v = self._u.clone(), self._v.clone()
        return weight / vdot(u, mv(w, v))

    def right_inverse(self, value):
        return value        # any weight is σ·(weight/σ); the original keeps it as it is


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize module.<name> as weight/σ(weight) (Miyato et al., 2018), σ the largest
    singular value of the weight seen as a matrix with `dim` as rows (None: 1 for the
    ConvTranspose layers, whose output channels are dim 1, else 0), estimated by
    power iteration: the buffers parametrizations.<name>.0._u and _v start random and take
    n_power_iterations steps at each computation in training mode. Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter or buffer "
                         f"named '{name}'")
    if dim is None:
        from minigrad.nn.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- torch.nn.utils' older, hook-based spellings (deprecated in PyTorch) ------------------
def old_weight_norm(module, name="weight", dim=0):
    """nn.utils.weight_norm: here the parametrization above, so the state-dict keys are
    parametrizations.<name>.original0/1 rather than <name>_g/<name>_v (which still load)."""
    return weight_norm(module, name, dim)


def old_spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """nn.utils.spectral_norm: here the parametrization above (keys
    parametrizations.<name>.original/.0._u/.0._v, not <name>_orig/_u/_v)."""
    return spectral_norm(module, name, n_power_iterations, eps, dim)


def _remove(op, kind, module, name):
    plist = module._modules.get("parametrizations", {})
    if name not in plist or not isinstance(plist[name][0], kind):
        raise ValueError(f"{op}: {name} of {type(module).__name__} has no "
                         f"{op.replace('remove_', '')}")
    from minigrad.nn.parametrize import remove_parametrizations
    return remove_parametrizations(module, name)


def remove_weight_norm(module, name="weight"):
    """Undo nn.utils.weight_norm: module.<name> a plain parameter of its current value."""
    return _remove("remove_weight_norm", _WeightNorm, module, name)


def remove_spectral_norm(module, name="weight"):
    """Undo nn.utils.spectral_norm: module.<name> a plain parameter of its current value."""
    return _remove("remove_spectral_norm", _SpectralNorm, module, name)


# ---- orthogonal ----------------------------------------------------------------------------
_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _geqrf(A):
    """LAPACK's geqrf of A (..., m, n), m >= n, as torch.geqrf: R on and above the diagonal,
    the Householder vectors below it, and their scalars tau (..., n). Not differentiable
    (nor is PyTorch's); used under no_grad by right_inverse."""
    xp, (m, n) = A.backend.xp, A.shape[-2:]
    hs, taus = [], []
    for a in A._data.reshape((-1, m, n)):
        h, tau = xp.linalg.qr(a, mode="raw")        # h is the LAPACK array, transposed
        hs.append(h.T.astype(A.dtype))
        taus.append(tau.astype(A.dtype))
    shape = A.shape[:-2]
    return (Tensor._make(xp.stack(hs).reshape(shape + (m, n)), A.device),
            Tensor._make(xp.stack(taus).reshape(shape + (n,)), A.device))


def _make_orthogonal(A):
    """The Q of A = QR (A tall), with R's diagonal made non-negative."""
    X, tau = _geqrf(A)
    return householder_product(X, tau) * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    n, k = Q.shape[-2:]
    eps = 10.0 * n * finfo(Q.dtype).eps
    return bool(allclose(Q.mT @ Q, eye(k, dtype=Q.dtype, device=Q.device), atol=eps))


class _Orthogonal(Module):
    """An orthogonal matrix (orthonormal columns, or rows where wide) computed from the
    original: exp or Cayley transform of a skew-symmetric matrix built from its lower
    triangle, or a product of Householder reflectors from its strict lower triangle (its
    diagonal, ±1, signs the columns). use_trivialization: the result is `base` @ that, base an
    orthogonal buffer that assignment sets, the original reset to -I (which maps to I)."""

    def __init__(self, weight, orthogonal_map, use_trivialization=True):
        super().__init__()
        self.shape, self.orthogonal_map = weight.shape, orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2:]
        transposed = n < k
        if transposed:
            X, (n, k) = X.mT, (k, n)
        if self.orthogonal_map == "householder":
            A = X.tril(-1)
            Q = householder_product(A, 2.0 / (1.0 + (A * A).sum(-2)))
            # the diagonal holds ±1: signs, neither differentiated nor updated (as PyTorch's)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:                 # embedded in a square matrix
                X = cat([X, zeros(n, n - k, dtype=X.dtype, device=X.device)
                         .expand(X.shape[:-2] + (n, n - k))], dim=-1)
            A = X - X.mT                                         # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)
            else:                      # Cayley: (I - A/2)⁻¹ (I + A/2)
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    @no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"orthogonal: expected a matrix or batch of matrices of shape "
                             f"{self.shape}, got a tensor of shape {Q.shape}")
        Q_init = Q
        n, k = Q.shape[-2:]
        transpose = n < k
        if transpose:
            Q, (n, k) = Q.mT, (k, n)
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise NotImplementedError(
                    f"orthogonal: it is not possible to assign to the {self.orthogonal_map} "
                    f"map with use_trivialization=False (it has no inverse here); use "
                    f"use_trivialization=True or orthogonal_map='householder'")
            A, tau = _geqrf(Q)
            # the diagonal: R's signs (so forward's Q = QR's Q with diag(R) > 0), flipped
            # where LAPACK used no reflector (tau = 0), as forward always reflects
            d = A.diagonal(dim1=-2, dim2=-1).sign()
            d = where(tau == 0, -d, d)
            E = eye(n, k, dtype=A.dtype, device=A.device)
            A = A * (1 - E) + E * d.unsqueeze(-2)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:                          # completed to an n x n orthogonal matrix
            N = randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -I: forward maps it to I for every map (householder: the diagonal's signs)
        return -eye(*Q_init.shape[-2:], dtype=Q.dtype, device=Q.device) \
            .expand(Q_init.shape).clone()


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain module.<name> (a matrix, or a batch of them) to be orthogonal: QᵀQ = I (QQᵀ
    = I where it has more columns than rows), as torch.nn.utils.parametrizations.orthogonal.
    orthogonal_map: "matrix_exp", "cayley" or "householder"; None: matrix_exp for a square
    matrix, householder otherwise. use_trivialization=True (the default) keeps an orthogonal
    buffer parametrizations.<name>.0.base that the map multiplies (optimisation then moves
    around it), set when registering (from the weight, made orthogonal by QR where it is not)
    and at each assignment; False: the map alone, which only householder can assign to.
    Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"orthogonal: {type(module).__name__} has no parameter or buffer "
                         f"named '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"orthogonal: expected a matrix or batch of matrices, got a tensor "
                         f"of {weight.ndim} dims")
    if weight.dtype not in (float32, float64):
        raise TypeError(f"orthogonal: expected a float32 or float64 weight, got {weight.dtype}")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(f"orthogonal: orthogonal_map must be one of "
                         f"{', '.join(map(repr, _ORTHOGONAL_MAPS))}, got {orthogonal_map!r}")
    register_parametrization(module, name,
                             _Orthogonal(weight, orthogonal_map, use_trivialization),
                             unsafe=True)
    return module
