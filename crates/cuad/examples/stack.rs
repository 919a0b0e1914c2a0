//! Second-stage experiments over cached nested out-of-fold first-stage logits:
//! `cargo run --release -p precedent-cuad --example stack [CACHE_FILE]`. The first run fits the
//! 15 first stages of a nested 5-fold CV (~15 min) and caches their logits; later runs only refit
//! second stages. Folds are `contract index % 5`; `SHUFFLE_SEED=n` permutes the contracts first
//! (another fold assignment: use new cache files for it). `DENSE=1` gives the trees the
//! sentence-embedding classifier's nested logits (`precedent_cuad::dense`; vectors from the
//! `embed_sentences` example's cache, `DENSE_VECTORS`, default `/tmp/cuad-sentence-emb.bin`;
//! its logits cached in `DENSE_CACHE`, default beside `CACHE_FILE` as `.dense`).
//! `TYPER_L2=x` / `TYPER_EPOCHS=n` fit
//! the first stages with other options (new cache files again); `FIRST=only` prints the first
//! stage alone without needing the classifier's cache, and `NESTED=0` fits only the 5 outer
//! first stages for such a screen.
use std::io::{Read, Write};

use precedent_cuad::clause_classifier::ClassifierOptions;
use precedent_cuad::eval::{
    confidences, fold_clause_logits, fold_logits, questions, score_questions, stacked_scores,
    FoldLogits, Selection,
};
use precedent_cuad::stack::StackOptions;
use precedent_cuad::typer::{prepare, TrainOptions};
use precedent_cuad::N_CATEGORIES;

type Logits = Vec<[f32; N_CATEGORIES]>;

fn write_logits(out: &mut impl Write, l: &Logits) {
    out.write_all(&(l.len() as u64).to_le_bytes()).unwrap();
    for row in l {
        for v in row {
            out.write_all(&v.to_le_bytes()).unwrap();
        }
    }
}

fn read_logits(bytes: &[u8], at: &mut usize) -> Logits {
    let n = u64::from_le_bytes(bytes[*at..*at + 8].try_into().unwrap()) as usize;
    *at += 8;
    let mut out = vec![[0f32; N_CATEGORIES]; n];
    for row in &mut out {
        for v in row.iter_mut() {
            *v = f32::from_le_bytes(bytes[*at..*at + 4].try_into().unwrap());
            *at += 4;
        }
    }
    out
}

fn read_fold_logits(path: &str, contracts: usize, folds: usize) -> Option<FoldLogits> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    let mut at = 0;
    let mut l = FoldLogits {
        outer: Vec::new(),
        inner: Vec::new(),
    };
    for _ in 0..contracts {
        l.outer.push(read_logits(&bytes, &mut at));
        let mut inner = Vec::new();
        for _ in 0..folds {
            let present = bytes[at] == 1;
            at += 1;
            inner.push(present.then(|| read_logits(&bytes, &mut at)));
        }
        l.inner.push(inner);
    }
    Some(l)
}

fn write_fold_logits(path: &str, l: &FoldLogits) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for (o, inner) in l.outer.iter().zip(&l.inner) {
        write_logits(&mut out, o);
        for i in inner {
            match i {
                Some(i) => {
                    out.write_all(&[1]).unwrap();
                    write_logits(&mut out, i);
                }
                None => out.write_all(&[0]).unwrap(),
            }
        }
    }
}

