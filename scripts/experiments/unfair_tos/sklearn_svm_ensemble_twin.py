"""SVM (sklearn twin of the Rust TF-IDF SVM, no sentence vectors) + fine-tuned MiniLM ensemble check.
Block = last 20% of train. SVM for block trained on rows before block; for validation on all train
(as the Rust Ensemble: SVM side for the block trained without it)."""
import os, sys, re, numpy as np, pandas as pd
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
D = os.environ.get("UNFAIR_DIR", "../shared/data/unfair_tos") + "/"
def load(f):
    df = pd.read_csv(D + f); Y = np.zeros((len(df), 8))
    for i, s in enumerate(df["labels"]):
        for t in re.findall(r"\d", s): Y[i, int(t)] = 1
    return [t.strip() for t in df["text"]], Y
Xtr, Ytr = load("unfair_tos_train.csv"); Xva, Yva = load("unfair_tos_validation.csv")
cut = len(Xtr) - round(len(Xtr) * 0.2)
def svm_scores(train_x, train_y, test_x):
    w = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2, token_pattern=r"\S+")
    c = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)
    A = hstack([w.fit_transform(train_x), c.fit_transform(train_x)]).tocsr()
    B = hstack([w.transform(test_x), c.transform(test_x)]).tocsr()
    return np.stack([LinearSVC(C=1).fit(A, train_y[:, k]).decision_function(B) for k in range(8)], 1)
def best_thr(s, y):
    cands = np.unique(s); best = (0.0, 0.0)
    for c in cands:
        f = f1_score(y, s >= c, zero_division=0)
        if f > best[0]: best = (f, c)
    return best[1]
def lexglue(Y, P):
    Y = np.hstack([Y, (Y.sum(1) == 0)[:, None]]); P = np.hstack([P, (P.sum(1) == 0)[:, None]])
    return round(100 * f1_score(Y, P, average="micro", zero_division=0), 1), round(100 * f1_score(Y, P, average="macro", zero_division=0), 1)
def platt(s, y):
    return LogisticRegression(C=1e6).fit(s[:, None], y)
tag = sys.argv[1]
Mb = np.load(f"out/ft_{tag}".replace("PART","block")); Mv = np.load(f"out/ft_{tag}".replace("PART","val"))
Sb = svm_scores(Xtr[:cut], Ytr[:cut], Xtr[cut:]); Sv = svm_scores(Xtr, Ytr, Xva)
Yb = Ytr[cut:]; h = len(Yb) // 2
def evaluate(name, Eb, Ev):
    P = np.zeros_like(Yb)
    for k in range(8):
        P[h:, k] = Eb[h:, k] >= best_thr(Eb[:h, k], Yb[:h, k]); P[:h, k] = Eb[:h, k] >= best_thr(Eb[h:, k], Yb[h:, k])
    Pv = np.stack([Ev[:, k] >= best_thr(Eb[:, k], Yb[:, k]) for k in range(8)], 1).astype(float)
    print(f"{name:10s} block {lexglue(Yb, P)} valid {lexglue(Yva, Pv)}", [round(100 * f1_score(Yva[:, k], Pv[:, k], zero_division=0), 1) for k in range(8)])
evaluate("svm", Sb, Sv); evaluate("minilm", Mb, Mv)
# ensemble: mean of Platt probabilities, each Platt fitted on the block
Eb = np.zeros_like(Sb); Ev = np.zeros_like(Sv)
for k in range(8):
    ps = platt(Sb[:, k], Yb[:, k]); pm = platt(Mb[:, k], Yb[:, k])
    Eb[:, k] = (ps.predict_proba(Sb[:, k:k+1])[:, 1] + pm.predict_proba(Mb[:, k:k+1])[:, 1]) / 2
    Ev[:, k] = (ps.predict_proba(Sv[:, k:k+1])[:, 1] + pm.predict_proba(Mv[:, k:k+1])[:, 1]) / 2
evaluate("ensemble", Eb, Ev)
