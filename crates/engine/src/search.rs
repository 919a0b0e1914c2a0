//! One search, for every face: rank with a pipeline, keep what passes the filters (fetching
//! deeper until a page is full or the library is exhausted), leave out a source clause, and
//! fold word-for-word copies into the first hit with their words.
//!
//! `precedent search` and `POST /v1/search` used to do this each in its own way (other fetch
//! depths, another folding order), and could answer the same request differently. Both now call
//! [`rank`], and render its answer.

use precedent_library::{CopyFolder, Filter, Library, Placement};
use precedent_rank::{Hit, Pipeline};

use crate::EngineError;

/// Never fetch deeper than this many candidates for a filtered page: past it, a filter that
/// matches almost nothing answers with what it found rather than ranking the whole library.
pub const MAX_FILTER_DEPTH: usize = 20_000;

/// Candidates facets are counted over, and the least depth every search reads: copies of a
/// page's clauses among them are folded in, whichever face asked.
pub const FACET_DEPTH: usize = 100;

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
}

/// Ranks `request` with `pipeline` over `library` (see the module's documentation).
pub fn search(
    library: &Library,
    pipeline: &Pipeline,
    request: &Request,
) -> Result<Page, EngineError> {
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
        let hits: Vec<Hit> = pipeline.search(request.query, depth)?;
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
