//! One search, for every face: rank with a pipeline, keep what passes the filters (fetching
//! deeper until a page is full or the library is exhausted), leave out a source clause, and
//! fold word-for-word copies into the first hit with their words.
//!
//! `precedent search` and `POST /v1/search` used to do this each in its own way (other fetch
//! depths, another folding order), and could answer the same request differently. Both now call
//! [`rank`], and render its answer.

use precedent_library::{CopyFolder, Filter, Library, Placement};
use precedent_models::Embedder;
use precedent_rank::{Hit, Pipeline};
use precedent_text::spelling::Correction;

use crate::EngineError;

/// Never fetch deeper than this many candidates for a filtered page: past it, a filter that
/// matches almost nothing answers with what it found rather than ranking the whole library.
pub const MAX_FILTER_DEPTH: usize = 20_000;

/// Candidates facets are counted over, and the least depth every search reads: copies of a
/// page's clauses among them are folded in, whichever face asked.
pub const FACET_DEPTH: usize = 100;

/// Filters or a clause type refused, in words the caller can act on, with the CUAD names a
/// common alias stands for.
#[derive(Debug)]
pub struct FilterError {
    pub message: String,
    pub suggestions: Vec<&'static str>,
}

/// The canonical CUAD name of a clause type given in `field` (the CLI's `--type`, the API's
/// `filters.clause_type`), or an error that lists the valid names and, for a common alias,
/// suggests the CUAD names; `party_hint` follows the error for a category that is no clause
/// type (a party's name, a date).
pub fn checked_clause_type(
    field: &str,
    name: &str,
    party_hint: &str,
) -> Result<&'static str, FilterError> {
    match precedent_cuad::clause_type(name) {
        Ok(category) => Ok(category),
        Err(e @ precedent_cuad::ClauseTypeError::NotAClauseType { .. }) => Err(FilterError {
            message: format!("{field}: {e}{party_hint}"),
            suggestions: Vec::new(),
        }),
        Err(e) => Err(FilterError {
            message: format!("{field}: {e}"),
            suggestions: e.suggestions(),
        }),
    }
}

/// Search filters over ingested contracts' metadata as the API takes them: trimmed, blank
/// fields absent; a malformed date is refused, and so is a clause type that is not a CUAD one
/// ([`checked_clause_type`]). A valid type is replaced by its canonical name.
pub fn checked_filter(filters: &Filter) -> Result<Filter, FilterError> {
    let mut filter = filters.clone().normalized();
    filter.validate().map_err(|e| FilterError {
        message: format!("filters: {e}"),
        suggestions: Vec::new(),
    })?;
    if let Some(name) = &filter.clause_type {
        filter.clause_type =
            Some(checked_clause_type("filters.clause_type", name, " (filters.party)")?.to_owned());
    }
    Ok(filter)
}

/// What to rank.
pub struct Request<'a> {
    /// The query text (for `similar`, the source clause's text).
    pub query: &'a str,
    /// Hits wanted on the page.
    pub k: usize,
    /// Conditions on clause metadata.
    pub filter: &'a Filter,
    /// A further condition on library rows that is not metadata (a learned category's members).
    pub row_ok: Option<&'a (dyn Fn(u32) -> bool + Sync)>,
    /// A clause to leave out, with its copies (the clause a `similar` search starts from).
    pub exclude: Option<u32>,
    /// Keep word-for-word copies as hits of their own instead of folding them.
    pub keep_duplicates: bool,
    /// Correct the query's misspelt words first, with this embedder's vocabulary as the words
    /// to leave alone ([`crate::spelling`]); `None` ranks the text as given (a `similar`
    /// search's clause text, a BM25-only pipeline).
    pub spelling: Option<&'a Embedder>,
}

/// A hit and the rows of the lower-ranked word-for-word copies folded into it.
#[derive(Debug, Clone)]
pub struct PageHit {
    pub hit: Hit,
    pub copies: Vec<u32>,
}

/// The page, and the rows facets are counted over.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub hits: Vec<PageHit>,
    /// The top [`FACET_DEPTH`] candidates in rank order, before filters (without the excluded
    /// clause): what the facets describe, so that a lawyer sees which filters would narrow
    /// the ranking.
    pub facet_rows: Vec<u32>,
    /// The query as ranked, when spelling correction changed it.
    pub corrected: Option<Correction>,
}

impl Page {
    /// The query text the pipeline ranked: the corrected text, else `typed` (the request's).
    pub fn ranked_query<'a>(&'a self, typed: &'a str) -> &'a str {
        self.corrected.as_ref().map_or(typed, |c| c.text.as_str())
    }
}

