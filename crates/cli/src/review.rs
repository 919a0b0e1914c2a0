//! `precedent review FILE|FOLDER...`: the CUAD clause types found in each contract, with
//! confidence, section and character span.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use precedent_contracts::meta::ContractMeta;
use precedent_contracts::{segment_text, Clause, Format};
use precedent_cuad::cache::{
    default_cache, default_classifier_cache, find_cuad_dir, load_or_train,
    load_or_train_classifier, load_or_train_classifier_with_view,
};
use precedent_cuad::clause_classifier::{ClassifierOptions, ClauseClassifier};
use precedent_cuad::dense::{SentenceEmbedder, SENTENCE_MAX_TOKENS};
use precedent_cuad::eval::Selection;
use precedent_cuad::{ClauseTyper, TrainOptions, CATEGORIES};
use precedent_models::{EmbedOptions, Embedder};
use precedent_unfair::document::{looks_like_terms_of_service, TosReview};
use precedent_unfair::UnfairModel;
use serde::Serialize;

use crate::eval_unfair_tos::UnfairArgs;

/// Where the clause typer and the single-clause classifier its second stage reads come from
/// (shared by review, serve, ingest and eval-legalbench).
#[derive(Args, Clone)]
pub struct TyperArgs {
    /// A typer model file (as cached under .precedent/cache/typer); by default the cached model
    /// trained from --cuad, trained now (about a minute) if missing.
    #[arg(long)]
    pub typer: Option<PathBuf>,
    /// CUAD folder to train the typer from (master_clauses.csv, full_contract_txt/); default
    /// $PRECEDENT_CUAD_DIR or shared/data/cuad beside the working directory, the executable,
    /// or an ancestor of either.
    #[arg(long)]
    pub cuad: Option<PathBuf>,
    /// Cache directory for trained typers (default: an existing .precedent/cache/typer above
    /// the working directory or the executable, else the executable's checkout's).
    #[arg(long, default_value_os_t = default_cache())]
    pub typer_cache: PathBuf,
    /// A single-clause classifier model file (as cached under --classifier-cache); by default
    /// the cached model trained from --cuad, trained now (about a minute) if missing. The
    /// typer's second stage reads its scores of every candidate.
    #[arg(long)]
    pub classifier: Option<PathBuf>,
    /// Cache directory for trained clause classifiers (default: beside the typer cache).
    #[arg(long, default_value_os_t = default_classifier_cache())]
    pub classifier_cache: PathBuf,
    /// The second stage's classifier once loaded, shared by every clone of these arguments: a
    /// server's review typer and `/v1/classify`'s type gate read the same 44 MB model, loaded
    /// once ([`Self::second_stage_classifier`]).
    #[arg(skip)]
    second_stage: SharedClassifier,
}

/// A model loaded at most once across clones ([`TyperArgs::second_stage_classifier`]). A failed
/// load is not remembered: the next caller tries again and gets its own error.
#[derive(Clone, Default)]
struct SharedClassifier(Arc<std::sync::Mutex<Option<Arc<ClauseClassifier>>>>);

/// MiniLM as the typer's sentence embedder: the sentence-embedding view of `review` (and of
/// `eval-cuad --dense`).
pub struct MiniLmSentences(pub Embedder);

impl SentenceEmbedder for MiniLmSentences {
    fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let options = EmbedOptions {
            max_tokens: Some(SENTENCE_MAX_TOKENS),
            ..EmbedOptions::default()
        };
        Ok(self.0.embed_with(texts, &options, &|_| {})?)
    }

    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn model_id(&self) -> &str {
        self.0.model_id()
    }
}

impl TyperArgs {
    /// The typer with the clause classifier its second stage reads: word features only (what
    /// `ingest` types clauses with, and `review --fast`).
    pub fn load(&self) -> Result<ClauseTyper> {
        let classifier = self.second_stage_classifier()?;
        Ok(self
            .load_first_stage()?
            .with_clause_classifier(Some(classifier)))
    }

