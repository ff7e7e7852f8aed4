"""Agreement between judges who graded the same pairs (pure: numpy and scipy, no Django).

    ratings = build_ratings([(pair, judge, grade), ...], scale=[0, 1, 2, 3], threshold=2)
    report = compute_agreement(ratings, weights="quadratic", resamples=RESAMPLES, seed=0)
    cohen_kappa(a, b, scale=[0, 1, 2, 3], weights="linear") -> Statistic

Every number is a Statistic: a value with its bootstrap interval, or None with the reason
in plain words (never NaN). Intervals are percentile intervals over resamples of the pairs,
drawn with numpy's default generator from ``seed``: same seed, same interval.

Modules: core (Statistic, Ratings, bands, bootstrap), kappa (Cohen's kappa, its standard
error), multirater (Fleiss' kappa, Krippendorff's alpha, observed agreement), report (the
campaign report), breakdowns (per topic, per judge, against gold). The oracles in
tests/annotation/test_agreement.py are scikit-learn, statsmodels and krippendorff.
"""

from .breakdowns import (
    Calibration,
    JudgeFlag,
    JudgeProfile,
    TopicAgreement,
    agreement_by_topic,
    calibrate_judge,
    flag_judges,
    judge_profiles,
)
from .core import (
    RESAMPLES,
    Ratings,
    Statistic,
    build_ratings,
    krippendorff_band,
    landis_koch,
    resample_items,
)
from .kappa import cohen_kappa, kappa_std_error
from .multirater import fleiss_kappa, krippendorff_alpha, observed_agreement
from .report import AgreementReport, PairAgreement, compute_agreement

__all__ = [
    "RESAMPLES",
    "AgreementReport",
    "Calibration",
    "JudgeFlag",
    "JudgeProfile",
    "PairAgreement",
    "Ratings",
    "Statistic",
    "TopicAgreement",
    "agreement_by_topic",
    "build_ratings",
    "calibrate_judge",
    "cohen_kappa",
    "compute_agreement",
    "flag_judges",
    "fleiss_kappa",
    "judge_profiles",
    "kappa_std_error",
    "krippendorff_alpha",
    "krippendorff_band",
    "landis_koch",
    "observed_agreement",
    "resample_items",
]
