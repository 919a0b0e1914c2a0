//! The hits of a search as `precedent search` lists them (and prints them with `--json`): the
//! clause's own text apart from the sections it refers to, its full metadata, the stages that
//! found it, the copies folded into it with their citations, and why it matched.
//!
//! Why here: the same reading of a hit (references split off, copies cited, the explanation
//! the API gives) serves every face; the CLI only prints it. [`search_and_list`] is the whole
//! of `search`: the rows a learned category admits, the one search, the listing, and what to
//! say when nothing matches.

use std::path::Path;

use precedent_library::{Filter, Library};
use precedent_rank::StageScore;
use precedent_text::spelling::Correction;
use serde::Serialize;

use crate::explain::Explainer;
use crate::hits::{
    citation, highlight_spans, own_text_and_references, ClauseMeta, Explanation, ReferencedSection,
    Span,
};
use crate::pipeline_choice::{load_model, BuiltPipeline};
use crate::search::PageHit;
use crate::EngineError;

/// A listed hit. Its fields serialize in the order `search --json` has always printed them.
#[derive(Debug, Clone, Serialize)]
pub struct ListedHit {
    pub rank: usize,
    pub id: String,
    pub score: f32,
    pub title: Option<String>,
    /// How the clause is cited, as the text output and the API cite it ("Distributor
    /// Agreement, Acme Corp, 2019, § 1.01(x) Territory"): the section with its parents, which
    /// `metadata.section` alone ("(x)") is not.
    pub citation: String,
    /// The clause's own text: what is copied and cited.
    pub text: String,
    /// The sections it refers to, attached by ingest for search: context, listed apart.
    pub references: Vec<ReferencedSection>,
    /// The clause's full metadata.
    pub metadata: serde_json::Value,
    pub stages: Vec<StageScore>,
    /// Lower-ranked clauses with the same words, folded into this hit.
    pub copies: Vec<ListedCopy>,
    /// Where the query's terms occur in `text` (character offsets), as the API gives them.
    pub highlights: Vec<Span>,
    /// Why it matched, as the API says it.
    pub why: Explanation,
}

/// A copy folded into a hit, with its citation when its metadata gives one.
#[derive(Debug, Clone, Serialize)]
pub struct ListedCopy {
    pub id: String,
    pub citation: Option<String>,
}

/// Reads the clauses of `hits` (and their copies) and explains each, as the API does.
pub fn list_hits(
    library: &Library,
    explainer: &Explainer,
    query: &str,
    hits: &[PageHit],
) -> Result<Vec<ListedHit>, EngineError> {
    let terms = library.lexical().query_terms(query);
    let mut listed = Vec::with_capacity(hits.len());
    for (i, found) in hits.iter().enumerate() {
        let hit = &found.hit;
        let clause = library.store().clause(hit.row)?;
        let mut copies = Vec::with_capacity(found.copies.len());
        for &row in &found.copies {
            let copy = library.store().clause(row)?;
            copies.push(ListedCopy {
                citation: precedent_contracts::library_docs::citation(&copy.metadata),
                id: copy.id,
            });
        }
        let (own, references) = own_text_and_references(&clause.text, &clause.metadata);
        let meta = ClauseMeta::from_value(&clause.metadata);
        let cited = citation(&clause.id, clause.title.as_deref(), &clause.metadata, &meta).text;
        listed.push(ListedHit {
            rank: i + 1,
            citation: cited,
            text: own.to_owned(),
            id: clause.id,
            score: hit.score,
            title: clause.title,
            references,
            metadata: clause.metadata,
            stages: hit.stages.clone(),
            copies,
            highlights: highlight_spans(library.lexical().analyzer(), own, &terms),
            why: Explanation {
                passage: None,
                reasons: Vec::new(),
            },
        });
    }
    // Why each hit matched, as the API says it.
    let clauses: Vec<(&str, &str, &serde_json::Value)> = listed
        .iter()
        .map(|h| (h.id.as_str(), h.text.as_str(), &h.metadata))
        .collect();
    let explanations = explainer.explain_hits(library, query, &clauses);
    for (hit, why) in listed.iter_mut().zip(explanations) {
        hit.why = why.into();
    }
    Ok(listed)
}

