//! Ingested clauses as library documents: the one place that decides a clause's id, title and
//! the metadata keys search filters and citations read (the contract agreed between the
//! engineers; see the README's `ingest` section).

use precedent_formats::CorpusDoc;
use serde_json::{json, Map, Value};

use crate::{Clause, ContractMeta};

/// A contract ready to become library rows.
pub struct IngestedContract<'a> {
    /// The contract id: the file stem (made unique by the caller).
    pub contract: &'a str,
    /// The path as given on the command line.
    pub source_path: &'a str,
    /// A fingerprint of the file's bytes, so that a later ingest sees the contract changed.
    pub source_fingerprint: Option<&'a str>,
    /// The text was recognised by OCR from a scanned PDF ([`crate::Document::ocr`]): stored as
    /// `"ocr": true` so a reader knows to check the wording against the scan.
    pub ocr: bool,
    pub meta: &'a ContractMeta,
    pub clauses: &'a [Clause],
}

/// The id of the `ordinal`-th (1-based) clause of a contract: `"<contract>#<ordinal>"`.
pub fn clause_id(contract: &str, ordinal: usize) -> String {
    format!("{contract}#{ordinal}")
}

/// The contract id of a clause id made by [`clause_id`].
pub fn contract_of(clause_id: &str) -> &str {
    clause_id.rsplit_once('#').map_or(clause_id, |(c, _)| c)
}

/// The metadata object of one ingested clause. Keys without a value are left out; `contract`
/// is always present. `clause_types` is added by the clause typer when one runs.
pub fn clause_metadata(contract: &IngestedContract<'_>, clause: &Clause) -> Value {
    let meta = contract.meta;
    let mut m = Map::new();
    m.insert("contract".into(), json!(contract.contract));
    m.insert("source_path".into(), json!(contract.source_path));
    if let Some(fingerprint) = contract.source_fingerprint {
        m.insert("source_fingerprint".into(), json!(fingerprint));
    }
    if contract.ocr {
        m.insert("ocr".into(), json!(true));
    }
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            m.insert(key.into(), v);
        }
    };
    put(
        "document_type",
        meta.document_type.as_ref().map(|v| json!(v)),
    );
    put(
        "parties",
        (!meta.parties.is_empty()).then(|| json!(meta.parties)),
    );
    put("date", meta.date.as_ref().map(|v| json!(v)));
    put(
        "governing_law",
        meta.governing_law.as_ref().map(|v| json!(v)),
    );
    put("title", meta.title.as_ref().map(|v| json!(v)));
    put("section", clause.number.as_ref().map(|v| json!(v)));
    put("heading", clause.heading.as_ref().map(|v| json!(v)));
    put(
        "path",
        (!clause.path.is_empty()).then(|| json!(clause.path)),
    );
    put("start", Some(json!(clause.start)));
    put("end", Some(json!(clause.end)));
    put(
        "refs",
        (!clause.refs.is_empty()).then(|| json!(clause.refs)),
    );
    Value::Object(m)
}

/// Records the CUAD clause types a typer found for a clause (`[{"category", "confidence"}]`,
/// most confident first) in its metadata, where search filters and facets read them.
pub fn set_clause_types(doc: &mut CorpusDoc, types: &[(&str, f32)]) {
    let list: Vec<Value> = types
        .iter()
        .map(|(category, confidence)| {
            // Three decimals are plenty for a threshold and keep the clause store small.
            let rounded = (f64::from(*confidence) * 1000.0).round() / 1000.0;
            json!({"category": category, "confidence": rounded})
        })
        .collect();
    if let Value::Object(m) = &mut doc.metadata {
        m.insert("clause_types".into(), Value::Array(list));
    }
}

/// One library document per clause, in contract order.
pub fn clause_docs(contract: &IngestedContract<'_>) -> Vec<CorpusDoc> {
    contract
        .clauses
        .iter()
        .enumerate()
        .map(|(i, clause)| {
            let title = match (&clause.number, &clause.heading) {
                (Some(n), Some(h)) => Some(format!("{n} {h}")),
                (None, Some(h)) => Some(h.clone()),
                _ => None,
            };
            CorpusDoc {
                id: clause_id(contract.contract, i + 1),
                title,
                text: clause.text.clone(),
                metadata: clause_metadata(contract, clause),
            }
        })
        .collect()
}

/// A short citation for a clause's metadata: "Development Agreement, Pelican Delivers Inc.,
/// 2018, § 9.1". Missing parts are skipped.
pub fn citation(metadata: &Value) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(t) = metadata.get("document_type").and_then(Value::as_str) {
        parts.push(t.to_string());
    }
    if let Some(p) = metadata
        .get("parties")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
    {
        parts.push(p.to_string());
    }
    if let Some(d) = metadata.get("date").and_then(Value::as_str) {
        parts.push(d.chars().take(4).collect());
    }
    if let Some(s) = section_reference(metadata) {
        parts.push(format!("§ {s}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// How a lawyer cites the clause: its numbered path without enclosing articles when a section
/// number follows ("9.1(a)(ii)"), from `path` (falling back to `section`).
fn section_reference(metadata: &Value) -> Option<String> {
    let path: Vec<&str> = metadata
        .get("path")
        .and_then(Value::as_array)
        .map(|p| p.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let numbered =
        |s: &str| s.starts_with('(') || s.chars().next().is_some_and(|c| c.is_ascii_digit());
    let first_number = path.iter().position(|s| numbered(s));
    let reference: String = match first_number {
        Some(i) => {
            // Of the decimal numbers only the deepest counts ("9", "9.1" → "9.1").
            let mut out = String::new();
            for s in &path[i..] {
                if s.starts_with('(') {
                    out.push_str(s);
                } else if numbered(s) {
                    out = s.to_string();
                }
            }
            out
        }
        None => path
            .last()
            .filter(|s| s.chars().any(|c| c.is_ascii_digit()) || s.starts_with("ARTICLE"))
            .map(|s| s.to_string())
            .unwrap_or_default(),
    };
    if reference.is_empty() {
        return metadata
            .get("section")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    Some(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_read_like_a_lawyer_writes_them() {
        let m = json!({"document_type": "Development Agreement", "parties": ["Pelican Delivers Inc."],
                        "date": "2018-03-01", "section": "(ii)", "path": ["ARTICLE IX", "9", "9.1", "(a)", "(ii)"]});
        assert_eq!(
            citation(&m).as_deref(),
            Some("Development Agreement, Pelican Delivers Inc., 2018, § 9.1(a)(ii)")
        );
        assert_eq!(
            citation(&json!({"path": ["ARTICLE IV"]})).as_deref(),
            Some("§ ARTICLE IV")
        );
        assert_eq!(citation(&json!({})), None);
        assert_eq!(contract_of(&clause_id("a#b", 3)), "a#b");
    }
}