/// Ranks `request` with `pipeline` over `library` (see the module's documentation).
pub fn search(
    library: &Library,
    pipeline: &Pipeline,
    request: &Request,
) -> Result<Page, EngineError> {
    let corrected = crate::spelling::corrected_query(library, request.spelling, request.query)?;
    let query = corrected.text.as_str();
    let k = request.k;
    let library_len = library.len();
    let filtered = !request.filter.is_empty() || request.row_ok.is_some();
    let excluded = usize::from(request.exclude.is_some());
    let mut depth = if filtered {
        (k * 20).max(FACET_DEPTH * 2)
    } else if request.keep_duplicates {
        k.max(FACET_DEPTH) + excluded
    } else {
        precedent_library::fetch_for_folding(k).max(FACET_DEPTH) + excluded
    }
    .clamp(1, library_len.max(1));
    // Copies of the excluded clause (a `similar` source) are not "similar clauses" either.
    let excluded_text = match request.exclude {
        Some(row) if !request.keep_duplicates => Some(library.store().clause(row)?.text),
        _ => None,
    };
    loop {
        let hits: Vec<Hit> = pipeline.search(query, depth)?;
        let exhausted = hits.len() < depth || depth >= library_len.min(MAX_FILTER_DEPTH);
        let mut results = Page::default();
        let mut folder = (!request.keep_duplicates).then(|| {
            excluded_text
                .as_deref()
                .map_or_else(CopyFolder::default, CopyFolder::skipping)
        });
        for (i, hit) in hits.into_iter().enumerate() {
            if Some(hit.row) == request.exclude {
                continue;
            }
            let in_facets = i < FACET_DEPTH;
            if in_facets {
                results.facet_rows.push(hit.row);
            }
            if results.hits.len() >= k && !in_facets {
                break;
            }
            if request.row_ok.is_some_and(|ok| !ok(hit.row)) {
                continue;
            }
            let clause = library.store().clause(hit.row)?;
            if !request.filter.matches_doc(&clause) {
                continue;
            }
            let placement = folder.as_mut().map_or(Placement::New, |f| {
                f.place(&clause.text, results.hits.len(), k)
            });
            match placement {
                Placement::CopyOf(at) => results.hits[at].copies.push(hit.row),
                Placement::Skip => {}
                Placement::New if results.hits.len() >= k => {}
                Placement::New => results.hits.push(PageHit {
                    hit,
                    copies: Vec::new(),
                }),
            }
        }
        if results.hits.len() >= k || exhausted {
            results.corrected = corrected.changed().then_some(corrected);
            return Ok(results);
        }
        depth = (depth * 4).min(library_len.min(MAX_FILTER_DEPTH));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use precedent_formats::CorpusDoc;
    use precedent_library::{BuildOptions, NoProgress};
    use precedent_rank::Bm25;
    use serde_json::json;

    use super::*;

    fn library(dir: &std::path::Path, docs: &[CorpusDoc]) -> Arc<Library> {
        Arc::new(
            Library::build(dir, docs, &BuildOptions::default(), None, &NoProgress).expect("build"),
        )
    }

    fn bm25(library: &Arc<Library>) -> Pipeline {
        Pipeline::new("bm25", Box::new(Bm25::new(library.clone())))
    }

    fn request<'a>(query: &'a str, k: usize, filter: &'a Filter) -> Request<'a> {
        Request {
            query,
            k,
            filter,
            row_ok: None,
            exclude: None,
            keep_duplicates: false,
            spelling: None,
        }
    }

    #[test]
    fn filtered_pages_fetch_deeper_until_full_or_exhausted() {
        // 200 clauses that all match the query; only every 20th is Delaware law.
        let docs: Vec<CorpusDoc> = (0..200)
            .map(|i| CorpusDoc {
                id: format!("c{i}"),
                title: None,
                text: format!("limitation of liability clause number {i}"),
                metadata: json!({
                    "contract": format!("k{i}"),
                    "governing_law": if i % 20 == 0 { "Delaware" } else { "New York" },
                }),
            })
            .collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let library = library(dir.path(), &docs);
        let pipeline = bm25(&library);
        let filter = Filter {
            governing_law: Some("delaware".into()),
            ..Filter::default()
        };
        let page = search(
            &library,
            &pipeline,
            &request("limitation of liability", 8, &filter),
        )
        .expect("search");
        assert_eq!(page.hits.len(), 8);
        for found in &page.hits {
            let doc = library.store().clause(found.hit.row).expect("clause");
            assert_eq!(doc.metadata["governing_law"], "Delaware");
        }
        // Only 10 clauses match; asking for 15 returns those 10 after exhausting the library.
        let all = search(&library, &pipeline, &request("liability", 15, &filter)).expect("search");
        assert_eq!(all.hits.len(), 10);
        // A condition on rows (a learned category's members) narrows the same way.
        let even = |row: u32| row.is_multiple_of(2);
        let none = Filter::default();
        let rows_only = Request {
            row_ok: Some(&even),
            ..request("liability", 5, &none)
        };
        let page = search(&library, &pipeline, &rows_only).expect("search");
        assert_eq!(page.hits.len(), 5);
        assert!(page.hits.iter().all(|f| f.hit.row.is_multiple_of(2)));
    }

    #[test]
    fn copies_fold_into_the_first_hit_and_a_source_leaves_with_its_copies() {
        let docs = vec![
            CorpusDoc::new(
                "cap",
                "In no event shall liability exceed the fees paid in the twelve months preceding the claim.",
            ),
            CorpusDoc::new(
                "law",
                "This Agreement shall be governed by the laws of the State of New York.",
            ),
            CorpusDoc::new(
                "cap-copy",
                "IN NO EVENT shall liability exceed the fees paid in the twelve months\npreceding the \"claim\".",
            ),
            CorpusDoc::new(
                "cap-other",
                "Liability for claims shall not exceed the fees paid under this Agreement.",
            ),
        ];
        let dir = tempfile::tempdir().expect("tempdir");
        let library = library(dir.path(), &docs);
        let pipeline = bm25(&library);
        let none = Filter::default();
        let page = search(
            &library,
            &pipeline,
            &request("liability fees claim", 10, &none),
        )
        .expect("search");
        let ids = |page: &Page| -> Vec<String> {
            page.hits
                .iter()
                .map(|f| library.store().clause(f.hit.row).expect("clause").id)
                .collect()
        };
        assert_eq!(ids(&page).len(), 2, "{:?}", ids(&page));
        let copies: Vec<u32> = page.hits.iter().flat_map(|f| f.copies.clone()).collect();
        assert_eq!(copies.len(), 1, "the copy is folded, not listed");
        // Kept apart on request.
        let kept = Request {
            keep_duplicates: true,
            ..request("liability fees claim", 10, &none)
        };
        assert_eq!(
            search(&library, &pipeline, &kept)
                .expect("search")
                .hits
                .len(),
            3
        );
        // "Similar to cap": neither cap nor its copy is an answer.
        let cap = library.store().row("cap").expect("row");
        let similar = Request {
            exclude: Some(cap),
            ..request("liability fees claim", 10, &none)
        };
        let page = search(&library, &pipeline, &similar).expect("search");
        assert_eq!(ids(&page), vec!["cap-other".to_owned()]);
        assert!(!page.facet_rows.contains(&cap));
    }
}

#[cfg(test)]
mod filter_tests {
    use super::*;

    #[test]
    fn api_filters_become_the_library_filter() {
        let metadata = serde_json::json!({
            "contract": "x", "parties": ["Pelican Delivers Inc."], "date": "2018-03-01",
            "governing_law": "Delaware", "document_type": "License Agreement",
            "clause_types": [{"category": "Cap On Liability", "confidence": 0.9}]
        });
        let filter = |v: serde_json::Value| {
            checked_filter(&serde_json::from_value::<Filter>(v).expect("filters"))
        };
        let pass = |v: serde_json::Value| filter(v).expect("valid").matches(&metadata);
        assert!(pass(
            serde_json::json!({"party": "pelican", "governing_law": "delaware"})
        ));
        assert!(pass(serde_json::json!({"clause_type": "cap on liability"})));
        assert!(!pass(serde_json::json!({"clause_type": "Audit Rights"})));
        // A name that is no CUAD type is refused, not a filter that silently matches nothing.
        let refused = filter(serde_json::json!({"clause_type": "Limitation of Liability"}))
            .expect_err("an alias, not a CUAD name");
        assert_eq!(refused.suggestions, ["Cap on Liability"]);
        assert!(
            refused.message.contains("Governing Law"),
            "{}",
            refused.message
        );
        assert!(pass(
            serde_json::json!({"date_from": "2018", "date_to": "2018-03"})
        ));
        assert!(!pass(serde_json::json!({"date_from": "2018-03-02"})));
        assert!(!pass(serde_json::json!({"document_type": "lease"})));
        assert!(filter(serde_json::json!({"party": " "}))
            .expect("blank")
            .is_empty());
        assert!(filter(serde_json::json!({"date_from": "2018-13-01"})).is_err());
    }
}