    /// The typer a review uses: [`Self::load`] plus, unless `fast`, the sentence-embedding
    /// view (MiniLM over every sentence of the contract; ~1.5 s more for a median CUAD
    /// contract). Without MiniLM the review goes on with word features, saying so once.
    pub fn load_for_review(&self, fast: bool) -> Result<ClauseTyper> {
        let mut typer = self.load()?;
        if fast {
            return Ok(typer);
        }
        let attached = Embedder::load_default()
            .map_err(anyhow::Error::from)
            .and_then(|e| typer.set_sentence_embedder(Arc::new(MiniLmSentences(e))));
        if let Err(e) = attached {
            eprintln!(
                "warning: reviewing with word features only (as --fast): the sentence-embedding view is unavailable: {e:#}"
            );
        }
        Ok(typer)
    }

    fn cuad_dir(&self, what: &str, flag: &str) -> Result<PathBuf> {
        match &self.cuad {
            Some(d) => Ok(d.clone()),
            None => find_cuad_dir().with_context(|| {
                format!("no CUAD data to train the {what} from: pass --cuad DIR or {flag} FILE")
            }),
        }
    }

    /// The single-clause classifier: --classifier, else the cached one trained from --cuad
    /// with `options`.
    pub fn load_classifier(&self, options: &ClassifierOptions) -> Result<ClauseClassifier> {
        if let Some(path) = &self.classifier {
            return ClauseClassifier::load(path);
        }
        let dir = self.cuad_dir("clause classifier", "--classifier")?;
        load_or_train_classifier(&dir, &self.classifier_cache, options, || {
            eprintln!(
                "training the clause classifier from {} (once; cached in {})",
                dir.display(),
                self.classifier_cache.display()
            )
        })
        .with_context(|| format!("training the clause classifier from {}", dir.display()))
    }

    /// These arguments with another `--classifier`: a clone that does not share the loaded
    /// second-stage classifier, which came from the other one.
    pub fn with_classifier(&self, classifier: Option<PathBuf>) -> TyperArgs {
        TyperArgs {
            classifier,
            second_stage: SharedClassifier::default(),
            ..self.clone()
        }
    }

    /// The classifier the typer's second stage reads ([`Self::load_classifier`] with
    /// [`ClassifierOptions::for_second_stage`]), loaded once for these arguments and their
    /// clones. The lock is held while loading (or training, the first time), so concurrent first
    /// users wait for one load instead of each loading a copy.
    pub fn second_stage_classifier(&self) -> Result<Arc<ClauseClassifier>> {
        let mut slot = self
            .second_stage
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(model) = slot.as_ref() {
            return Ok(model.clone());
        }
        let model = Arc::new(self.load_classifier(&ClassifierOptions::for_second_stage())?);
        *slot = Some(model.clone());
        Ok(model)
    }

    /// Attaches the type gate to the classify `model`: the second stage's classifier
    /// ([`Self::second_stage_classifier`]), whose agreement a type needs to be marked likely.
    /// When it cannot be loaded (a classify model passed as a file needs no CUAD data, the gate
    /// does when not cached), says why and goes on without it.
    pub fn attach_type_gate(&self, model: &mut ClauseClassifier) -> Result<()> {
        match self.second_stage_classifier() {
            Ok(gate) => model.set_type_gate(gate),
            Err(e) => {
                eprintln!(
                    "warning: no type gate ({e:#}); types at 0.5 and up are marked likely without it"
                );
                Ok(())
            }
        }
    }

    /// The classifier `eval-legalbench` answers with: --classifier (with MiniLM attached when
    /// the file has a sentence view), else the cached one of
    /// [`ClassifierOptions::for_legalbench`], words plus the MiniLM view. With `words_only`, or
    /// without MiniLM (saying so), the words-only one ([`ClassifierOptions::default`]).
    pub fn load_legalbench_classifier(&self, words_only: bool) -> Result<ClauseClassifier> {
        if let Some(path) = &self.classifier {
            let mut model = ClauseClassifier::load(path)?;
            if model.has_view() {
                let embedder = Embedder::load_default().with_context(|| {
                    format!(
                        "{} reads sentence embeddings, and MiniLM is unavailable",
                        path.display()
                    )
                })?;
                model.set_sentence_embedder(Arc::new(MiniLmSentences(embedder)))?;
            }
            return Ok(model);
        }
        let (options, embedder) = legalbench_options(words_only);
        let dir = self.cuad_dir("clause classifier", "--classifier")?;
        load_or_train_classifier_with_view(&dir, &self.classifier_cache, &options, embedder, || {
            eprintln!(
                "training the clause classifier from {} (once, about {}; cached in {})",
                dir.display(),
                if options.reads_vectors() {
                    "3 minutes with MiniLM"
                } else {
                    "a minute"
                },
                self.classifier_cache.display()
            )
        })
        .with_context(|| format!("training the clause classifier from {}", dir.display()))
    }

