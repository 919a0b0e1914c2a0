//! `precedent eval-cuad`: contract-level cross-validation of the clause typer on CUAD, scored as
//! the CUAD paper does (AUPR, precision at 80% / 90% recall, Jaccard ≥ 0.5 word-set matching).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use precedent_clause_types::cache::{find_cuad_dir, sentences_fingerprint};
use precedent_clause_types::dense::{
    embed_corpus, DenseOptions, SentenceCache, SentenceEmbedder, SENTENCE_MAX_TOKENS,
};
use precedent_clause_types::novelty::NoveltyOptions;
use precedent_clause_types::selection::Selection;
use precedent_clause_types::stack::StackOptions;
use precedent_clause_types::type_thresholds::{self, GridCounts};
use precedent_clause_types::{TrainOptions, N_CATEGORIES};
use precedent_eval::cuad::{cross_validate, CvOptions, DenseCv, Scores};
use precedent_eval::legalbench::tune_on_dev;

use precedent_engine::MiniLmSentences;

#[derive(Args)]
pub struct EvalCuadArgs {
    /// CUAD folder (master_clauses.csv, full_contract_txt/); default $PRECEDENT_CUAD_DIR or
    /// shared/data/cuad beside the working directory or an ancestor.
    #[arg(long)]
    pub cuad: Option<PathBuf>,
    /// Number of folds (contracts are assigned round-robin in id order).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Predictions per (contract, category), most confident first (CUAD uses 20).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Drop a prediction whose intersection-over-union with a more confident one exceeds this
    /// (1 keeps overlapping candidates).
    #[arg(long, default_value_t = 0.5)]
    pub max_overlap: f64,
    /// Use only the first N contracts (by id); for quick checks.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Training epochs of the typer.
    #[arg(long, default_value_t = TrainOptions::default().epochs)]
    pub epochs: usize,
    /// Write the full report (per category, pooled, LegalBench development set) as JSON.
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Instead of the span evaluation: how well the `clause_types` that `ingest` writes match
    /// CUAD, per segmented clause, at several confidence thresholds (typer refit per fold).
    #[arg(long)]
    pub clause_types: bool,
    /// Score with the first stage alone (no second stage; 5 typer fits instead of 15).
    #[arg(long)]
    pub first_stage_only: bool,
    /// Keep the second stage's confidences: no novelty step after it (the step that scores a
    /// prediction low when more confident ones already give its answer).
    #[arg(long, conflicts_with = "first_stage_only")]
    pub no_novelty: bool,
    /// Write the second stage fitted on the out-of-fold logits of all contracts (the file
    /// shipped as models/clause-typer/second_stage.json, or with --dense second_stage_dense.json),
    /// with its novelty step.
    #[arg(long, conflicts_with = "first_stage_only")]
    pub second_stage_out: Option<PathBuf>,
    /// The second stage as `review` runs it by default: its trees also read a classifier over
    /// each candidate's MiniLM sentence vector (nested like the clause classifier). Embeds every
    /// sentence of the contracts first (15-35 min for all 398 on 2 cores), cached under
    /// .precedent/cache/cuad-sentences/.
    #[arg(long, conflicts_with = "first_stage_only")]
    pub dense: bool,
    /// With --clause-types: keep the cross-validated clause scores in FILE and reuse them when
    /// it exists (for studying threshold rules without refitting the typers).
    #[arg(long, requires = "clause_types", hide = true)]
    pub scores_cache: Option<PathBuf>,
}

fn pct(x: f64) -> String {
    format!("{:5.1}", 100.0 * x)
}

fn row(name: &str, s: &Scores, extra: &str) {
    println!(
        "{name:<36} {} {} {} {}{extra}",
        pct(s.aupr),
        pct(s.precision_at_80_recall),
        pct(s.precision_at_90_recall),
        pct(s.max_recall)
    );
}

