"""Transforms that rearrange or combine others, as torch.distributions.transforms:
IndependentTransform, ReshapeTransform, CatTransform and StackTransform."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import sum_rightmost
from minigrad.distributions.transforms import Transform, _check_transform


class IndependentTransform(Transform):
    """base_transform with its rightmost reinterpreted_batch_ndims batch dims taken into
    the event: the same values, the log-det summed over those dims."""
    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        _check_transform(base_transform, "IndependentTransform")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"IndependentTransform: reinterpreted_batch_ndims must be an "
                             f"int >= 0, got {reinterpreted_batch_ndims!r}")
        super().__init__(cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _check_dims(self, x, what):
        need = self.domain.event_dim if what == "input" else self.codomain.event_dim
        if x.dim() < need:
            raise ValueError(f"IndependentTransform: the {what} needs at least {need} dims, "
                             f"got shape {tuple(x.shape)}")

    def _call(self, x):
        self._check_dims(x, "input")
        return self.base_transform(x)

    def _inverse(self, y):
        self._check_dims(y, "output")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"IndependentTransform({self.base_transform!r}, " \
               f"{self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """The rightmost dims of shape in_shape reshaped to out_shape (same element count):
    volume-preserving, so the log-det is 0."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError(f"ReshapeTransform: in_shape {self.in_shape} and out_shape "
                             f"{self.out_shape} have different numbers of elements")
        super().__init__(cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    def _batch(self, shape, event, who):
        shape = tuple(shape)
        if len(shape) < len(event) or shape[len(shape) - len(event):] != event:
            raise ValueError(f"ReshapeTransform: the {who} shape {shape} does not end in "
                             f"{event}")
        return shape[:len(shape) - len(event)]

    def _call(self, x):
        return x.reshape(self._batch(x.shape, self.in_shape, "input") + self.out_shape)

    def _inverse(self, y):
        return y.reshape(self._batch(y.shape, self.out_shape, "output") + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return mg.zeros(self._batch(x.shape, self.in_shape, "input"), dtype=x.dtype,
                        device=x.device)

    def forward_shape(self, shape):
        return self._batch(shape, self.in_shape, "input") + self.out_shape

    def inverse_shape(self, shape):
        return self._batch(shape, self.out_shape, "output") + self.in_shape

    def __repr__(self):
        return f"ReshapeTransform(in_shape={self.in_shape}, out_shape={self.out_shape})"


def _check_seq(tseq, who):
    tseq = list(tseq)
    if not tseq:
        raise ValueError(f"{who}: needs at least one transform")
    for t in tseq:
        _check_transform(t, who)
    return tseq


class CatTransform(Transform):
    """tseq[i] applied to the i-th slice (of lengths[i], default 1) of x along dim, the
    results concatenated: torch.cat's counterpart for transforms."""
    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        tseq = _check_seq(tseq, "CatTransform")
        super().__init__(cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else tseq
        self.lengths = [1] * len(tseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: {len(self.transforms)} transforms but "
                             f"{len(self.lengths)} lengths")
        self.dim = dim

    @property
    def length(self):
        return sum(self.lengths)

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim,
                               self.lengths)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, v, who):
        if not -v.dim() <= self.dim < v.dim() or v.shape[self.dim] != self.length:
            raise ValueError(f"CatTransform: the {who} needs {self.length} entries along dim "
                             f"{self.dim}, got shape {tuple(v.shape)}")
        start = 0
        for length in self.lengths:
            yield v.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return mg.cat([t(s) for t, s in zip(self.transforms, self._slices(x, "input"))],
                      self.dim)

    def _inverse(self, y):
        return mg.cat([t.inv(s) for t, s in zip(self.transforms,
                                                self._slices(y, "output"))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x, "input"),
                             self._slices(y, "output")):
            terms.append(sum_rightmost(t.log_abs_det_jacobian(xs, ys),
                                       self.event_dim - t.event_dim))
        # a dim left of the event survives in the log-dets: concatenate along it;
        # a dim inside the event was summed away: add the pieces
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return mg.cat(terms, dim) if dim < 0 else sum(terms[1:], terms[0])

    def __repr__(self):
        return f"CatTransform({self.transforms!r}, dim={self.dim}, lengths={self.lengths})"


class StackTransform(Transform):
    """tseq[i] applied to x.select(dim, i), the results stacked along dim."""
    def __init__(self, tseq, dim=0, cache_size=0):
        tseq = _check_seq(tseq, "StackTransform")
        super().__init__(cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else tseq
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, v, who):
        if not -v.dim() <= self.dim < v.dim() or v.shape[self.dim] != len(self.transforms):
            raise ValueError(f"StackTransform: the {who} needs {len(self.transforms)} "
                             f"entries along dim {self.dim}, got shape {tuple(v.shape)}")
        return [v.select(self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return mg.stack([t(s) for t, s in zip(self.transforms, self._slices(x, "input"))],
                        self.dim)

    def _inverse(self, y):
        return mg.stack([t.inv(s) for t, s in zip(self.transforms,
                                                  self._slices(y, "output"))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [sum_rightmost(t.log_abs_det_jacobian(a, b), self.event_dim - t.event_dim)
                 for t, a, b in zip(self.transforms, self._slices(x, "input"),
                                    self._slices(y, "output"))]
        # the log-dets lack x's event_dim rightmost dims: a batch dim `dim` of x is dim
        # event_dim further right among them (stacking at `dim` itself misplaced it: a
        # (3, 2) log-det for x of shape (2, 3, 4), dim=-2 and vector transforms; torch too)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return mg.stack(terms, dim if dim < 0 else self.dim)

    def __repr__(self):
        return f"StackTransform({self.transforms!r}, dim={self.dim})"