    /// The typer without the clause classifier: first-stage confidences only (what a clause
    /// on its own gets anyway, [`ClauseTyper::classify_scores`]).
    pub fn load_first_stage(&self) -> Result<ClauseTyper> {
        if let Some(path) = &self.typer {
            return ClauseTyper::load(path);
        }
        let dir = self.cuad_dir("clause typer", "--typer")?;
        load_or_train(&dir, &self.typer_cache, &TrainOptions::default(), || {
            eprintln!(
                "training the clause typer from {} (once; cached in {})",
                dir.display(),
                self.typer_cache.display()
            )
        })
        .with_context(|| format!("training the clause typer from {}", dir.display()))
    }
}

/// The LegalBench classifier's options and the MiniLM embedder its view reads, or the word-only
/// options when asked (`words_only`) or (with a warning) when MiniLM cannot be loaded.
pub fn legalbench_options(
    words_only: bool,
) -> (ClassifierOptions, Option<Arc<dyn SentenceEmbedder>>) {
    if words_only {
        return (ClassifierOptions::default(), None);
    }
    match Embedder::load_default() {
        Ok(e) => (
            ClassifierOptions::for_legalbench(),
            Some(Arc::new(MiniLmSentences(e))),
        ),
        Err(e) => {
            eprintln!(
                "warning: classifying with word features only: the sentence-embedding view is unavailable: {e}"
            );
            (ClassifierOptions::default(), None)
        }
    }
}

#[derive(Args)]
pub struct ReviewArgs {
    /// Contract files (TXT, HTML, PDF, DOCX), or folders: every contract file under a folder
    /// is reviewed (recursively, in path order; other file types there are skipped).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// One JSON object per file and line: {"contract", "metadata": {"document_type", "parties",
    /// "date", "governing_law", "title"}, "findings": [{"category", "text", "start", "end",
    /// "section", "confidence"}]}, with offsets in characters of the extracted text.
    #[arg(long)]
    pub json: bool,
    /// One CSV table for all files, for due diligence over a folder: a row per contract with its
    /// title, date, governing law and parties, then a column per CUAD category holding the
    /// confidence of its best finding (details: --json).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Candidates per category in the JSON, most confident first (0 = every candidate).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Text output: show findings at or above this confidence.
    #[arg(long, default_value_t = 0.5)]
    pub threshold: f32,
    /// Word features only: skip embedding the contract's sentences with MiniLM (several times
    /// faster; about 1 point lower precision at 80% recall in CUAD's cross-validation).
    #[arg(long)]
    pub fast: bool,
    /// What the documents are: contracts get the CUAD review, terms of service the unfair-term
    /// review (LexGLUE's UNFAIR-ToS types per sentence); auto decides per document by its words
    /// (`precedent_unfair::document::looks_like_terms_of_service`).
    #[arg(long, value_enum, default_value_t = DocumentKind::Auto)]
    pub kind: DocumentKind,
    #[command(flatten)]
    pub typer: TyperArgs,
    #[command(flatten)]
    pub unfair: UnfairArgs,
}

/// The kind of document `review` treats a file as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DocumentKind {
    /// Terms of service when the text reads like them, else a contract.
    Auto,
    /// A negotiated contract: CUAD clause types.
    Contract,
    /// Online terms of service: potentially unfair terms (UNFAIR-ToS).
    Tos,
}

/// The review of a terms-of-service document (`review --json` line).
#[derive(Serialize)]
pub struct TosDocumentReview {
    pub contract: String,
    /// Always "tos", telling these lines from the contract reviews' in one output.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ocr: bool,
    #[serde(flatten)]
    pub review: TosReview,
}

#[derive(Serialize)]
pub struct Finding {
    pub category: &'static str,
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub section: Option<String>,
    pub confidence: f32,
}

