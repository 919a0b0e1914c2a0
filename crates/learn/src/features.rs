//! Features of a query-clause pair: what the ranker sees.
//!
//! Every feature is defined against query-level constants (the best BM25 score in the whole
//! library, the best cosine, ranks in full-library lists), never against the candidate list it is
//! computed for, because training lists (all judged clauses of a query) and serving lists (the
//! hybrid retriever's top N) are different sets.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use precedent_library::Library;
use precedent_vectors::RowSet;

use crate::clause_types::{ClauseTypeReader, LibraryClauseTypes};
use crate::memory::{dot, normalize, RatedQuery, RatingMemory};
use crate::LearnError;

/// Feature names, in vector order. Stored in a model directory and checked on load, so a model
/// trained on another feature layout is refused instead of misread.
pub const FEATURE_NAMES: &[&str] = &[
    "bm25",
    "bm25_rel_top",
    "bm25_expanded_rel_top",
    "dense_cos",
    "dense_gap_top",
    "rrf",
    "query_term_coverage",
    "query_bigram_coverage",
    "log_clause_terms",
    "category_match",
    "category_centroid_cos",
    "best_centroid_cos",
    "rated_in_category",
    "category_unknown",
    "neighbor_mean_label",
    "neighbor_mass",
    "nearest_rater_label",
    "nearest_rater_sim",
    "mean_label_in_category",
    "max_label",
    "log_times_relevant",
    "category_classifier",
    "cuad_type_match",
    "cuad_query_type_clarity",
];

pub const NUM_FEATURES: usize = 24;

/// Per feature of [`FEATURE_NAMES`], the direction relevance takes as the feature rises, for
/// trees grown under monotone constraints (`train --learner boost --monotone`): `1` for
/// evidence that a clause answers the request (lexical and dense match, the category's fit,
/// what similar rated requests said of the clause), `0` for what describes the clause or the
/// query alone, or weighs how much other evidence counts (its direction is an interaction, not
/// a preference). Fixed from what each feature means, before any score
/// (docs/experiments/ranking.md, "Monotone trees").
pub const MONOTONE: [i8; NUM_FEATURES] = [
    1, // bm25
    1, // bm25_rel_top
    1, // bm25_expanded_rel_top
    1, // dense_cos
    1, // dense_gap_top: the cosine minus the query's best, so nearer the top is better
    1, // rrf
    1, // query_term_coverage
    1, // query_bigram_coverage
    0, // log_clause_terms
    1, // category_match
    1, // category_centroid_cos
    0, // best_centroid_cos: the clause's own clarity, whatever the query
    1, // rated_in_category
    0, // category_unknown
    1, // neighbor_mean_label
    0, // neighbor_mass: how much the vote counts
    1, // nearest_rater_label
    0, // nearest_rater_sim: how much the nearest rater counts
    1, // mean_label_in_category
    0, // max_label: by any query, related or not
    0, // log_times_relevant: a clause's popularity, not its fit
    1, // category_classifier
    1, // cuad_type_match
    0, // cuad_query_type_clarity: the query's own clarity
];

/// How sharply similar training queries dominate the vote (softmax temperature on cosine).
const QUERY_TEMPERATURE: f32 = 0.05;
/// Clauses whose mean embedding is added to a query's own before it votes (see
/// [`vote_vector`]): chosen before measuring; 5, 20 and 40 were within noise
/// of it over three fold seeds, 10 the steadiest (BENCHMARKS.md).
const VOTE_FEEDBACK_CLAUSES: usize = 10;
/// Temperature of the clause-category posterior from centroid cosines.
const CENTROID_TEMPERATURE: f32 = 0.05;
/// Depth of the full-library lists that ranks and BM25 scores come from.
const LIST_DEPTH: usize = 4096;
const RRF_K: f32 = 60.0;

/// A query as the extractor needs it: the text and its (unit) embedding, computed once by the
/// caller so that training over many folds embeds each query once.
#[derive(Debug, Clone)]
pub struct QueryInput {
    pub id: Option<String>,
    pub text: String,
    pub embedding: Vec<f32>,
}

/// Computes feature vectors over one library with one rating memory.
pub struct FeatureExtractor {
    library: Arc<Library>,
    memory: Arc<RatingMemory>,
    /// Library row -> ratings of that clause by memory queries `(query index, label)`.
    by_row: HashMap<u32, Vec<(usize, i32)>>,
    query_category: Vec<Option<usize>>,
    /// What a clause contributes to every query's features, computed on first use and kept:
    /// analysing clause text (stemming) was half the learned stage's time per query.
    profiles: Vec<OnceLock<Arc<ClauseProfile>>>,
    /// Clauses' CUAD types, for queries that name one ([`crate::clause_types`]).
    clause_types: Option<LibraryClauseTypes>,
    /// The memory queries' vote vectors ([`vote_vector`]), computed on first use.
    memory_vote_vectors: OnceLock<Vec<Vec<f32>>>,
}

