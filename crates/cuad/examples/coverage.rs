//! Oracle recall of the candidates: the share of annotations some candidate matches.
use precedent_cuad::{candidates::candidates, labels::label, CATEGORIES};
use std::collections::HashMap;

fn main() {
    let d = precedent_cuad::load(std::path::Path::new("/work/shared/data/cuad")).unwrap();
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