#[derive(Serialize)]
pub struct ContractReview {
    pub contract: String,
    /// What the contract says about itself (title, document type, parties, date, governing
    /// law; [`precedent_contracts::meta`]); filled by `review`, not by the server's reviewer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ContractMeta>,
    /// Present (and true) only when the text was recognised by OCR from a scanned PDF.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ocr: bool,
    pub findings: Vec<Finding>,
}

/// Reads a contract (TXT, EDGAR HTML, PDF by its text layer or by OCR, DOCX).
pub fn read_contract(path: &Path) -> Result<precedent_contracts::Document> {
    Ok(precedent_contracts::read_path(path)?)
}

/// The section a clause sits in, as a lawyer cites it (the one rule of citations,
/// [`precedent_contracts::library_docs::section_reference`]): `["16", "B"]` → `16.B`.
fn section_of(clause: &Clause) -> Option<String> {
    precedent_contracts::library_docs::section_reference(&clause.path, clause.number.as_deref())
}

/// For a character offset, the section of the innermost clause containing it.
struct Sections {
    clauses: Vec<(usize, usize, Option<String>)>,
}

impl Sections {
    fn new(text: &str) -> Self {
        Sections {
            clauses: segment_text(text)
                .iter()
                .map(|c| (c.start, c.end, section_of(c)))
                .collect(),
        }
    }

    fn at(&self, offset: usize) -> Option<String> {
        self.clauses
            .iter()
            .filter(|(s, e, _)| *s <= offset && offset < *e)
            .min_by_key(|(s, e, _)| e - s)
            .and_then(|(_, _, section)| section.clone())
    }
}

/// Reviews one contract text: per category, the `top` most confident findings (0 = all), as
/// CUAD's evaluation selects them ([`ClauseTyper::findings`]: near-duplicate spans dropped, and a
/// finding that repeats what a more confident one already says scored low).
pub fn review_text(typer: &ClauseTyper, contract: &str, text: &str, top: usize) -> ContractReview {
    let selection = Selection {
        top_n: if top == 0 { usize::MAX } else { top },
        ..Selection::default()
    };
    let (candidates, chosen) = typer.findings(text, &selection);
    let chars = precedent_text::char_offsets(text);
    let sections = Sections::new(text);
    let mut findings = Vec::new();
    for (category, chosen) in CATEGORIES.iter().zip(chosen) {
        let mut ranked: Vec<(usize, f32)> = chosen
            .candidates
            .into_iter()
            .zip(chosen.confidence)
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(candidates[a.0].span.start.cmp(&candidates[b.0].span.start))
        });
        for (i, confidence) in ranked {
            let span = candidates[i].span.clone();
            findings.push(Finding {
                category,
                text: text[span.clone()].to_owned(),
                start: chars[span.start],
                end: chars[span.end],
                section: sections.at(chars[span.start]),
                confidence,
            });
        }
    }
    ContractReview {
        contract: contract.to_owned(),
        metadata: None,
        ocr: false,
        findings,
    }
}

fn print_text(review: &ContractReview, threshold: f32) {
    if review.ocr {
        println!("{} (text recognised by OCR)", review.contract);
    } else {
        println!("{}", review.contract);
    }
    if let Some(about) = review.metadata.as_ref().and_then(describe) {
        println!("  {about}");
    }
    let mut any = false;
    for category in CATEGORIES {
        let mut shown: Vec<(usize, usize)> = Vec::new();
        for f in review
            .findings
            .iter()
            .filter(|f| f.category == category && f.confidence >= threshold)
        {
            if shown.len() >= 3 || shown.iter().any(|&(s, e)| f.start < e && s < f.end) {
                continue;
            }
            if shown.is_empty() {
                println!("  {category}");
            }
            shown.push((f.start, f.end));
            any = true;
            let mut excerpt: String = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
            if excerpt.chars().count() > 160 {
                excerpt = excerpt.chars().take(157).collect::<String>() + "...";
            }
            let section = f
                .section
                .as_deref()
                .map(|s| format!(" §{s}"))
                .unwrap_or_default();
            println!(
                "    {:.2}{section} [{}..{}] {excerpt}",
                f.confidence, f.start, f.end
            );
        }
    }
    if !any {
        println!("  (no clause type at confidence >= {threshold})");
    }
}

