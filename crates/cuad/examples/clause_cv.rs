//! Contract-level CV of the clause classifier on the shared CUAD spans, with options from the
//! command line: `clause_cv EPOCHS LR L2 CHAR(0/1) [FOLDS] [LIMIT]`.
use precedent_cuad::clause_classifier::{cross_validate, dev_report, ClassifierOptions};
use precedent_cuad::legalbench::is_task_category;
use precedent_cuad::CATEGORIES;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut o = ClassifierOptions::default();
    let arg = |i: usize| args.get(i).map(String::as_str);
    if let Some(v) = arg(1) {
        o.epochs = v.parse().unwrap();
    }
    if let Some(v) = arg(2) {
        o.learning_rate = v.parse().unwrap();
    }
    if let Some(v) = arg(3) {
        o.l2 = v.parse().unwrap();
    }
    if let Some(v) = arg(4) {
        o.char_ngrams = v == "1";
    }
    let folds = arg(5).map_or(5, |v| v.parse().unwrap());
    let mut d = precedent_cuad::load(std::path::Path::new("/work/shared/data/cuad")).unwrap();
    if let Some(v) = arg(6) {
        d.contracts.truncate(v.parse().unwrap());
    }
    let contracts: Vec<&_> = d.contracts.iter().collect();
    let t = std::time::Instant::now();
    let spans = cross_validate(&contracts, folds, &o, &[], |f, n| {
        eprintln!("fold {f}/{n} {:?}", t.elapsed())
    })
    .unwrap();
    let r = dev_report(&spans, folds, &o);
    let task: Vec<f64> = CATEGORIES
        .iter()
        .enumerate()
        .filter(|(k, _)| is_task_category(*k))
        .filter_map(|(_, c)| r.tasks.get(*c).copied())
        .collect();
    for (c, v) in &r.tasks {
        println!("{c:<40} {:5.1}", 100.0 * v);
    }
    println!(
        "{o:?} folds {folds}: mean41 {:.2} mean38 {:.2} ({} tasks) {:?}",
        100.0 * r.mean,
        100.0 * task.iter().sum::<f64>() / task.len() as f64,
        task.len(),
        t.elapsed()
    );
}
