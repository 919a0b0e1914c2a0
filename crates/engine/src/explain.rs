//! Why a clause matched a query, in words a lawyer reads: the passage of the clause that answers
//! the query (its best sentence), and plain reasons ("clause type Cap on Liability, as asked";
//! "mentions liability, purchase price"; "rated 4★ by reviewers for a similar request") instead
//! of raw scores, which stay in the stage scores.
//!
//! The passage is the sentence holding the most informative query terms (the sum of their BM25
//! IDF in the library, each counted once), so a long clause opens where it answers. Nothing here
//! changes the ranking: it describes a ranking already made.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use precedent_cuad::{category_index, named_in_query, CATEGORIES};
use precedent_learn::clause_types::ReaderState;
use precedent_learn::{types_asked_for, ClauseTypeReader, LearnedModel, RatingMemory};
use precedent_library::Library;
use precedent_models::Embedder;
use precedent_text::Analyzer;
use serde::Serialize;

/// How many matched words a reason names at most.
const MAX_WORDS_NAMED: usize = 5;
/// A rated training request counts as similar from this cosine between the two requests'
/// embeddings (MiniLM; unrelated legal requests sit around 0.2–0.4, rewordings above 0.7).
const SIMILAR_REQUEST_COSINE: f32 = 0.6;

/// Why one clause matched.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Explanation {
    /// Character offsets (not bytes) of the passage that answers the query in the clause's own
    /// text: its best sentence. `None` when no query term occurs in the clause.
    pub passage: Option<Range<usize>>,
    /// Plain-language reasons, most telling first.
    pub reasons: Vec<String>,
}

/// What explaining needs besides the clause: the library's analyzer and IDF, and, when a learned
/// ranker served the query, its rating memory and the query's embedding.
pub struct ExplainContext<'a> {
    pub analyzer: &'a Analyzer,
    pub idf: &'a dyn Fn(&str) -> f32,
    pub memory: Option<(&'a RatingMemory, &'a [f32])>,
}

/// What a face keeps to explain its searches: the learned ranker whose rating memory names
/// similar rated requests, the bi-encoder that embeds the query for it (the one the memory
/// was embedded with; otherwise ratings are left out of the reasons), and the clause-type
/// reader the ranking used, so that "as asked" names the types a query describes ("Clause that
/// restricts a party's ability to compete") as well as those it names.
#[derive(Clone, Default)]
pub struct Explainer {
    memory: Option<(Arc<LearnedModel>, Arc<Embedder>)>,
    clause_types: Option<Arc<dyn ClauseTypeReader>>,
}

impl Explainer {
    /// `clause_types` is the reader of the pipelines this face serves. It is consulted only once
    /// loaded (by a ranking that reads the query's types, or a server's preload): until then
    /// only the types a query names count, and explaining never waits for the classifier.
    pub fn new(
        ranker: Option<Arc<LearnedModel>>,
        embedder: Option<Arc<Embedder>>,
        clause_types: Option<Arc<dyn ClauseTypeReader>>,
    ) -> Self {
        let memory = match (ranker, embedder) {
            (Some(model), Some(embedder))
                if model.manifest.embedder_model_id == embedder.model_id()
                    && !model.memory.queries.is_empty() =>
            {
                Some((model, embedder))
            }
            _ => None,
        };
        Explainer {
            memory,
            clause_types,
        }
    }

    /// The CUAD types `query` asks for, as the ranking read them ([`types_asked_for`]) when the
    /// reader is loaded, else the types it names.
    fn types_asked(&self, query: &str) -> u64 {
        match &self.clause_types {
            Some(reader) if reader.state() == ReaderState::Ready => {
                types_asked_for(query, reader.as_ref())
            }
            _ => named_in_query(query),
        }
    }

