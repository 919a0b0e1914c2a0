#!/usr/bin/env python3
"""Prototypes for UNFAIR-ToS: second looks at the per-label SVM margins.

Nested cross-validation on the training rows only (5 contiguous outer blocks, 5 contiguous inner
blocks inside each outer training set), two arms scored on the same folds:

- base: per-label LinearSVC over TF-IDF (words 1-2, char_wb 2-5), F1-best thresholds on the
  inner out-of-fold margins (the shipped Rust SVM without its sentence vectors);
- stacked: per label, a logistic regression over 24 inputs (the row's 8 margins and those of the
  previous and the next row), fitted on the inner out-of-fold margins, thresholded at the
  F1-best point of its own out-of-fold scores (`--arm stacked`, the default);
- window: each margin minus the median of its label's margins over the 101 rows around it, in
  file order, for thresholds and held-out rows alike (`--arm window`);
- nbsvm: per label, the TF-IDF columns scaled by the label's naive-Bayes log-count ratio over
  the rows the SVM is fitted on (Wang and Manning 2012), then the same SVM and thresholds
  (`--arm nbsvm`);
- pergrid: per label, the SVM's C in {0.25, 0.5, 1, 2, 4} and positive-class weight in
  {1, 2, 4} chosen inside each outer fold by the inner out-of-fold F1 at each configuration's
  F1-best threshold (ties: closest to C = 1, w+ = 1 in log2 grid steps, then the smaller C),
  then the chosen SVM on the whole outer training set with that configuration's threshold
  (`--arm pergrid`). Prints each outer block's macro-F1 for both arms, how often each grid
  point was chosen, and, after the CV, both arms fitted on all of train and scored once on
  validation (a record, not a decision);
- neighbour: the base's SVMs, margins and thresholds; in addition, each scored row's nearest
  row among those the SVMs are fitted on, by cosine of the word 1-2-gram TF-IDF vectors (the
  base's word vectorizer, L2-normalised). If that cosine is >= 0.8 (fixed, not tuned), the
  row's label set is the union of the SVM's labels and the neighbour's gold labels; otherwise
  the SVM's labels stand (`--arm neighbour`). Prints the same per-block report as pergrid,
  how many scored rows had such a neighbour, and the validation record;
- synthetic: the base, with the rows of the `--synthetic` CSV files (sentences written for the
  rare labels, scripts/experiments/unfair_synthetic/) appended to every training set, the
  vectorizer's and every inner and outer SVM's; never scored, and thresholds are fitted on the
  real rows' inner out-of-fold margins only (`--arm synthetic --synthetic FILE...`). Prints the
  same per-block report and the validation record;
- halfbest: the base's SVMs and inner out-of-fold margins; per label, a Platt-style sigmoid (an
  unregularised logistic fit, without Platt's smoothed targets) fitted on those margins and the
  threshold where it equals half the best F1 reached on them (the
  F1-optimal threshold of a calibrated probability; Lipton et al. 2014) (`--arm halfbest`).
  Prints the same per-block report and the validation record.

The protocols and results are in docs/experiments/unfair-tos.md ("Stacking each label's
margin ...", "Margins relative to the surrounding document", "Naive-Bayes-scaled features per
label: NBSVM", "Per-label C and class weight chosen inside the blocks", "Labels of a
near-identical training sentence", "Sentences written for the rare labels", "Thresholds at
half the best F1 of calibrated probabilities"). Needs scikit-learn
(not in the project's .venv):

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn
    /tmp/skl/bin/python scripts/experiments/unfair_stack.py ../shared/data/unfair_tos [--arm window|nbsvm|pergrid|neighbour|halfbest|synthetic --synthetic FILE...]
"""
import argparse
import csv
import sys
import time

import numpy as np
from scipy.sparse import diags, hstack, vstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

LABELS = 8


def read(path):
    texts, y = [], []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            texts.append(row["text"])
            labels = row["labels"].strip("[]").split()
            v = np.zeros(LABELS, dtype=bool)
            for l in labels:
                v[int(l)] = True
            y.append(v)
    return texts, np.array(y)


def blocks(n, k):
    edges = [round(i * n / k) for i in range(k + 1)]
    return [np.arange(edges[i], edges[i + 1]) for i in range(k)]