/// What `precedent search` asks: the query, how many hits, the metadata filters, a learned
/// category whose members alone may be listed, and whether copies stay hits of their own.
pub struct ListingRequest<'a> {
    pub query: &'a str,
    pub k: usize,
    pub filter: &'a Filter,
    /// A category of the learned ranker's classifier (`--category`): only its members are hits.
    pub category: Option<&'a str>,
    /// The learned model directory whose classifier decides the category's members (else the
    /// default model).
    pub model_dir: Option<&'a Path>,
    pub keep_duplicates: bool,
}

/// A search's page: the hits (with their folded copies), each listed and explained, and when
/// there is none, why, in a sentence.
pub struct Listing {
    pub hits: Vec<PageHit>,
    pub listed: Vec<ListedHit>,
    pub no_match: Option<String>,
    /// The query as ranked, when misspelt words were corrected.
    pub corrected: Option<Correction>,
}

impl Listing {
    /// The page as `search --json` prints it: the query, the pipeline that ranked it and the
    /// listed hits (an empty list when nothing matched: a script reads no sentence).
    pub fn json(&self, query: &str, pipeline: &str) -> anyhow::Result<serde_json::Value> {
        let mut page = serde_json::json!({
            "query": query,
            "pipeline": pipeline,
            "hits": self.values()?,
        });
        if let Some(c) = &self.corrected {
            page["corrected_query"] = c.text.clone().into();
            if c.syntax_read {
                page["search_syntax_read"] = true.into();
            }
            page["corrections"] = c
                .changes
                .iter()
                .map(|ch| serde_json::json!({"from": ch.from, "to": ch.to}))
                .collect();
        }
        Ok(page)
    }

    /// The page as `search` prints it: the sentence saying why nothing matched, else each hit
    /// ([`listing_text`]).
    pub fn text(&self, full: bool, explain: bool) -> anyhow::Result<String> {
        let searched = self
            .corrected
            .as_ref()
            .map(|c| format!("Searched for: {} ({})\n", c.text, c.what()))
            .unwrap_or_default();
        if let Some(no_match) = &self.no_match {
            return Ok(format!("{searched}{no_match}\n"));
        }
        Ok(searched + &listing_text(&self.values()?, &self.hits, full, explain))
    }

    fn values(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        Ok(self
            .listed
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()?)
    }
}

/// Ranks `request` with `built` over `library` ([`crate::search::search`]) and lists the page
/// ([`list_hits`]), as `precedent search` prints it (text or `--json`).
pub fn search_and_list(
    library: &Library,
    built: &BuiltPipeline,
    request: &ListingRequest<'_>,
) -> anyhow::Result<Listing> {
    let explainer = Explainer::new(
        built.learned.clone(),
        built.embedder.clone(),
        Some(built.clause_types.clone()),
    );
    let members = match request.category {
        Some(name) => {
            let (_, model) = load_model(request.model_dir)?;
            Some(model.category_members(library, name)?)
        }
        None => None,
    };
    let row_ok = members.as_ref().map(|m| move |row: u32| m.contains(&row));
    let search = crate::search::Request {
        query: request.query,
        k: request.k,
        filter: request.filter,
        row_ok: row_ok
            .as_ref()
            .map(|ok| ok as &(dyn Fn(u32) -> bool + Sync)),
        exclude: None,
        keep_duplicates: request.keep_duplicates,
        spelling: built.embedder.as_deref(),
    };
    let page = crate::search::search(library, &built.pipeline, &search)?;
    let ranked_query = page.ranked_query(request.query).to_owned();
    let hits = page.hits;
    let listed = list_hits(library, &explainer, &ranked_query, &hits)?;
    let no_match = listed.is_empty().then(|| {
        no_match(
            library,
            &ranked_query,
            !request.filter.is_empty() || members.is_some(),
        )
    });
    Ok(Listing {
        hits,
        listed,
        no_match,
        corrected: page.corrected,
    })
}