    /// Why each clause `(id, own text, metadata)` matched `query` in `library`.
    pub fn explain_hits(
        &self,
        library: &Library,
        query: &str,
        clauses: &[(&str, &str, &serde_json::Value)],
    ) -> Vec<Explanation> {
        let lexical = library.lexical();
        let idf = |term: &str| lexical.idf(term);
        // A query the bi-encoder cannot embed still gets its passage and other reasons.
        let embedding = self.memory.as_ref().and_then(|(_, embedder)| {
            let mut v = embedder.embed_query(query).ok()?;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
            Some(v)
        });
        let context = ExplainContext {
            analyzer: lexical.analyzer(),
            idf: &idf,
            memory: match (&self.memory, &embedding) {
                (Some((model, _)), Some(v)) => Some((&model.memory, v.as_slice())),
                _ => None,
            },
        };
        let terms = QueryTerms::new(&context, query, self.types_asked(query));
        clauses
            .iter()
            .map(|(id, text, metadata)| explain(&context, &terms, id, text, metadata))
            .collect()
    }
}

/// The query's analysed terms with their IDF, each once, and the CUAD types it asks for.
pub struct QueryTerms {
    /// Term -> (IDF, position of its first occurrence in the query).
    weights: HashMap<String, (f32, usize)>,
    /// Bit set over [`CATEGORIES`].
    asked_types: u64,
    /// What the query asks clauses not to say ([`precedent_text::exclusions`]): the phrase as
    /// the query writes it, and its surface forms as analysed terms.
    excluded: Vec<(String, Vec<Vec<String>>)>,
}

impl QueryTerms {
    /// `asked_types`: the CUAD types the query asks for, as a bit set over [`CATEGORIES`]
    /// (at least those it names, [`named_in_query`]).
    pub fn new(context: &ExplainContext<'_>, query: &str, asked_types: u64) -> Self {
        let mut weights = HashMap::new();
        let mut occurrences: HashMap<String, usize> = HashMap::new();
        for (order, term) in context
            .analyzer
            .query_term_texts(query)
            .into_iter()
            .enumerate()
        {
            *occurrences.entry(term.clone()).or_default() += 1;
            let idf = (context.idf)(&term);
            weights.entry(term).or_insert((idf, order));
        }
        // Words of what the request excludes, and of the words that exclude it, are no search
        // words ("AND NOT \"gross negligence\"" must not make "negligence" a reason a clause
        // matched), unless the request also says them elsewhere ("fraud" in "indemnity not
        // including fraud and a separate cap for fraud claims").
        let mut excluded = Vec::new();
        let mut said_in_exclusions: HashMap<String, usize> = HashMap::new();
        for exclusion in precedent_text::exclusions(query) {
            let spoken = [exclusion.phrase.as_str(), exclusion.trigger.unwrap_or("")];
            for term in spoken
                .iter()
                .flat_map(|words| context.analyzer.query_term_texts(words))
            {
                *said_in_exclusions.entry(term).or_default() += 1;
            }
            let forms: Vec<Vec<String>> = exclusion
                .surface_forms
                .iter()
                .map(|form| context.analyzer.query_term_texts(form))
                .filter(|terms| !terms.is_empty())
                .collect();
            if !exclusion.phrase.is_empty() && !forms.is_empty() {
                excluded.push((exclusion.phrase, forms));
            }
        }
        for (term, times) in said_in_exclusions {
            if occurrences.get(&term).is_some_and(|&all| all <= times) {
                weights.remove(&term);
            }
        }
        QueryTerms {
            weights,
            asked_types,
            excluded,
        }
    }
}

