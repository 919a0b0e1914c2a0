//! Cross-validation with several prediction selections from one set of out-of-fold scores.
use precedent_cuad::eval::{cross_validate, questions, score_questions, CvOptions, Selection};
use precedent_cuad::typer::prepare;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut o = CvOptions::default();
    if let Some(e) = args.get(1) {
        o.train.epochs = e.parse().unwrap();
    }
    if let Some(l) = args.get(2) {
        o.train.learning_rate = l.parse().unwrap();
    }
    let d = precedent_cuad::load(std::path::Path::new("/work/shared/data/cuad")).unwrap();
    let t = std::time::Instant::now();
    let r = cross_validate(&d, &o, |f, n| eprintln!("fit {f}/{n} {:?}", t.elapsed())).unwrap();
    println!("{}", serde_json::to_string(&r).unwrap());
    let contracts: Vec<&_> = d.contracts.iter().collect();
    let prepared = prepare(&contracts);
    for top_n in [20, 50, 100] {
        for max_overlap in [None, Some(0.9), Some(0.5), Some(0.2)] {
            let q = questions(
                &contracts,
                &prepared,
                &r.out_of_fold,
                &Selection { top_n, max_overlap },
            );
            let (p, p1, m, _) = score_questions(&q);
            eprintln!("top {top_n} overlap {max_overlap:?}: pooled {:.3} {:.3} {:.3} maxR {:.3} | 1:1 {:.3} {:.3} | mean {:.3} {:.3}", p.aupr, p.precision_at_80_recall, p.precision_at_90_recall, p.max_recall, p1.aupr, p1.precision_at_80_recall, m.aupr, m.precision_at_80_recall);
        }
    }
}