def features(train_texts, score_texts, words_too=False):
    """TF-IDF rows of both sets; with `words_too`, also the word block alone (L2-normalised
    as fitted, the first columns of the stacked rows)."""
    words = TfidfVectorizer(analyzer="word", token_pattern=r"\S+", ngram_range=(1, 2),
                            sublinear_tf=True, min_df=2, lowercase=False)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True,
                            min_df=2, lowercase=False)
    wa, wb = words.fit_transform(train_texts), words.transform(score_texts)
    a = hstack([wa, chars.fit_transform(train_texts)]).tocsr()
    b = hstack([wb, chars.transform(score_texts)]).tocsr()
    if words_too:
        return a, b, wa.tocsr(), wb.tocsr()
    return a, b


def margins(x_train, y_train, x_score):
    out = np.zeros((x_score.shape[0], LABELS))
    for j in range(LABELS):
        svm = LinearSVC(C=1.0, loss="squared_hinge", dual=True, max_iter=5000)
        svm.fit(x_train, y_train[:, j])
        out[:, j] = svm.decision_function(x_score)
    return out


def best_cut(scores, positive):
    """As crates/unfair/src/model.rs: the cut between distinct scores at the F1-best point, and
    the F1 it reaches (0 with no positive row)."""
    order = np.argsort(-scores, kind="stable")
    s, p = scores[order], positive[order]
    positives = p.sum()
    if positives == 0:
        return max(s[0], 0.0) + 1.0, 0.0
    tp = np.cumsum(p)
    f1 = 2 * tp / (np.arange(1, len(s) + 1) + positives)
    distinct = np.append(s[1:] != s[:-1], True)
    f1 = np.where(distinct, f1, -1)
    i = int(np.argmax(f1))
    cut = 0.5 * (s[i] + s[i + 1]) if i + 1 < len(s) else s[i] - 1e-3
    return cut, float(f1[i])


def best_threshold(scores, positive):
    return best_cut(scores, positive)[0]


def nb_ratio(x, positive, alpha=1.0):
    """Log-count ratio of each column for one label, over binarised rows (Wang and Manning)."""
    present = (x > 0).astype(np.float64)
    p = alpha + np.asarray(present[positive].sum(0)).ravel()
    q = alpha + np.asarray(present[~positive].sum(0)).ravel()
    return np.log((p / p.sum()) / (q / q.sum()))


def nb_margins(x_train, y_train, x_score):
    """Per label: an SVM as in `margins`, over columns scaled by that label's ratio."""
    out = np.zeros((x_score.shape[0], LABELS))
    for j in range(LABELS):
        r = diags(nb_ratio(x_train, y_train[:, j]))
        svm = LinearSVC(C=1.0, loss="squared_hinge", dual=True, max_iter=5000)
        svm.fit(x_train @ r, y_train[:, j])
        out[:, j] = svm.decision_function(x_score @ r)
    return out


GRID_C = (0.25, 0.5, 1.0, 2.0, 4.0)
GRID_W = (1.0, 2.0, 4.0)
# Ties in inner F1 go to the configuration closest to the base (C = 1, w+ = 1) in log2 grid
# steps, then to the smaller C (then the smaller w+, which the grid never needs).
GRID = sorted(((c, w) for c in GRID_C for w in GRID_W),
              key=lambda cw: (abs(np.log2(cw[0])) + abs(np.log2(cw[1])), cw[0], cw[1]))


def svm_label(x_train, positive, c, w):
    svm = LinearSVC(C=c, class_weight={1: w, 0: 1.0}, loss="squared_hinge", dual=True,
                    max_iter=5000)
    svm.fit(x_train, positive.astype(int))
    return svm


def f1_at_best(scores, positive):
    """F1 of the label's rows at the F1-best threshold on these same scores (0 if undefined)."""
    pred = scores > best_threshold(scores, positive)
    tp = (pred & positive).sum()
    denom = pred.sum() + positive.sum()
    return 2 * tp / denom if denom > 0 else 0.0


