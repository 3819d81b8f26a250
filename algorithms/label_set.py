"""The classifiers' label set, and the warning when it is read from the private data.

Under replace-one neighbours, changing one record's label can add or remove a class when a class has
a single member; a label set taken as ``unique(y)`` then changes ``classes_`` (and, for
:class:`~algorithms.mlp.DPMLPClassifier`, the shape of the output layer) or makes ``fit`` raise —
with certainty, whatever the noise. The privacy guarantee of ``privacy_`` covers the label set only
when it is public: pass ``classes``. Following scikit-learn, ``classes=None`` still infers it from
``y``, and warns with :class:`PrivacyLeakWarning` (as diffprivlib does for data-derived bounds).
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

__all__ = ["PrivacyLeakWarning", "label_set"]


class PrivacyLeakWarning(UserWarning):
    """Something the release depends on was read from the private data, outside the accounted budget."""


def label_set(classes: Optional[Any], y: np.ndarray, where: str) -> np.ndarray:
    """The sorted public label set ``classes``, or ``unique(y)`` with a :class:`PrivacyLeakWarning`.

    Parameters
    ----------
    classes : array-like or None
        The public label set given by the user.
    y : numpy.ndarray
        The training labels (only read when ``classes`` is None).
    where : str
        Name of the estimator, for the message.
    """
    if classes is not None:
        labels = np.asarray(classes)
        if labels.ndim != 1:
            raise ValueError(f"classes must be a 1-D sequence of labels; got shape {labels.shape}")
        if labels.dtype.kind in "fc" and not np.all(np.isfinite(labels)):
            raise ValueError(f"classes must contain only finite labels (no NaN or inf); got {labels.tolist()}")
        return np.unique(labels)
    warnings.warn(
        f"{where}: classes=None takes the label set from the training labels, which the privacy guarantee "
        "does not cover (one replaced record can add or remove a class); pass the public label set as classes=",
        PrivacyLeakWarning, stacklevel=3,
    )
    return np.unique(y)
