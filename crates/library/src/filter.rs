//! Search filters over ingested clauses' metadata: clause type, party, date range, governing
//! law, document type. Clauses without the metadata a filter asks about (ACORD clauses, or a
//! contract whose date was not found) do not match it.
//!
//! Filtering happens after retrieval, with over-fetching: the pipeline is asked for more
//! candidates until `k` of them pass or the library is exhausted, so a selective filter still
//! returns `k` hits when they exist.

use precedent_formats::CorpusDoc;
use serde_json::Value;

/// What clauses must satisfy to be returned; every given condition must hold. `Default`
/// matches everything. The CLI's flags and the HTTP API's `filters` object both become this
/// (the API deserializes it directly, unknown fields refused).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Filter {
    /// CUAD category name ("Cap on Liability"), compared case-insensitively.
    pub clause_type: Option<String>,
    /// Minimum confidence of `clause_type`. Without it every stored type counts: ingest stores a
    /// type only from the threshold with the best cross-validated F1
    /// (`precedent_clause_types::type_thresholds`), so a further minimum only trades recall for precision.
    pub min_type_confidence: Option<f32>,
    /// Case-insensitive substring of one of the contract's parties.
    pub party: Option<String>,
    /// Inclusive lower bound on the contract date: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`.
    pub date_from: Option<String>,
    /// Inclusive upper bound: `2018` includes all of 2018.
    pub date_to: Option<String>,
    /// Case-insensitive substring of the governing law ("delaware", "new york").
    pub governing_law: Option<String>,
    /// Case-insensitive substring of the document type ("license").
    pub document_type: Option<String>,
}

/// A date bound that is not `YYYY[-MM[-DD]]`.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a date: use YYYY, YYYY-MM or YYYY-MM-DD")]
pub struct BadDate(pub String);

/// A filter that cannot match what its caller means: a malformed date, a confidence outside
/// 0..=1 (none would pass above 1, all below 0), or a date range that ends before it starts.
/// Refused up front, so that a typo is an error and not "no clause passes the filters".
#[derive(Debug, thiserror::Error)]
pub enum BadFilter {
    #[error(transparent)]
    Date(#[from] BadDate),
    #[error("min_type_confidence {0} is not between 0 and 1")]
    Confidence(f32),
    #[error("the date range ends ({to}) before it starts ({from})")]
    EmptyRange { from: String, to: String },
}

/// The first and last day a partial date `YYYY[-MM[-DD]]` covers, as `YYYY-MM-DD` strings
/// (which order as the dates do); the last day of a month is taken as 31, which orders the
/// same against any real date.
fn date_bounds(s: &str) -> (String, String) {
    match s.len() {
        4 => (format!("{s}-01-01"), format!("{s}-12-31")),
        7 => (format!("{s}-01"), format!("{s}-31")),
        _ => (s.to_owned(), s.to_owned()),
    }
}

fn check_partial_date(s: &str) -> Result<(), BadDate> {
    let parts: Vec<&str> = s.split('-').collect();
    let widths = [4, 2, 2];
    let ok = !parts.is_empty()
        && parts.len() <= 3
        && parts
            .iter()
            .zip(widths)
            .all(|(p, w)| p.len() == w && p.chars().all(|c| c.is_ascii_digit()));
    let in_range = |i: usize, lo: u32, hi: u32| {
        parts
            .get(i)
            .is_none_or(|p| p.parse::<u32>().is_ok_and(|v| (lo..=hi).contains(&v)))
    };
    if ok && in_range(1, 1, 12) && in_range(2, 1, 31) {
        Ok(())
    } else {
        Err(BadDate(s.to_string()))
    }
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack
        .to_lowercase()
        .contains(&needle.trim().to_lowercase())
}

impl Filter {
    /// Rejects malformed date bounds up front, so a typo is an error and not an empty result.
    pub fn validate(&self) -> Result<(), BadFilter> {
        for bound in [&self.date_from, &self.date_to].into_iter().flatten() {
            check_partial_date(bound)?;
        }
        if let Some(c) = self.min_type_confidence {
            if !(0.0..=1.0).contains(&c) {
                return Err(BadFilter::Confidence(c));
            }
        }
        if let (Some(from), Some(to)) = (&self.date_from, &self.date_to) {
            if date_bounds(from).0 > date_bounds(to).1 {
                return Err(BadFilter::EmptyRange {
                    from: from.clone(),
                    to: to.clone(),
                });
            }
        }
        Ok(())
    }