def grid_choice(x_train, y_train, inner, base_oof):
    """Per label, the grid point with the best inner out-of-fold F1 at its F1-best threshold.
    The base point (C = 1, w+ = 1) reuses the base arm's out-of-fold margins. Returns the
    chosen (C, w+) per label and the chosen configuration's out-of-fold margins."""
    n = x_train.shape[0]
    oof = {}
    for c, w in GRID:
        if (c, w) == (1.0, 1.0):
            oof[(c, w)] = base_oof
            continue
        m = np.zeros((n, LABELS))
        for part in inner:
            rest = np.setdiff1d(np.arange(n), part)
            for j in range(LABELS):
                m[part, j] = svm_label(x_train[rest], y_train[rest, j], c, w).decision_function(
                    x_train[part])
        oof[(c, w)] = m
    chosen, chosen_oof = [], np.zeros((n, LABELS))
    for j in range(LABELS):
        best, best_f1 = None, -1.0
        for cw in GRID:  # in tie-break order, so only a strictly higher F1 replaces
            f1 = f1_at_best(oof[cw][:, j], y_train[:, j])
            if f1 > best_f1:
                best, best_f1 = cw, f1
        chosen.append(best)
        chosen_oof[:, j] = oof[best][:, j]
    return chosen, chosen_oof


def pergrid_predict(x_train, y_train, x_held, inner, base_oof, base_held):
    """The pergrid arm's held-out predictions and its per-label choices."""
    chosen, chosen_oof = grid_choice(x_train, y_train, inner, base_oof)
    held = np.zeros((x_held.shape[0], LABELS))
    for j, (c, w) in enumerate(chosen):
        if (c, w) == (1.0, 1.0):
            held[:, j] = base_held[:, j]
        else:
            held[:, j] = svm_label(x_train, y_train[:, j], c, w).decision_function(x_held)
    return thresholded(chosen_oof, y_train, held), chosen


NEIGHBOUR_MIN = 0.8


def nearest(w_train, w_score):
    """Each scored row's nearest training row by cosine of L2-normalised word TF-IDF rows
    (ties: the first in file order) and that cosine (0 for a row with no known word)."""
    sim = (w_score @ w_train.T).toarray()
    idx = sim.argmax(1)
    return idx, sim[np.arange(len(idx)), idx]


def neighbour_predict(pred, y_train, w_train, w_score):
    """The SVM's label sets, each joined with its near-identical training row's gold labels.
    Returns the predictions, whether the row had a neighbour at >= NEIGHBOUR_MIN and whether
    that neighbour had a label."""
    idx, cos = nearest(w_train, w_score)
    near = cos >= NEIGHBOUR_MIN
    out = pred.copy()
    out[near] |= y_train[idx[near]]
    return out, near, near & y_train[idx].any(1)


def synthetic_predict(train_texts, y_train, held_texts, inner, syn_texts, syn_y):
    """The base's predictions with the synthetic rows in every training set: vectorizer and
    SVMs fitted on real + synthetic rows, thresholds on the real rows' out-of-fold margins."""
    x_all, x_held = features(train_texts + syn_texts, held_texts)
    x_real, x_syn = x_all[:len(train_texts)], x_all[len(train_texts):]

    def with_synthetic(x_fit, y_fit, x_score):
        return margins(vstack([x_fit, x_syn]).tocsr(), np.vstack([y_fit, syn_y]), x_score)

    oof, held_margins = nested_margins(with_synthetic, x_real, y_train, x_held, inner)
    return thresholded(oof, y_train, held_margins)


def halfbest_thresholded(oof, y_train, held_margins):
    """Per label, the margin where a logistic fit on the out-of-fold margins equals half the best
    F1 reached on them (the F1-argmax cut where that sigmoid does not rise with the margin)."""
    pred = np.zeros(held_margins.shape, dtype=bool)
    for j in range(LABELS):
        positive = y_train[:, j]
        if positive.sum() == 0:
            continue
        # A Platt-style sigmoid: an unregularised logistic fit, without Platt's smoothed targets.
        sigmoid = LogisticRegression(C=1e6, max_iter=1000).fit(oof[:, [j]], positive)
        a, b = sigmoid.coef_[0, 0], sigmoid.intercept_[0]
        cut, f1 = best_cut(oof[:, j], positive)
        target = f1 / 2
        if not (np.isfinite(a) and np.isfinite(b) and a > 0 and 0 < target < 1):
            # A sigmoid that does not rise with the margin: keep the F1-argmax cut.
            pred[:, j] = held_margins[:, j] > cut
            continue
        # sigmoid(a m + b) = target  <=>  m = (logit(target) - b) / a
        threshold = (np.log(target / (1 - target)) - b) / a
        pred[:, j] = held_margins[:, j] > threshold
    return pred