/// The text output of a terms-of-service review: the checklist of the eight types, then each
/// flagged sentence with its types, confidence, sentence number and character span.
fn print_tos(review: &TosDocumentReview) {
    let ocr = if review.ocr {
        " (text recognised by OCR)"
    } else {
        ""
    };
    let r = &review.review;
    println!(
        "{}{ocr}: terms of service, {} of {} sentences flagged as potentially unfair",
        review.contract,
        r.flagged.len(),
        r.sentences
    );
    for item in &r.checklist {
        if item.present {
            println!(
                "  [x] {:<24} {} sentence{}, best {:.2}",
                item.name,
                item.sentences,
                if item.sentences == 1 { "" } else { "s" },
                item.best_confidence
            );
        } else {
            println!("  [ ] {}", item.name);
        }
    }
    for f in &r.flagged {
        let types: Vec<String> = f
            .types
            .iter()
            .map(|t| format!("{} {:.2}", t.name, t.confidence))
            .collect();
        let mut excerpt: String = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
        if excerpt.chars().count() > 200 {
            excerpt = excerpt.chars().take(197).collect::<String>() + "...";
        }
        println!(
            "  sentence {} [{}..{}] {}\n      {excerpt}",
            f.sentence + 1,
            f.start,
            f.end,
            types.join("; ")
        );
    }
}

