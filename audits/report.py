"""Audit records: :class:`AuditResult`, its JSON form, an append-only audit log and a text table.

Every audit answers one question — "is the claimed (ε, δ) consistent with what an attack can
see?" — and its record states the claim (ε, δ, neighbouring relation, noise family), how it was
tested (estimator, attack statistic, trials, seed, confidence) and the answer: the lower confidence
bound ``eps_lower``, the p-value of the null "the claim holds", and the verdict (``"violated"``
when the estimator rejects the claim, e.g. ``eps_lower`` exceeds the claimed ε; else ``"pass"``, or
``"no power"`` when the audit could not have shown a violation at its budget, :func:`audits.power.label_power`).
A pass is not a proof of privacy: it only says this attack, at this budget, found no violation (Wang et
al. 2024, "curator attack").
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from dpcore.result import jsonable

__all__ = ["AuditResult", "REPORT_KEYS", "NO_POWER", "append_record", "read_records", "format_table"]

#: The verdict of an audit that rejected nothing but could not have shown a violation at its budget
#: (:func:`audits.power.label_power`): no evidence either way.
NO_POWER = "no power"

#: Keys every JSON record carries (issue 5, "Command line and names").
REPORT_KEYS = (
    "eps_lower",
    "confidence",
    "claimed_epsilon",
    "delta",
    "trials",
    "estimator",
    "p_value",
    "verdict",
    "relation",
    "statistic",
    "target",
)


@dataclass(frozen=True)
class AuditResult:
    """The outcome of one audit.

    Attributes
    ----------
    target : str
        Name of the audited target.
    claimed_epsilon, delta : float
        The claim under test (ε in nats, may be ``inf``; δ in (0, 1)).
    relation : str
        Neighbouring relation of the claim (``"add_remove"`` / ``"replace_one"``).
    noise_family : str
        Noise family of the claim.
    statistic : str
        What the attack score is.
    estimator : str
        ``"clopper-pearson"``, ``"gdp"`` or ``"one-run"``.
    confidence : float
        Confidence level of ``eps_lower``.
    eps_lower : float
        Lower confidence bound on ε (nats), rounded down.
    p_value : float
        p-value of "the claimed ε holds" (small = evidence of a violation), rounded up.
    verdict : str
        ``"violated"`` if the estimator rejects the claim (``eps_lower > claimed_epsilon``, or the claimed
        curve rejected); else ``"no power"`` when the audit had no evidence (:func:`audits.power.label_power`),
        else ``"pass"``.
    trials : int
        Runs per side (``D`` and ``D′``) for the two-sample estimators; canaries for ``"one-run"``.
    seed : int
        Root seed of the ``SeedSequence`` the batch seeds were spawned from.
    wall_time : float
        Seconds spent.
    details : dict
        Estimator details (threshold, counts, μ bound, guesses …).
    samples : tuple of ndarray or None
        The raw data ``(scores0, scores1)`` or ``(included, scores)``, kept in memory for plots;
        not serialised.
    """

    target: str
    claimed_epsilon: float
    delta: float
    relation: str
    noise_family: str
    statistic: str
    estimator: str
    confidence: float
    eps_lower: float
    p_value: float
    verdict: str
    trials: int
    seed: int
    wall_time: float = 0.0
    details: Dict[str, Any] = field(default_factory=dict, compare=False)
    samples: Optional[Tuple[np.ndarray, np.ndarray]] = field(default=None, compare=False, repr=False)

    @property
    def violated(self) -> bool:
        """True when the audit rejected the claim."""
        return self.verdict == "violated"

    def to_dict(self) -> Dict[str, Any]:
        """JSON-serialisable record (``inf`` is written as the string ``"inf"``)."""
        d = {
            "target": self.target,
            "eps_lower": self.eps_lower,
            "confidence": self.confidence,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "trials": self.trials,
            "estimator": self.estimator,
            "p_value": self.p_value,
            "verdict": self.verdict,
            "relation": self.relation,
            "statistic": self.statistic,
            "noise_family": self.noise_family,
            "seed": self.seed,
            "wall_time": self.wall_time,
            "details": self.details,
        }
        return jsonable(d)

    def to_json(self, **kwargs: Any) -> str:
        """The record as a JSON string (strict JSON: no NaN/Infinity literals)."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)


def append_record(result: AuditResult, path: "str | os.PathLike[str]") -> None:
    """Append ``result`` as one JSON line to the audit log at ``path`` (created if missing)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(result.to_json() + "\n")


def read_records(path: "str | os.PathLike[str]") -> List[Dict[str, Any]]:
    """All records of an audit log written by :func:`append_record`, oldest first."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def format_table(results: Iterable[AuditResult]) -> str:
    """Plain-text table: target, estimator, trials, claimed ε, δ, ε_lb, p-value, verdict."""
    header = ("target", "estimator", "trials", "claimed eps", "delta", "eps_lb", "p-value", "verdict")
    rows = [header]
    for r in results:
        rows.append(
            (
                r.target,
                r.estimator,
                str(r.trials),
                f"{r.claimed_epsilon:.4g}",
                f"{r.delta:.3g}",
                f"{r.eps_lower:.4f}",
                f"{r.p_value:.3g}",
                r.verdict.upper() if r.violated else r.verdict,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