def nested_margins(margin_fn, x_train, y_train, x_held, inner):
    """Out-of-fold margins over the training rows (one fit per inner block) and the held-out
    rows' margins from a fit on all training rows, both by `margin_fn`."""
    oof = np.zeros((x_train.shape[0], LABELS))
    for part in inner:
        rest = np.setdiff1d(np.arange(x_train.shape[0]), part)
        oof[part] = margin_fn(x_train[rest], y_train[rest], x_train[part])
    return oof, margin_fn(x_train, y_train, x_held)


def thresholded(oof, y_train, held_margins):
    """Held-out predictions at each label's F1-best threshold on the out-of-fold margins."""
    pred = np.zeros(held_margins.shape, dtype=bool)
    for j in range(LABELS):
        pred[:, j] = held_margins[:, j] > best_threshold(oof[:, j], y_train[:, j])
    return pred


def with_neighbours(m):
    prev = np.vstack([np.zeros((1, LABELS)), m[:-1]])
    nxt = np.vstack([m[1:], np.zeros((1, LABELS))])
    return np.hstack([m, prev, nxt])


WINDOW_HALF = 50


def relative_to_window(m):
    """Each margin minus the median of its label's margins over the rows around it."""
    out = np.empty_like(m)
    for i in range(len(m)):
        lo, hi = max(0, i - WINDOW_HALF), min(len(m), i + WINDOW_HALF + 1)
        out[i] = m[i] - np.median(m[lo:hi], axis=0)
    return out


def stacker_fit(inputs, y):
    scaler = StandardScaler().fit(inputs)
    models = []
    for j in range(LABELS):
        lr = LogisticRegression(C=1.0, max_iter=2000)
        lr.fit(scaler.transform(inputs), y[:, j])
        models.append(lr)
    return scaler, models


def stacker_score(stack, inputs):
    scaler, models = stack
    z = scaler.transform(inputs)
    return np.column_stack([m.decision_function(z) for m in models])