/// The query-independent side of a clause's features.
struct ClauseProfile {
    terms: HashSet<String>,
    /// Adjacent analysed terms, joined by [`BIGRAM_JOIN`].
    bigrams: HashSet<String>,
    log_terms: f32,
    /// Mutual phrases and carve-outs, for queries that ask for a side's version.
    balance: precedent_text::Balance,
    /// Whether the clause speaks of third parties, for indemnity queries that name whose
    /// claims they want covered.
    third_parties: bool,
    /// Whether the clause lists the grounds it covers, for indemnity queries that want broad or
    /// specified claims.
    lists_grounds: bool,
    /// The limits (duration, territory) the clause states.
    stated_limits: Vec<precedent_text::Limit>,
    /// How the clause renews the term, for queries that ask for automatic renewal.
    renewal: precedent_text::Renewal,
    /// Whether the clause sets a ceiling on liability, for queries that ask for a cap.
    states_cap: bool,
    /// Whether the clause names indirect, consequential... damages, for queries that ask for
    /// their waiver.
    names_waived_damages: bool,
    /// Distribution over CUAD types (when the memory has type profiles).
    cuad_types: Option<Vec<f32>>,
    /// Cosine to each category centroid of the memory.
    centroid_cos: Vec<f32>,
    vector: Vec<f32>,
}

/// Whether a clause, by its profile, goes against one constraint of a query.
type ClauseCheck = Box<dyn Fn(&ClauseProfile) -> bool + Send + Sync>;

/// The query rules of [`FeatureExtractor::rule_flags`], by name: each reads one kind of
/// constraint in a query's words and flags the clauses that go against it. Named so that a
/// model can be trained and served without some of them (`train --without-rule NAME`) and an
/// ablation can measure each one's effect per query wording.
pub const QUERY_RULES: &[&str] = &[
    "exclusion",
    "inclusion",
    "stance",
    "scope-limits",
    "claim-source",
    "claim-breadth",
    "renewal",
    "cap",
    "damages-waiver",
    "clause-types",
];

/// Checks rule names against [`QUERY_RULES`]; an unknown one is an error listing the known ones.
pub fn check_rule_names(names: &[String]) -> Result<(), String> {
    match names.iter().find(|n| !QUERY_RULES.contains(&n.as_str())) {
        Some(unknown) => Err(format!(
            "unknown query rule {unknown:?}; known rules: {}",
            QUERY_RULES.join(", ")
        )),
        None => Ok(()),
    }
}

/// Whether each of `rows` rows goes against any rule of `flags` not in `rules_off`; `None` when
/// no such rule read anything in the query.
pub fn combine_rule_flags(
    flags: &[(&'static str, Vec<bool>)],
    rules_off: &[String],
    rows: usize,
) -> Option<Vec<bool>> {
    let on: Vec<&Vec<bool>> = flags
        .iter()
        .filter(|(name, _)| !rules_off.iter().any(|off| off == name))
        .map(|(_, f)| f)
        .collect();
    if on.is_empty() {
        return None;
    }
    Some(
        (0..rows)
            .map(|i| on.iter().any(|f| f.get(i).copied().unwrap_or(false)))
            .collect(),
    )
}

/// The library's clause vectors, or an error naming the library and `why` they are needed
/// ("the learned ranker needs them").
pub(crate) fn library_vectors<'a>(
    library: &'a Library,
    why: &str,
) -> Result<&'a dyn precedent_vectors::VectorIndex, LearnError> {
    library.vectors()?.ok_or_else(|| {
        LearnError::Invalid(format!(
            "library {} has no clause vectors; {why}",
            library.root().display()
        ))
    })
}

/// One query's training list: each judged clause's features and its label.
pub(crate) type Group = Vec<([f32; NUM_FEATURES], i32)>;

/// A rated query as the extractor reads it (its id, so that its own ratings stay out of its
/// features while training).
pub(crate) fn query_input(query: &RatedQuery, embedding: &[f32]) -> QueryInput {
    QueryInput {
        id: Some(query.id.clone()),
        text: query.text.clone(),
        embedding: embedding.to_vec(),
    }
}

