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
  (`--arm nbsvm`).

The protocols and results are in docs/experiments/unfair-tos.md ("Stacking each label's
margin ...", "Margins relative to the surrounding document"). Needs scikit-learn (not in the
project's .venv):

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn
    /tmp/skl/bin/python scripts/experiments/unfair_stack.py ../shared/data/unfair_tos [--arm window]
"""
import argparse
import csv
import sys
import time

import numpy as np
from scipy.sparse import diags, hstack
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


def features(train_texts, score_texts):
    words = TfidfVectorizer(analyzer="word", token_pattern=r"\S+", ngram_range=(1, 2),
                            sublinear_tf=True, min_df=2, lowercase=False)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True,
                            min_df=2, lowercase=False)
    a = hstack([words.fit_transform(train_texts), chars.fit_transform(train_texts)]).tocsr()
    b = hstack([words.transform(score_texts), chars.transform(score_texts)]).tocsr()
    return a, b


def margins(x_train, y_train, x_score):
    out = np.zeros((x_score.shape[0], LABELS))
    for j in range(LABELS):
        svm = LinearSVC(C=1.0, loss="squared_hinge", dual=True, max_iter=5000)
        svm.fit(x_train, y_train[:, j])
        out[:, j] = svm.decision_function(x_score)
    return out


def best_threshold(scores, positive):
    """As crates/unfair/src/model.rs: cut between distinct scores at the F1-best point."""
    order = np.argsort(-scores, kind="stable")
    s, p = scores[order], positive[order]
    positives = p.sum()
    if positives == 0:
        return max(s[0], 0.0) + 1.0
    tp = np.cumsum(p)
    f1 = 2 * tp / (np.arange(1, len(s) + 1) + positives)
    distinct = np.append(s[1:] != s[:-1], True)
    f1 = np.where(distinct, f1, -1)
    i = int(np.argmax(f1))
    return 0.5 * (s[i] + s[i + 1]) if i + 1 < len(s) else s[i] - 1e-3


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
    parser.add_argument("--arm", choices=["stacked", "window", "nbsvm"], default="stacked")
    options = parser.parse_args()
    data, arm = options.data, options.arm
    texts, y = read(f"{data}/unfair_tos_train.csv")
    n = len(texts)
    pred_base = np.zeros_like(y)
    pred_arm = np.zeros_like(y)
    started = time.time()
    for k, held in enumerate(blocks(n, 5)):
        train = np.setdiff1d(np.arange(n), held)
        x_train, x_held = features([texts[i] for i in train], [texts[i] for i in held])
        y_train = y[train]
        # Inner out-of-fold margins over the outer training rows, in file order.
        inner = blocks(len(train), 5)
        oof, held_margins = nested_margins(margins, x_train, y_train, x_held, inner)
        # Base arm.
        pred_base[held] = thresholded(oof, y_train, held_margins)
        if arm == "nbsvm":
            nb_oof, nb_held = nested_margins(nb_margins, x_train, y_train, x_held, inner)
            pred_arm[held] = thresholded(nb_oof, y_train, nb_held)
            print(f"outer fold {k + 1}/5 done ({time.time() - started:.0f} s)", file=sys.stderr)
            continue
        if arm == "window":
            shifted_oof, shifted_held = relative_to_window(oof), relative_to_window(held_margins)
            for j in range(LABELS):
                t = best_threshold(shifted_oof[:, j], y_train[:, j])
                pred_arm[held, j] = shifted_held[:, j] > t
            print(f"outer fold {k + 1}/5 done ({time.time() - started:.0f} s)", file=sys.stderr)
            continue
        # Stacked arm: inputs over the training rows, thresholds on the stacker's own OOF.
        inputs = with_neighbours(oof)
        stack_oof = np.zeros((len(train), LABELS))
        for part in inner:
            rest = np.setdiff1d(np.arange(len(train)), part)
            stack_oof[part] = stacker_score(stacker_fit(inputs[rest], y_train[rest]), inputs[part])
        stack = stacker_fit(inputs, y_train)
        held_scores = stacker_score(stack, with_neighbours(held_margins))
        for j in range(LABELS):
            t = best_threshold(stack_oof[:, j], y_train[:, j])
            pred_arm[held, j] = held_scores[:, j] > t
        print(f"outer fold {k + 1}/5 done ({time.time() - started:.0f} s)", file=sys.stderr)
    names = ["liab", "term", "chan", "remo", "usin", "law", "juri", "arbi", "none"]
    for arm, pred in (("base", pred_base), (arm, pred_arm)):
        micro, macro, f1 = lexglue(y, pred)
        per = " ".join(f"{a}={100 * b:.1f}" for a, b in zip(names, f1))
        print(f"{arm}: nested CV micro {100 * micro:.1f} macro {100 * macro:.1f} [{per}]")


if __name__ == "__main__":
    main()