def lexglue(gold, pred):
    g = np.hstack([gold, ~gold.any(1, keepdims=True)])
    p = np.hstack([pred, ~pred.any(1, keepdims=True)])
    tp = (g & p).sum(0)
    fp = (~g & p).sum(0)
    fn = (g & ~p).sum(0)
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    micro = 2 * tp.sum() / (2 * tp.sum() + fp.sum() + fn.sum())
    return micro, f1.mean(), f1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", default="../shared/data/unfair_tos")
    parser.add_argument("--arm", choices=["stacked", "window", "nbsvm", "pergrid", "neighbour",
                                          "synthetic", "halfbest"], default="stacked")
    parser.add_argument("--synthetic", nargs="+", default=[],
                        help="CSV files (text,labels) of written training rows, for --arm synthetic")
    options = parser.parse_args()
    data, arm = options.data, options.arm
    texts, y = read(f"{data}/unfair_tos_train.csv")
    syn_texts, syn_y = [], np.zeros((0, LABELS), dtype=bool)
    if arm == "synthetic":
        if not options.synthetic:
            sys.exit("--arm synthetic needs --synthetic FILE...")
        syn_texts, syn_y = read_synthetic(options.synthetic, set(texts))
    n = len(texts)
    pred_base = np.zeros_like(y)
    pred_arm = np.zeros_like(y)
    started = time.time()
    choices = []
    near = np.zeros(n, dtype=bool)
    near_labelled = np.zeros(n, dtype=bool)
    for k, held in enumerate(blocks(n, 5)):
        train = np.setdiff1d(np.arange(n), held)
        x_train, x_held, w_train, w_held = features([texts[i] for i in train],
                                                    [texts[i] for i in held], words_too=True)
        y_train = y[train]
        # Inner out-of-fold margins over the outer training rows, in file order.
        inner = blocks(len(train), 5)
        oof, held_margins = nested_margins(margins, x_train, y_train, x_held, inner)
        # Base arm.
        pred_base[held] = thresholded(oof, y_train, held_margins)
        if arm == "neighbour":
            pred_arm[held], near[held], near_labelled[held] = neighbour_predict(
                pred_base[held], y_train, w_train, w_held)
        elif arm == "pergrid":
            pred_arm[held], chosen = pergrid_predict(x_train, y_train, x_held, inner, oof,
                                                     held_margins)
            choices.append(chosen)
        elif arm == "halfbest":
            pred_arm[held] = halfbest_thresholded(oof, y_train, held_margins)
        elif arm == "synthetic":
            pred_arm[held] = synthetic_predict([texts[i] for i in train], y_train,
                                               [texts[i] for i in held], inner, syn_texts, syn_y)
        elif arm == "nbsvm":
            nb_oof, nb_held = nested_margins(nb_margins, x_train, y_train, x_held, inner)
            pred_arm[held] = thresholded(nb_oof, y_train, nb_held)
        elif arm == "window":
            shifted_oof, shifted_held = relative_to_window(oof), relative_to_window(held_margins)
            for j in range(LABELS):
                t = best_threshold(shifted_oof[:, j], y_train[:, j])
                pred_arm[held, j] = shifted_held[:, j] > t
        else:
            # Stacked arm: inputs over the training rows, thresholds on the stacker's own OOF.
            inputs = with_neighbours(oof)
            stack_oof = np.zeros((len(train), LABELS))
            for part in inner:
                rest = np.setdiff1d(np.arange(len(train)), part)
                stacker = stacker_fit(inputs[rest], y_train[rest])
                stack_oof[part] = stacker_score(stacker, inputs[part])
            stack = stacker_fit(inputs, y_train)
            held_scores = stacker_score(stack, with_neighbours(held_margins))
            for j in range(LABELS):
                t = best_threshold(stack_oof[:, j], y_train[:, j])
                pred_arm[held, j] = held_scores[:, j] > t
        print(f"outer fold {k + 1}/5 done ({time.time() - started:.0f} s)", file=sys.stderr)
    names = ["liab", "term", "chan", "remo", "usin", "law", "juri", "arbi", "none"]
    for name, pred in (("base", pred_base), (arm, pred_arm)):
        micro, macro, f1 = lexglue(y, pred)
        per = " ".join(f"{a}={100 * b:.1f}" for a, b in zip(names, f1))
        print(f"{name}: nested CV micro {100 * micro:.1f} macro {100 * macro:.1f} [{per}]")
    if arm == "pergrid":
        report_pergrid(data, texts, y, pred_base, pred_arm, choices, names, started)
    if arm == "neighbour":
        report_neighbour(data, texts, y, pred_base, pred_arm, near, near_labelled, names, started)
    # Arms decided by the mean outer-block rule, with their validation record:
    # predict_arm(v_texts, inner, oof, val_margins) from the base's margins on validation.
    predict_on_validation = {
        "halfbest": lambda v_texts, inner, oof, val_margins:
            halfbest_thresholded(oof, y, val_margins),
        "synthetic": lambda v_texts, inner, oof, val_margins:
            synthetic_predict(texts, y, v_texts, inner, syn_texts, syn_y),
    }
    if arm in predict_on_validation:
        block_decision(arm, y, pred_base, pred_arm)
        validation_record(data, texts, y, names, started, arm, predict_on_validation[arm])


def read_synthetic(paths, training_texts):
    """The written rows of every file, in order; a row repeating a training sentence word for
    word is dropped and counted (the protocol's one filter)."""
    texts, y, repeats = [], [], 0
    training_texts = {s.strip() for s in training_texts}
    for path in paths:
        t, labels = read(path)
        for text, row in zip(t, labels):
            if text.strip() in training_texts:
                repeats += 1
                continue
            texts.append(text)
            y.append(row)
    y = np.array(y, dtype=bool).reshape(-1, LABELS)
    per = " ".join(f"{j}:{int(y[:, j].sum())}" for j in range(LABELS))
    print(f"synthetic rows: {len(texts)} from {len(paths)} files, {repeats} training repeats "
          f"dropped; positives per label {per}; unlabelled {int((~y.any(1)).sum())}")
    return texts, y