/// One line about the contract for the text output: "LICENSE AGREEMENT · parties: Acme Corp.;
/// Beta LLC · dated 2019-06-01 · governing law: New York" (what is found; `None` when nothing is).
fn describe(meta: &ContractMeta) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(title) = meta.title.as_ref().or(meta.document_type.as_ref()) {
        parts.push(title.clone());
    }
    if !meta.parties.is_empty() {
        parts.push(format!("parties: {}", party_list(meta)));
    }
    if let Some(date) = &meta.date {
        parts.push(format!("dated {date}"));
    }
    if let Some(law) = &meta.governing_law {
        parts.push(format!("governing law: {law}"));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The first three party names, full names first ([`ContractMeta::parties`]' order).
fn party_list(meta: &ContractMeta) -> String {
    meta.parties
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ")
}

/// The metadata columns of `review --csv`, after the contract's path.
const META_COLUMNS: [&str; 4] = ["title", "date", "governing_law", "parties"];

/// A row of `review --csv`: the contract and its metadata ([`META_COLUMNS`]), then per CUAD
/// category (in [`CATEGORIES`] order) the confidence of its most confident finding, empty when
/// the category has none.
fn matrix_row(review: &ContractReview) -> Vec<String> {
    let mut best = [None::<f32>; CATEGORIES.len()];
    for f in &review.findings {
        if let Some(c) = precedent_cuad::category_index(f.category) {
            best[c] = Some(best[c].map_or(f.confidence, |b: f32| b.max(f.confidence)));
        }
    }
    let meta = review.metadata.clone().unwrap_or_default();
    let parties = party_list(&meta);
    [
        review.contract.clone(),
        meta.title.or(meta.document_type).unwrap_or_default(),
        meta.date.unwrap_or_default(),
        meta.governing_law.unwrap_or_default(),
        parties,
    ]
    .into_iter()
    .chain(
        best.iter()
            .map(|b| b.map(|c| format!("{c:.3}")).unwrap_or_default()),
    )
    .collect()
}

/// The files to review: files as given, folders expanded to the contract files under them.
/// A folder without any contract file is an error, so a mistyped path is not a silent no-op.
fn contract_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found: Vec<PathBuf> = crate::ingest::walk(path)?
                .into_iter()
                .filter(|f| Format::from_path(f).is_some())
                .collect();
            if found.is_empty() {
                bail!(
                    "{}: no contract files (.txt, .htm/.html, .pdf, .docx) in this folder",
                    path.display()
                );
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

pub fn run(args: ReviewArgs) -> Result<()> {
    let files = contract_files(&args.files)?;
    if args.csv && args.kind == DocumentKind::Tos {
        bail!("--csv tabulates CUAD clause types of contracts; terms of service have --json");
    }
    // Each model is loaded when the first document needing it comes: a folder of terms of
    // service never trains the CUAD typer, nor a folder of contracts the UNFAIR-ToS model.
    let mut typer: Option<ClauseTyper> = None;
    let mut unfair: Option<UnfairModel> = None;
    let mut matrix = if args.csv {
        let mut writer = csv::Writer::from_writer(std::io::stdout());
        writer.write_record(
            std::iter::once("contract")
                .chain(META_COLUMNS)
                .chain(CATEGORIES),
        )?;
        writer.flush()?;
        Some(writer)
    } else {
        None
    };
    let mut failed = 0;
    for path in &files {
        let document = match read_contract(path) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e:#}");
                failed += 1;
                continue;
            }
        };
        let is_tos = match args.kind {
            DocumentKind::Tos => true,
            DocumentKind::Contract => false,
            DocumentKind::Auto => !args.csv && looks_like_terms_of_service(&document.text),
        };
        if is_tos {
            let model = match unfair.as_mut() {
                Some(m) => m,
                None => unfair.insert(args.unfair.load()?),
            };
            let review = TosDocumentReview {
                contract: path.display().to_string(),
                kind: "tos",
                ocr: document.ocr,
                review: precedent_unfair::document::review(model, &document.text),
            };
            if args.json {
                println!("{}", serde_json::to_string(&review)?);
            } else {
                print_tos(&review);
            }
            continue;
        }
        let typer = match typer.as_mut() {
            Some(t) => t,
            None => typer.insert(args.typer.load_for_review(args.fast)?),
        };
        let mut review = review_text(typer, &path.display().to_string(), &document.text, args.top);
        review.ocr = document.ocr;
        review.metadata = Some(precedent_contracts::meta::extract(&document.text));
        if let Some(writer) = matrix.as_mut() {
            writer.write_record(matrix_row(&review))?;
            // Row by row, so a long folder shows progress and a later failure loses nothing.
            writer.flush()?;
        } else if args.json {
            println!("{}", serde_json::to_string(&review)?);
        } else {
            print_text(&review, args.threshold);
        }
    }
    if failed > 0 {
        bail!("{failed} of {} files could not be reviewed", files.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use precedent_cuad::clause_classifier::{LabelledClause, ALL_KNOWN};

    /// A words-only classifier trained on a dozen toy clauses of two types, saved to `path`.
    fn save_toy_classifier(path: &Path) {
        let examples: Vec<LabelledClause> = (0..12)
            .flat_map(|g| {
                [
                    (
                        format!("This Agreement is governed by the laws of State {g}."),
                        7,
                    ),
                    (
                        format!("Neither party may assign this Agreement, clause {g}."),
                        18,
                    ),
                ]
                .map(|(text, category)| LabelledClause {
                    text,
                    positive: 1 << category,
                    known: ALL_KNOWN,
                    group: g,
                })
            })
            .collect();
        ClauseClassifier::train(&examples, &ClassifierOptions::default(), "toy")
            .and_then(|model| model.save(path))
            .expect("toy classifier");
    }

    #[test]
    fn clones_load_the_second_stage_classifier_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("toy.bin");
        let args = TyperArgs {
            typer: None,
            cuad: None,
            typer_cache: dir.path().join("typer"),
            classifier: Some(path.clone()),
            classifier_cache: dir.path().join("classifier"),
            second_stage: SharedClassifier::default(),
        };
        // A failed load is not remembered: once the file exists, the next call loads it.
        assert!(args.clone().second_stage_classifier().is_err());
        save_toy_classifier(&path);
        let first = args.second_stage_classifier().expect("load");
        let again = args.clone().second_stage_classifier().expect("shared");
        assert!(Arc::ptr_eq(&first, &again), "a clone loaded its own copy");
        // Arguments naming another classifier do not get this one.
        let other = args.with_classifier(Some(path)).second_stage_classifier();
        assert!(!Arc::ptr_eq(&first, &other.expect("load")));
        // The gate attached to a classify model is that model too (it has no gate of its own).
        let mut model = ClauseClassifier::load(&dir.path().join("toy.bin")).expect("load");
        args.attach_type_gate(&mut model).expect("gate");
        assert!(model.has_type_gate() && !first.has_type_gate());
    }
}
