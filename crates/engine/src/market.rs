//! What the market says about a clause type: the library's common formulations of it (clusters
//! of that type's clauses, each with a representative clause and how many contracts use it), and
//! where the lawyer's draft stands among them (closest formulation, how common it is, what the
//! common version has that the draft lacks).
//!
//! Formulations are clusters of *wording*, not of meaning: spherical k-means over the clauses'
//! TF-IDF vectors (the library's own analyzer and IDF). Drafting is about words, two clauses that
//! mean the same but are worded apart are two formulations to choose from, and a cluster's
//! distinctive words say what sets it apart. It needs no clause vectors, so it works on any
//! library, and it is deterministic.

use std::collections::{HashMap, HashSet};

use precedent_contracts::library_docs::{citation, contract_of, split_references};
use precedent_library::Library;
use serde::Serialize;

use crate::EngineError;

/// How a formulation is computed.
#[derive(Debug, Clone)]
pub struct MarketOptions {
    /// Formulations at most: the number shown is the one from 2 to this (and at most a third of
    /// the clauses) whose clusters stand most apart (mean simplified silhouette).
    pub formulations: usize,
    /// Words named per formulation as distinctive, and per draft as missing.
    pub words: usize,
    /// Seed of the k-means start.
    pub seed: u64,
}

/// Formulations a caller may ask for at most: past a dozen, clusters of a type's few dozen
/// clauses split wordings that mean the same.
pub const MAX_FORMULATIONS: usize = 12;

impl MarketOptions {
    /// The options for `formulations` asked by a caller, refused outside `1..=`[`MAX_FORMULATIONS`]
    /// with the message both faces show.
    pub fn asking(formulations: usize) -> Result<MarketOptions, String> {
        if !(1..=MAX_FORMULATIONS).contains(&formulations) {
            return Err(format!(
                "formulations must be 1..={MAX_FORMULATIONS}, got {formulations}"
            ));
        }
        Ok(MarketOptions {
            formulations,
            ..MarketOptions::default()
        })
    }
}

impl Default for MarketOptions {
    fn default() -> Self {
        MarketOptions {
            formulations: 5,
            words: 6,
            seed: 17,
        }
    }
}

/// A drafting form a lawyer asks about when choosing a formulation. Read from the words, as
/// general drafting vocabulary (not tuned on any benchmark).
const FORMS: &[(&str, &[&str])] = &[
    (
        "mutual",
        &[
            "either party",
            "each party",
            "neither party",
            "both parties",
            "mutual",
            "mutually",
        ],
    ),
    (
        "carve-out",
        &[
            "except",
            "provided that",
            "provided, however",
            "notwithstanding",
            "other than",
            "excluding",
            "shall not apply to",
        ],
    ),
];

/// BM25 IDF under which a word is too common in the library to tell formulations apart (a word
/// in about a third of the clauses or more).
const MIN_TELLING_IDF: f32 = 1.0;