/// `query`'s training list over `extractor`'s library: the features of each judged `(row,
/// label)` clause (rows of that library), with its label; with `served` > 0, also the first
/// `served` clauses of the hybrid list that serving would hand the learned stage and that
/// nobody judged for the query, at label 0 ([`TrainOptions::served_negatives`]).
///
/// [`TrainOptions::served_negatives`]: crate::TrainOptions::served_negatives
pub(crate) fn labelled_group(
    extractor: &FeatureExtractor,
    query: &RatedQuery,
    embedding: &[f32],
    judged: impl Iterator<Item = (u32, i32)>,
    served: usize,
) -> Result<Group, LearnError> {
    let (mut rows, mut labels): (Vec<u32>, Vec<i32>) = judged.unzip();
    let input = query_input(query, embedding);
    if served > 0 {
        let judged: HashSet<u32> = rows.iter().copied().collect();
        for row in extractor.served_rows(&input, served)? {
            if !judged.contains(&row) {
                rows.push(row);
                labels.push(0);
            }
        }
    }
    let features = extractor.extract(&input, &rows)?;
    Ok(features.into_iter().zip(labels).collect())
}

/// The per-row slot of a library-sized cache, or an error naming the row outside the library.
pub(crate) fn row_slot<T>(slots: &[T], row: u32) -> Result<&T, LearnError> {
    slots.get(row as usize).ok_or_else(|| {
        LearnError::Invalid(format!(
            "row {row} is outside the library ({} clauses)",
            slots.len()
        ))
    })
}

/// Joins the two terms of a bigram key (a character analysed text never contains).
const BIGRAM_JOIN: char = '\u{1}';

fn bigram_key(a: &str, b: &str) -> String {
    let mut key = String::with_capacity(a.len() + b.len() + 1);
    key.push_str(a);
    key.push(BIGRAM_JOIN);
    key.push_str(b);
    key
}

impl FeatureExtractor {
    /// Indexes the memory's ratings by library row (once; reuse the extractor across queries).
    pub fn new(library: Arc<Library>, memory: Arc<RatingMemory>) -> Self {
        let mut by_row: HashMap<u32, Vec<(usize, i32)>> = HashMap::new();
        for (qi, q) in memory.queries.iter().enumerate() {
            for (id, label) in &q.ratings {
                if let Some(row) = library.store().row(id) {
                    by_row.entry(row).or_default().push((qi, *label));
                }
            }
        }
        let query_category = memory
            .queries
            .iter()
            .map(|q| {
                q.category
                    .as_ref()
                    .and_then(|c| memory.categories.binary_search(c).ok())
            })
            .collect();
        let profiles = (0..library.len()).map(|_| OnceLock::new()).collect();
        FeatureExtractor {
            library,
            memory,
            by_row,
            query_category,
            profiles,
            clause_types: None,
            memory_vote_vectors: OnceLock::new(),
        }
    }

    /// The library whose clauses this extractor describes.
    pub(crate) fn library(&self) -> &Library {
        &self.library
    }

    /// Reads the CUAD types of clauses with `reader`, so that a query naming a clause type
    /// demotes clauses of other types ([`crate::clause_types`]). Without one, such queries are
    /// ranked as before.
    pub fn with_clause_types(mut self, reader: Option<Arc<dyn ClauseTypeReader>>) -> Self {
        self.clause_types =
            reader.map(|reader| LibraryClauseTypes::new(self.library.clone(), reader));
        self
    }

    /// The clause's profile, computed once per extractor (concurrent first uses may both compute
    /// it; one result is kept, both are equal).
    fn profile(
        &self,
        row: u32,
        vectors: &dyn precedent_vectors::VectorIndex,
    ) -> Result<Arc<ClauseProfile>, LearnError> {
        let slot = row_slot(&self.profiles, row)?;
        if let Some(profile) = slot.get() {
            return Ok(profile.clone());
        }
        let clause = self.library.store().clause(row)?;
        let text = precedent_library::indexed_text(&clause);
        let terms = self.library.lexical().query_terms(&text);
        let vector = vectors.vector(row).unwrap_or_default();
        let profile = Arc::new(ClauseProfile {
            bigrams: terms.windows(2).map(|w| bigram_key(&w[0], &w[1])).collect(),
            log_terms: (1.0 + terms.len() as f32).ln(),
            balance: precedent_text::Balance::of(&text),
            third_parties: precedent_text::mentions_third_parties(&text),
            lists_grounds: precedent_text::lists_grounds(&text),
            stated_limits: [
                precedent_text::Limit::Duration,
                precedent_text::Limit::Territory,
            ]
            .into_iter()
            .filter(|l| l.stated_in(&text))
            .collect(),
            renewal: precedent_text::Renewal::of(&text),
            states_cap: precedent_text::states_cap(&text),
            names_waived_damages: precedent_text::names_waived_damages(&text),
            terms: terms.into_iter().collect(),
            cuad_types: self
                .memory
                .cuad_types
                .as_ref()
                .map(|t| t.distribution(&vector)),
            centroid_cos: self
                .memory
                .centroids
                .iter()
                .map(|c| dot(&vector, c))
                .collect(),
            vector,
        });
        Ok(slot.get_or_init(|| profile).clone())
    }