/// The second stage's options: the default (linear stage + boosted trees), or with
/// `TREES=trees,depth,learning_rate,top,from_linear[,l2,min_hessian]` other trees, `TREES=none`
/// the linear stage alone (`NOVELTY_FOLDS=n`: cross-fitted scores for the novelty step;
/// `RANK=w`: the pairwise trees' weight, 0 for the log-loss trees alone).
fn stack_options() -> StackOptions {
    let mut trees = match std::env::var("TREES").as_deref() {
        Err(_) => StackOptions::default().trees,
        Ok("none") => None,
        Ok(v) => {
            let p: Vec<f32> = v.split(',').map(|x| x.parse().unwrap()).collect();
            Some(precedent_cuad::stack::TreeStage {
                boost: precedent_cuad::boost::BoostOptions {
                    trees: p[0] as usize,
                    max_depth: p[1] as usize,
                    learning_rate: p[2],
                    l2: p.get(5).copied().unwrap_or(1.0),
                    min_child_hessian: p.get(6).copied().unwrap_or(1.0),
                    ..Default::default()
                },
                top: p[3] as u32,
                from_linear: p[4] != 0.0,
                ..Default::default()
            })
        }
    };
    if let (Some(t), Ok(n)) = (&mut trees, std::env::var("NOVELTY_FOLDS")) {
        t.novelty_folds = n.parse().unwrap();
    }
    if let (Some(t), Ok(w)) = (&mut trees, std::env::var("RANK")) {
        t.rank_weight = w.parse().unwrap();
    }
    StackOptions {
        trees,
        ..StackOptions::default()
    }
}

/// Every contract's candidate vectors from the `embed_sentences` example's cache
/// (`DENSE_VECTORS`), in `prepared` order (`original[i]`: contract `i`'s index in CUAD's order).
fn all_candidate_vectors(
    prepared: &[precedent_cuad::typer::Prepared],
    original: &[usize],
) -> (Vec<Vec<f32>>, usize, usize) {
    let path = std::env::var("DENSE_VECTORS").unwrap_or("/tmp/cuad-sentence-emb.bin".into());
    let sentences =
        precedent_cuad::dense::SentenceCache::load(std::path::Path::new(&path)).unwrap();
    let vectors = prepared
        .iter()
        .zip(original)
        .map(|(p, &o)| {
            precedent_cuad::dense::cached_candidate_vectors(
                &p.candidates,
                &sentences.contracts[o],
                sentences.dim,
            )
            .unwrap()
        })
        .collect();
    (vectors, sentences.dim, sentences.max_tokens)
}

/// One candidate's vote per category.
type Votes = [f32; N_CATEGORIES];