    /// The same filter with blank text conditions (`""`, `"  "`) dropped and the others
    /// trimmed, as a form with empty fields means.
    pub fn normalized(self) -> Filter {
        let given = |f: Option<String>| f.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        Filter {
            clause_type: given(self.clause_type),
            min_type_confidence: self.min_type_confidence,
            party: given(self.party),
            date_from: given(self.date_from),
            date_to: given(self.date_to),
            governing_law: given(self.governing_law),
            document_type: given(self.document_type),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.clause_type.is_none()
            && self.party.is_none()
            && self.date_from.is_none()
            && self.date_to.is_none()
            && self.governing_law.is_none()
            && self.document_type.is_none()
    }

    /// Whether a clause's metadata passes every condition.
    pub fn matches(&self, metadata: &Value) -> bool {
        let text = |key: &str| metadata.get(key).and_then(Value::as_str);
        if let Some(want) = &self.clause_type {
            let min = self.min_type_confidence.unwrap_or(f32::NEG_INFINITY);
            let found = metadata
                .get("clause_types")
                .and_then(Value::as_array)
                .is_some_and(|types| {
                    types.iter().any(|t| {
                        let category = t.get("category").and_then(Value::as_str);
                        let confidence = t.get("confidence").and_then(Value::as_f64);
                        category.is_some_and(|c| c.eq_ignore_ascii_case(want.trim()))
                            && confidence.is_none_or(|c| c >= f64::from(min))
                    })
                });
            if !found {
                return false;
            }
        }
        if let Some(want) = &self.party {
            let found = metadata
                .get("parties")
                .and_then(Value::as_array)
                .is_some_and(|ps| {
                    ps.iter()
                        .filter_map(Value::as_str)
                        .any(|p| contains_ci(p, want))
                });
            if !found {
                return false;
            }
        }
        if self.date_from.is_some() || self.date_to.is_some() {
            let Some(date) = text("date") else {
                return false;
            };
            // ISO dates compare as strings; a partial upper bound covers its whole year/month.
            if self.date_from.as_deref().is_some_and(|from| date < from) {
                return false;
            }
            if let Some(to) = &self.date_to {
                let prefix: String = date.chars().take(to.len()).collect();
                if prefix.as_str() > to.as_str() {
                    return false;
                }
            }
        }
        if let Some(want) = &self.governing_law {
            if !text("governing_law").is_some_and(|l| contains_ci(l, want)) {
                return false;
            }
        }
        if let Some(want) = &self.document_type {
            if !text("document_type").is_some_and(|t| contains_ci(t, want)) {
                return false;
            }
        }
        true
    }

    pub fn matches_doc(&self, doc: &CorpusDoc) -> bool {
        self.matches(&doc.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn clause() -> Value {
        json!({
            "contract": "pelican",
            "document_type": "Development Agreement",
            "parties": ["Pelican Delivers Inc.", "Pelican"],
            "date": "2018-03-01",
            "governing_law": "Delaware",
            "clause_types": [{"category": "Cap On Liability", "confidence": 0.93},
                             {"category": "Audit Rights", "confidence": 0.2}]
        })
    }

    #[test]
    fn each_condition_filters() {
        let c = clause();
        let f = |f: Filter| f.matches(&c);
        assert!(f(Filter::default()));
        assert!(f(Filter {
            clause_type: Some("cap on liability".into()),
            ..Filter::default()
        }));
        // Every stored type counts unless a minimum confidence is asked for.
        assert!(f(Filter {
            clause_type: Some("Audit Rights".into()),
            ..Filter::default()
        }));
        assert!(!f(Filter {
            clause_type: Some("Audit Rights".into()),
            min_type_confidence: Some(0.5),
            ..Filter::default()
        }));
        assert!(f(Filter {
            clause_type: Some("Cap on Liability".into()),
            min_type_confidence: Some(0.5),
            ..Filter::default()
        }));
        assert!(!f(Filter {
            clause_type: Some("Insurance".into()),
            ..Filter::default()
        }));
        assert!(f(Filter {
            party: Some("pelican delivers".into()),
            ..Filter::default()
        }));
        assert!(!f(Filter {
            party: Some("Acme".into()),
            ..Filter::default()
        }));
        assert!(f(Filter {
            date_from: Some("2018".into()),
            date_to: Some("2018".into()),
            ..Filter::default()
        }));
        assert!(f(Filter {
            date_to: Some("2018-03".into()),
            ..Filter::default()
        }));
        assert!(!f(Filter {
            date_to: Some("2018-02-28".into()),
            ..Filter::default()
        }));
        assert!(!f(Filter {
            date_from: Some("2018-03-02".into()),
            ..Filter::default()
        }));
        assert!(f(Filter {
            governing_law: Some("delaware".into()),
            ..Filter::default()
        }));
        assert!(!f(Filter {
            governing_law: Some("New York".into()),
            ..Filter::default()
        }));
        assert!(f(Filter {
            document_type: Some("development".into()),
            ..Filter::default()
        }));
        // Clauses without metadata (ACORD) match no condition.
        assert!(!Filter {
            party: Some("x".into()),
            ..Filter::default()
        }
        .matches(&json!({})));
    }

    #[test]
    fn malformed_dates_are_refused() {
        for bad in ["18", "2018-3", "2018-13", "March 2018", "2018-02-40"] {
            let f = Filter {
                date_from: Some(bad.into()),
                ..Filter::default()
            };
            assert!(f.validate().is_err(), "{bad}");
        }
        let f = Filter {
            date_from: Some("2018-02".into()),
            date_to: Some("2020".into()),
            ..Filter::default()
        };
        assert!(f.validate().is_ok());
    }

    #[test]
    fn ranges_that_end_before_they_start_and_confidences_outside_0_1_are_refused() {
        let range = |from: &str, to: &str| Filter {
            date_from: Some(from.into()),
            date_to: Some(to.into()),
            ..Filter::default()
        };
        assert!(range("2019", "2018").validate().is_err());
        assert!(range("2018-07", "2018-06-30").validate().is_err());
        // A range inside one year, and a year that holds the other bound, are fine.
        assert!(range("2018", "2018").validate().is_ok());
        assert!(range("2018-06", "2018").validate().is_ok());
        assert!(range("2018-06-30", "2018-06").validate().is_ok());
        for bad in [-0.1, 1.5, 5.0] {
            let f = Filter {
                min_type_confidence: Some(bad),
                ..Filter::default()
            };
            assert!(f.validate().is_err(), "{bad}");
        }
        let f = Filter {
            min_type_confidence: Some(0.7),
            ..Filter::default()
        };
        assert!(f.validate().is_ok());
    }
}
