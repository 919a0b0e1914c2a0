//! `eval-cuad --clause-types`: cross-validates the CUAD clause types `ingest` stores with each
//! clause. Each held-out contract is segmented as ingest segments it and every clause scored as
//! ingest scores it ([`precedent_engine::ingest::clause_scores_of`]), by a typer that never saw
//! the contract; precision, recall and F1 over (clause, category) pairs at a grid of thresholds,
//! and the two threshold rules (one global threshold, one per category) chosen per fold on the
//! other folds.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_clause_types::stack::StackOptions;
use precedent_clause_types::type_thresholds;

pub mod threshold_grid;
use precedent_clause_types::{TrainOptions, N_CATEGORIES};
use precedent_ml::round_robin_fold;
use threshold_grid::GridCounts;

fn pct(x: f64) -> String {
    format!("{:5.1}", 100.0 * x)
}

/// Confidence thresholds the clause-level evaluation reports.
const CLAUSE_THRESHOLDS: [f32; 8] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// Cross-validates the clause types `ingest` writes. Each held-out contract is segmented as
/// ingest does and every clause scored as ingest scores it (by a typer that never saw the
/// contract, its second stage nested as in the span evaluation); a clause truly has category X
/// when a placed piece of a CUAD annotation of X overlaps it by at least half of the shorter of
/// the two (the piece lies in the clause, or the clause is part of a longer piece). Pooled
/// over (clause, category) pairs.
pub fn clause_type_cv(
    data: &precedent_cuad::CuadDataset,
    folds: usize,
    epochs: usize,
    second_stage: bool,
    outputs: ClauseTypeOutputs,
) -> Result<()> {
    let least = if second_stage { 3 } else { 2 };
    anyhow::ensure!(
        folds >= least,
        "--folds must be at least {least} (the second stage's nested CV leaves out two folds)"
    );
    let started = Instant::now();
    let n = CLAUSE_THRESHOLDS.len();
    // Per category: [threshold] true and false positives; gold pairs.
    let mut tp = vec![vec![0usize; n]; N_CATEGORIES];
    let mut fp = vec![vec![0usize; n]; N_CATEGORIES];
    let mut gold = vec![0usize; N_CATEGORIES];
    let mut clauses_seen = 0usize;
    let cached = match outputs.scores_cache {
        Some(path) if path.exists() => Some(read_clause_scores(path, data.contracts.len())?),
        _ => None,
    };
    let per_contract = match cached {
        Some(per_contract) => per_contract,
        None => {
            let per_contract = clause_scores_cv(data, folds, epochs, second_stage, started)?;
            if let Some(path) = outputs.scores_cache {
                write_clause_scores(path, &per_contract)?;
            }
            per_contract
        }
    };
    // Per fold and category, counts over the threshold grid of the per-category rule.
    let mut fold_counts = vec![vec![GridCounts::default(); N_CATEGORIES]; folds];
    for (ci, (scores, truth)) in per_contract.iter().enumerate() {
        for (clause, bits) in scores.iter().zip(truth) {
            for k in 0..N_CATEGORIES {
                fold_counts[round_robin_fold(ci, folds)][k].add(clause[k], (bits >> k) & 1 == 1);
            }
        }
    }
    for (scores, truth) in &per_contract {
        clauses_seen += scores.len();
        for (clause, bits) in scores.iter().zip(truth) {
            for k in 0..N_CATEGORIES {
                if !precedent_cuad::is_clause_type(precedent_cuad::CATEGORIES[k]) {
                    continue;
                }
                let is = (bits >> k) & 1 == 1;
                gold[k] += usize::from(is);
                for (t, &threshold) in CLAUSE_THRESHOLDS.iter().enumerate() {
                    if clause[k] >= threshold {
                        if is {
                            tp[k][t] += 1;
                        } else {
                            fp[k][t] += 1;
                        }
                    }
                }
            }
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let all_gold: usize = gold.iter().sum();
    println!(
        "clause types as ingest writes them: {folds}-fold CV over {} contracts, {clauses_seen} clauses, {all_gold} (clause, category) pairs annotated",
        data.contracts.len()
    );
    println!(
        "{:>9} {:>9} {:>6} {:>5} {:>13}",
        "threshold", "precision", "recall", "F1", "types/clause"
    );
    let mut rows = Vec::new();
    for (t, threshold) in CLAUSE_THRESHOLDS.iter().enumerate() {
        let tps: usize = tp.iter().map(|v| v[t]).sum();
        let fps: usize = fp.iter().map(|v| v[t]).sum();
        let (p, r) = (ratio(tps, tps + fps), ratio(tps, all_gold));
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        println!(
            "{threshold:>9.1} {:>9} {:>6} {:>5} {:>13.2}",
            pct(p),
            pct(r),
            pct(f1),
            ratio(tps + fps, clauses_seen)
        );
        rows.push(
            serde_json::json!({"threshold": threshold, "precision": p, "recall": r, "f1": f1}),
        );
    }
    // The two threshold rules, cross-validated: each fold's threshold(s) are chosen on the other
    // folds' clauses only, then applied to the fold's. "global": one threshold for every
    // category; "per category": one each.
    let stored = |k: usize| precedent_cuad::is_clause_type(precedent_cuad::CATEGORIES[k]);
    let mut nested_positives = vec![0usize; N_CATEGORIES];
    let mut per_category_tp = vec![0usize; N_CATEGORIES];
    let mut per_category_fp = vec![0usize; N_CATEGORIES];
    let (mut global_tp, mut global_fp) = (0usize, 0usize);
    let mut global_choices = Vec::new();
    for held_out in 0..folds {
        let mut training_all = GridCounts::default();
        for k in (0..N_CATEGORIES).filter(|&k| stored(k)) {
            let mut training = GridCounts::default();
            for (f, counts) in fold_counts.iter().enumerate() {
                if f != held_out {
                    training.merge(&counts[k]);
                }
            }
            training_all.merge(&training);
            let scored = &fold_counts[held_out][k];
            nested_positives[k] += scored.positives;
            if let Some(t) = training.choose() {
                per_category_tp[k] += scored.true_positives[t];
                per_category_fp[k] += scored.false_positives[t];
            }
        }
        if let Some(t) = training_all.choose() {
            global_choices.push(threshold_grid::GRID[t]);
            for k in (0..N_CATEGORIES).filter(|&k| stored(k)) {
                global_tp += fold_counts[held_out][k].true_positives[t];
                global_fp += fold_counts[held_out][k].false_positives[t];
            }
        }
    }
    let f1_of = |p: f64, r: f64| {
        if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        }
    };
    let (ptp, pfp): (usize, usize) = (0..N_CATEGORIES)
        .filter(|&k| stored(k))
        .fold((0, 0), |(a, b), k| {
            (a + per_category_tp[k], b + per_category_fp[k])
        });
    let mut rules = serde_json::Map::new();
    for (name, tps, fps) in [("global", global_tp, global_fp), ("per_category", ptp, pfp)] {
        let (p, r) = (ratio(tps, tps + fps), ratio(tps, all_gold));
        println!(
            "rule {name:<12}: best F1 with precision >= {}, each fold's chosen on the other folds: precision {} recall {} F1 {} types/clause {:.2}",
            threshold_grid::MIN_PRECISION,
            pct(p),
            pct(r),
            pct(f1_of(p, r)),
            ratio(tps + fps, clauses_seen)
        );
        rules.insert(
            name.to_owned(),
            serde_json::json!({"precision": p, "recall": r, "f1": f1_of(p, r)}),
        );
    }
    println!("global thresholds chosen per fold: {global_choices:?}");
    let grid_index = |threshold: f32| {
        threshold_grid::GRID
            .iter()
            .position(|&t| (t - threshold).abs() < 1e-6)
    };
    let shipped = type_thresholds::STORED_TYPE_THRESHOLD;
    let (Some(now), Some(before)) = (grid_index(shipped), grid_index(THRESHOLD_BEFORE)) else {
        anyhow::bail!("the stored thresholds must be on the grid");
    };
    println!(
        "per category (annotated clauses): precision / recall at {THRESHOLD_BEFORE} (stored before) | at {shipped} (stored now) | per-category rule, cross-validated"
    );
    let mut per_category = Vec::new();
    for (k, category) in precedent_cuad::CATEGORIES.iter().enumerate() {
        if !stored(k) {
            continue;
        }
        let mut counts = GridCounts::default();
        for fold in &fold_counts {
            counts.merge(&fold[k]);
        }
        let (p0, r0, _) = counts.at(before);
        let (p1, r1, _) = counts.at(now);
        let (cp, cr) = (
            ratio(per_category_tp[k], per_category_tp[k] + per_category_fp[k]),
            ratio(per_category_tp[k], nested_positives[k]),
        );
        println!(
            "{category:<36} {} {} | {} {} | {} {} ({})",
            pct(p0),
            pct(r0),
            pct(p1),
            pct(r1),
            pct(cp),
            pct(cr),
            counts.positives
        );
        per_category.push(serde_json::json!({
            "category": category,
            "annotated": counts.positives,
            "before": {"threshold": THRESHOLD_BEFORE, "precision": p0, "recall": r0},
            "stored": {"threshold": shipped, "precision": p1, "recall": r1},
            "per_category_rule": {"precision": cp, "recall": cr},
        }));
    }
    if let Some(path) = outputs.json {
        let json = serde_json::json!({
            "folds": folds,
            "clauses": clauses_seen,
            "thresholds": rows,
            "threshold_rules": rules,
            "global_thresholds_per_fold": global_choices,
            "per_category": per_category,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Where `--clause-types` writes its results.
pub struct ClauseTypeOutputs<'a> {
    pub json: Option<&'a Path>,
    pub scores_cache: Option<&'a Path>,
}

/// The threshold clause types were stored at before the per-category rule, reported for
/// comparison.
const THRESHOLD_BEFORE: f32 = 0.6;

/// Writes [`ClauseScores`]: per contract, its clause count, then per clause the 41 scores (f32
/// little-endian) and the annotation bits (u64).
fn write_clause_scores(path: &Path, per_contract: &ClauseScores) -> Result<()> {
    let mut out = Vec::new();
    out.extend_from_slice(&(per_contract.len() as u64).to_le_bytes());
    for (scores, truth) in per_contract {
        out.extend_from_slice(&(scores.len() as u64).to_le_bytes());
        for (clause, bits) in scores.iter().zip(truth) {
            for x in clause {
                out.extend_from_slice(&x.to_le_bytes());
            }
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

/// Reads what [`write_clause_scores`] wrote, refusing a file of another contract count.
fn read_clause_scores(path: &Path, contracts: usize) -> Result<ClauseScores> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<[u8; 8]> {
        let mut word = [0u8; 8];
        let piece = bytes
            .get(at..at + n)
            .with_context(|| format!("{}: truncated at byte {at}", path.display()))?;
        word[..n].copy_from_slice(piece);
        at += n;
        Ok(word)
    };
    let n = u64::from_le_bytes(take(8)?) as usize;
    anyhow::ensure!(
        n == contracts,
        "{}: scores of {n} contracts, but {contracts} are loaded",
        path.display()
    );
    let mut per_contract = Vec::with_capacity(n);
    for _ in 0..n {
        let clauses = u64::from_le_bytes(take(8)?) as usize;
        let mut scores = Vec::with_capacity(clauses.min(1 << 20));
        let mut truth = Vec::with_capacity(clauses.min(1 << 20));
        for _ in 0..clauses {
            let mut clause = [0f32; N_CATEGORIES];
            for x in &mut clause {
                let w = take(4)?;
                *x = f32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            }
            scores.push(clause);
            truth.push(u64::from_le_bytes(take(8)?));
        }
        per_contract.push((scores, truth));
    }
    Ok(per_contract)
}

/// Each contract's clauses as ingest types them (scores per category) and as CUAD annotates
/// them (bit `k`: category `k`), every contract scored by models that never saw it.
type ClauseScores = Vec<(Vec<[f32; N_CATEGORIES]>, Vec<u64>)>;

fn clause_scores_cv(
    data: &precedent_cuad::CuadDataset,
    folds: usize,
    epochs: usize,
    second_stage: bool,
    started: Instant,
) -> Result<ClauseScores> {
    use crate::cuad::{confidences, fold_clause_logits, fold_logits, stacked_scores};
    use precedent_clause_types::clause_classifier::ClassifierOptions;
    use precedent_clause_types::typer::prepare;
    use rayon::prelude::*;

    let contracts: Vec<&_> = data.contracts.iter().collect();
    let prepared = prepare(&contracts);
    let clauses: Vec<Vec<precedent_contracts::Clause>> = contracts
        .par_iter()
        .map(|c| precedent_contracts::segment_text(&c.text))
        .collect();
    // Clauses no candidate lies inside are typed from their own text by the fold's typer.
    let mut uncovered: Vec<Vec<[f32; N_CATEGORIES]>> = vec![Vec::new(); contracts.len()];
    let (logits, _) = fold_logits(
        &prepared,
        folds,
        &TrainOptions {
            epochs,
            ..TrainOptions::default()
        },
        second_stage,
        |fold, typer| {
            for (ci, contract_clauses) in clauses.iter().enumerate() {
                if round_robin_fold(ci, folds) == fold {
                    uncovered[ci] = contract_clauses
                        .par_iter()
                        .map(|clause| typer.classify_scores(&clause.text))
                        .collect();
                }
            }
        },
        |done, total| {
            eprintln!(
                "typer fit {done}/{total} done ({:.0}s)",
                started.elapsed().as_secs_f64()
            )
        },
    );
    let scores: Vec<Vec<[f32; N_CATEGORIES]>> = if second_stage {
        let clause = fold_clause_logits(
            &contracts,
            &prepared,
            folds,
            &ClassifierOptions::for_second_stage(),
            |done, total| {
                eprintln!(
                    "clause classifier fit {done}/{total} done ({:.0}s)",
                    started.elapsed().as_secs_f64()
                )
            },
        )?;
        stacked_scores(
            &prepared,
            &logits,
            Some(&clause),
            folds,
            &StackOptions::default(),
        )
    } else {
        confidences(&logits.outer)
    };
    let per_contract: ClauseScores = contracts
        .par_iter()
        .enumerate()
        .map(|(ci, c)| {
            let clauses = &clauses[ci];
            let p = &prepared[ci];
            let scores = precedent_engine::ingest::clause_scores_of(
                &c.text,
                clauses,
                p.candidates.iter().zip(&scores[ci]),
                |i| uncovered[ci][i],
            );
            let chars = precedent_text::char_offsets(&c.text);
            let mut truth = vec![0u64; clauses.len()];
            // By piece, not by the range from first to last piece: a date in the preamble
            // joined by `<omitted>` to a sentence near the end would make every clause between
            // them of the type (one Effective Date annotation marked 187 clauses of a contract).
            let pieces = c
                .annotations
                .iter()
                .flat_map(|a| a.pieces.iter().map(move |piece| (a.category, piece)));
            for (category, piece) in pieces {
                let (s, e) = (chars[piece.start], chars[piece.end]);
                for (bits, clause) in truth.iter_mut().zip(clauses) {
                    let overlap = e.min(clause.end).saturating_sub(s.max(clause.start));
                    let shorter = (e - s).min(clause.end - clause.start).max(1);
                    if overlap * 2 >= shorter {
                        *bits |= 1 << category;
                    }
                }
            }
            (scores, truth)
        })
        .collect();
    Ok(per_contract)
}