/// The nearest annotated spans' vote for every candidate, nested: contract `c` (fold `c %
/// folds`) is scored with the spans of the other folds (`outer`) and, for each other fold `f`,
/// of the folds other than `f` and its own (`inner[c][f]`). Span vectors come from the
/// `clause_dense_cv` example's cache (`SPAN_VECTORS`, 128 tokens), candidate vectors from
/// `DENSE_VECTORS`.
fn vote_fold_logits(
    d: &precedent_cuad::CuadDataset,
    contracts: &[&precedent_cuad::CuadContract],
    prepared: &[precedent_cuad::typer::Prepared],
    original: &[usize],
    folds: usize,
) -> precedent_cuad::eval::FoldLogits {
    use precedent_cuad::clause_classifier::{span_examples, vote_logits, NEIGHBOURS};
    use rayon::prelude::*;
    let t = std::time::Instant::now();
    // The span cache's text order: clause_dense_cv's (CUAD's contract order).
    let all: Vec<&_> = d.contracts.iter().collect();
    let cache_examples = span_examples(&all);
    let held: Vec<String> = all
        .iter()
        .flat_map(|c| c.annotations.iter().map(|a| a.match_text()))
        .collect();
    let mut slot: std::collections::HashMap<&str, usize> = Default::default();
    for t in cache_examples
        .iter()
        .map(|e| e.text.as_str())
        .chain(held.iter().map(String::as_str))
    {
        let n = slot.len();
        slot.entry(t).or_insert(n);
    }
    let path = std::env::var("SPAN_VECTORS").unwrap_or("/tmp/cuad-span-emb-128.bin".into());
    let bytes = std::fs::read(&path).unwrap();
    let span_vectors: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let (candidate_vectors, dim, _) = all_candidate_vectors(prepared, original);
    assert_eq!(span_vectors.len(), slot.len() * dim, "{path}: wrong size");
    // The pool: every span of every contract, in this run's contract order (fold = index % folds).
    let examples = span_examples(contracts);
    let pool: Vec<f32> = examples
        .iter()
        .flat_map(|e| {
            let i = slot[e.text.as_str()];
            span_vectors[i * dim..(i + 1) * dim].iter().copied()
        })
        .collect();
    let pool_fold: Vec<usize> = examples.iter().map(|e| e.group % folds).collect();
    let labels: Vec<u64> = examples.iter().map(|e| e.positive).collect();
    eprintln!("vote pool: {} spans ({:?})", examples.len(), t.elapsed());
    // Per candidate, the 60 nearest spans of any fold; a pool excludes at most two folds of five,
    // so the 10 nearest allowed are among them (else all allowed ones are scanned).
    const SHORTLIST: usize = 60;
    let vote = |x: &[f32], excluded: &[usize], shortlist: &[(f32, usize)]| {
        let allowed = |j: usize| !excluded.contains(&pool_fold[j]);
        let mut chosen: Vec<(f32, u64)> = shortlist
            .iter()
            .filter(|&&(_, j)| allowed(j))
            .take(NEIGHBOURS)
            .map(|&(s, j)| (s, labels[j]))
            .collect();
        if chosen.len() < NEIGHBOURS {
            let mut all: Vec<(f32, usize)> = (0..labels.len())
                .filter(|&j| allowed(j))
                .map(|j| {
                    let v = &pool[j * dim..(j + 1) * dim];
                    (v.iter().zip(x).map(|(a, b)| a * b).sum::<f32>(), j)
                })
                .collect();
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
            chosen = all
                .iter()
                .take(NEIGHBOURS)
                .map(|&(s, j)| (s, labels[j]))
                .collect();
        }
        vote_logits(chosen)
    };
    let mut out = precedent_cuad::eval::FoldLogits {
        outer: Vec::with_capacity(prepared.len()),
        inner: Vec::with_capacity(prepared.len()),
    };
    for (c, vectors) in candidate_vectors.iter().enumerate() {
        let own = c % folds;
        let scored: Vec<(Votes, Vec<Option<Votes>>)> = vectors
            .par_chunks(dim)
            .map(|x| {
                let mut sims: Vec<(f32, usize)> = pool
                    .chunks_exact(dim)
                    .enumerate()
                    .map(|(j, v)| (v.iter().zip(x).map(|(a, b)| a * b).sum::<f32>(), j))
                    .collect();
                sims.select_nth_unstable_by(SHORTLIST, |a, b| b.0.total_cmp(&a.0));
                sims.truncate(SHORTLIST);
                sims.sort_by(|a, b| b.0.total_cmp(&a.0));
                let outer = vote(x, &[own], &sims);
                let inner = (0..folds)
                    .map(|f| (f != own).then(|| vote(x, &[own, f], &sims)))
                    .collect();
                (outer, inner)
            })
            .collect();
        out.outer.push(scored.iter().map(|s| s.0).collect());
        out.inner.push(
            (0..folds)
                .map(|f| {
                    (f != own).then(|| {
                        scored
                            .iter()
                            .map(|s| s.1[f].unwrap_or([0.0; N_CATEGORIES]))
                            .collect()
                    })
                })
                .collect(),
        );
        if c % 40 == 0 {
            eprintln!("vote {c}/{} {:?}", prepared.len(), t.elapsed());
        }
    }
    out
}

