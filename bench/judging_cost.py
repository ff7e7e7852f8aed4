"""How many judgments each pool-ordering strategy needs before the ranking of systems is
settled, replayed on synthetic campaigns with complete grades (bench/README.md, "Judging
cost").

For each scale (topics) and seed: bench/synthetic_systems.py makes 32 correlated systems over
graded qrels; depth-k pooling (k = --depth, 20) of their runs is the pool and the qrels'
grades of the pool are "all grades". Each strategy then orders the pool and the grades are
revealed one at a time in that order (each grade known before the next pair is chosen). After
every judgment the systems are scored by mean nDCG@10 over all topics with the grades so far
(unjudged = not relevant, trec_eval's linear gains and its ideal DCG from the grades it has),
and compared by Kendall's tau-b with the ranking by all grades.

Beside the synthetic scales, "real" replays the same strategies and seeds on the real test
collection (evaluation/collection: the Python and Django FAQs, as `manage.py demo` builds it):
the seven rankers' runs, pooled at the same depth, with the collection's known answers as all
grades (a pooled passage that is not a known answer counts 0, as MS MARCO's sparse qrels are
read). Its data are the same for every seed; only the strategies' own seeds change.

Reported per strategy, mean and standard deviation over the seeds, as a share of the pool:
judgments until tau first reaches 0.9 and 0.95, judgments until 90% of the pool's relevant
documents (grade >= 1) are found, and the share of the relevant documents found after 30% of
the pool. A Markdown table goes to stdout and bench/results/judging_cost.md, the raw figures
to bench/results/judging_cost.json, and the curves (means over seeds) to --plot (PNG,
matplotlib).
"""

import argparse
import bisect
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from synthetic_systems import PROFILES, generate_collection  # noqa: E402

from annotation.strategies import make_strategy  # noqa: E402
from annotation.strategies.discriminative import pair_bounds  # noqa: E402
from annotation.strategies.settling import (  # noqa: E402
    comparison_probability,
    kendall_tau,
    open_comparisons,
)

K = 10  # nDCG@10, the campaign measure the bench uses
LABELS = {
    "random": "random, topic by topic (today)",
    "random_pool": "random over the whole pool",
    "move_to_front": "move-to-front",
    "bandit": "bandit (MM-NS)",
    "bandit_pool": "bandit (MM-NS) over all topics' runs",
    "discriminative": "discriminative (MTC, nDCG@10)",
}
STRATEGY_OF = {
    "random_pool": ("random", {"across_topics": True}),
    "bandit_pool": ("bandit", {"across_topics": True}),
}
GRID = 200  # points per curve in the plot


def pool(collection, depth):
    """Depth-k pool: (pairs, rankings cut at depth, grades of the pool)."""
    rankings = {
        run: {qid: docs[:depth] for qid, docs in by_topic.items()}
        for run, by_topic in collection.runs.items()
    }
    pairs = sorted(
        {(qid, d) for by_topic in rankings.values() for qid, docs in by_topic.items() for d in docs}
    )
    truth = {p: collection.qrels[p[0]][p[1]] for p in pairs}
    return pairs, rankings, truth


class Scorer:
    """Mean nDCG@10 of every system with the grades so far, updated one grade at a time."""

    def __init__(self, pairs, rankings):
        self.systems = sorted(rankings)
        self.row = {p: i for i, p in enumerate(pairs)}
        qids = sorted({q for q, _ in pairs})
        self.topic = {q: t for t, q in enumerate(qids)}
        self.v = np.zeros((len(pairs), len(self.systems)))
        for s, run in enumerate(self.systems):
            for qid, docs in rankings[run].items():
                for rank, docno in enumerate(docs[:K], start=1):
                    self.v[self.row[qid, docno], s] = 1 / math.log2(rank + 1)
        self.dcg = np.zeros((len(qids), len(self.systems)))
        self.ndcg = np.zeros_like(self.dcg)
        self.judged = [[] for _ in qids]  # each topic's positive grades, ascending
        self.mean = np.zeros(len(self.systems))
        self.n_topics = len(qids)
        self.topic_of = np.array([self.topic[q] for q, _ in pairs])

    def add(self, pair, grade) -> bool:
        """Record a grade; True when the scores changed."""
        if grade <= 0:
            return False
        t = self.topic[pair[0]]
        self.dcg[t] += grade * self.v[self.row[pair]]
        bisect.insort(self.judged[t], grade)
        top = self.judged[t][::-1][:K]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(top))
        new = self.dcg[t] / idcg
        self.mean += (new - self.ndcg[t]) / self.n_topics
        self.ndcg[t] = new
        return True


