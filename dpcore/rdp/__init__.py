"""Rényi-DP curves of mechanisms and subsampled mechanisms (all values in nats, upper bounds)."""

from .dp_srm import dp_srm_rdp_bound
from .gaussian import gaussian_rdp, laplace_rdp, pure_dp_rdp
from .poisson_gaussian import poisson_subsampled_gaussian_rdp
from .poisson_general import poisson_subsampled_rdp
from .without_replacement import sampled_without_replacement_rdp
from .wor_gaussian import sampled_without_replacement_gaussian_rdp

__all__ = [
    "gaussian_rdp",
    "laplace_rdp",
    "pure_dp_rdp",
    "poisson_subsampled_gaussian_rdp",
    "poisson_subsampled_rdp",
    "sampled_without_replacement_rdp",
    "sampled_without_replacement_gaussian_rdp",
    "dp_srm_rdp_bound",
]