/// The sentence-embedding classifier's options: the default, or
/// `DENSE_OPTIONS=epochs,learning_rate,l2,positive_weight`.
fn dense_options() -> precedent_cuad::dense::DenseOptions {
    let mut o = precedent_cuad::dense::DenseOptions::default();
    if let Ok(v) = std::env::var("DENSE_OPTIONS") {
        let p: Vec<f32> = v.split(',').map(|x| x.parse().unwrap()).collect();
        o.epochs = p[0] as usize;
        o.learning_rate = p[1];
        o.l2 = p[2];
        o.positive_weight = p[3];
    }
    o
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cache = args
        .get(1)
        .cloned()
        .unwrap_or("/tmp/cuad-nested-logits.bin".into());
    let folds = 5;
    let dir = precedent_cuad::cache::find_cuad_dir()
        .expect("no CUAD folder (set PRECEDENT_CUAD_DIR or run beside shared/data/cuad)");
    let d = precedent_cuad::load(&dir).unwrap();
    let mut contracts: Vec<&_> = d.contracts.iter().collect();
    // Each contract's index in CUAD's order (the sentence-vector cache's key).
    let mut original: Vec<usize> = (0..contracts.len()).collect();
    if let Ok(seed) = std::env::var("SHUFFLE_SEED") {
        // Another fold assignment: every fold function takes contract `i` into fold `i % folds`
        // of this order, so permuting the contracts first keeps them all consistent (the
        // caches then belong to this seed: give them new names).
        let order = precedent_cuad::typer::shuffled(contracts.len(), seed.parse().unwrap());
        contracts = order.iter().map(|&i| contracts[i as usize]).collect();
        original = order.iter().map(|&i| i as usize).collect();
    }
    let prepared = prepare(&contracts);
    let logits = read_fold_logits(&cache, prepared.len(), folds).unwrap_or_else(|| {
        let t = std::time::Instant::now();
        // `TYPER_L2` / `TYPER_EPOCHS`: other first-stage options (give the cache a new name).
        let defaults = TrainOptions::default();
        let options = TrainOptions {
            l2: std::env::var("TYPER_L2").map_or(defaults.l2, |v| v.parse().unwrap()),
            epochs: std::env::var("TYPER_EPOCHS").map_or(defaults.epochs, |v| v.parse().unwrap()),
            ..defaults
        };
        eprintln!("first stage: {options:?}");
        let (l, _) = fold_logits(
            &prepared,
            folds,
            &options,
            // `NESTED=0`: the 5 outer fits only, enough for `FIRST=only` screens (such a cache
            // cannot feed a second stage).
            std::env::var("NESTED").as_deref() != Ok("0"),
            |_, _| {},
            |d, n| eprintln!("fit {d}/{n} {:?}", t.elapsed()),
        );
        write_fold_logits(&cache, &l);
        l
    });
    let dense = std::env::var("DENSE").is_ok().then(|| {
        let dense_cache = std::env::var("DENSE_CACHE")
            .unwrap_or(format!("{}.dense", cache.trim_end_matches(".bin")));
        read_fold_logits(&dense_cache, prepared.len(), folds).unwrap_or_else(|| {
            let t = std::time::Instant::now();
            let (vectors, dim, _) = all_candidate_vectors(&prepared, &original);
            eprintln!("candidate vectors in {:?}", t.elapsed());
            let options = dense_options();
            let l = precedent_cuad::eval::fold_dense_logits(
                &prepared,
                &vectors,
                dim,
                folds,
                &options,
                |d, n| eprintln!("dense fit {d}/{n} {:?}", t.elapsed()),
            );
            write_fold_logits(&dense_cache, &l);
            l
        })
    });
    let mut dense = dense;
    if let (Some(dense), Ok(u)) = (&mut dense, std::env::var("VOTE")) {
        // Experiment: the nearest annotated spans' vote (by MiniLM vector, nested like the
        // rest) added to the dense view's logits at weight `VOTE`.
        let u: f32 = u.parse().unwrap();
        let vote_cache = std::env::var("VOTE_CACHE")
            .unwrap_or(format!("{}.vote", cache.trim_end_matches(".bin")));
        let vote = read_fold_logits(&vote_cache, prepared.len(), folds).unwrap_or_else(|| {
            let l = vote_fold_logits(&d, &contracts, &prepared, &original, folds);
            write_fold_logits(&vote_cache, &l);
            l
        });
        let add = |a: &mut Vec<[f32; N_CATEGORIES]>, b: &Vec<[f32; N_CATEGORIES]>| {
            for (x, y) in a.iter_mut().zip(b) {
                x.iter_mut().zip(y).for_each(|(x, y)| *x += u * y);
            }
        };
        for c in 0..prepared.len() {
            add(&mut dense.outer[c], &vote.outer[c]);
            for (a, b) in dense.inner[c].iter_mut().zip(&vote.inner[c]) {
                if let (Some(a), Some(b)) = (a, b) {
                    add(a, b);
                }
            }
        }
        eprintln!("dense view + {u} x nearest spans' vote ({vote_cache})");
    }
    if let (Some(dense), Ok(_)) = (&dense, std::env::var("DENSE_ONLY")) {
        // The dense classifier alone, as if it were the first stage (no clause cache needed).
        let alone: Vec<Logits> = confidences(&dense.outer);
        for top_n in [20, 50] {
            let q = questions(
                &contracts,
                &prepared,
                &alone,
                &Selection {
                    top_n,
                    max_overlap: Some(0.5),
                },
            );
            let (p, _, m, _) = score_questions(&q);
            println!(
                "dense classifier alone top {top_n}: pooled AUPR {:.1} P@80R {:.1} P@90R {:.1} maxR {:.1} | mean AUPR {:.1} P@80R {:.1}",
                100.0 * p.aupr,
                100.0 * p.precision_at_80_recall,
                100.0 * p.precision_at_90_recall,
                100.0 * p.max_recall,
                100.0 * m.aupr,
                100.0 * m.precision_at_80_recall
            );
        }
        return;
    }
    let overlap: Option<f64> = std::env::var("OVERLAP").ok().and_then(|v| v.parse().ok());
    let overlap = overlap.map_or(Some(0.9), |o| (o < 1.0).then_some(o));
    let report = |name: &str, scores: &Vec<Logits>, top_n: usize| {
        let q = questions(
            &contracts,
            &prepared,
            scores,
            &Selection {
                top_n,
                max_overlap: overlap,
            },
        );
        let (p, _, m, per) = score_questions(&q);
        if std::env::var("PER_CATEGORY").is_ok() {
            for c in &per {
                println!(
                    "  {:<36} AUPR {:5.1} P@80R {:5.1} maxR {:5.1}",
                    c.category,
                    100.0 * c.scores.aupr,
                    100.0 * c.scores.precision_at_80_recall,
                    100.0 * c.scores.max_recall
                );
            }
        }
        println!(
            "{name:<40} top {top_n:>3}: pooled AUPR {:.1} P@80R {:.1} P@90R {:.1} maxR {:.1} | mean AUPR {:.1} P@80R {:.1}",
            100.0 * p.aupr,
            100.0 * p.precision_at_80_recall,
            100.0 * p.precision_at_90_recall,
            100.0 * p.max_recall,
            100.0 * m.aupr,
            100.0 * m.precision_at_80_recall
        );
    };
    let first: Vec<Logits> = confidences(&logits.outer);
    if std::env::var("FIRST").is_ok() {
        for top_n in [20, 50] {
            report("first stage", &first, top_n);
        }
        if std::env::var("FIRST").as_deref() == Ok("only") {
            // Screening first stages without the classifier's cache.
            return;
        }
    }
    // The single-clause classifier's nested logits of every candidate, cached beside.
    let clause_cache = std::env::var("CLAUSE_CACHE")
        .unwrap_or(format!("{}.clause", cache.trim_end_matches(".bin")));
    let clause = read_fold_logits(&clause_cache, prepared.len(), folds).unwrap_or_else(|| {
        let t = std::time::Instant::now();
        let l = fold_clause_logits(
            &contracts,
            &prepared,
            folds,
            &ClassifierOptions::for_second_stage(),
            |d, n| eprintln!("clause fit {d}/{n} {:?}", t.elapsed()),
        )
        .unwrap();
        write_fold_logits(&clause_cache, &l);
        l
    });
    let variants: Vec<(String, StackOptions)> = std::env::var("VARIANTS")
        .ok()
        .map(|v| {
            v.split(';')
                .map(|s| {
                    let p: Vec<f32> = s.split(',').map(|x| x.parse().unwrap()).collect();
                    (
                        s.to_string(),
                        StackOptions {
                            epochs: p[0] as usize,
                            learning_rate: p[1],
                            l2: p[2],
                            ..stack_options()
                        },
                    )
                })
                .collect()
        })
        .unwrap_or_else(|| vec![("default".into(), stack_options())]);
    if let Ok(out) = std::env::var("WRITE_SECOND_STAGE") {
        // As `eval-cuad --second-stage-out` fits it: on the outer out-of-fold logits of all.
        // With `DENSE=1` the trees also read the dense classifier's out-of-fold logits, and the
        // stage carries that classifier refitted on every contract (what a review applies).
        let inputs: Vec<_> = prepared
            .iter()
            .enumerate()
            .zip(&logits.outer)
            .zip(&clause.outer)
            .map(|(((ci, p), l), c)| precedent_cuad::stack::StackInput {
                candidates: &p.candidates,
                logits: l,
                bits: &p.bits,
                clause: Some(c),
                sections: Some(&p.sections),
                dense: dense.as_ref().map(|d| d.outer[ci].as_slice()),
            })
            .collect();
        let mut stage = precedent_cuad::stack::SecondStage::train(
            &inputs,
            &stack_options(),
            &format!(
                "out-of-fold first-stage and clause-classifier logits of {} CUAD contracts ({folds}-fold)",
                contracts.len()
            ),
        );
        let scores: Vec<Logits> = stage.training_scores(&inputs);
        stage.novelty = Some(precedent_cuad::eval::train_novelty(
            &contracts,
            &prepared.iter().collect::<Vec<_>>(),
            &scores,
            &Selection {
                top_n: 20,
                max_overlap: overlap,
            },
            &novelty_options(),
        ));
        if dense.is_some() {
            let t = std::time::Instant::now();
            let (vectors, dim, max_tokens) = all_candidate_vectors(&prepared, &original);
            // The embedder's full id (name and weights' revision): a review refuses others.
            let model = precedent_models::Embedder::load_default().unwrap();
            stage.dense = Some(precedent_cuad::eval::fit_dense_view(
                &prepared,
                &vectors,
                dim,
                max_tokens,
                model.model_id(),
                &dense_options(),
            ));
            eprintln!("dense classifier on all contracts in {:?}", t.elapsed());
            stage.data = format!(
                "{}; trees also read a MiniLM sentence-embedding classifier's out-of-fold logits",
                stage.data
            );
        }
        std::fs::write(out, stage.to_json()).unwrap();
        return;
    }
    if std::env::var("ANALYZE").is_ok() && std::env::var("NOVELTY").is_err() {
        let s = stacked_scores(&prepared, &logits, Some(&clause), folds, &stack_options());
        let q = questions(
            &contracts,
            &prepared,
            &s,
            &Selection {
                top_n: 100,
                max_overlap: overlap,
            },
        );
        if let Ok(k) = std::env::var("DUMP") {
            // One category's predictions and annotations, for reading: JSON lines per contract.
            let k: usize = k.parse().unwrap();
            let mut out = std::io::BufWriter::new(
                std::fs::File::create(format!("/tmp/cuad-dump-{k}.jsonl")).unwrap(),
            );
            for (ci, (c, p)) in contracts.iter().zip(&prepared).enumerate() {
                let chosen = precedent_cuad::eval::select(
                    &p.candidates,
                    |i| s[ci][i][k],
                    &Selection {
                        top_n: 100,
                        max_overlap: overlap,
                    },
                );
                let gold: Vec<String> = c.spans_of(k).map(|a| a.match_text()).collect();
                let preds: Vec<serde_json::Value> = chosen
                    .iter()
                    .zip(&q[k][ci].predictions)
                    .map(|(&i, m)| {
                        let cand = &p.candidates[i];
                        serde_json::json!({
                            "i": i,
                            "conf": m.confidence,
                            "kind": cand.kind.name(),
                            "start": cand.span.start,
                            "end": cand.span.end,
                            "matches": m.matches,
                            "first": logits.outer[ci][i][k],
                            "clause": clause.outer[ci][i][k],
                            "text": &c.text[cand.span.clone()],
                        })
                    })
                    .collect();
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"contract": ci, "gold": gold, "preds": preds, "len": c.text.len()})
                )
                .unwrap();
            }
        }
        sweep(&q);
        return;
    }
    if std::env::var("NOVELTY").is_ok() {
        // The novelty step after the second stage, nested per outer fold.
        let t = std::time::Instant::now();
        let tops: Vec<usize> = std::env::var("TOPS")
            .unwrap_or("20,50".into())
            .split(',')
            .map(|t| t.parse().unwrap())
            .collect();
        let selections: Vec<Selection> = tops
            .iter()
            .map(|&top_n| Selection {
                top_n,
                max_overlap: overlap,
            })
            .collect();
        // `NOVELTY_VARIANTS`: several `NOVELTY_TREES|NOVELTY_POOL` values separated by ';',
        // compared on the same second stages.
        let variants: Vec<precedent_cuad::novelty::NoveltyOptions> =
            match std::env::var("NOVELTY_VARIANTS") {
                Ok(v) => v
                    .split(';')
                    .map(|t| {
                        // "TREES|POOL"
                        let (trees, pool) = t.split_once('|').unwrap_or((t, "0"));
                        novelty_options_with(Some(trees), Some(pool))
                    })
                    .collect(),
                Err(_) => vec![novelty_options()],
            };
        let (grid, _) = precedent_cuad::eval::stacked_novelty_variants(
            &contracts,
            &prepared,
            &logits,
            Some(&clause),
            dense.as_ref(),
            folds,
            &stack_options(),
            &selections,
            &variants.iter().map(Some).collect::<Vec<_>>(),
        );
        eprintln!("novelty in {:?}", t.elapsed());
        for ((top_n, chosen), variant) in grid
            .iter()
            .zip(&variants)
            .flat_map(|(g, v)| tops.iter().zip(g).map(move |x| (x, v)))
        {
            println!("novelty trees {:?} pool {}", variant.trees, variant.pool);
            let q = precedent_cuad::eval::questions_of(&contracts, &prepared, chosen);
            if std::env::var("ANALYZE").is_ok() {
                sweep(&q);
            }
            let (p, _, m, per) = score_questions(&q);
            if std::env::var("PER_CATEGORY").is_ok() {
                for c in &per {
                    println!(
                        "  {:<36} AUPR {:5.1} P@80R {:5.1} maxR {:5.1}",
                        c.category,
                        100.0 * c.scores.aupr,
                        100.0 * c.scores.precision_at_80_recall,
                        100.0 * c.scores.max_recall
                    );
                }
            }
            println!(
                "novelty top {top_n:>3}: pooled AUPR {:.1} P@80R {:.1} P@90R {:.1} maxR {:.1} | mean AUPR {:.1} P@80R {:.1}",
                100.0 * p.aupr,
                100.0 * p.precision_at_80_recall,
                100.0 * p.precision_at_90_recall,
                100.0 * p.max_recall,
                100.0 * m.aupr,
                100.0 * m.precision_at_80_recall
            );
        }
        return;
    }
    for (name, o) in variants {
        let t = std::time::Instant::now();
        let with_clause = std::env::var("CLAUSE").unwrap_or("both".into());
        for (label, c) in [("", None), (" +clause", Some(&clause))] {
            if (c.is_some() && with_clause == "0") || (c.is_none() && with_clause == "1") {
                continue;
            }
            let s = stacked_scores(&prepared, &logits, c, folds, &o);
            eprintln!("stacked in {:?}", t.elapsed());
            for top_n in [20, 50] {
                report(&format!("stacked {name}{label}"), &s, top_n);
            }
        }
    }
}

