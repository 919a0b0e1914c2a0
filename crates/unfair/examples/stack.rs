//! Stacking experiments (issue 43): out-of-fold margins of the TF-IDF SVMs, of SVMs on MiniLM
//! embeddings (written by the `embed` example), and of the neighbouring rows, combined by a
//! second-level linear SVM per label; or the embedding concatenated to the TF-IDF row.
//!
//! `cargo run --release -p precedent-unfair --example stack -- DATA_DIR EMB.f32 [train|all]`
//!
//! Every configuration is judged on the same 5 contiguous blocks, thresholds of each block tuned
//! on the other blocks' out-of-fold scores ("nested") or on all of them ("pooled"); none beat
//! the shipped TF-IDF SVMs (docs/unfair-tos.md has the table), so none ships.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use precedent_unfair::cache::{training_rows, TrainSplit, VALIDATION_FILE};
use precedent_unfair::features::{SparseRow, Vectorizer};
use precedent_unfair::metric::{column_name, score, Scores};
use precedent_unfair::model::{block_folds, calibrate, decide, out_of_fold_margins};
use precedent_unfair::svm::{LinearSvm, SvmOptions};
use precedent_unfair::{normalise, read_csv, LabelSet, ModelOptions, N_LABELS};

type M = [f32; N_LABELS];

fn line(name: &str, s: &Scores) -> String {
    let per: Vec<String> = s
        .per_column_f1
        .iter()
        .enumerate()
        .map(|(c, f)| format!("{}={:.1}", &column_name(c)[..4], 100.0 * f))
        .collect();
    format!(
        "{name:<28} micro {:.1} macro {:.1} [{}]",
        100.0 * s.micro_f1,
        100.0 * s.macro_f1,
        per.join(" ")
    )
}

fn dense(v: &[f32], offset: u32, scale: f32) -> SparseRow {
    v.iter()
        .enumerate()
        .map(|(j, &x)| (offset + j as u32, scale * x))
        .collect()
}

fn fit8(rows: &[SparseRow], labels: &[LabelSet], dim: usize, svm: &SvmOptions) -> Vec<LinearSvm> {
    let refs: Vec<&SparseRow> = rows.iter().collect();
    (0..N_LABELS)
        .map(|k| {
            let pos: Vec<bool> = labels.iter().map(|&l| l & (1 << k) != 0).collect();
            LinearSvm::fit(&refs, &pos, dim, svm)
        })
        .collect()
}

fn margins8(svms: &[LinearSvm], row: &SparseRow) -> M {
    std::array::from_fn(|k| svms[k].margin(row))
}

/// Out-of-fold margins of fixed rows.
fn oof_fixed(
    rows: &[SparseRow],
    labels: &[LabelSet],
    fold: &[usize],
    dim: usize,
    svm: &SvmOptions,
) -> Vec<M> {
    let folds = fold.iter().max().map_or(0, |&f| f + 1);
    let mut out = vec![[0f32; N_LABELS]; rows.len()];
    for f in 0..folds {
        let tr: Vec<usize> = (0..rows.len()).filter(|&i| fold[i] != f).collect();
        let r: Vec<SparseRow> = tr.iter().map(|&i| rows[i].clone()).collect();
        let l: Vec<LabelSet> = tr.iter().map(|&i| labels[i]).collect();
        let svms = fit8(&r, &l, dim, svm);
        for i in (0..rows.len()).filter(|&i| fold[i] == f) {
            out[i] = margins8(&svms, &rows[i]);
        }
    }
    out
}

/// Out-of-fold margins of TF-IDF rows with the embedding concatenated (scaled).
fn oof_concat(
    texts: &[String],
    emb: &[Vec<f32>],
    labels: &[LabelSet],
    fold: &[usize],
    scale: f32,
    o: &ModelOptions,
) -> Vec<M> {
    let folds = fold.iter().max().map_or(0, |&f| f + 1);
    let mut out = vec![[0f32; N_LABELS]; texts.len()];
    for f in 0..folds {
        let tr: Vec<usize> = (0..texts.len()).filter(|&i| fold[i] != f).collect();
        let t: Vec<&str> = tr.iter().map(|&i| texts[i].as_str()).collect();
        let v = Vectorizer::fit(&t, &o.features);
        let d = v.dim() as u32;
        let row = |i: usize| {
            let mut r = v.transform(&texts[i]);
            r.extend(dense(&emb[i], d, scale));
            r
        };
        let r: Vec<SparseRow> = tr.iter().map(|&i| row(i)).collect();
        let l: Vec<LabelSet> = tr.iter().map(|&i| labels[i]).collect();
        let svms = fit8(&r, &l, v.dim() + emb[0].len(), &o.svm);
        for i in (0..texts.len()).filter(|&i| fold[i] == f) {
            out[i] = margins8(&svms, &row(i));
        }
    }
    out
}

/// Second-level features of row i: each view's margins of the row, then (context) of the rows
/// before and after it (-1, a margin of no evidence, past either end).
fn stack_rows(views: &[&[M]], context: &[&[M]]) -> (Vec<SparseRow>, usize) {
    let n = views[0].len();
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let mut r: Vec<f32> = Vec::new();
        for v in views {
            r.extend_from_slice(&v[i]);
        }
        for v in context {
            r.extend_from_slice(&if i > 0 { v[i - 1] } else { [-1.0; N_LABELS] });
            r.extend_from_slice(v.get(i + 1).unwrap_or(&[-1.0; N_LABELS]));
        }
        rows.push(dense(&r, 0, 1.0));
    }
    let dim = rows.first().map_or(0, Vec::len);
    (rows, dim)
}

