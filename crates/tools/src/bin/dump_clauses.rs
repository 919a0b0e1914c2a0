//! Prints every contract's clause spans as JSON lines (`{"file", "chars", "clauses": [[start,
//! end], ...]}`), char offsets into the text as read; input of `scripts/segmentation_figure.py`:
//! `cargo run --release -p precedent-tools --bin dump_clauses DIR`.
fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: dump_clauses DIR");
        std::process::exit(2);
    };
    let mut paths: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            eprintln!("{dir}: {e}");
            std::process::exit(1);
        }
    };
    paths.sort();
    for path in paths {
        match precedent_contracts::read_path(&path) {
            Ok(doc) => {
                let spans: Vec<[usize; 2]> = precedent_contracts::segment(&doc)
                    .iter()
                    .map(|c| [c.start, c.end])
                    .collect();
                let file = path.file_name().map(|n| n.to_string_lossy().into_owned());
                let chars = doc.text.chars().count();
                println!(
                    "{}",
                    serde_json::json!({"file": file, "chars": chars, "clauses": spans})
                );
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}