/// Why a search found nothing: every word a stop word, or no clause with the query's terms
/// (passing the filters, when some were given).
fn no_match(library: &Library, query: &str, filtered: bool) -> String {
    let terms = library.lexical().query_terms(query);
    if terms.is_empty() {
        "No clause matches: every word of the query is a stop word.".to_owned()
    } else if filtered {
        format!("No clause matching the terms {terms:?} passes the filters.")
    } else {
        format!("No clause matches the terms {terms:?}.")
    }
}

/// The listing as `precedent search` prints it: each hit's rank, id and score, citation,
/// folded copies, reasons (with `explain`, the stages that found it), its text (a preview
/// unless `full`) and the sections it refers to. `results` are the listed hits as JSON, in the
/// order of `hits`.
pub fn listing_text(
    results: &[serde_json::Value],
    hits: &[PageHit],
    full: bool,
    explain: bool,
) -> String {
    use std::fmt::Write;
    // The whole text with --full, else its first `max_chars` characters.
    let displayed = |text: &str, max_chars: usize| {
        if full {
            text.to_owned()
        } else {
            preview(text, max_chars)
        }
    };
    let mut out = String::new();
    for (result, folded) in results.iter().zip(hits) {
        let hit = &folded.hit;
        let text = result["text"].as_str().unwrap_or_default();
        let shown = if full {
            text.to_owned()
        } else {
            let highlights: Vec<(usize, usize)> = result["highlights"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(span_of)
                .collect();
            preview_with_passage(text, span_of(&result["why"]["passage"]), &highlights, 400)
        };
        let _ = writeln!(
            out,
            "{:>3}. {}  score {:.4}",
            result["rank"],
            result["id"].as_str().unwrap_or_default(),
            hit.score
        );
        if let Some(cite) = precedent_contracts::library_docs::citation(&result["metadata"]) {
            let _ = writeln!(out, "     [{cite}]");
        }
        if !folded.copies.is_empty() {
            let copies: Vec<String> = result["copies"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| match c["citation"].as_str() {
                    Some(cite) => format!("{} [{cite}]", c["id"].as_str().unwrap_or_default()),
                    None => c["id"].as_str().unwrap_or_default().to_owned(),
                })
                .collect();
            let _ = writeln!(out, "     same words also in: {}", copies.join(", "));
        }
        let reasons: Vec<&str> = result["why"]["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str())
            .collect();
        if !reasons.is_empty() {
            let _ = writeln!(out, "     why: {}", reasons.join("; "));
        }
        if explain {
            let found_by: Vec<String> = hit
                .stages
                .iter()
                .map(|s| format!("{} #{} ({:.4})", s.stage, s.rank, s.score))
                .collect();
            let _ = writeln!(out, "     found by: {}", found_by.join(", "));
        }
        for line in wrap(&shown, 96) {
            let _ = writeln!(out, "     {line}");
        }
        for reference in result["references"].as_array().into_iter().flatten() {
            let text = displayed(reference["text"].as_str().unwrap_or_default(), 200);
            let _ = writeln!(
                out,
                "     (refers to § {}) {text}",
                reference["section"].as_str().unwrap_or_default()
            );
        }
        out.push('\n');
    }
    out
}

/// The first `max_chars` characters of `text` with its whitespace collapsed, "…" marking a cut:
/// how a listing previews a clause.
pub fn preview(text: &str, max_chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        flat
    } else {
        let cut: String = flat.chars().take(max_chars).collect();
        format!("{cut}…")
    }
}

/// A `{start, end}` span of a listed hit's JSON (character offsets), if well formed.
fn span_of(span: &serde_json::Value) -> Option<(usize, usize)> {
    let start = usize::try_from(span["start"].as_u64()?).ok()?;
    let end = usize::try_from(span["end"].as_u64()?).ok()?;
    Some((start, end))
}

/// Characters of the clause's head kept before the passage when the passage lies past the
/// preview: enough for its number and heading ("11.3. Liability Cap. ...").
const HEAD_BEFORE_PASSAGE: usize = 120;

/// A preview of at most about `max_chars` characters that shows where the clause answers the
/// query. Why: a long clause (a whole "Indemnities" section, say) can answer a query in its last
/// sentence, and a preview of its first lines alone makes a right answer look wrong.
///
/// `passage` is the answering sentence and `highlights` the query terms' spans, in characters of
/// `text` (as [`list_hits`] gives them). The excerpt starts at the passage or at one of its
/// query terms, wherever the most of them fit in the excerpt (the earliest such start). When
/// that part of the text lies past the plain [`preview`], the preview is the clause's head
/// ("…" where text is skipped), then the excerpt; otherwise it is the plain preview.
pub fn preview_with_passage(
    text: &str,
    passage: Option<(usize, usize)>,
    highlights: &[(usize, usize)],
    max_chars: usize,
) -> String {
    let total = text.chars().count();
    let Some((start, end)) = passage else {
        return preview(text, max_chars);
    };
    if total <= max_chars || start >= total {
        return preview(text, max_chars);
    }
    let room = max_chars.saturating_sub(HEAD_BEFORE_PASSAGE + 3).max(80);
    let inside: Vec<(usize, usize)> = highlights
        .iter()
        .copied()
        .filter(|&(s, _)| s >= start && s < end)
        .collect();
    let in_window = |from: usize| {
        inside
            .iter()
            .filter(move |&&(s, e)| s >= from && e <= from + room)
    };
    // The start with the most query terms in its window; the earliest of equals.
    let best_from = std::iter::once(start)
        .chain(inside.iter().map(|&(s, _)| s))
        .min_by_key(|&from| (std::cmp::Reverse(in_window(from).count()), from))
        .unwrap_or(start);
    let window_end = in_window(best_from)
        .map(|&(_, e)| e)
        .max()
        .unwrap_or(end.min(best_from + room));
    if window_end <= max_chars || best_from < HEAD_BEFORE_PASSAGE {
        return preview(text, max_chars);
    }
    // The head is cut from the text before the excerpt, so the two never overlap (collapsing
    // whitespace makes a preview's characters reach further into the text than their count).
    let before: String = text.chars().take(best_from).collect();
    let head = preview(&before, HEAD_BEFORE_PASSAGE);
    let from_there: String = text.chars().skip(best_from).collect();
    format!("{head} {}", preview(&from_there, room))
}

/// `text` broken into lines of at most `width` characters at spaces (a longer word stands on
/// its own line); its line breaks are kept.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::{preview, preview_with_passage, Correction, Listing};

    #[test]
    fn a_preview_shows_the_passage_that_answers_a_long_clause() {
        let head = "10. INDEMNITIES. 10.1 Each party shall indemnify the other. ";
        let filler = "The indemnified party shall give prompt notice of any claim. ".repeat(10);
        let answer = "11.3 Liability Cap. Liability is limited to the purchase price paid.";
        let text = format!("{head}{filler}{answer}");
        let chars = |s: &str| s.chars().count();
        let start = chars(&text) - chars(answer);
        let end = chars(&text);
        // "purchase" and "price" inside the answer.
        let purchase = start + chars("11.3 Liability Cap. Liability is limited to the ");
        let terms = [(purchase, purchase + 8), (purchase + 9, purchase + 14)];
        let shown = preview_with_passage(&text, Some((start, end)), &terms, 400);
        assert!(shown.starts_with("10. INDEMNITIES."), "{shown}");
        assert!(shown.contains("… 11.3 Liability Cap."), "{shown}");
        assert!(shown.ends_with("purchase price paid."), "{shown}");
        assert!(chars(&shown) <= 400, "{shown}");
        // No passage, a passage in view, a short clause, or offsets past the text (a stale
        // explanation): the plain preview.
        let plain = preview(&text, 400);
        assert_eq!(preview_with_passage(&text, None, &terms, 400), plain);
        assert_eq!(preview_with_passage(&text, Some((0, 20)), &[], 400), plain);
        assert_eq!(
            preview_with_passage(answer, Some((5, 20)), &[], 400),
            answer
        );
        assert_eq!(
            preview_with_passage(&text, Some((10_000, 10_010)), &[], 400),
            plain
        );
    }

    #[test]
    fn the_head_never_repeats_the_excerpt() {
        // 130 characters of which 60 are line-break padding: a head previewed from the whole
        // text would reach past character 130, where the passage starts.
        let head = format!("1. TERM.{}Either party may end it.", "\n ".repeat(30));
        let head = format!("{head}{}", "x".repeat(130 - head.chars().count()));
        let answer = "Cap: liability limited to fees paid. ".repeat(12);
        let text = format!("{head}{answer}");
        let shown = preview_with_passage(&text, Some((130, text.chars().count())), &[], 400);
        // Everything before the first "Cap:" is the head, whole (nothing skipped, so no "…").
        let before = shown.split("Cap:").next().unwrap_or_default();
        assert!(
            before.starts_with("1. TERM. Either party may end it.x"),
            "{shown}"
        );
        assert!(before.ends_with("x ") && !before.contains('…'), "{shown}");
    }

    #[test]
    fn a_long_answering_sentence_is_shown_from_its_query_terms() {
        let head = "10. INDEMNITIES. ";
        let filler =
            "Notice of any claim shall be given promptly by the indemnified party. ".repeat(6);
        let sentence = format!(
            "Without affecting Section 10 {} the total liability shall be limited to the \
             purchase prices paid during the twelve months.",
            "and except for any liability arising from wilful misconduct ".repeat(8)
        );
        let text = format!("{head}{filler}{sentence}");
        let chars = |s: &str| s.chars().count();
        let start = chars(&text) - chars(&sentence);
        let at = |word: &str| {
            let byte = text.rfind(word).expect("word");
            let from = chars(&text[..byte]);
            (from, from + chars(word))
        };
        let terms = [at("liability shall"), at("purchase"), at("prices")];
        let shown = preview_with_passage(&text, Some((start, chars(&text))), &terms, 400);
        assert!(shown.starts_with("10. INDEMNITIES."), "{shown}");
        assert!(
            shown.contains("… liability shall be limited to the purchase prices"),
            "{shown}"
        );
        assert!(!shown.contains("Without affecting"), "{shown}");
    }

    #[test]
    fn an_empty_page_says_why_in_text_and_nothing_in_json() {
        let listing = Listing {
            hits: Vec::new(),
            listed: Vec::new(),
            no_match: Some("No clause matches the filters.".to_owned()),
            corrected: None,
        };
        let text = listing.text(false, false).expect("text");
        assert_eq!(text, "No clause matches the filters.\n");
        let json = listing.json("cap", "bm25").expect("json");
        assert_eq!(
            json,
            serde_json::json!({"query": "cap", "pipeline": "bm25", "hits": []})
        );
    }

    #[test]
    fn a_corrected_query_is_said_in_text_and_json() {
        let corrected = Correction {
            text: "liability cap".to_owned(),
            changes: vec![precedent_text::spelling::Change {
                from: "liabilty".to_owned(),
                to: "liability".to_owned(),
            }],
            syntax_read: false,
        };
        let listing = Listing {
            hits: Vec::new(),
            listed: Vec::new(),
            no_match: Some("No clause matches the filters.".to_owned()),
            corrected: Some(corrected),
        };
        let text = listing.text(false, false).expect("text");
        assert_eq!(
            text,
            "Searched for: liability cap (spelling corrected)\nNo clause matches the filters.\n"
        );
        let json = listing.json("liabilty cap", "hybrid").expect("json");
        assert_eq!(json["query"], "liabilty cap");
        assert_eq!(json["corrected_query"], "liability cap");
        assert_eq!(
            json["corrections"],
            serde_json::json!([{"from": "liabilty", "to": "liability"}])
        );
    }
}
