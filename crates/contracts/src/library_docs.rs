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

/// A clause's own text, and the cross-referenced sections ingest attached after it (each
/// `(section, text)`, in the order of the metadata's `refs`). The library indexes the whole
/// text, so that a clause that says "except as set forth in Section 14.A" is found by what 14.A
/// says; but what a lawyer reads as the clause, copies and cites is its own text, and the
/// referenced sections are context, shown apart under their numbers. Text without recorded
/// references (ACORD's clauses) is all the clause's own.
pub fn split_references<'a>(text: &'a str, metadata: &Value) -> (&'a str, Vec<(String, &'a str)>) {
    let refs: Vec<String> = metadata
        .get("refs")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if refs.is_empty() {
        return (text, Vec::new());
    }
    // The references are the last `refs.len()` pieces joined with `<omitted>` (a lead-in may
    // use the same joiner at the start, so split from the end).
    let mut pieces: Vec<&str> = text.rsplitn(refs.len() + 1, crate::xref::OMITTED).collect();
    if pieces.len() != refs.len() + 1 {
        return (text, Vec::new());
    }
    let own = pieces.pop().unwrap_or(text);
    pieces.reverse();
    (own.trim_end(), refs.into_iter().zip(pieces).collect())
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

/// The one citation of a library clause, used by the CLI's `search`, the API and (through the
/// API) the web page: "Development Agreement, Pelican Delivers Inc., 2018, § 9.1(a)(ii)
/// Limitation of Liability". The contract is named by its document type, else its title, else
/// its id; then its first party, its year, and the clause's section reference
/// ([`section_reference`]) with its heading. Missing parts are skipped; `None` when the
/// metadata has none of them (ACORD's clauses).
pub fn citation(metadata: &Value) -> Option<String> {
    let text = |key: &str| {
        metadata
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(name) = text("document_type")
        .or_else(|| text("title"))
        .or_else(|| text("contract"))
    {
        parts.push(name.to_string());
    }
    if let Some(p) = metadata
        .get("parties")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
    {
        parts.push(p.to_string());
    }
    if let Some(d) = text("date") {
        parts.push(d.chars().take(4).collect());
    }
    let path: Vec<String> = metadata
        .get("path")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let heading = text("heading");
    match (section_reference(&path, text("section")), heading) {
        (Some(s), Some(h)) => parts.push(format!("§ {s} {h}")),
        (Some(s), None) => parts.push(format!("§ {s}")),
        (None, Some(h)) => parts.push(h.to_string()),
        (None, None) => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// How a lawyer cites a clause from its outline `path` (outermost part first) and its own
/// `number`: from the first numbered part down, the deepest decimal number, then lettered or
/// roman subsections joined with a dot and parenthesised items appended, without the enclosing
/// article: `["ARTICLE IX", "9", "9.1", "(a)", "(ii)"]` → "9.1(a)(ii)", `["16", "B"]` → "16.B".
/// A path without numbers gives its last part when that is an article or numbered heading,
/// else `number`. Headings in the path (unnumbered headed parts) are skipped.
pub fn section_reference(path: &[String], number: Option<&str>) -> Option<String> {
    let numbered =
        |s: &str| s.starts_with('(') || s.chars().next().is_some_and(|c| c.is_ascii_digit());
    // A subsection label such as "B" or "iv" ("B." is stored as "B"): short, one word.
    let label = |s: &str| {
        !s.is_empty() && s.chars().count() <= 5 && s.chars().all(|c| c.is_ascii_alphanumeric())
    };
    let first_number = path.iter().position(|s| numbered(s));
    let reference: String = match first_number {
        Some(i) => {
            let mut out = String::new();
            for s in &path[i..] {
                let s = s.trim_end_matches('.');
                if s.starts_with('(') {
                    out.push_str(s);
                } else if numbered(s) {
                    // Of the decimal numbers only the deepest counts ("9", "9.1" → "9.1").
                    out = s.to_string();
                } else if label(s) {
                    out.push('.');
                    out.push_str(s);
                }
            }
            out
        }
        None => path
            .last()
            .filter(|s| s.chars().any(|c| c.is_ascii_digit()) || s.starts_with("ARTICLE"))
            .cloned()
            .unwrap_or_default(),
    };
    if reference.is_empty() {
        return number
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
    }
    // An exhibit's item 1 is not the agreement's section 1: say whose it is.
    let attachment = path[..first_number.unwrap_or(0)]
        .iter()
        .find_map(|part| attachment_name(part));
    Some(match attachment {
        Some(name) => format!("{reference} of {name}"),
        None => reference,
    })
}

/// "Exhibit B" for a path part that opens an attachment to the agreement ("EXHIBIT B",
/// "Schedule 2 - Fees", "ANNEX A: SERVICE LEVELS"): the kind, capitalised, and its label.
fn attachment_name(part: &str) -> Option<String> {
    const KINDS: [&str; 6] = [
        "exhibit",
        "schedule",
        "annex",
        "appendix",
        "attachment",
        "addendum",
    ];
    let mut words = part.split_whitespace();
    let kind = words.next()?.to_lowercase();
    let kind = KINDS.iter().find(|k| **k == kind)?;
    // A label: a number, a letter (with digits: "A1"), or a roman numeral; "Schedule of Fees"
    // names no attachment label.
    let label = words
        .next()
        .map(|w| w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| {
            let mut chars = w.chars();
            let first = chars.next();
            let digits = w.chars().all(|c| c.is_ascii_digit());
            let lettered =
                first.is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_digit());
            let roman = w.len() <= 4 && w.chars().all(|c| matches!(c, 'I' | 'V' | 'X'));
            !w.is_empty() && (digits || lettered || roman)
        })?;
    let mut name = kind[..1].to_uppercase();
    name.push_str(&kind[1..]);
    Some(format!("{name} {label}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attachments_items_are_cited_with_the_attachment() {
        let path = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            section_reference(&path(&["EXHIBIT B", "1"]), Some("1")).as_deref(),
            Some("1 of Exhibit B")
        );
        assert_eq!(
            section_reference(
                &path(&["Schedule 2 - Fees", "2", "2.1", "(a)"]),
                Some("(a)")
            )
            .as_deref(),
            Some("2.1(a) of Schedule 2")
        );
        // The agreement's own sections, and a heading that only mentions an exhibit, stay as
        // they were.
        assert_eq!(
            section_reference(&path(&["ARTICLE IX", "9", "9.1"]), Some("9.1")).as_deref(),
            Some("9.1")
        );
        assert_eq!(
            section_reference(&path(&["Exhibits and Schedules", "3"]), Some("3")).as_deref(),
            Some("3")
        );
        assert_eq!(
            section_reference(&path(&["SCHEDULE OF FEES", "3"]), Some("3")).as_deref(),
            Some("3")
        );
        let metadata = json!({"title": "Promotion Agreement", "path": ["EXHIBIT B", "1"], "section": "1", "heading": "Performance Standards"});
        assert_eq!(
            citation(&metadata).as_deref(),
            Some("Promotion Agreement, § 1 of Exhibit B Performance Standards")
        );
    }

    #[test]
    fn referenced_sections_come_apart_from_the_clause_own_text() {
        let text = "(a) The Seller's liability for:<omitted>16.B Insurance. Seller shall insure its liability.<omitted>14.A Exclusions. Nothing limits fraud.<omitted>12 Notices. Notices in writing.";
        let metadata = json!({"refs": ["14.A", "12"]});
        let (own, refs) = split_references(text, &metadata);
        assert_eq!(
            own,
            "(a) The Seller's liability for:<omitted>16.B Insurance. Seller shall insure its liability."
        );
        assert_eq!(
            refs,
            vec![
                ("14.A".to_owned(), "14.A Exclusions. Nothing limits fraud."),
                ("12".to_owned(), "12 Notices. Notices in writing."),
            ]
        );
        // Without recorded references (ACORD), or when the text does not hold them, the whole
        // text is the clause's own.
        assert_eq!(split_references(text, &json!({})), (text, Vec::new()));
        assert_eq!(
            split_references("No joiner here.", &metadata),
            ("No joiner here.", Vec::new())
        );
    }

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
        // A lettered subsection keeps its parent section, and the heading follows the number.
        let m = json!({"document_type": "Distributor Agreement", "parties": ["NETGEAR, Inc."],
                        "date": "2010-04-01", "section": "B", "heading": "Insurance", "path": ["16", "B"]});
        assert_eq!(
            citation(&m).as_deref(),
            Some("Distributor Agreement, NETGEAR, Inc., 2010, § 16.B Insurance")
        );
        assert_eq!(
            section_reference(&["16".into(), "B".into(), "(i)".into()], Some("(i)")).as_deref(),
            Some("16.B(i)")
        );
        // Without a document type the contract's title, then its id, names it.
        assert_eq!(
            citation(&json!({"contract": "netgear", "section": "2", "path": ["2"]})).as_deref(),
            Some("netgear, § 2")
        );
        assert_eq!(contract_of(&clause_id("a#b", 3)), "a#b");
    }
}
