//! Segmentation statistics over a folder of contracts:
//! `cargo run --release -p precedent-tools --bin segment_stats DIR`
fn main() {
    let dir = std::env::args().nth(1).expect("DIR");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let t = std::time::Instant::now();
    let (mut n, mut total, mut unnumbered, mut long, mut few) = (0, 0, 0, 0, Vec::new());
    let mut lens = Vec::new();
    for p in &paths {
        let Ok(doc) = precedent_contracts::read_path(p) else {
            continue;
        };
        let clauses = precedent_contracts::segment(&doc);
        n += 1;
        total += clauses.len();
        if clauses.len() < 10 {
            few.push((
                clauses.len(),
                p.file_name().unwrap().to_string_lossy().into_owned(),
            ));
        }
        for c in &clauses {
            let len = c.end - c.start;
            lens.push(len);
            if c.number.is_none() {
                unnumbered += 1;
            }
            if len > 4000 {
                long += 1;
            }
        }
    }
    lens.sort();
    println!(
        "{n} docs, {total} clauses ({unnumbered} unnumbered, {long} over 4000 chars) in {:?}",
        t.elapsed()
    );
    println!(
        "span length p50 {} p90 {} p99 {} max {}",
        lens[lens.len() / 2],
        lens[lens.len() * 9 / 10],
        lens[lens.len() * 99 / 100],
        lens[lens.len() - 1]
    );
    few.sort();
    for f in few.iter().take(15) {
        println!("few: {f:?}");
    }
}
