//! Prints what each query-constraint reader and the jargon glossary make of queries, so a
//! reader or glossary entry can be checked against every training query in every wording
//! before measuring it.
//!
//! With file arguments, reads each as a JSONL query file (ACORD's `queries.jsonl`,
//! `queries_medium.jsonl`, `queries_long.jsonl`: one object per line with a `text`); without,
//! reads one query per line on stdin.
//!
//! ```text
//! cargo run -p precedent-tools --bin query_readers -- \
//!     data/acord/queries.jsonl data/acord/queries_medium.jsonl data/acord/queries_long.jsonl
//! ```
use std::io::BufRead;

fn main() -> std::io::Result<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        for line in std::io::stdin().lock().lines() {
            report(&line?);
        }
        return Ok(());
    }
    for file in files {
        println!("# {file}");
        let reader = std::io::BufReader::new(std::fs::File::open(&file)?);
        for line in reader.lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let query: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            match query.get("text").and_then(|t| t.as_str()) {
                Some(text) => report(text),
                None => eprintln!("{file}: a line without a \"text\""),
            }
        }
    }
    Ok(())
}

/// Prints the query and, indented, everything the readers and the glossary read in it.
fn report(query: &str) {
    let mut found = Vec::new();
    for e in precedent_text::exclusions(query) {
        found.push(format!("excludes {:?}", e.surface_forms));
    }
    for i in precedent_text::inclusions(query) {
        found.push(format!("requires {:?}", i.alternatives));
    }
    if let Some(side) = precedent_text::favoured_side(query) {
        found.push(format!("side {side:?}"));
    }
    for l in precedent_text::required_limits(query) {
        found.push(format!("limit {l:?}"));
    }
    if let Some(c) = precedent_text::wanted_claim_source(query) {
        found.push(format!("claims {c:?}"));
    }
    if let Some(b) = precedent_text::wanted_claim_breadth(query) {
        found.push(format!("breadth {b:?}"));
    }
    if let Some(r) = precedent_text::wanted_renewal(query) {
        found.push(format!("renewal {r:?}"));
    }
    if precedent_text::wants_cap(query) {
        found.push("states a cap".to_owned());
    }
    if precedent_text::wants_damages_waiver(query) {
        found.push("names the waived damages".to_owned());
    }
    for entry in precedent_text::jargon::matching_entries(query) {
        found.push(format!("glossary {:?}", entry.triggers[0]));
    }
    println!("{query}\n    {}", found.join("; "));
}