def block_decision(name, y, pred_base, pred_arm):
    """Each outer block's micro/macro for both arms and the +1.0 mean-macro rule."""
    base_blocks, arm_blocks = [], []
    print(f"outer block: base micro/macro | {name} micro/macro | {name} - base (macro)")
    for k, held in enumerate(blocks(len(y), 5)):
        b_micro, b_macro, _ = lexglue(y[held], pred_base[held])
        a_micro, a_macro, _ = lexglue(y[held], pred_arm[held])
        base_blocks.append(b_macro)
        arm_blocks.append(a_macro)
        print(f"block {k + 1} (rows {held[0]}-{held[-1]}): {100 * b_micro:.2f}/{100 * b_macro:.2f}"
              f" | {100 * a_micro:.2f}/{100 * a_macro:.2f} | {100 * (a_macro - b_macro):+.2f}")
    base_mean, arm_mean = 100 * np.mean(base_blocks), 100 * np.mean(arm_blocks)
    below = sum(a < b for a, b in zip(arm_blocks, base_blocks))
    micro_drop = 100 * (lexglue(y, pred_base)[0] - lexglue(y, pred_arm)[0])
    kept = arm_mean >= base_mean + 1.0 and below <= 1 and micro_drop <= 0.3
    print(f"mean outer-block macro-F1: base {base_mean:.2f} {name} {arm_mean:.2f} "
          f"({arm_mean - base_mean:+.2f}); {name} below base on {below} of 5 blocks; pooled "
          f"micro {-micro_drop:+.2f}: {'kept' if kept else 'not kept'}")


def validation_record(data, texts, y, names, started, arm, predict_arm):
    """For the record only: the base and an arm fitted on all of train, scored once on
    validation. `predict_arm(v_texts, inner, oof, val_margins)` gives the arm's predictions
    from the base's out-of-fold and validation margins."""
    print(f"CV done ({time.time() - started:.0f} s)", file=sys.stderr)
    v_texts, v_y = read(f"{data}/unfair_tos_validation.csv")
    x_train, x_val = features(texts, v_texts)
    inner = blocks(len(texts), 5)
    oof, val_margins = nested_margins(margins, x_train, y, x_val, inner)
    for name, pred in (("base", thresholded(oof, y, val_margins)),
                       (arm, predict_arm(v_texts, inner, oof, val_margins))):
        micro, macro, f1 = lexglue(v_y, pred)
        per = " ".join(f"{a}={100 * b:.1f}" for a, b in zip(names, f1))
        print(f"{name}: validation micro {100 * micro:.1f} macro {100 * macro:.1f} [{per}]")
    print(f"all done ({time.time() - started:.0f} s)", file=sys.stderr)


def report_neighbour(data, texts, y, pred_base, pred_arm, near, near_labelled, names, started):
    n = len(texts)
    base_blocks, arm_blocks = [], []
    print("outer block: base micro/macro | neighbour micro/macro | neighbour - base (macro)"
          " | rows with a neighbour >= 0.8 (with labels) | rows changed")
    for k, held in enumerate(blocks(n, 5)):
        b_micro, b_macro, _ = lexglue(y[held], pred_base[held])
        a_micro, a_macro, _ = lexglue(y[held], pred_arm[held])
        base_blocks.append(b_macro)
        arm_blocks.append(a_macro)
        changed = (pred_arm[held] != pred_base[held]).any(1).sum()
        print(f"block {k + 1} (rows {held[0]}-{held[-1]}): {100 * b_micro:.2f}/{100 * b_macro:.2f}"
              f" | {100 * a_micro:.2f}/{100 * a_macro:.2f} | {100 * (a_macro - b_macro):+.2f}"
              f" | {near[held].sum()}/{len(held)} ({near_labelled[held].sum()}) | {changed}")
    base_mean, arm_mean = 100 * np.mean(base_blocks), 100 * np.mean(arm_blocks)
    below = sum(a < b for a, b in zip(arm_blocks, base_blocks))
    kept = arm_mean >= base_mean + 1.0 and below <= 1
    print(f"mean outer-block macro-F1: base {base_mean:.2f} neighbour {arm_mean:.2f} "
          f"({arm_mean - base_mean:+.2f}); neighbour below base on {below} of 5 blocks: "
          f"{'kept' if kept else 'not kept'}")
    changed = (pred_arm != pred_base).any(1)
    gained = (pred_arm & ~pred_base & y).sum()
    wrong = (pred_arm & ~pred_base & ~y).sum()
    print(f"scored rows with a neighbour >= {NEIGHBOUR_MIN}: {near.sum()} of {n} "
          f"({100 * near.mean():.1f}%), {near_labelled.sum()} of them with a labelled neighbour; "
          f"rows changed {changed.sum()}; labels added {gained} right, {wrong} wrong")
    print(f"CV done ({time.time() - started:.0f} s)", file=sys.stderr)
    # For the record only: both arms fitted on all of train, scored once on validation.
    v_texts, v_y = read(f"{data}/unfair_tos_validation.csv")
    x_train, x_val, w_train, w_val = features(texts, v_texts, words_too=True)
    oof, val_margins = nested_margins(margins, x_train, y, x_val, blocks(n, 5))
    v_base = thresholded(oof, y, val_margins)
    v_arm, v_near, v_labelled = neighbour_predict(v_base, y, w_train, w_val)
    print(f"validation rows with a neighbour >= {NEIGHBOUR_MIN}: {v_near.sum()} of {len(v_y)} "
          f"({100 * v_near.mean():.1f}%), {v_labelled.sum()} with a labelled neighbour; rows "
          f"changed {(v_arm != v_base).any(1).sum()}; labels added "
          f"{(v_arm & ~v_base & v_y).sum()} right, {(v_arm & ~v_base & ~v_y).sum()} wrong")
    for name, pred in (("base", v_base), ("neighbour", v_arm)):
        micro, macro, f1 = lexglue(v_y, pred)
        per = " ".join(f"{a}={100 * b:.1f}" for a, b in zip(names, f1))
        print(f"{name}: validation micro {100 * micro:.1f} macro {100 * macro:.1f} [{per}]")
    print(f"all done ({time.time() - started:.0f} s)", file=sys.stderr)


