//! Prints the metadata of contract files as JSON lines (`{"file", "meta"}`), for checking the
//! extractor against CUAD's answers: `cargo run -p precedent-tools --bin dump_meta DIR`.
fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: dump_meta DIR");
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
                let meta = precedent_contracts::meta::extract(&doc.text);
                let file = path.file_name().map(|n| n.to_string_lossy().into_owned());
                println!("{}", serde_json::json!({"file": file, "meta": meta}));
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}