    /// Category posterior of the query: similarity-weighted vote of the memory queries.
    /// `nearest` are the library rows nearest to the query's embedding, best first (the head of
    /// the dense list `extract` already has), for its vote vector.
    /// Returns also the per-memory-query weights (normalised) and cosines (`None` for the query
    /// itself) used by the rating features.
    fn query_votes(
        &self,
        query: &QueryInput,
        nearest: &[precedent_vectors::Neighbor],
        vectors: &dyn precedent_vectors::VectorIndex,
    ) -> (Vec<f32>, Vec<f32>, Vec<Option<f32>>) {
        let memory_vectors = self.memory_vote_vectors.get_or_init(|| {
            self.memory
                .queries
                .iter()
                .map(|q| {
                    let nearest = vectors
                        .search(&q.embedding, VOTE_FEEDBACK_CLAUSES)
                        .unwrap_or_default();
                    vote_vector(&q.embedding, &nearest, vectors)
                })
                .collect()
        });
        let own = vote_vector(&query.embedding, nearest, vectors);
        let sims: Vec<Option<f32>> = self
            .memory
            .queries
            .iter()
            .zip(memory_vectors)
            .map(|(q, v)| {
                if query.id.as_deref() == Some(q.id.as_str()) {
                    None // leave-one-query-out while training
                } else {
                    Some(dot(&own, v))
                }
            })
            .collect();
        let max = sims
            .iter()
            .flatten()
            .fold(f32::NEG_INFINITY, |m, &s| m.max(s));
        let mut weights: Vec<f32> = sims
            .iter()
            .map(|s| s.map_or(0.0, |s| ((s - max) / QUERY_TEMPERATURE).exp()))
            .collect();
        let total: f32 = weights.iter().sum();
        if total > 0.0 {
            weights.iter_mut().for_each(|w| *w /= total);
        }
        let mut categories = vec![0f32; self.memory.categories.len()];
        let mut mass = 0f32;
        for (w, c) in weights.iter().zip(&self.query_category) {
            if let Some(c) = c {
                categories[*c] += w;
                mass += w;
            }
        }
        if mass > 0.0 {
            categories.iter_mut().for_each(|p| *p /= mass);
        }
        (categories, weights, sims)
    }

    /// For a query that constrains its answers beyond their topic, whether each row's clause
    /// goes against it: it contains language the query excludes ("... that do not include hold
    /// harmless", "... without carveouts"; see [`precedent_text::exclusion`]), or it lacks what
    /// the query requires ("indemnification covers indirect claims"; see
    /// [`precedent_text::inclusion`]), or it is the other
    /// side's version of a protection the query wants for one side ("seller-favorable waiver of
    /// indirect damages"; see [`precedent_text::stance`]), or it does not state a limit the query
    /// requires ("non-compete bound by time and territory"; see [`precedent_text::scope`]), or
    /// it covers the other kind of claims than an indemnity query names ("first party
    /// indemnification"; see [`precedent_text::claims`]), or it does not renew by itself where
    /// the query asks for automatic renewal ("Clause that requires notice to terminate
    /// auto-renew"; see [`precedent_text::renewal`]), or sets no ceiling where it asks for a cap,
    /// or names no indirect damages where it asks for their waiver
    /// ([`precedent_text::limitation`]), or lists its grounds where the query asks for
    /// broad-based claims (none where it asks for specified ones; [`precedent_text::claims`]),
    /// or is of none of the CUAD clause types the query names ("Source Code Escrow";
    /// [`crate::clause_types`], only with a type reader). `None` when the query has no such
    /// constraint.
    pub fn against_query(
        &self,
        query: &str,
        rows: &[u32],
        rules_off: &[String],
    ) -> Result<Option<Vec<bool>>, LearnError> {
        let flags = self.rule_flags(query, rows)?;
        Ok(combine_rule_flags(&flags, rules_off, rows.len()))
    }