def report_pergrid(data, texts, y, pred_base, pred_arm, choices, names, started):
    n = len(texts)
    means = {"base": [], "pergrid": []}
    print("outer block: base micro/macro | pergrid micro/macro | pergrid - base (macro)")
    for k, held in enumerate(blocks(n, 5)):
        b_micro, b_macro, _ = lexglue(y[held], pred_base[held])
        p_micro, p_macro, _ = lexglue(y[held], pred_arm[held])
        means["base"].append(b_macro)
        means["pergrid"].append(p_macro)
        print(f"block {k + 1} (rows {held[0]}-{held[-1]}): {100 * b_micro:.2f}/{100 * b_macro:.2f}"
              f" | {100 * p_micro:.2f}/{100 * p_macro:.2f} | {100 * (p_macro - b_macro):+.2f}")
    base_mean, grid_mean = 100 * np.mean(means["base"]), 100 * np.mean(means["pergrid"])
    below = sum(p < b for p, b in zip(means["pergrid"], means["base"]))
    kept = grid_mean >= base_mean + 1.0 and below <= 1
    print(f"mean outer-block macro-F1: base {base_mean:.2f} pergrid {grid_mean:.2f} "
          f"({grid_mean - base_mean:+.2f}); pergrid below base on {below} of 5 blocks: "
          f"{'kept' if kept else 'not kept'}")
    print("choices per label over the 5 outer folds (C, w+):")
    for j in range(LABELS):
        print(f"  {names[j]}: " + " ".join(f"({c:g},{w:g})" for c, w in (ch[j] for ch in choices)))
    print("times each grid point was chosen (of 40):")
    for c in GRID_C:
        print("  C=" + f"{c:g}".ljust(5) + " ".join(
            f"w+={w:g}: {sum(ch[j] == (c, w) for ch in choices for j in range(LABELS))}"
            for w in GRID_W))
    print(f"CV done ({time.time() - started:.0f} s)", file=sys.stderr)
    # For the record only: both arms fitted on all of train, scored once on validation.
    v_texts, v_y = read(f"{data}/unfair_tos_validation.csv")
    x_train, x_val = features(texts, v_texts)
    inner = blocks(n, 5)
    oof, val_margins = nested_margins(margins, x_train, y, x_val, inner)
    v_base = thresholded(oof, y, val_margins)
    v_grid, chosen = pergrid_predict(x_train, y, x_val, inner, oof, val_margins)
    print("validation choices: " + " ".join(f"{names[j]}=({c:g},{w:g})"
                                             for j, (c, w) in enumerate(chosen)))
    for name, pred in (("base", v_base), ("pergrid", v_grid)):
        micro, macro, f1 = lexglue(v_y, pred)
        per = " ".join(f"{a}={100 * b:.1f}" for a, b in zip(names, f1))
        print(f"{name}: validation micro {100 * micro:.1f} macro {100 * macro:.1f} [{per}]")
    print(f"all done ({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
