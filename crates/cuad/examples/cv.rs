use precedent_cuad::eval::{cross_validate, CvOptions};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut o = CvOptions::default();
    if let Some(e) = args.get(1) { o.train.epochs = e.parse().unwrap(); }
    if let Some(l) = args.get(2) { o.train.learning_rate = l.parse().unwrap(); }
    if let Some(n) = args.get(3) { o.top_n = n.parse().unwrap(); }
    let d = precedent_cuad::load(std::path::Path::new("/work/shared/data/cuad")).unwrap();
    let t = std::time::Instant::now();
    let r = cross_validate(&d, &o, |f| eprintln!("fold {f} {:?}", t.elapsed()));
    println!("{}", serde_json::to_string_pretty(&r).unwrap());
}
