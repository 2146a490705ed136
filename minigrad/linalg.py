"""mg.linalg: PyTorch's torch.linalg names for the linear algebra of ops/linalg.py."""
from minigrad.ops.linalg import (det, slogdet, inv, solve, cholesky, matrix_power,  # noqa: F401
                                 LinAlgError)
from minigrad.ops.matmul import matmul  # noqa: F401
from minigrad.ops.linalg_more import (vector_norm, matrix_norm, norm, cross,  # noqa: F401
                                      multi_dot, vecdot, diagonal, vander, tensorinv,
                                      tensorsolve)
from minigrad.ops.linalg_decomp import qr, eigh, eigvalsh, svd, svdvals  # noqa: F401
from minigrad.ops.linalg_solvers import (pinv, matrix_rank, cond,  # noqa: F401
                                         solve_triangular, matrix_exp)
from minigrad.ops.linalg_lstsq import lstsq  # noqa: F401
from minigrad.ops.linalg_lu import (lu_factor, lu_factor_ex, lu, lu_solve)  # noqa: F401
from minigrad.ops.linalg_ex import cholesky_ex, inv_ex, solve_ex  # noqa: F401
from minigrad.ops.linalg_householder import householder_product  # noqa: F401
from minigrad.ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
