//! `precedent review FILE|FOLDER...`: the CUAD clause types found in each contract, with
//! confidence, section and character span.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_clause_types::cache::{classifier_cache_beside, default_cache};
use precedent_engine::documents::{
    contract_text, tos_text, DocumentKind, ReviewOutputs, Reviewed, Reviewer,
    CONTRACT_TEXT_THRESHOLD,
};
use precedent_engine::review::{checklist_rows, to_csv};
use precedent_engine::review_table::{contract_files, matrix_header, matrix_row};
use precedent_engine::ClauseModels;

use crate::eval_unfair_tos::UnfairArgs;

/// Where the clause typer and the single-clause classifier its second stage reads come from
/// (shared by review, serve, ingest and eval-legalbench).
#[derive(Args, Clone)]
pub struct TyperArgs {
    /// A typer model file (as cached under .precedent/cache/typer); by default the cached model
    /// trained from --cuad, trained now (about a minute) if missing.
    #[arg(long)]
    pub typer: Option<PathBuf>,
    /// CUAD folder to train the typer from; default $PRECEDENT_CUAD_DIR or shared/data/cuad
    /// beside the working directory, the executable, or an ancestor of either.
    #[arg(long)]
    pub cuad: Option<PathBuf>,
    /// Cache directory for trained typers (default: an existing .precedent/cache/typer above
    /// the working directory or the executable, else the executable's checkout's).
    #[arg(long, default_value_os_t = default_cache())]
    pub typer_cache: PathBuf,
    /// A single-clause classifier model file, whose scores the typer's second stage reads; by
    /// default the cached model trained from --cuad, trained now (about a minute) if missing.
    #[arg(long)]
    pub classifier: Option<PathBuf>,
    /// Cache directory for trained clause classifiers (default: `clause-classifier` beside the
    /// typer cache).
    #[arg(long)]
    pub classifier_cache: Option<PathBuf>,
}

impl TyperArgs {
    /// The models these arguments name ([`ClauseModels`]); its clones share what they load.
    pub fn models(&self) -> ClauseModels {
        ClauseModels::new(
            self.typer.clone(),
            self.cuad.clone(),
            self.typer_cache.clone(),
            self.classifier.clone(),
            self.classifier_cache(),
        )
    }

    /// The clause classifiers' cache: as given, else beside the typer cache.
    pub fn classifier_cache(&self) -> PathBuf {
        self.classifier_cache
            .clone()
            .unwrap_or_else(|| classifier_cache_beside(&self.typer_cache))
    }
}

#[derive(Args)]
pub struct ReviewArgs {
    /// Contract files (TXT, HTML, PDF, DOCX), or folders: every contract file under a folder
    /// is reviewed (recursively, in path order; other file types there are skipped).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// One JSON object per file and line: the contract, its metadata and its findings, with
    /// offsets in characters of the extracted text (docs/review.md).
    #[arg(long)]
    pub json: bool,
    /// One CSV table for all files: a row per contract (title, date, governing law, parties),
    /// then each CUAD category's best confidence.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Also write the contract's checklist to this CSV file: each of the 41 CUAD categories,
    /// present or absent, with its confidence and spans. One contract, not terms of service.
    #[arg(long, value_name = "OUT.csv")]
    pub checklist_csv: Option<PathBuf>,
    /// Also write the review as a Word report (DOCX): the checklist table, each type found with
    /// its clauses, each type not found. One contract, not terms of service.
    #[arg(long, value_name = "OUT.docx")]
    pub report_docx: Option<PathBuf>,
    /// Candidates per category in the JSON, most confident first (0 = every candidate).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Text output: show findings at or above this confidence. Contracts: 0.5 unless given.
    /// Terms of service: every type the model flags (its per-type thresholds, fitted for F1,
    /// flag some at 0.3) unless given.
    #[arg(long)]
    pub threshold: Option<f32>,
    /// Word features only: skip embedding the contract's sentences with MiniLM (several times
    /// faster; about 1 point lower precision at 80% recall in CUAD's cross-validation).
    #[arg(long)]
    pub fast: bool,
    /// What the documents are: contracts get the CUAD review, terms of service the unfair-term
    /// review (UNFAIR-ToS types per sentence); auto decides per document by its words.
    #[arg(long, value_enum, default_value_t = DocumentKind::Auto)]
    pub kind: DocumentKind,
    #[command(flatten)]
    pub typer: TyperArgs,
    #[command(flatten)]
    pub unfair: UnfairArgs,
}

pub fn run(args: ReviewArgs) -> Result<()> {
    let files = contract_files(&args.files)?;
    let outputs = ReviewOutputs {
        files: files.len(),
        kind: args.kind,
        csv: args.csv,
        checklist_csv: args.checklist_csv.as_deref(),
        report_docx: args.report_docx.as_deref(),
    };
    outputs.check()?;
    let mut reviewer = Reviewer::new(
        args.typer.models(),
        args.fast,
        args.unfair.source(),
        args.top,
    );
    let mut matrix = if args.csv {
        let mut writer = csv::Writer::from_writer(std::io::stdout());
        writer.write_record(matrix_header())?;
        writer.flush()?;
        Some(writer)
    } else {
        None
    };
    let mut failed = 0;
    for path in &files {
        let document = match precedent_contracts::read_path(path).map_err(anyhow::Error::from) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e:#}");
                failed += 1;
                continue;
            }
        };
        let is_tos = args.kind.is_terms_of_service(&document.text, args.csv);
        outputs.check_document(path, is_tos)?;
        let review = match reviewer.review(path, &document, is_tos)? {
            Reviewed::Tos(review) => {
                if args.json {
                    println!("{}", serde_json::to_string(&review)?);
                } else {
                    print!("{}", tos_text(&review, args.threshold));
                }
                continue;
            }
            Reviewed::Contract(review) => review,
        };
        if let Some(out) = &args.checklist_csv {
            let csv = to_csv(&checklist_rows(&review));
            std::fs::write(out, csv)
                .with_context(|| format!("writing the checklist to {}", out.display()))?;
        }
        if let Some(out) = &args.report_docx {
            let docx = precedent_engine::review::report_docx(&review, &checklist_rows(&review))?;
            std::fs::write(out, docx)
                .with_context(|| format!("writing the report to {}", out.display()))?;
            eprintln!("review report written to {}", out.display());
        }
        if let Some(writer) = matrix.as_mut() {
            writer.write_record(matrix_row(&review))?;
            // Row by row, so a long folder shows progress and a later failure loses nothing.
            writer.flush()?;
        } else if args.json {
            println!("{}", serde_json::to_string(&review)?);
        } else {
            print!(
                "{}",
                contract_text(&review, args.threshold.unwrap_or(CONTRACT_TEXT_THRESHOLD))
            );
        }
    }
    if failed > 0 {
        bail!("{failed} of {} files could not be reviewed", files.len());
    }
    Ok(())
}
