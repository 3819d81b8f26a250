"""ε against epochs for the samplers at one setting (σ = 1, 100 steps per epoch, δ = 1e-5).

    python benchmarks/plot_samplers.py      # writes docs/samplers_epsilon_vs_epochs.png (needs the plot extra)

Certified upper bounds (balls-in-bins, Poisson, truncated Poisson with B = 1.2× the expected
batch, shuffling's valid no-amplification bound) and the shuffling lower bound, which shows that
shuffled batches can really cost far more than the Poisson number.
"""

import os

import dpcore
from dpcore import GaussianEvent, PoissonSampledEvent, RandomAllocationEvent, SelfComposedEvent
from dpcore import TruncatedPoissonSampledEvent
from dpcore.shuffle_bounds import shuffle_bounds

SIGMA, STEPS, DELTA, N = 1.0, 100, 1e-5, 60_000
EPOCHS = [1, 2, 5, 10, 20, 50, 100]


def curves():
    rows = {"balls-in-bins (certified)": [], "Poisson (certified)": [], "truncated Poisson B=1.2b (certified)": [],
            "shuffle: valid upper bound": [], "shuffle: lower bound": []}
    g = GaussianEvent(SIGMA)
    for e in EPOCHS:
        rows["balls-in-bins (certified)"].append(
            dpcore.get_epsilon(SelfComposedEvent(RandomAllocationEvent(g, STEPS), e), DELTA, accountant="pld").epsilon)
        rows["Poisson (certified)"].append(
            dpcore.get_epsilon(SelfComposedEvent(PoissonSampledEvent(g, 1 / STEPS), STEPS * e), DELTA).epsilon)
        rows["truncated Poisson B=1.2b (certified)"].append(dpcore.get_epsilon(
            SelfComposedEvent(TruncatedPoissonSampledEvent(g, 1 / STEPS, 720, N), STEPS * e), DELTA).epsilon)
        b = shuffle_bounds(SIGMA / 2, STEPS, e, DELTA)  # replace_one: sigma relative to 2C
        rows["shuffle: valid upper bound"].append(b.upper)
        rows["shuffle: lower bound"].append(b.lower)
    return rows


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = curves()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"shuffle: lower bound": "--", "shuffle: valid upper bound": ":"}
    for name, values in rows.items():
        ax.plot(EPOCHS, values, styles.get(name, "-"), marker="o", ms=3, label=name)
        print(name, [round(v, 3) for v in values])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epochs (100 steps each)")
    ax.set_ylabel("epsilon at delta = 1e-5")
    ax.set_title("DP-SGD, noise multiplier 1, expected batch = 1% of the data")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    out = os.path.join(os.path.dirname(__file__), "..", "docs", "samplers_epsilon_vs_epochs.png")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote", os.path.normpath(out))