/// Global sweep: at 50..80% recall, TP and FP per category.
fn sweep(q: &[Vec<precedent_metrics::spans::Question>]) {
    let mut all: Vec<(f64, usize, usize, usize)> = Vec::new();
    for (k, qs) in q.iter().enumerate() {
        for (qi, question) in qs.iter().enumerate() {
            for (pi, p) in question.predictions.iter().enumerate() {
                all.push((p.confidence, k, qi, pi));
            }
        }
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    let n_gold: usize = q.iter().flatten().map(|x| x.n_gold).sum();
    let mut found: Vec<Vec<Vec<bool>>> = q
        .iter()
        .map(|qs| qs.iter().map(|x| vec![false; x.n_gold]).collect())
        .collect();
    let mut tp = vec![0usize; N_CATEGORIES];
    let mut fp = vec![0usize; N_CATEGORIES];
    let mut fp_empty = vec![0usize; N_CATEGORIES];
    let mut levels = vec![0.5, 0.6, 0.7, 0.75, 0.8];
    for (conf, k, qi, pi) in all {
        let question = &q[k][qi];
        let p = &question.predictions[pi];
        if p.matches.is_empty() {
            fp[k] += 1;
            if question.n_gold == 0 {
                fp_empty[k] += 1;
            }
        }
        for &g in &p.matches {
            if !std::mem::replace(&mut found[k][qi][g as usize], true) {
                tp[k] += 1;
            }
        }
        let t: usize = tp.iter().sum();
        let f: usize = fp.iter().sum();
        if let Some(&level) = levels.first() {
            if t as f64 >= level * n_gold as f64 {
                levels.remove(0);
                println!("recall {level}: threshold {conf:.4} tp {t} fp {f} precision {:.3}; fp in empty questions {}", t as f64 / (t + f) as f64, fp_empty.iter().sum::<usize>());
                for k in 0..N_CATEGORIES {
                    let gold: usize = q[k].iter().map(|x| x.n_gold).sum();
                    println!(
                        "  {:<36} gold {gold:>5} tp {:>5} fp {:>6} (empty q {:>6})",
                        precedent_cuad::CATEGORIES[k],
                        tp[k],
                        fp[k],
                        fp_empty[k]
                    );
                }
            }
        }
    }
}

/// The novelty step's options: `REPEATS_NEGATIVE`, `NOVELTY_EPOCHS`, and `NOVELTY_TREES` as
/// "trees,depth,learning rate,min child hessian" ("0": none).
fn novelty_options() -> precedent_cuad::novelty::NoveltyOptions {
    novelty_options_with(
        std::env::var("NOVELTY_TREES").ok().as_deref(),
        std::env::var("NOVELTY_POOL").ok().as_deref(),
    )
}

/// As [`novelty_options`], with the trees and pool given (`None`: the defaults).
fn novelty_options_with(
    trees: Option<&str>,
    pool: Option<&str>,
) -> precedent_cuad::novelty::NoveltyOptions {
    let defaults = precedent_cuad::novelty::NoveltyOptions::default();
    let trees = match trees {
        None => defaults.trees.clone(),
        Some("0") => None,
        Some(v) => {
            let p: Vec<f32> = v.split(',').map(|x| x.parse().unwrap()).collect();
            Some(precedent_cuad::boost::BoostOptions {
                trees: p[0] as usize,
                max_depth: p[1] as usize,
                learning_rate: p[2],
                min_child_hessian: p.get(3).copied().unwrap_or(1.0),
                ..Default::default()
            })
        }
    };
    precedent_cuad::novelty::NoveltyOptions {
        pool: pool.and_then(|v| v.parse().ok()).unwrap_or(defaults.pool),
        skip_repeats: std::env::var("REPEATS_NEGATIVE").is_err(),
        epochs: std::env::var("NOVELTY_EPOCHS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(defaults.epochs),
        trees,
        ..defaults
    }
}
