"""audits — empirical privacy audits that statistically test a claimed (ε, δ).

Run a mechanism or solver many times on neighbouring datasets (or with random canaries), attack
the outputs, and turn the attack's success into a lower confidence bound on ε with a verdict
against the claim. See :func:`run_audit`, :mod:`audits.statistics` (Clopper–Pearson, Gaussian-DP,
one-run estimators), :mod:`audits.neighbours` (neighbouring datasets and canaries),
:mod:`audits.targets` (every library mechanism, solver and planted bug), :mod:`audits.conformance`
(sensitivity conformance: each release replayed on neighbouring datasets), :mod:`audits.plots`, and
the ``dpcore audit`` command (:mod:`audits.cli`).
"""

from .report import AuditResult, append_record, format_table, read_records
from .target import NOISE_FAMILIES, AuditTarget, FunctionTarget, one_run_from_sample, shift_target

# The runner and statistics (SciPy), targets, sensitivity checks and the library-wide audit (the
# solvers, Numba) load on first use (PEP 562) so that ``import audits`` and the ``dpcore`` command
# line stay fast.
_LAZY = {
    "run_audit": "runner",
    "ESTIMATORS": "statistics",
    "Estimate": "statistics",
    "estimate": "statistics",
    "mechanism_target": "targets",
    "solver_target": "targets",
    "float_support_target": "targets",
    "MECHANISM_NAMES": "targets",
    "SOLVER_NAMES": "targets",
    "PLANTED_BUGS": "targets",
    "sensitivity_check": "sensitivity",
    "SensitivityReport": "sensitivity",
    "check_solver": "conformance",
    "ConformanceReport": "replay",
    "ReleaseCheck": "replay",
    "audit_all": "library_audit",
    "planted_bug_suite": "library_audit",
}


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'audits' has no attribute {name!r}")


__all__ = [
    *_LAZY,
    "AuditResult",
    "AuditTarget",
    "FunctionTarget",
    "NOISE_FAMILIES",
    "append_record",
    "format_table",
    "one_run_from_sample",
    "read_records",
    "shift_target",
]
