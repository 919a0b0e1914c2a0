//! Prints the clauses of contract files: `cargo run -p precedent-contracts --example clauses FILE...`
fn main() {
    for arg in std::env::args().skip(1) {
        match precedent_contracts::read_path(std::path::Path::new(&arg)) {
            Err(e) => eprintln!("{e}"),
            Ok(doc) => {
                for c in precedent_contracts::segment(&doc) {
                    let preview: String = c.text.chars().take(140).collect();
                    println!(
                        "[{}..{}] {:?} {:?} {:?} refs={:?}\n    {}",
                        c.start,
                        c.end,
                        c.number,
                        c.heading,
                        c.path,
                        c.refs,
                        preview.replace('\n', " ⏎ ")
                    );
                }
            }
        }
    }
}