def stop_now(scorer, grades, *, confidence=0.95, top_grade=3):
    """Whether the "every adjacent pair settled at 95%" stop rule (annotation/strategies/
    settling.py) says stop, given the grades so far (``grades``: pool row -> grade).

    Unjudged grades are modelled per topic by the topic's grades so far, smoothed towards
    the grades of all topics (a Dirichlet prior worth 2 judgments)."""
    n, t_of = len(scorer.v), scorer.topic_of
    unjudged = np.ones(n, dtype=bool)
    known = np.zeros(n)
    rows = np.fromiter(grades, dtype=np.int64, count=len(grades))
    unjudged[rows] = False
    known[rows] = np.fromiter(grades.values(), dtype=float, count=len(grades))
    levels = np.arange(top_grade + 1)
    counts = np.zeros((scorer.n_topics, top_grade + 1))
    np.add.at(counts, (t_of[rows], known[rows].astype(int)), 1)
    overall = counts.sum(axis=0) + 1
    p = counts + 2 * overall / overall.sum()
    p /= p.sum(axis=1, keepdims=True)
    mean_t = p @ levels
    var_t = p @ levels**2 - mean_t**2
    idcg = np.maximum(
        [sum(g / math.log2(i + 2) for i, g in enumerate(j[::-1][:K])) for j in scorer.judged], 1.0
    )
    weight = 1 / (idcg[t_of] * scorer.n_topics)
    lower, upper = pair_bounds(scorer.v, weight, known, unjudged, top_grade=top_grade)
    prob = comparison_probability(
        scorer.v, weight, known, unjudged, gain_mean=mean_t[t_of], gain_var=var_t[t_of]
    )
    return not open_comparisons(scorer.mean, lower, upper, prob=prob, confidence=confidence)


def full_scores(pairs, rankings, truth):
    scorer = Scorer(pairs, rankings)
    for pair in pairs:
        scorer.add(pair, truth[pair])
    return scorer


def check_against_trec_eval(rankings, truth, scorer):
    """nDCG@10 per system equals pytrec_eval's (trec_eval's C code) on the full grades."""
    try:
        import pytrec_eval
    except ImportError:
        return "skipped (pytrec_eval not installed)"
    qrels = {}
    for (qid, docno), grade in truth.items():
        qrels.setdefault(qid, {})[docno] = grade
    worst = 0.0
    for s, run in enumerate(scorer.systems):
        scores = {
            qid: {d: float(len(docs) - i) for i, d in enumerate(docs)}
            for qid, docs in rankings[run].items()
        }
        result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(scores)
        theirs = np.mean([result[q]["ndcg_cut_10"] for q in sorted(result)])
        worst = max(worst, abs(theirs - scorer.mean[s]))
    if worst > 1e-9:
        raise SystemExit(f"nDCG@10 differs from pytrec_eval by {worst:.2e}: the bench is wrong")
    return f"agrees with pytrec_eval (max difference {worst:.1e})"