/// Explains why the clause with id `clause_id`, own text `text` (its referenced sections left
/// out) and `metadata` matched `query`.
pub fn explain(
    context: &ExplainContext<'_>,
    query: &QueryTerms,
    clause_id: &str,
    text: &str,
    metadata: &serde_json::Value,
) -> Explanation {
    let mut reasons = Vec::new();
    if let Some(reason) = clause_type_reason(query, metadata) {
        reasons.push(reason);
    }
    // Query terms found in the clause: where, and how the clause writes them.
    let mut found: Vec<(usize, &str, (f32, usize))> = Vec::new();
    let mut seen: HashMap<&str, ()> = HashMap::new();
    let mut byte_hits: Vec<(usize, f32, &str)> = Vec::new();
    let mut clause_terms: Vec<String> = Vec::new();
    context.analyzer.for_each_term(text, |t| {
        if !query.excluded.is_empty() {
            clause_terms.push(t.text.clone());
        }
        if let Some((key, &w)) = query.weights.get_key_value(t.text.as_str()) {
            byte_hits.push((t.start, w.0, key.as_str()));
            if seen.insert(key.as_str(), ()).is_none() {
                if let Some(surface) = text.get(t.start..t.end) {
                    found.push((t.start, surface, w));
                }
            }
        }
    });
    if !found.is_empty() {
        // The most informative words, named in the order the query gives them.
        let mut named: Vec<&(usize, &str, (f32, usize))> = found.iter().collect();
        named.sort_by(|a, b| b.2 .0.total_cmp(&a.2 .0).then(a.0.cmp(&b.0)));
        named.truncate(MAX_WORDS_NAMED);
        named.sort_by_key(|w| w.2 .1);
        let words: Vec<String> = named.iter().map(|(_, s, _)| s.to_lowercase()).collect();
        let total = query.weights.len();
        reasons.push(format!(
            "mentions {} ({} of the {} search words)",
            join_words(&words),
            found.len(),
            total
        ));
    } else if !query.weights.is_empty() {
        reasons.push("matched by meaning: none of the search words appears in it".to_owned());
    }
    for (phrase, forms) in &query.excluded {
        let says_it = forms.iter().any(|form| {
            clause_terms
                .windows(form.len())
                .any(|w| w.iter().zip(form).all(|(a, b)| a == b))
        });
        reasons.push(if says_it {
            format!("mentions {phrase}, which the request excludes")
        } else {
            format!("does not mention {phrase}, as asked")
        });
    }
    if let Some(reason) = rating_reason(context, clause_id) {
        reasons.push(reason);
    }
    Explanation {
        passage: best_sentence(text, &byte_hits),
        reasons,
    }
}

/// "clause type Cap on Liability, as asked (confidence 92%)" when the query asks for a CUAD
/// type the clause has; else the clause's most confident stored type.
fn clause_type_reason(query: &QueryTerms, metadata: &serde_json::Value) -> Option<String> {
    let types = metadata.get("clause_types")?.as_array()?;
    let mut stored: Vec<(usize, f64)> = types
        .iter()
        .filter_map(|t| {
            let k = category_index(t.get("category")?.as_str()?)?;
            Some((k, t.get("confidence")?.as_f64().unwrap_or(0.0)))
        })
        .collect();
    stored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let asked = stored
        .iter()
        .find(|(k, _)| *k < 64 && query.asked_types & (1u64 << k) != 0);
    match asked {
        Some((k, confidence)) => Some(format!(
            "clause type {}, as asked (confidence {:.0}%)",
            CATEGORIES[*k],
            confidence * 100.0
        )),
        None => stored.first().map(|(k, confidence)| {
            format!(
                "clause type {} (confidence {:.0}%)",
                CATEGORIES[*k],
                confidence * 100.0
            )
        }),
    }
}

/// "rated 4★ by reviewers for a similar request: “cap on liability”": the most similar rated
/// request of the learned ranker's memory that rated this clause 3 stars or more.
fn rating_reason(context: &ExplainContext<'_>, clause_id: &str) -> Option<String> {
    let (memory, query) = context.memory?;
    let mut best: Option<(f32, i32, &str)> = None;
    for rated in &memory.queries {
        let Some(&(_, label)) = rated.ratings.iter().find(|(id, _)| id == clause_id) else {
            continue;
        };
        if label < 3 || rated.embedding.len() != query.len() {
            continue;
        }
        let cosine: f32 = rated.embedding.iter().zip(query).map(|(a, b)| a * b).sum();
        if cosine >= SIMILAR_REQUEST_COSINE && best.is_none_or(|(c, _, _)| cosine > c) {
            best = Some((cosine, label, rated.text.as_str()));
        }
    }
    best.map(|(_, label, text)| {
        format!("rated {label}★ by reviewers for a similar request: “{text}”")
    })
}

fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Sentence spans (bytes) of `text`: a sentence ends after `.`, `;`, `:`, `?` or `!` followed by
/// whitespace, or at a line break.
fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_space = chars.peek().is_some_and(|(_, n)| n.is_whitespace());
        let ends = c == '\n' || (matches!(c, '.' | ';' | ':' | '?' | '!') && next_is_space);
        if ends {
            let end = i + c.len_utf8();
            if text[start..end].trim().len() > 1 {
                spans.push(start..end);
            }
            start = end;
        }
    }
    if text[start..].trim().len() > 1 {
        spans.push(start..text.len());
    }
    spans
        .into_iter()
        .map(|s| {
            // Without the spacing around it.
            let inner = &text[s.clone()];
            let lead = inner.len() - inner.trim_start().len();
            let trail = inner.len() - inner.trim_end().len();
            s.start + lead..s.end - trail
        })
        .collect()
}

/// The sentence with the most IDF of distinct query terms; `None` without any query term.
/// Character offsets, as the API and the page count them.
fn best_sentence(text: &str, hits: &[(usize, f32, &str)]) -> Option<Range<usize>> {
    if hits.is_empty() {
        return None;
    }
    let mut best: Option<(f32, Range<usize>)> = None;
    for span in sentences(text) {
        let mut terms: Vec<&str> = Vec::new();
        let mut score = 0.0;
        for &(at, w, term) in hits {
            if span.contains(&at) && !terms.contains(&term) {
                terms.push(term);
                score += w;
            }
        }
        if score > 0.0 && best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, span));
        }
    }
    let (_, span) = best?;
    let start = text.get(..span.start)?.chars().count();
    let len = text.get(span.clone())?.chars().count();
    Some(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use precedent_text::AnalyzerConfig;

    fn context_with<'a>(
        analyzer: &'a Analyzer,
        idf: &'a dyn Fn(&str) -> f32,
    ) -> ExplainContext<'a> {
        ExplainContext {
            analyzer,
            idf,
            memory: None,
        }
    }

    #[test]
    fn the_passage_is_the_sentence_that_answers_and_reasons_are_plain() {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        // "liability" is common, "purchase" and "price" rare: the price sentence answers.
        let idf = |t: &str| if t.starts_with("liab") { 0.5 } else { 3.0 };
        let context = context_with(&analyzer, &idf);
        let query = QueryTerms::new(
            &context,
            "Cap on Liability based on the purchase price",
            named_in_query("Cap on Liability based on the purchase price"),
        );
        let text = "9.1 Limitation. Each party's liability is limited as follows.\n\
                    The Seller's aggregate liability shall not exceed the Purchase Price paid hereunder. \
                    Nothing limits liability for fraud.";
        let metadata = serde_json::json!({"clause_types": [
            {"category": "Uncapped Liability", "confidence": 0.41},
            {"category": "Cap On Liability", "confidence": 0.92},
        ]});
        let why = explain(&context, &query, "c#1", text, &metadata);
        let passage = why.passage.clone().expect("a passage");
        let shown: String = text
            .chars()
            .skip(passage.start)
            .take(passage.end - passage.start)
            .collect();
        assert_eq!(
            shown,
            "The Seller's aggregate liability shall not exceed the Purchase Price paid hereunder."
        );
        assert_eq!(
            why.reasons[0],
            "clause type Cap on Liability, as asked (confidence 92%)"
        );
        assert!(
            why.reasons[1].starts_with("mentions liability, purchase and price"),
            "{:?}",
            why.reasons
        );
        assert!(
            why.reasons[1].ends_with("(3 of the 5 search words)"),
            "{:?}",
            why.reasons
        );
    }

    #[test]
    fn words_a_request_excludes_are_no_reason_a_clause_matched() {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let idf = |_: &str| 2.0;
        let context = context_with(&analyzer, &idf);
        // How the search-syntax reader writes `indemnif* /s cap AND NOT "gross negligence"`.
        let request = "indemnify indemnification cap not including gross negligence";
        let query = QueryTerms::new(&context, request, 0);
        let says_it = "The Supplier shall indemnify the Buyer, and its liability is capped, \
                       save for gross negligence.";
        let why = explain(&context, &query, "c#1", says_it, &serde_json::json!({}));
        let mentions = why
            .reasons
            .iter()
            .find(|r| r.starts_with("mentions indemnify"))
            .unwrap_or_else(|| panic!("{:?}", why.reasons));
        assert!(
            !mentions.contains("negligence") && !mentions.contains("including"),
            "{mentions}"
        );
        assert!(mentions.ends_with("of the 3 search words)"), "{mentions}");
        assert!(
            why.reasons
                .contains(&"mentions gross negligence, which the request excludes".to_owned()),
            "{:?}",
            why.reasons
        );
        let clean = "The Supplier shall indemnify the Buyer; its liability is capped at the fees.";
        let why = explain(&context, &query, "c#2", clean, &serde_json::json!({}));
        assert!(
            why.reasons
                .contains(&"does not mention gross negligence, as asked".to_owned()),
            "{:?}",
            why.reasons
        );
        // A word the request also asks for outside the exclusion stays a search word.
        let both = QueryTerms::new(
            &context,
            "indemnity not including fraud and a separate cap for fraud claims",
            0,
        );
        assert_eq!(both.excluded.len(), 1, "the reader reads one exclusion");
        assert!(both.weights.keys().any(|t| t.starts_with("fraud")));
        assert!(!both.weights.keys().any(|t| t.starts_with("includ")));
    }

    #[test]
    fn a_clause_without_the_words_is_said_to_match_by_meaning() {
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let idf = |_: &str| 1.0;
        let context = context_with(&analyzer, &idf);
        let query = QueryTerms::new(&context, "restrictive covenants", 0);
        let why = explain(
            &context,
            &query,
            "c#2",
            "Employee shall not engage in any competing business for two years.",
            &serde_json::json!({}),
        );
        assert_eq!(why.passage, None);
        assert_eq!(
            why.reasons,
            vec!["matched by meaning: none of the search words appears in it".to_owned()]
        );
    }

    /// Reads Non-Compete in any text that speaks of competing.
    #[derive(Debug)]
    struct ReadsCompeting;

    impl ClauseTypeReader for ReadsCompeting {
        fn clause_types(&self, text: &str) -> Option<u64> {
            let non_compete = category_index("Non-Compete")?;
            Some(if text.contains("compete") {
                1 << non_compete
            } else {
                0
            })
        }
    }

    fn bit(name: &str) -> u64 {
        1 << category_index(name).expect("a CUAD category")
    }

    #[test]
    fn a_described_type_is_explained_as_asked_once_the_reader_is_loaded() {
        let described = "Clause that restricts a party's ability to compete";
        let loaded = Explainer::new(None, None, Some(Arc::new(ReadsCompeting)));
        assert_eq!(loaded.types_asked(described), bit("Non-Compete"));
        // A type the query names wins over what the reader reads in it.
        assert_eq!(
            loaded.types_asked("Insurance that does not compete"),
            bit("Insurance")
        );
        // A reader still to load is not waited for: only named types count.
        let unloaded = precedent_learn::clause_types::LazyClauseTypes::new(Box::new(|| {
            Err("not needed".to_owned())
        }));
        let waiting = Explainer::new(None, None, Some(Arc::new(unloaded)));
        assert_eq!(waiting.types_asked(described), 0);
        assert_eq!(
            Explainer::default().types_asked("Non-Compete"),
            bit("Non-Compete")
        );

        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let idf = |_: &str| 1.0;
        let context = context_with(&analyzer, &idf);
        let query = QueryTerms::new(&context, described, loaded.types_asked(described));
        let metadata = serde_json::json!({"clause_types": [
            {"category": "Non-Compete", "confidence": 0.8},
        ]});
        let text = "Distributor shall not compete with Supplier in the Territory.";
        let why = explain(&context, &query, "c#3", text, &metadata);
        assert_eq!(
            why.reasons[0],
            "clause type Non-Compete, as asked (confidence 80%)"
        );
    }

    #[test]
    fn sentences_split_at_stops_and_line_breaks_without_spacing() {
        let text = "  First one. Second; third\nfourth (a) 1.5 times";
        let spans: Vec<&str> = sentences(text).into_iter().map(|s| &text[s]).collect();
        assert_eq!(
            spans,
            vec!["First one.", "Second;", "third", "fourth (a) 1.5 times"]
        );
    }
}