/// One common formulation of the clause type.
#[derive(Debug, Clone, Serialize)]
pub struct Formulation {
    /// Clauses worded this way.
    pub clauses: usize,
    /// Distinct contracts among them.
    pub contracts: usize,
    /// Share of the type's clauses (0..1).
    pub share: f32,
    /// The clause closest to the formulation's centre.
    pub representative: Representative,
    /// Words most of these clauses use and the type's other clauses use less, most telling first.
    pub distinctive_words: Vec<String>,
    /// Per drafting form ("mutual", "carve-out"), the share of these clauses written in it.
    pub forms: Vec<FormShare>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Representative {
    pub id: String,
    pub citation: Option<String>,
    /// The clause's own text (its referenced sections left out).
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FormShare {
    pub form: &'static str,
    pub share: f32,
}

/// Where a draft stands.
#[derive(Debug, Clone, Serialize)]
pub struct DraftStanding {
    /// Index into [`Market::formulations`] of the closest formulation.
    pub closest: usize,
    /// Cosine between the draft's words and that formulation's centre (0..1).
    pub similarity: f32,
    /// How common that formulation is (its share of the type's clauses).
    pub share: f32,
    /// Words most clauses of that formulation use (at least 60%) that the draft does not.
    pub lacks: Vec<String>,
    /// The drafting forms the draft is written in.
    pub forms: Vec<&'static str>,
}

/// The market's formulations of one clause type in one library.
#[derive(Debug, Clone, Serialize)]
pub struct Market {
    pub clause_type: String,
    pub clauses: usize,
    pub contracts: usize,
    /// Most common first.
    pub formulations: Vec<Formulation>,
    pub draft: Option<DraftStanding>,
}

/// One clause of the type, as clustering sees it.
struct Item {
    row: u32,
    contract: String,
    /// Sorted (term index, weight), L2-normalised.
    vector: Vec<(u32, f32)>,
    terms: HashSet<u32>,
    forms: Vec<bool>,
}

/// The formulations of `clause_type` (a canonical CUAD name, as
/// [`precedent_cuad::clause_type`] gives it) among the clauses the library stored that type for,
/// and where `draft` stands if given.
pub fn market(
    library: &Library,
    clause_type: &str,
    draft: Option<&str>,
    options: &MarketOptions,
) -> Result<Market, EngineError> {
    let lexical = library.lexical();
    let analyzer = lexical.analyzer();
    let mut vocabulary: HashMap<String, u32> = HashMap::new();
    let mut surface: Vec<String> = Vec::new();
    let mut idf: Vec<f32> = Vec::new();
    let mut term_index = |term: &str, shown: &str| -> u32 {
        if let Some(&i) = vocabulary.get(term) {
            return i;
        }
        let i = surface.len() as u32;
        vocabulary.insert(term.to_owned(), i);
        surface.push(shown.to_lowercase());
        idf.push(lexical.idf(term));
        i
    };
    let mut items: Vec<Item> = Vec::new();
    for row in 0..library.len() as u32 {
        let doc = library.store().clause(row)?;
        let has_type = doc
            .metadata
            .get("clause_types")
            .and_then(|t| t.as_array())
            .is_some_and(|types| {
                types.iter().any(|t| {
                    t.get("category")
                        .and_then(|c| c.as_str())
                        .is_some_and(|c| c.eq_ignore_ascii_case(clause_type))
                })
            });
        if !has_type {
            continue;
        }
        let (own, _) = split_references(&doc.text, &doc.metadata);
        let mut counts: HashMap<u32, f32> = HashMap::new();
        analyzer.for_each_term(own, |t| {
            let shown = own.get(t.start..t.end).unwrap_or(&t.text);
            *counts.entry(term_index(&t.text, shown)).or_default() += 1.0;
        });
        let contract = doc
            .metadata
            .get("contract")
            .and_then(|c| c.as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| contract_of(&doc.id).to_owned());
        items.push(Item {
            row,
            contract,
            terms: counts.keys().copied().collect(),
            vector: counts.into_iter().collect(),
            forms: forms_of(own),
        });
    }
    // TF-IDF with sublinear term frequency, unit length.
    for item in &mut items {
        for (t, w) in item.vector.iter_mut() {
            *w = (1.0 + w.ln()) * idf[*t as usize];
        }
        normalize_sparse(&mut item.vector);
        item.vector.sort_unstable_by_key(|(t, _)| *t);
    }
    let dim = surface.len();
    let n = items.len();
    let all_contracts: HashSet<&str> = items.iter().map(|i| i.contract.as_str()).collect();
    let mut market = Market {
        clause_type: clause_type.to_owned(),
        clauses: n,
        contracts: all_contracts.len(),
        formulations: Vec::new(),
        draft: None,
    };
    if n == 0 {
        return Ok(market);
    }
    let most = options.formulations.clamp(1, (n / 3).max(1));
    let (assignment, centroids) = (2..=most)
        .map(|k| {
            let (assignment, centroids) = spherical_kmeans(&items, dim, k, options.seed);
            let apart = silhouette(&items, &assignment, &centroids);
            (apart, assignment, centroids)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, a, c)| (a, c))
        .unwrap_or_else(|| spherical_kmeans(&items, dim, 1, options.seed));
    // Document frequency of each term over the type, for what sets a formulation apart.
    let mut df_all = vec![0u32; dim];
    for item in &items {
        for &t in &item.terms {
            df_all[t as usize] += 1;
        }
    }
    // Each formulation's clauses, most common formulation first.
    let mut members: Vec<Vec<&Item>> = vec![Vec::new(); centroids.len()];
    for (item, &c) in items.iter().zip(&assignment) {
        members[c].push(item);
    }
    let mut order: Vec<usize> = (0..centroids.len()).collect();
    order.sort_by_key(|&c| std::cmp::Reverse(members[c].len()));
    // Words worth naming: not numbers, and not so common in the library that they say nothing
    // ("shall", "any": in about a third of all clauses or more).
    let telling =
        |t: usize| idf[t] >= MIN_TELLING_IDF && !surface[t].chars().all(|c| c.is_ascii_digit());
    let mut kept_centroids: Vec<&Vec<f32>> = Vec::new();
    let mut cluster_df: Vec<Vec<u32>> = Vec::new();
    for &c in &order {
        let inside = &members[c];
        if inside.is_empty() {
            continue;
        }
        let size = inside.len();
        let mut df = vec![0u32; dim];
        for item in inside {
            for &t in &item.terms {
                df[t as usize] += 1;
            }
        }
        let mut distinctive: Vec<(f32, u32)> = (0..dim as u32)
            .filter(|&t| telling(t as usize))
            .filter_map(|t| {
                let inner = df[t as usize] as f32 / size as f32;
                let outer = df_all[t as usize] as f32 / n as f32;
                (inner >= 0.5 && inner > outer).then_some((inner - outer, t))
            })
            .collect();
        distinctive.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let representative = inside
            .iter()
            .max_by(|a, b| {
                sparse_dot(&a.vector, &centroids[c])
                    .total_cmp(&sparse_dot(&b.vector, &centroids[c]))
                    .then(b.row.cmp(&a.row))
            })
            .map(|i| i.row)
            .unwrap_or(inside[0].row);
        let doc = library.store().clause(representative)?;
        let (own, _) = split_references(&doc.text, &doc.metadata);
        let contracts: HashSet<&str> = inside.iter().map(|i| i.contract.as_str()).collect();
        market.formulations.push(Formulation {
            clauses: size,
            contracts: contracts.len(),
            share: size as f32 / n as f32,
            representative: Representative {
                id: doc.id.clone(),
                citation: citation(&doc.metadata),
                text: own.to_owned(),
            },
            distinctive_words: distinctive
                .iter()
                .take(options.words)
                .map(|(_, t)| surface[*t as usize].clone())
                .collect(),
            forms: FORMS
                .iter()
                .enumerate()
                .map(|(f, (form, _))| FormShare {
                    form,
                    share: inside.iter().filter(|i| i.forms[f]).count() as f32 / size as f32,
                })
                .collect(),
        });
        kept_centroids.push(&centroids[c]);
        cluster_df.push(df);
    }
    if let Some(draft) = draft {
        let mut counts: HashMap<u32, f32> = HashMap::new();
        let mut draft_terms: HashSet<u32> = HashSet::new();
        analyzer.for_each_term(draft, |t| {
            if let Some(&i) = vocabulary.get(&t.text) {
                *counts.entry(i).or_default() += 1.0;
                draft_terms.insert(i);
            }
        });
        let mut vector: Vec<(u32, f32)> = counts
            .into_iter()
            .map(|(t, c)| (t, (1.0 + c.ln()) * idf[t as usize]))
            .collect();
        normalize_sparse(&mut vector);
        let best = kept_centroids
            .iter()
            .enumerate()
            .map(|(i, c)| (i, sparse_dot(&vector, c)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        if let Some((closest, similarity)) = best {
            let size = market.formulations[closest].clauses as f32;
            let mut lacks: Vec<(u32, u32)> = cluster_df[closest]
                .iter()
                .enumerate()
                .filter(|(t, &d)| {
                    d as f32 >= 0.6 * size && !draft_terms.contains(&(*t as u32)) && telling(*t)
                })
                .map(|(t, &d)| (d, t as u32))
                .collect();
            lacks.sort_by(|a, b| {
                b.0.cmp(&a.0)
                    .then(idf[b.1 as usize].total_cmp(&idf[a.1 as usize]))
            });
            let draft_forms = forms_of(draft);
            market.draft = Some(DraftStanding {
                closest,
                similarity: similarity.max(0.0),
                share: market.formulations[closest].share,
                lacks: lacks
                    .iter()
                    .take(options.words)
                    .map(|(_, t)| surface[*t as usize].clone())
                    .collect(),
                forms: FORMS
                    .iter()
                    .zip(draft_forms)
                    .filter(|(_, has)| *has)
                    .map(|((form, _), _)| *form)
                    .collect(),
            });
        }
    }
    Ok(market)
}

/// Mean simplified silhouette of a clustering (cosine distances to centroids): how much nearer
/// each clause is to its own formulation's centre than to the next one, from -1 to 1.
fn silhouette(items: &[Item], assignment: &[usize], centroids: &[Vec<f32>]) -> f32 {
    if centroids.len() < 2 || items.is_empty() {
        return 0.0;
    }
    let total: f32 = items
        .iter()
        .zip(assignment)
        .map(|(item, &own)| {
            let a = 1.0 - sparse_dot(&item.vector, &centroids[own]);
            let b = centroids
                .iter()
                .enumerate()
                .filter(|(c, _)| *c != own)
                .map(|(_, c)| 1.0 - sparse_dot(&item.vector, c))
                .fold(f32::MAX, f32::min);
            let scale = a.max(b);
            if scale > 0.0 {
                (b - a) / scale
            } else {
                0.0
            }
        })
        .sum();
    total / items.len() as f32
}

/// Which [`FORMS`] a text is written in.
fn forms_of(text: &str) -> Vec<bool> {
    let lower = format!(
        " {} ",
        text.to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    );
    FORMS
        .iter()
        .map(|(_, phrases)| {
            phrases.iter().any(|p| {
                lower.match_indices(p).any(|(at, _)| {
                    let before = lower[..at].chars().next_back();
                    let after = lower[at + p.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(char::is_alphanumeric)
                })
            })
        })
        .collect()
}

fn normalize_sparse(v: &mut [(u32, f32)]) {
    let norm = v.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|(_, w)| *w /= norm);
    }
}

fn sparse_dot(v: &[(u32, f32)], dense: &[f32]) -> f32 {
    v.iter()
        .map(|&(t, w)| w * dense.get(t as usize).copied().unwrap_or(0.0))
        .sum()
}

/// Spherical k-means (cosine) with a k-means++ start from a fixed seed: the assignment of each
/// item and the unit centroids.
fn spherical_kmeans(
    items: &[Item],
    dim: usize,
    k: usize,
    seed: u64,
) -> (Vec<usize>, Vec<Vec<f32>>) {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut uniform = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let dense = |item: &Item| {
        let mut v = vec![0.0f32; dim];
        for &(t, w) in &item.vector {
            v[t as usize] = w;
        }
        v
    };
    let mut centroids: Vec<Vec<f32>> = vec![dense(
        &items[(uniform() * items.len() as f64) as usize % items.len()],
    )];
    while centroids.len() < k {
        // Next start: drawn with probability proportional to its distance from the nearest.
        let distances: Vec<f64> = items
            .iter()
            .map(|i| {
                let best = centroids
                    .iter()
                    .map(|c| sparse_dot(&i.vector, c))
                    .fold(f32::MIN, f32::max);
                f64::from((1.0 - best).max(0.0))
            })
            .collect();
        let total: f64 = distances.iter().sum();
        if total <= 0.0 {
            break;
        }
        let mut target = uniform() * total;
        let mut pick = items.len() - 1;
        for (i, d) in distances.iter().enumerate() {
            if target < *d {
                pick = i;
                break;
            }
            target -= d;
        }
        centroids.push(dense(&items[pick]));
    }
    let mut assignment = vec![0usize; items.len()];
    for _ in 0..25 {
        let mut changed = false;
        for (i, item) in items.iter().enumerate() {
            let best = centroids
                .iter()
                .enumerate()
                .map(|(c, centroid)| (c, sparse_dot(&item.vector, centroid)))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .map_or(0, |(c, _)| c);
            if assignment[i] != best {
                assignment[i] = best;
                changed = true;
            }
        }
        let mut sums = vec![vec![0.0f32; dim]; centroids.len()];
        for (item, &c) in items.iter().zip(&assignment) {
            for &(t, w) in &item.vector {
                sums[c][t as usize] += w;
            }
        }
        for (c, sum) in sums.into_iter().enumerate() {
            let norm = sum.iter().map(|w| w * w).sum::<f32>().sqrt();
            if norm > 0.0 {
                centroids[c] = sum.into_iter().map(|w| w / norm).collect();
            }
        }
        if !changed {
            break;
        }
    }
    (assignment, centroids)
}

#[cfg(test)]
mod tests {
    use precedent_formats::CorpusDoc;
    use precedent_library::{BuildOptions, NoProgress};
    use serde_json::json;

    use super::*;

    fn clause(id: &str, contract: &str, text: &str, category: &str) -> CorpusDoc {
        CorpusDoc {
            id: id.to_owned(),
            title: None,
            text: text.to_owned(),
            metadata: json!({
                "contract": contract,
                "clause_types": [{"category": category, "confidence": 0.9}],
            }),
        }
    }

    #[test]
    fn formulations_asked_outside_one_to_twelve_are_refused() {
        for bad in [0, MAX_FORMULATIONS + 1, 50] {
            let refused = MarketOptions::asking(bad).expect_err("out of bounds");
            assert!(refused.contains("formulations must be 1..=12"), "{refused}");
        }
        for good in [1, 5, MAX_FORMULATIONS] {
            assert_eq!(
                MarketOptions::asking(good).expect("in bounds").formulations,
                good
            );
        }
    }

    /// Two wordings of a liability cap across contracts (a fees-paid cap, mutual, with a
    /// carve-out; a fixed-sum cap, one-sided), and a clause of another type that must stay out.
    #[test]
    fn formulations_group_the_wordings_and_place_a_draft() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut docs = Vec::new();
        for i in 0..6 {
            docs.push(clause(
                &format!("fees{i}#1"),
                &format!("fees{i}"),
                &format!("Neither party's aggregate liability shall exceed the fees paid in the twelve months preceding the claim, except for breach of confidentiality. Variant {i}."),
                "Cap on Liability",
            ));
            docs.push(clause(
                &format!("sum{i}#1"),
                &format!("sum{i}"),
                &format!("Supplier's total liability is limited to one million dollars (USD 1,000,000) in the aggregate. Schedule {i}."),
                "Cap on Liability",
            ));
        }
        // The rest of a library: clauses of other types, so that the cap's words are rare.
        for i in 0..20 {
            docs.push(clause(
                &format!("law{i}#1"),
                &format!("law{i}"),
                &format!("This Agreement is governed by the laws of New York. Clause {i}."),
                "Governing Law",
            ));
        }
        let library = Library::build(
            dir.path(),
            &docs,
            &BuildOptions::default(),
            None,
            &NoProgress,
        )
        .expect("build");
        let options = MarketOptions::default();
        let draft = "Supplier's total liability shall not exceed the fees paid in the twelve months before the claim.";
        let market = market(&library, "Cap on Liability", Some(draft), &options).expect("market");
        assert_eq!((market.clauses, market.contracts), (12, 12));
        assert_eq!(market.formulations.len(), 2);
        let fees = market
            .formulations
            .iter()
            .position(|f| f.representative.text.contains("fees paid"))
            .expect("the fees-paid formulation");
        let sum = 1 - fees;
        assert_eq!(market.formulations[fees].clauses, 6);
        assert_eq!(market.formulations[fees].contracts, 6);
        assert!((market.formulations[fees].share - 0.5).abs() < 1e-6);
        assert!(market.formulations[sum]
            .representative
            .text
            .contains("one million"));
        assert!(market.formulations[fees]
            .distinctive_words
            .iter()
            .any(|w| w == "fees"));
        assert!(market.formulations[sum]
            .distinctive_words
            .iter()
            .any(|w| w == "million"));
        let forms = |f: &Formulation| f.forms.iter().map(|s| s.share).collect::<Vec<_>>();
        assert_eq!(forms(&market.formulations[fees]), vec![1.0, 1.0]);
        assert_eq!(forms(&market.formulations[sum]), vec![0.0, 0.0]);
        let standing = market.draft.expect("the draft's standing");
        assert_eq!(standing.closest, fees);
        assert!(standing.similarity > 0.4, "{}", standing.similarity);
        // The common version is mutual and carves out confidentiality; the draft is neither.
        assert!(
            standing.lacks.iter().any(|w| w == "confidentiality"),
            "{:?}",
            standing.lacks
        );
        assert!(
            standing.lacks.iter().any(|w| w == "neither"),
            "{:?}",
            standing.lacks
        );
        assert!(standing.forms.is_empty(), "{:?}", standing.forms);
        // A type no clause has: an empty market, not an error.
        let none = super::market(&library, "Non-Compete", None, &options).expect("market");
        assert_eq!((none.clauses, none.formulations.len()), (0, 0));
    }

    #[test]
    fn forms_are_read_as_whole_phrases() {
        assert_eq!(
            forms_of("Neither party shall be liable, except for fraud."),
            vec![true, true]
        );
        assert_eq!(
            forms_of("Licensee shall indemnify Licensor. Exceptional circumstances apply."),
            vec![false, false]
        );
    }
}
