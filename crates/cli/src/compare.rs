//! `precedent compare`: a precedent clause against the lawyer's draft (or two clauses), word by
//! word ([`precedent_engine::compare_view`]), or as a Word redline ([`precedent_engine::redline`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_engine::compare::{word_diff, DiffOptions};
use precedent_engine::compare_view::{self, comparison_text, read_side};
use precedent_engine::redline::{redline_docx, RedlineHeading};
use precedent_library::Library;

#[derive(Args)]
pub struct CompareArgs {
    /// Library the clause ids are looked up in (needed with --left or --right).
    #[arg(long)]
    index: Option<PathBuf>,
    /// The original: a clause id of the library (as search prints it).
    #[arg(
        long,
        conflicts_with = "left_file",
        required_unless_present = "left_file"
    )]
    left: Option<String>,
    /// The original: a text file.
    #[arg(long)]
    left_file: Option<PathBuf>,
    /// The revision (usually your draft): a clause id of the library.
    #[arg(
        long,
        conflicts_with = "right_file",
        required_unless_present = "right_file"
    )]
    right: Option<String>,
    /// The revision: a text file (your draft).
    #[arg(long)]
    right_file: Option<PathBuf>,
    /// Words that differ only in capitals are differences.
    #[arg(long)]
    case_sensitive: bool,
    /// Differences in spacing (double spaces, line breaks) are differences.
    #[arg(long)]
    keep_spacing: bool,
    /// Also write the comparison as a Word redline (DOCX) with the differences as tracked
    /// changes: the left side is the original, the right side the revision.
    #[arg(long)]
    docx: Option<PathBuf>,
    /// Print the differences as JSON (the API's `ops`) instead of marked-up text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CompareArgs) -> Result<()> {
    let library = args.index.as_deref().map(Library::open).transpose()?;
    let left = read_side(
        library.as_ref(),
        args.left.as_deref(),
        args.left_file.as_deref(),
        "left",
    )?;
    let right = read_side(
        library.as_ref(),
        args.right.as_deref(),
        args.right_file.as_deref(),
        "right",
    )?;
    let options = DiffOptions {
        ignore_case: !args.case_sensitive,
        ignore_whitespace: !args.keep_spacing,
    };
    let (runs, similarity) = word_diff(&left.text, &right.text, options);
    if let Some(path) = &args.docx {
        let heading = RedlineHeading::for_sides(&left.name, &right.name, similarity);
        let docx = redline_docx(&runs, &heading)?;
        std::fs::write(path, docx).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("redline with tracked changes written to {}", path.display());
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "left": left.name,
                "right": right.name,
                "similarity": similarity,
                "ops": compare_view::ops(runs),
            }))?
        );
        return Ok(());
    }
    print!(
        "{}",
        comparison_text(&left.name, &right.name, similarity, &runs)
    );
    Ok(())
}