    /// Per query rule ([`QUERY_RULES`]) that reads a constraint in `query`, whether each row's
    /// clause goes against it (see [`Self::against_query`]); rules that read nothing in the
    /// query are absent. Kept apart so that an ablation can switch rules off one at a time
    /// without extracting anything twice.
    pub fn rule_flags(
        &self,
        query: &str,
        rows: &[u32],
    ) -> Result<Vec<(&'static str, Vec<bool>)>, LearnError> {
        let lexical = self.library.lexical();
        let forms: Vec<Vec<String>> = precedent_text::exclusions(query)
            .iter()
            .flat_map(|e| e.surface_forms.iter())
            .map(|form| lexical.query_terms(form))
            .filter(|terms| !terms.is_empty())
            .collect();
        // Per requirement, its alternatives as analysed terms (all of one alternative must occur).
        let required: Vec<Vec<Vec<String>>> = precedent_text::inclusions(query)
            .iter()
            .map(|inclusion| {
                inclusion
                    .alternatives
                    .iter()
                    .map(|a| lexical.query_terms(a))
                    .filter(|terms| !terms.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|alternatives| !alternatives.is_empty())
            .collect();
        // One check per constraint the query states: does a clause (its profile) go against it?
        let mut checks: Vec<(&'static str, ClauseCheck)> = Vec::new();
        if !forms.is_empty() {
            checks.push((
                "exclusion",
                Box::new(move |p| {
                    forms.iter().any(|form| match form.as_slice() {
                        [term] => p.terms.contains(term.as_str()),
                        _ => form
                            .windows(2)
                            .all(|w| p.bigrams.contains(&bigram_key(&w[0], &w[1]))),
                    })
                }),
            ));
        }
        if !required.is_empty() {
            checks.push((
                "inclusion",
                Box::new(move |p| {
                    required.iter().any(|alternatives| {
                        !alternatives
                            .iter()
                            .any(|terms| terms.iter().all(|t| p.terms.contains(t.as_str())))
                    })
                }),
            ));
        }
        if let Some(side) = precedent_text::favoured_side(query) {
            checks.push(("stance", Box::new(move |p| p.balance.works_against(side))));
        }
        let limits = precedent_text::required_limits(query);
        if !limits.is_empty() {
            checks.push((
                "scope-limits",
                Box::new(move |p| limits.iter().any(|l| !p.stated_limits.contains(l))),
            ));
        }
        if let Some(c) = precedent_text::wanted_claim_source(query) {
            checks.push((
                "claim-source",
                Box::new(move |p| c.goes_against(p.third_parties)),
            ));
        }
        if let Some(b) = precedent_text::wanted_claim_breadth(query) {
            checks.push((
                "claim-breadth",
                Box::new(move |p| b.goes_against(p.lists_grounds)),
            ));
        }
        if let Some(r) = precedent_text::wanted_renewal(query) {
            checks.push(("renewal", Box::new(move |p| p.renewal.goes_against(r))));
        }
        if precedent_text::wants_cap(query) {
            checks.push(("cap", Box::new(|p| !p.states_cap)));
        }
        if precedent_text::wants_damages_waiver(query) {
            checks.push(("damages-waiver", Box::new(|p| !p.names_waived_damages)));
        }
        let vectors = library_vectors(&self.library, "the learned ranker needs them")?;
        let profiles = if checks.is_empty() {
            Vec::new()
        } else {
            rows.iter()
                .map(|&row| self.profile(row, vectors))
                .collect::<Result<Vec<_>, LearnError>>()?
        };
        let mut flags: Vec<(&'static str, Vec<bool>)> = checks
            .iter()
            .map(|(name, goes_against)| (*name, profiles.iter().map(|p| goes_against(p)).collect()))
            .collect();
        // Per row, whether it is of none of the CUAD types the query asks for (if it asks for any).
        if let Some(types) = &self.clause_types {
            let named = types.asked_for(query);
            if named != 0 {
                flags.push(("clause-types", types.against(rows, named)?));
            }
        }
        Ok(flags)
    }

    /// The first `depth` clauses of hybrid retrieval for `query`: BM25 and dense lists of
    /// `depth` each, fused by reciprocal rank (k = 60, equal weights), as the `hybrid` pipeline
    /// hands them to the learned stage when serving.
    pub(crate) fn served_rows(
        &self,
        query: &QueryInput,
        depth: usize,
    ) -> Result<Vec<u32>, LearnError> {
        let library = &*self.library;
        let hit = |row: u32, score: f32| precedent_rank::Hit {
            row,
            score,
            stages: Vec::new(),
        };
        let lexical: Vec<_> = library
            .lexical()
            .search(&query.text, depth)?
            .into_iter()
            .map(|(row, score)| hit(row, score))
            .collect();
        let vectors = library_vectors(library, "the learned ranker needs them")?;
        let dense: Vec<_> = vectors
            .search(&query.embedding, depth)?
            .into_iter()
            .map(|n| hit(n.row, n.score))
            .collect();
        let fused = precedent_rank::fuse(
            &[lexical, dense],
            &[1.0, 1.0],
            &precedent_rank::FusionMethod::Rrf { k: RRF_K },
        );
        Ok(fused.into_iter().take(depth).map(|h| h.row).collect())
    }

    /// One feature vector per row of `rows`, in order.
    pub fn extract(
        &self,
        query: &QueryInput,
        rows: &[u32],
    ) -> Result<Vec<[f32; NUM_FEATURES]>, LearnError> {
        let library = &*self.library;
        let depth = library.len().clamp(1, LIST_DEPTH);
        let lexical = library.lexical();
        let bm25: HashMap<u32, (usize, f32)> = lexical
            .search(&query.text, depth)?
            .into_iter()
            .enumerate()
            .map(|(i, (row, s))| (row, (i + 1, s)))
            .collect();
        let bm25_top = bm25.values().map(|v| v.1).fold(0f32, f32::max);
        let expanded_text = precedent_text::expand_query(&query.text);
        let expanded: HashMap<u32, f32> = if expanded_text == query.text {
            bm25.iter().map(|(r, v)| (*r, v.1)).collect()
        } else {
            lexical.search(&expanded_text, depth)?.into_iter().collect()
        };
        let expanded_top = expanded.values().copied().fold(0f32, f32::max);

        let vectors = library_vectors(library, "the learned ranker needs them")?;
        let dense_list = vectors.search(&query.embedding, depth.min(1000))?;
        let dense_top = dense_list.first().map_or(0.0, |n| n.score);
        let dense_rank: HashMap<u32, usize> = dense_list
            .iter()
            .enumerate()
            .map(|(i, n)| (n.row, i + 1))
            .collect();
        let mut wanted = RowSet::with_row_capacity(library.len());
        for &row in rows {
            wanted.insert(row);
        }
        let cosines: HashMap<u32, f32> = vectors
            .search_filtered(&query.embedding, rows.len(), Some(&wanted))?
            .into_iter()
            .map(|n| (n.row, n.score))
            .collect();

        let query_terms = dedup(lexical.query_terms(&query.text));
        let query_bigrams: Vec<String> = query_terms
            .windows(2)
            .map(|w| bigram_key(&w[0], &w[1]))
            .collect();
        let (p_category, weights, sims) = self.query_votes(query, &dense_list, vectors);
        let n_categories = self.memory.categories.len();
        let classifier = self.memory.classifier_for(query.id.as_deref());
        let query_types = self
            .memory
            .cuad_types
            .as_ref()
            .map(|t| t.distribution(&query.embedding));
        let query_type_clarity = query_types
            .as_ref()
            .map_or(0.0, |d| d.iter().copied().fold(0.0, f32::max));

        let mut out = Vec::with_capacity(rows.len());
        for &row in rows {
            let mut f = [0f32; NUM_FEATURES];
            let (b_rank, b_score) = bm25.get(&row).copied().unwrap_or((depth + 1, 0.0));
            f[0] = b_score;
            f[1] = ratio(b_score, bm25_top);
            f[2] = ratio(expanded.get(&row).copied().unwrap_or(0.0), expanded_top);
            let cos = cosines.get(&row).copied().unwrap_or(0.0);
            f[3] = cos;
            f[4] = cos - dense_top;
            let d_rank = dense_rank.get(&row).copied().unwrap_or(1001);
            f[5] = 1.0 / (RRF_K + b_rank as f32) + 1.0 / (RRF_K + d_rank as f32);

            let profile = self.profile(row, vectors)?;
            if !query_terms.is_empty() {
                let hit = query_terms
                    .iter()
                    .filter(|t| profile.terms.contains(t.as_str()))
                    .count();
                f[6] = hit as f32 / query_terms.len() as f32;
            }
            if !query_bigrams.is_empty() {
                let hit = query_bigrams
                    .iter()
                    .filter(|b| profile.bigrams.contains(b.as_str()))
                    .count();
                f[7] = hit as f32 / query_bigrams.len() as f32;
            }
            f[8] = profile.log_terms;

            // Clause-category evidence: centroids, the classifier, and CUAD types.
            if let (Some(d), Some(q)) = (&profile.cuad_types, &query_types) {
                f[22] = q.iter().zip(d).map(|(a, b)| a * b).sum();
                f[23] = query_type_clarity;
            }
            if n_categories > 0 {
                f[21] = p_category
                    .iter()
                    .zip(classifier.probabilities(&profile.vector))
                    .map(|(p, c)| p * c)
                    .sum();
                let cent = &profile.centroid_cos;
                let best = cent.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let exp: Vec<f32> = cent
                    .iter()
                    .map(|c| ((c - best) / CENTROID_TEMPERATURE).exp())
                    .collect();
                let z: f32 = exp.iter().sum();
                f[9] = p_category.iter().zip(&exp).map(|(p, e)| p * e / z).sum();
                f[10] = p_category.iter().zip(cent).map(|(p, c)| p * c).sum();
                f[11] = best;
            }

            // Rating memory: what similar training queries said about this very clause.
            if let Some(rated) = self.by_row.get(&row) {
                let rated: Vec<&(usize, i32)> =
                    rated.iter().filter(|(qi, _)| weights[*qi] > 0.0).collect();
                let mut in_cat = vec![None::<bool>; n_categories];
                let (mut wsum, mut wlabel) = (0f32, 0f32);
                let mut nearest: Option<(f32, i32)> = None;
                let (mut in_sum, mut in_n, mut max_label, mut relevant) = (0f32, 0u32, 0i32, 0u32);
                for &&(qi, label) in &rated {
                    if let Some(c) = self.query_category[qi] {
                        let slot = &mut in_cat[c];
                        *slot = Some(slot.unwrap_or(false) || label >= 1);
                    }
                    let w = weights[qi];
                    wsum += w;
                    wlabel += w * label as f32;
                    let sim = sims[qi].unwrap_or(f32::NEG_INFINITY);
                    if nearest.is_none_or(|(s, _)| sim > s) {
                        nearest = Some((sim, label));
                    }
                    if label >= 1 {
                        in_sum += label as f32;
                        in_n += 1;
                    }
                    if label >= 2 {
                        relevant += 1;
                    }
                    max_label = max_label.max(label);
                }
                f[12] = p_category
                    .iter()
                    .zip(&in_cat)
                    .map(|(p, k)| if *k == Some(true) { *p } else { 0.0 })
                    .sum();
                f[13] = p_category
                    .iter()
                    .zip(&in_cat)
                    .map(|(p, k)| if k.is_none() { *p } else { 0.0 })
                    .sum();
                if wsum > 0.0 {
                    f[14] = wlabel / wsum;
                }
                f[15] = wsum;
                if let Some((sim, label)) = nearest {
                    f[16] = label as f32;
                    f[17] = sim;
                }
                if in_n > 0 {
                    f[18] = in_sum / in_n as f32;
                }
                f[19] = max_label as f32;
                f[20] = (1.0 + relevant as f32).ln();
            } else {
                f[13] = 1.0;
            }
            out.push(f);
        }
        Ok(out)
    }
}

/// The vector a query votes with in the rating memory: its embedding moved towards the mean of
/// the first [`VOTE_FEEDBACK_CLAUSES`] of `nearest`, the library clauses nearest to it
/// (pseudo-relevance feedback, weight 1). Short queries embed noisily ("Insurance", "Covenant
/// Not To Sue"); the clauses they retrieve say more about what they ask, so two queries that
/// retrieve the same clauses vote for each other. Reads no rating, so it leaks nothing into CV.
fn vote_vector(
    embedding: &[f32],
    nearest: &[precedent_vectors::Neighbor],
    vectors: &dyn precedent_vectors::VectorIndex,
) -> Vec<f32> {
    let mut mean = vec![0f32; embedding.len()];
    for hit in nearest.iter().take(VOTE_FEEDBACK_CLAUSES) {
        if let Some(v) = vectors.vector(hit.row) {
            mean.iter_mut().zip(&v).for_each(|(m, x)| *m += x);
        }
    }
    normalize(&mut mean);
    let mut out: Vec<f32> = embedding.iter().zip(&mean).map(|(e, m)| e + m).collect();
    normalize(&mut out);
    out
}

fn ratio(x: f32, top: f32) -> f32 {
    if top > 0.0 {
        x / top
    } else {
        0.0
    }
}

/// Distinct terms in first-seen order (bigrams are taken over this order).
fn dedup(terms: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    terms
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// How many clauses that fit the query a clause that goes against it
/// ([`FeatureExtractor::against_query`]) moves below in the learned ranking.
///
/// A demotion, not a filter: the constraint is read from the query by rules, and a clause can
/// say "except" about something else than the cap the lawyer asked about (in ACORD's ratings, 2
/// of the 6 three-star clauses for "cap on liability without carveouts" contain exception
/// words). Trees cannot learn this from the two or three training queries that exclude
/// something (or ask for one side's version), so it is applied after them. 10 was fixed before
/// measuring; see BENCHMARKS.md for the figures at other values.
pub const AGAINST_QUERY_DEMOTION: usize = 10;

/// [`AGAINST_QUERY_DEMOTION`] as the learned stage applies it when serving, to hybrid's first
/// candidates rather than to a query's judged clauses.
///
/// The demotion counts places in the list it is given. The CV gives it the clauses judged for
/// a query, and found 5, 10 and 20 places alike; serving gives it hybrid's first 500, of which
/// only about 13% of the first 50 places are clauses ACORD judged, so ten served places are
/// one or two judged ones and the rules acted far more weakly than the CV measured. 75 is the
/// CV's ten judged places at that density (10 / 0.133), fixed before it was scored; the
/// pipeline over held-out fold models ranks better with it in every wording
/// (docs/experiments/ranking.md, "The query rules' demotion, counted in the list it is
/// applied to").
pub const SERVED_AGAINST_QUERY_DEMOTION: usize = 75;

/// Moves each flagged row down past the next `places` rows that are *not* flagged: its score
/// becomes just below the score of the `places`-th unflagged row under it, flagged rows keep
/// their order among themselves, and scores keep the ranker's scale for display.
///
/// Counting only unflagged rows matters when the top is full of flagged ones: in "indemnification
/// clauses that do not include hold harmless" nearly every strong indemnity says "hold harmless",
/// and moving each of them ten places down the original list only swapped them among
/// themselves, leaving the first page unchanged.
pub fn demote_against_query(scores: &mut [f32], flagged: &[bool], places: usize) {
    let n = scores.len().min(flagged.len());
    if n == 0 || places == 0 {
        return;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let kept: Vec<usize> = order.iter().copied().filter(|&i| !flagged[i]).collect();
    if kept.is_empty() {
        return;
    }
    // Flagged rows grouped by the unflagged row they land under, in their original order.
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); kept.len()];
    let mut kept_above = 0;
    for &i in &order {
        if flagged[i] {
            groups[(kept_above + places - 1).min(kept.len() - 1)].push(i);
        } else {
            kept_above += 1;
        }
    }
    for (slot, group) in groups.iter().enumerate() {
        let upper = scores[kept[slot]];
        // The room down to the next unflagged row (a small step below the last one or a tie).
        let room = match kept.get(slot + 1) {
            Some(&next) if upper > scores[next] => upper - scores[next],
            Some(_) => 1e-4 * (1.0 + upper.abs()),
            None => 1e-3 * (1.0 + upper.abs()),
        };
        let m = group.len() as f32;
        for (t, &i) in group.iter().enumerate() {
            // Strictly between this unflagged row and the next (ties aside), in order.
            scores[i] = upper - room * (t as f32 + 1.0) / (m + 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::demote_against_query;

    fn ranking(scores: &[f32]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        order
    }

    #[test]
    fn excluded_rows_move_down_the_given_number_of_places() {
        let mut scores = vec![9.0, 8.0, 7.0, 6.0, 5.0, 4.0];
        let excluded = [true, false, false, false, true, false];
        demote_against_query(&mut scores, &excluded, 2);
        // Row 0 lands just under row 2 (two places down); row 4, second to last, goes last.
        assert_eq!(ranking(&scores), vec![1, 2, 0, 3, 5, 4]);
        assert!(scores[0] < 7.0 && scores[0] > 6.0);
    }

    #[test]
    fn flagged_rows_pass_unflagged_ones_not_each_other() {
        // The top four go against the query: each must end below two rows that fit it, and the
        // four keep their order among themselves.
        let mut scores = vec![9.0, 8.5, 8.0, 7.5, 5.0, 4.0, 3.0];
        let flagged = [true, true, true, true, false, false, false];
        demote_against_query(&mut scores, &flagged, 2);
        assert_eq!(ranking(&scores), vec![4, 5, 0, 1, 2, 3, 6]);
        assert!(scores[3] > 3.0);
    }

    #[test]
    fn nothing_moves_without_exclusions_or_places() {
        let original = vec![3.0, 1.0, 2.0];
        let mut scores = original.clone();
        demote_against_query(&mut scores, &[false, false, false], 10);
        assert_eq!(scores, original);
        demote_against_query(&mut scores, &[true, true, true], 0);
        assert_eq!(scores, original);
        demote_against_query(&mut [], &[], 10);
    }
}