pub fn run(args: EvalCuadArgs) -> Result<()> {
    let dir = match args.cuad {
        Some(d) => d,
        None => find_cuad_dir().context("no CUAD folder found: pass --cuad DIR")?,
    };
    let started = Instant::now();
    let mut data = precedent_cuad::load(&dir)?;
    if let Some(limit) = args.limit {
        data.contracts.truncate(limit);
    }
    if args.clause_types {
        return clause_type_cv(
            &data,
            args.folds,
            args.epochs,
            !args.first_stage_only,
            ClauseTypeOutputs {
                json: args.json_out.as_deref(),
                scores_cache: args.scores_cache.as_deref(),
            },
        );
    }
    let r = &data.report;
    eprintln!(
        "{} contracts; {} of {} spans placed ({} by exact search, {} whitespace-collapsed, {} by word window; {} made of pieces joined with <omitted>); {} unplaced",
        data.contracts.len(),
        r.placed(),
        r.spans,
        r.exact,
        r.whitespace,
        r.fuzzy,
        r.discontiguous,
        r.unplaced
    );
    let options = CvOptions {
        folds: args.folds,
        selection: Selection {
            top_n: args.top,
            max_overlap: (args.max_overlap < 1.0).then_some(args.max_overlap),
        },
        train: TrainOptions {
            epochs: args.epochs,
            ..TrainOptions::default()
        },
        second_stage: (!args.first_stage_only).then(StackOptions::default),
        novelty: (!args.first_stage_only && !args.no_novelty).then(NoveltyOptions::default),
        dense: if args.dense {
            Some(sentence_vectors(&dir, &data)?)
        } else {
            None
        },
    };
    let report = cross_validate(&data, &options, |done, total| {
        eprintln!(
            "model fit {done}/{total} done ({:.0}s)",
            started.elapsed().as_secs_f64()
        )
    })?;
    if let (Some(path), Some(stage)) = (&args.second_stage_out, &report.second_stage) {
        std::fs::write(path, stage.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let dev = tune_on_dev(&report.held_out_clauses);
    let stages = match (&options.second_stage, &options.novelty) {
        (Some(_), Some(_)) => "typer with its second stage and novelty step (nested CV)",
        (Some(_), None) => "typer with its second stage (nested CV)",
        _ => "first stage only",
    };
    let stages = if options.dense.is_some() {
        format!("{stages}, sentence-embedding view")
    } else {
        stages.to_owned()
    };
    println!(
        "CUAD {}-fold contract-level CV, {} contracts, top {} predictions per question, {stages}",
        report.folds, report.contracts, report.selection.top_n
    );
    println!(
        "{:<36} {:>5} {:>5} {:>5} {:>5}",
        "category", "AUPR", "P@80R", "P@90R", "maxR"
    );
    for c in &report.per_category {
        row(
            c.category,
            &c.scores,
            &format!("  ({} spans)", c.annotations),
        );
    }
    row("mean over categories", &report.category_mean, "");
    row("pooled (CUAD evaluate.py)", &report.pooled, "");
    row(
        "pooled, one prediction per span",
        &report.pooled_one_to_one,
        "",
    );
    println!(
        "anchor: DeBERTa-xlarge (CUAD paper) 47.8 AUPR, 44.0 P@80R; candidates cover {:.1}% of spans; {} first-stage fits, {:.1}s each",
        100.0 * report.candidate_recall,
        report.first_stage_fits,
        report.train_seconds_per_fold
    );
    println!(
        "LegalBench-style development set (held-out annotations, thresholds tuned on the other half of the contracts): mean balanced accuracy {:.1}",
        100.0 * dev.mean
    );
    if let Some(path) = &args.json_out {
        let json = serde_json::json!({
            "cuad": &report,
            "placement": &data.report,
            "legalbench_dev": &dev,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The contracts' sentence vectors for `--dense`: from the cache when this data, model and
/// window were embedded before, else embedded now (with progress) and cached.
fn sentence_vectors(dir: &Path, data: &precedent_cuad::CuadDataset) -> Result<DenseCv> {
    let embedder = MiniLmSentences(
        precedent_models::Embedder::load_default()
            .context("--dense needs the MiniLM model (scripts/setup.sh installs it)")?,
    );
    let model = embedder.model_id().to_owned();
    let key = sentences_fingerprint(dir, &model, SENTENCE_MAX_TOKENS, data.contracts.len())?;
    let path =
        precedent_paths::state_path("cache/cuad-sentences").join(format!("sentences-{key}.bin"));
    let cached = path
        .is_file()
        .then(|| SentenceCache::load(&path))
        .and_then(|r| {
            r.map_err(|e| eprintln!("ignoring {}: {e:#}", path.display()))
                .ok()
        });
    let sentences = match cached {
        Some(s) => {
            eprintln!("sentence vectors from {}", path.display());
            s
        }
        None => {
            let candidates: Vec<_> = data
                .contracts
                .iter()
                .map(|c| precedent_clause_types::candidates::candidates(&c.text))
                .collect();
            let corpus: Vec<(&str, &[precedent_clause_types::candidates::Candidate])> = data
                .contracts
                .iter()
                .zip(&candidates)
                .map(|(c, cs)| (c.text.as_str(), cs.as_slice()))
                .collect();
            let started = Instant::now();
            let s = embed_corpus(&corpus, &embedder, SENTENCE_MAX_TOKENS, |done, total| {
                eprintln!(
                    "embedding sentences: {done}/{total} ({:.0}s)",
                    started.elapsed().as_secs_f64()
                )
            })?;
            s.save(&path)?;
            eprintln!("sentence vectors cached in {}", path.display());
            s
        }
    };
    Ok(DenseCv {
        sentences,
        model,
        options: DenseOptions::default(),
    })
}

/// Confidence thresholds the clause-level evaluation reports.
const CLAUSE_THRESHOLDS: [f32; 8] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// Cross-validates the clause types `ingest` writes. Each held-out contract is segmented as
/// ingest does and every clause scored as ingest scores it (by a typer that never saw the
/// contract, its second stage nested as in the span evaluation); a clause truly has category X
/// when a placed CUAD annotation of X overlaps it by at least half of the shorter of the two
/// (the annotation lies in the clause, or the clause is part of a longer annotation). Pooled
/// over (clause, category) pairs.
fn clause_type_cv(
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
                fold_counts[ci % folds][k].add(clause[k], (bits >> k) & 1 == 1);
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
            global_choices.push(type_thresholds::GRID[t]);
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
            type_thresholds::MIN_PRECISION,
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
        type_thresholds::GRID
            .iter()
            .position(|&t| (t - threshold).abs() < 1e-6)
    };
    let shipped = type_thresholds::STORED_TYPE_THRESHOLD;
    let (Some(now), Some(before)) = (grid_index(shipped), grid_index(THRESHOLD_BEFORE)) else {
        anyhow::bail!("the stored thresholds must be on the grid");
    };
    println!(
        "per category (annotated clauses): precision / recall at {THRESHOLD_BEFORE} (stored before 2026-11-24) | at {shipped} (stored now) | per-category rule, cross-validated"
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
struct ClauseTypeOutputs<'a> {
    json: Option<&'a Path>,
    scores_cache: Option<&'a Path>,
}

/// The threshold clause types were stored at before 2026-11-24, reported for comparison.
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
    use precedent_clause_types::clause_classifier::ClassifierOptions;
    use precedent_clause_types::typer::prepare;
    use precedent_eval::cuad::{confidences, fold_clause_logits, fold_logits, stacked_scores};
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
                if ci % folds == fold {
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
            for a in &c.annotations {
                let Some(span) = &a.span else { continue };
                let (s, e) = (chars[span.start], chars[span.end]);
                for (bits, clause) in truth.iter_mut().zip(clauses) {
                    let overlap = e.min(clause.end).saturating_sub(s.max(clause.start));
                    let shorter = (e - s).min(clause.end - clause.start).max(1);
                    if overlap * 2 >= shorter {
                        *bits |= 1 << a.category;
                    }
                }
            }
            (scores, truth)
        })
        .collect();
    Ok(per_contract)
}