def simulate(key, pairs, rankings, truth, target, *, seed, batch=1, stop_rule=False):
    """Judge the pool in the strategy's order. ``batch`` > 1: the strategy hands out
    ``batch`` pairs before their grades come back, as a campaign that recomputes its order
    every ``batch`` grades."""
    name, options = STRATEGY_OF.get(key, (key, {}))
    strategy = make_strategy(name, pairs, rankings, seed=seed, **options)
    scorer = Scorer(pairs, rankings)
    n = len(pairs)
    taus = np.zeros(n)
    found = np.zeros(n)
    tau, relevant = 0.0, 0
    pending = []
    graded = {}
    stopped = None  # 1-based judgments at which the stop rule first said stop
    every = max(1, n // 100)
    order = []
    for i in range(n):
        if not pending:
            pending = [strategy.take() for _ in range(min(batch, n - i))][::-1]
        pair = pending.pop()
        grade = truth[pair]
        order.append(pair)
        strategy.record(pair, grade)
        if scorer.add(pair, grade):
            relevant += 1
            value = kendall_tau(scorer.mean, target)
            tau = 0.0 if math.isnan(value) else value
        taus[i], found[i] = tau, relevant
        graded[scorer.row[pair]] = grade
        if stop_rule and stopped is None and (i + 1) % every == 0 and stop_now(scorer, graded):
            stopped = i + 1
    if strategy.take() is not None:
        raise SystemExit(f"{key} handed out more pairs than the pool holds")
    return taus, found, stopped, found_per_topic(order, truth)


def found_per_topic(order, truth, share=0.3):
    """As the bandit papers measure it: per topic, the share of its relevant documents found
    among the first ``share`` of its pool in the order; the mean over topics with any."""
    by_topic: dict = {}
    for pair in order:
        by_topic.setdefault(pair[0], []).append(truth[pair] > 0)
    shares = []
    for hits in by_topic.values():
        total = sum(hits)
        if total:
            shares.append(sum(hits[: max(1, math.ceil(share * len(hits)))]) / total)
    return float(np.mean(shares)) if shares else 0.0


def first_at(mask):
    """1-based number of judgments at which mask first holds (len + 1 if never)."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) + 1 if len(hits) else len(mask) + 1


class RealCollection:
    """The real test collection as the bench reads a synthetic one: ``runs`` (ranker -> qid
    -> docnos, best first) and ``qrels`` (qid -> docno -> grade, every passage of every run:
    the known answers, 0 elsewhere)."""

    def __init__(self, log):
        from evaluation import collection, trec
        from evaluation.collection import rankers

        started = time.perf_counter()
        built = collection.build_collection("auto")
        for note in built.notes:
            log(f"  {note}")
        texts = rankers.run_rankers(built.passages, built.topics)
        self.runs = {}
        for name, text in texts.items():
            frame = trec.read_run(text.encode(), name=name)
            by_topic = self.runs.setdefault(name, {})
            for qid, docno in frame.select("qid", "docno").iter_rows():  # in rank order
                by_topic.setdefault(qid, []).append(docno)
        known = built.qrels
        self.qrels = {}
        for by_topic in self.runs.values():
            for qid, docnos in by_topic.items():
                grades = self.qrels.setdefault(qid, {})
                for docno in docnos:
                    grades[docno] = known.get(qid, {}).get(docno, 0)
        self.label = (
            f"real collection ({len(built.topics)} topics, {len(texts)} rankers; "
            f"{'; '.join(built.sources)})"
        )
        log(f"  {self.label}: built in {time.perf_counter() - started:.1f} s")


def run_scale(
    topics, seeds, depth, strategies, log, batch=1, stop_rule=False, collection="trec-like"
):
    """``topics``: a synthetic scale (a number of topics), or a RealCollection."""
    rows = {key: [] for key in strategies}
    curves = {key: {"tau": [], "found": []} for key in strategies}
    for seed in seeds:
        started = time.perf_counter()
        if isinstance(topics, RealCollection):
            data = topics
        else:
            data = generate_collection(topics=topics, seed=seed, **PROFILES[collection])
        pairs, rankings, truth = pool(data, depth)
        full = full_scores(pairs, rankings, truth)
        note = check_against_trec_eval(rankings, truth, full) if seed == seeds[0] else ""
        n, total_relevant = len(pairs), sum(1 for g in truth.values() if g > 0)
        spent = {}
        for key in strategies:
            clock = time.perf_counter()
            taus, found, stopped, per_topic = simulate(
                key, pairs, rankings, truth, full.mean, seed=seed, batch=batch, stop_rule=stop_rule
            )
            spent[key] = time.perf_counter() - clock
            rows[key].append(
                {
                    "seed": seed,
                    "pool": n,
                    "relevant": total_relevant,
                    "tau90": first_at(taus >= 0.9) / n,
                    "tau95": first_at(taus >= 0.95) / n,
                    "tau90_stays": (n - first_at(taus[::-1] < 0.9) + 2) / n,
                    "found90": first_at(found >= 0.9 * total_relevant) / n,
                    "found_at_30": found[max(0, math.ceil(0.3 * n) - 1)] / total_relevant,
                    "found_at_30_topic": per_topic,
                    "stop": stopped / n if stopped else None,
                    "tau_at_stop": float(taus[stopped - 1]) if stopped else None,
                }
            )
            grid = np.linspace(0, n - 1, GRID).astype(int)
            curves[key]["tau"].append(taus[grid])
            curves[key]["found"].append(found[grid] / total_relevant)
        log(
            f"  {scale_label(topics)}, seed {seed}: pool {n} pairs, {total_relevant} relevant, "
            f"{time.perf_counter() - started:.1f} s "
            f"({', '.join(f'{k} {v:.1f}' for k, v in spent.items())}) {note}"
        )
    return (
        rows,
        {k: {m: np.mean(v, axis=0).tolist() for m, v in c.items()} for k, c in curves.items()},
    )


def scale_label(topics) -> str:
    return topics.label if isinstance(topics, RealCollection) else f"{topics} topics"


def summary(values):
    return float(np.mean(values)), float(np.std(values))


def table(results, strategies):
    lines = []
    for topics, block in results.items():
        pool_sizes = [r["pool"] for r in block["rows"][strategies[0]]]
        lines.append(
            f"\n**{topics}** (pool {int(np.mean(pool_sizes)):,} pairs on average; "
            f"mean ± sd over {len(pool_sizes)} seeds; shares of the pool judged)\n"
        )
        lines.append(
            "| strategy | τ ≥ 0.9 | τ ≥ 0.95 | 90% of relevant found | relevant found at 30% "
            "| per topic at 30% of its pool | τ ≥ 0.9 vs today |"
        )
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        base = (
            summary([r["tau90"] for r in block["rows"]["random"]])[0]
            if "random" in block["rows"]
            else None
        )
        for key in strategies:
            rows = block["rows"][key]
            cells = []
            for field in ("tau90", "tau95", "found90", "found_at_30", "found_at_30_topic"):
                mean, sd = summary([r[field] for r in rows])
                cells.append(f"{100 * mean:.1f}% ± {100 * sd:.1f}")
            mean90 = summary([r["tau90"] for r in rows])[0]
            ratio = f"{100 * mean90 / base:.0f}%" if base else "–"
            lines.append(f"| {LABELS[key]} | " + " | ".join(cells) + f" | {ratio} |")
        lines.extend(paired(block["rows"]))
        if any(r.get("stop") for rows in block["rows"].values() for r in rows):
            lines.append(
                '\nStop rule "every adjacent pair settled at 95%" (checked every 1% of the '
                "pool):\n\n| strategy | stopped after | τ at the stop | seeds stopped before "
                "the end |\n| --- | ---: | ---: | ---: |"
            )
            for key in strategies:
                done = [r for r in block["rows"][key] if r.get("stop")]
                if not done:
                    lines.append(f"| {LABELS[key]} | – | – | 0 |")
                    continue
                stop, stop_sd = summary([r["stop"] for r in done])
                tau, tau_sd = summary([r["tau_at_stop"] for r in done])
                lines.append(
                    f"| {LABELS[key]} | {100 * stop:.1f}% ± {100 * stop_sd:.1f} | "
                    f"{tau:.3f} ± {tau_sd:.3f} | {len(done)} of {len(block['rows'][key])} |"
                )
    return "\n".join(lines) + "\n"


PAIRED = [  # (better?, than): the published ordering, compared seed by seed
    ("bandit", "move_to_front"),
    ("bandit_pool", "move_to_front"),
    ("move_to_front", "random"),
]


def paired(rows):
    """Seed-by-seed differences in relevant found at 30% (per topic and over the whole
    pool), for the pairs of the published ordering the run has: the seeds share their data,
    so the difference varies far less than either figure."""
    out = []
    for a, b in PAIRED:
        if a not in rows or b not in rows:
            continue
        cells = []
        for field, label in (("found_at_30_topic", "per topic"), ("found_at_30", "whole pool")):
            diff = [x[field] - y[field] for x, y in zip(rows[a], rows[b], strict=True)]
            mean, sd = summary(diff)
            ahead = sum(d > 0 for d in diff)
            cells.append(
                f"{label} {100 * mean:+.1f} points ± {100 * sd:.1f} (ahead on {ahead} of "
                f"{len(diff)} seeds)"
            )
        if not out:
            out.append("\nRelevant found at 30%, seed by seed (mean ± sd of the difference):\n")
        out.append(f"- {LABELS[a]} − {LABELS[b]}: " + "; ".join(cells))
    return out


def plot(results, strategies, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    scales = list(results)
    fig, axes = plt.subplots(2, len(scales), figsize=(6 * len(scales), 8), squeeze=False)
    x = np.linspace(0, 100, GRID)
    for col, topics in enumerate(scales):
        curves = results[topics]["curves"]
        for key in strategies:
            axes[0][col].plot(x, curves[key]["tau"], label=LABELS[key])
            axes[1][col].plot(x, curves[key]["found"], label=LABELS[key])
        axes[0][col].axhline(0.9, color="grey", lw=0.8, ls="--")
        axes[0][col].set(
            title=f"{topics}: Kendall's τ with the final ranking (nDCG@10)",
            xlabel="% of the pool judged",
            ylabel="τ (mean over seeds)",
            ylim=(0, 1.02),
        )
        axes[1][col].axvline(30, color="grey", lw=0.8, ls="--")
        axes[1][col].set(
            title=f"{topics}: relevant documents found",
            xlabel="% of the pool judged",
            ylabel="share of the pool's relevant (mean over seeds)",
            ylim=(0, 1.02),
        )
        axes[0][col].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return f"plot saved to {path}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scales",
        default="50,500,real",
        help="topics per synthetic campaign, and 'real' for the real collection; comma-separated",
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="seeds run from here (default 0; compare settings on seeds apart from the reported 0-9)",
    )
    parser.add_argument("--depth", type=int, default=20, help="pool depth (default 20)")
    parser.add_argument(
        "--collection",
        default="trec-like",
        choices=sorted(PROFILES),
        help="the synthetic collection's settings (bench/synthetic_systems.py, PROFILES)",
    )
    parser.add_argument("--strategies", default=",".join(LABELS))
    parser.add_argument(
        "--batch",
        type=int,
        default=1,
        help="pairs handed out before their grades return (a campaign's POOL_REORDER_EVERY)",
    )
    parser.add_argument(
        "--stop-rule",
        action="store_true",
        help="also check the adjacent-pairs-at-95%% stop rule every 1%% of the pool (slow)",
    )
    parser.add_argument("--plot", default=str(ROOT / "docs/bench/judging_cost.png"))
    parser.add_argument("--out", default=str(ROOT / "bench/results"))
    args = parser.parse_args(argv)
    strategies = args.strategies.split(",")
    unknown = sorted(set(strategies) - set(LABELS))
    if unknown:
        parser.error(f"unknown strategies {unknown}; choose from {', '.join(LABELS)}")
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    bad = [s for s in args.scales.split(",") if s != "real" and not s.isdecimal()]
    if bad:
        parser.error(f"--scales: {bad[0]!r} is neither a number of topics nor 'real'")
    if args.depth < K:
        parser.error(f"--depth must be at least {K}: nDCG@{K} needs the top {K} judged")

    def log(message):
        print(message, file=sys.stderr, flush=True)

    log(
        f"python {platform.python_version()}, {args.seeds} seeds from {args.first_seed}, "
        f"pool depth {args.depth}, collection {args.collection}, "
        f"batch {args.batch}"
    )
    results = {}
    for scale in args.scales.split(","):
        started = time.perf_counter()
        topics = RealCollection(log) if scale == "real" else int(scale)
        rows, curves = run_scale(
            topics,
            list(range(args.first_seed, args.first_seed + args.seeds)),
            args.depth,
            strategies,
            log,
            batch=args.batch,
            stop_rule=args.stop_rule,
            collection=args.collection,
        )
        results[scale_label(topics)] = {"rows": rows, "curves": curves}
        log(f"{scale_label(topics)} done in {time.perf_counter() - started:.0f} s")
    text = table(results, strategies)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "judging_cost.md").write_text(text)
    (out / "judging_cost.json").write_text(
        json.dumps({str(t): r for t, r in results.items()}, indent=1) + "\n"
    )
    log(plot(results, strategies, args.plot))


if __name__ == "__main__":
    main()