/// Scores of out-of-fold scores with thresholds of fold f tuned on the other folds' scores
/// (nested) and on all of them (pooled).
fn judge(scores: &[M], labels: &[LabelSet], fold: &[usize]) -> (Scores, Scores) {
    let folds = fold.iter().max().map_or(0, |&f| f + 1);
    let pooled_cal = calibrate(scores, labels);
    let pooled: Vec<LabelSet> = scores.iter().map(|m| decide(m, &pooled_cal)).collect();
    let mut nested = vec![0; scores.len()];
    for f in 0..folds {
        let tr: Vec<usize> = (0..scores.len()).filter(|&i| fold[i] != f).collect();
        let s: Vec<M> = tr.iter().map(|&i| scores[i]).collect();
        let l: Vec<LabelSet> = tr.iter().map(|&i| labels[i]).collect();
        let cal = calibrate(&s, &l);
        for i in (0..scores.len()).filter(|&i| fold[i] == f) {
            nested[i] = decide(&scores[i], &cal);
        }
    }
    (score(labels, &nested), score(labels, &pooled))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: stack DATA_DIR EMB.f32 [train|all]";
    let dir = PathBuf::from(args.get(1).context(usage)?);
    let raw = std::fs::read(args.get(2).context(usage)?)?;
    let all = args.get(3).is_some_and(|s| s == "all");
    let train = training_rows(&dir, TrainSplit::Train)?;
    let validation = read_csv(&dir.join(VALIDATION_FILE))?;
    let total = train.len() + validation.len();
    if raw.len() % (4 * total) != 0 {
        bail!("embedding file does not hold {total} rows");
    }
    let dim = raw.len() / 4 / total;
    let emb_all: Vec<Vec<f32>> = raw
        .chunks_exact(4 * dim)
        .map(|r| {
            r.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .collect();
    let mut rows = train.clone();
    if all {
        rows.extend(validation.iter().cloned());
    }
    let n = rows.len();
    let emb = &emb_all[..n];
    let texts: Vec<String> = rows.iter().map(|e| normalise(&e.text)).collect();
    let labels: Vec<LabelSet> = rows.iter().map(|e| e.labels).collect();
    let o = ModelOptions::default();
    let fold = block_folds(n, o.folds);
    let t0 = Instant::now();
    let tfidf = out_of_fold_margins(&texts, &labels, &fold, &o);
    eprintln!("tfidf oof {:.0} s", t0.elapsed().as_secs_f64());
    let emb_rows: Vec<SparseRow> = emb.iter().map(|v| dense(v, 0, 1.0)).collect();
    let mut results: Vec<(String, Vec<M>)> = vec![("tfidf (baseline)".into(), tfidf.clone())];
    let mut emb_views = Vec::new();
    for c in [1.0f32, 10.0] {
        let svm = SvmOptions {
            c,
            ..SvmOptions::default()
        };
        let t0 = Instant::now();
        let m = oof_fixed(&emb_rows, &labels, &fold, dim, &svm);
        eprintln!("emb C={c} oof {:.0} s", t0.elapsed().as_secs_f64());
        results.push((format!("emb svm C={c}"), m.clone()));
        emb_views.push(m);
    }
    let l2 = SvmOptions::default();
    let stacked = |views: &[&[M]], ctx: &[&[M]]| {
        let (r, d) = stack_rows(views, ctx);
        oof_fixed(&r, &labels, &fold, d, &l2)
    };
    results.push(("stack tfidf".into(), stacked(&[&tfidf], &[])));
    // Same label only: own margin plus lambda times the neighbours' mean margin.
    let mix = |a: &[M], b: &[M], l: f32| -> Vec<M> {
        a.iter()
            .zip(b)
            .map(|(x, y)| std::array::from_fn(|k| x[k] + l * y[k]))
            .collect()
    };
    let neigh: Vec<M> = (0..n)
        .map(|i| {
            let p = if i > 0 {
                tfidf[i - 1]
            } else {
                [-1.0; N_LABELS]
            };
            let q = tfidf.get(i + 1).copied().unwrap_or([-1.0; N_LABELS]);
            std::array::from_fn(|k| 0.5 * (p[k] + q[k]))
        })
        .collect();
    for l in [0.2f32, 0.4] {
        results.push((format!("tfidf + {l} neighbours"), mix(&tfidf, &neigh, l)));
    }
    results.push(("stack tfidf+ctx".into(), stacked(&[&tfidf], &[&tfidf])));
    for (j, c) in [1, 10].iter().enumerate() {
        let e = &emb_views[j];
        results.push((format!("stack tfidf+emb{c}"), stacked(&[&tfidf, e], &[])));
        results.push((format!("tfidf + 0.5 emb{c}"), mix(&tfidf, e, 0.5)));
        results.push((
            format!("stack tfidf+emb{c}+ctx"),
            stacked(&[&tfidf, e], &[&tfidf]),
        ));
        results.push((
            format!("stack tfidf+emb{c}+ctx2"),
            stacked(&[&tfidf, e], &[&tfidf, e]),
        ));
    }
    for scale in [0.5f32, 1.0] {
        let t0 = Instant::now();
        let m = oof_concat(&texts, emb, &labels, &fold, scale, &o);
        eprintln!("concat {scale} oof {:.0} s", t0.elapsed().as_secs_f64());
        results.push((format!("concat emb x{scale}"), m.clone()));
        results.push((format!("stack concat{scale}+ctx"), stacked(&[&m], &[&m])));
    }
    println!(
        "{} rows ({}), {} configurations",
        n,
        if all { "train+validation" } else { "train" },
        results.len()
    );
    for (name, m) in &results {
        let (nested, pooled) = judge(m, &labels, &fold);
        println!("{}", line(&format!("{name} nested"), &nested));
        println!("{}", line(&format!("{name} pooled"), &pooled));
    }
    Ok(())
}
