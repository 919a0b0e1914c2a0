//! Oracle recall of the candidates: the share of annotations some candidate matches
//! (`cargo run -p precedent-cuad --example coverage`; CUAD found as for the typer, or
//! `PRECEDENT_CUAD_DIR`).
//!
//! `MISSES="Agreement Date"` also prints each unmatched annotation of that category with the
//! candidate of best word-set Jaccard, to see which span shapes the candidates lack.
use precedent_cuad::{candidates::candidates, labels::label, CATEGORIES};
use precedent_metrics::spans::WordSet;
use std::collections::HashMap;

fn main() {
    let dir =
        precedent_cuad::cache::find_cuad_dir().expect("no CUAD folder (set PRECEDENT_CUAD_DIR)");
    let d = precedent_cuad::load(&dir).unwrap();
    let misses = std::env::var("MISSES")
        .ok()
        .and_then(|name| CATEGORIES.iter().position(|c| *c == name));
    let mut per: Vec<(usize, usize)> = vec![(0, 0); 41];
    let mut kinds: HashMap<&str, usize> = HashMap::new();
    let mut pos_kinds: HashMap<&str, usize> = HashMap::new();
    let mut n = 0;
    for c in &d.contracts {
        let cands = candidates(&c.text);
        n += cands.len();
        for k in &cands {
            *kinds.entry(k.kind.name()).or_default() += 1;
        }
        let l = label(c, &cands);
        for (i, b) in l.candidate_bits.iter().enumerate() {
            if *b != 0 {
                *pos_kinds.entry(cands[i].kind.name()).or_default() += 1;
            }
        }
        for (a, hits) in c.annotations.iter().zip(&l.annotation_hits) {
            per[a.category].0 += 1;
            per[a.category].1 += usize::from(!hits.is_empty());
            if hits.is_empty() && misses == Some(a.category) {
                let gold = WordSet::new(&a.match_text());
                let best = cands
                    .iter()
                    .map(|k| (WordSet::new(&c.text[k.span.clone()]).jaccard(&gold), k))
                    .max_by(|x, y| x.0.total_cmp(&y.0));
                let (j, kind, best) = best.map_or((0.0, "-", ""), |(j, k)| {
                    (j, k.kind.name(), &c.text[k.span.clone()])
                });
                let short = |s: &str| s.chars().take(160).collect::<String>().replace('\n', " ");
                println!(
                    "MISS {} | placed {} | gold {:?}\n     best {kind} {j:.2} {:?}",
                    c.id,
                    a.span.is_some(),
                    short(&a.text),
                    short(best)
                );
            }
        }
    }
    let (t, h) = per.iter().fold((0, 0), |acc, p| (acc.0 + p.0, acc.1 + p.1));
    println!(
        "candidates {n} ({:.0}/contract); oracle recall {:.3}",
        n as f64 / 398.0,
        h as f64 / t as f64
    );
    println!("kinds {kinds:?}\npositive kinds {pos_kinds:?}");
    for (k, p) in per.iter().enumerate() {
        println!(
            "{:40} {:5} {:.3}",
            CATEGORIES[k],
            p.0,
            p.1 as f64 / p.0.max(1) as f64
        );
    }
}
