"""Linear algebra, one module per kind of algorithm:

- products: mm, bmm, matmul, addmm, linear, ... (ONNX MatMul / Gemm);
- lu: LU with partial pivoting and what it gives (det, slogdet, solve, inv, lu_*), and the
  triangular solves;
- cholesky: Cholesky factorisation, cholesky_solve, cholesky_inverse;
- ldl: LDLᵀ with Bunch-Kaufman pivoting (ldl_factor, ldl_solve), LAPACK's sytf2/sytrs;
- qr: Householder QR the LAPACK way (geqrf, linalg_qr, householder_product, ormqr);
- spectral: Jacobi eigenvalue iteration (eigh) and one-sided Jacobi SVD (svd, pinv);
- eig: the general (nonsymmetric) eigenvalue problem as LAPACK's geev: Hessenberg reduction,
  Francis double-shift QR iteration, back substitution for the eigenvectors (eig, eigvals);
- matrix_functions: matrix_exp by scaling and squaring;
- lstsq: linalg_lstsq through the SVD.
- composites: what torch composes from these (det, inv, svd, qr, pinv under their public and
  legacy names, matrix_power, multi_dot, tensordot, inner, vecdot).

ONNX has Det and little else, so the factorisations are written out step by step. The steps
over the matrix dimension are unrolled (the matrix dimensions must be static, batch dimensions
may be dynamic); the iterations whose count depends on the data (Jacobi sweeps, the squarings of
matrix_exp) are ONNX Loops (`_common.loop`).
"""

from torchlib.ops.linalg import (
    cholesky,  # noqa: F401
    composites,  # noqa: F401
    eig,  # noqa: F401
    ldl,  # noqa: F401
    lstsq,  # noqa: F401
    lu,  # noqa: F401
    matrix_functions,  # noqa: F401
    products,  # noqa: F401
    qr,  # noqa: F401
    spectral,  # noqa: F401
)
