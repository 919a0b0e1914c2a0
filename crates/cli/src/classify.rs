//! `precedent classify TEXT...`: the CUAD clause types of a clause on its own ("is this a
//! Non-Compete?"), with the LegalBench classifier, each type marked likely or possible
//! ([`precedent_engine::classify_view`]; docs/review.md says how and why not `review`).

use std::io::Read;

use anyhow::{Context, Result};
use clap::Args;
use precedent_engine::classify_view::{classified_text, clauses_to_classify, ClassifiedLine};

use crate::review::TyperArgs;

#[derive(Args)]
pub struct ClassifyArgs {
    /// Clauses to classify, one per argument; none (or "-"): one clause read from stdin.
    pub texts: Vec<String>,
    /// One JSON object per clause and line: its text and types (category, confidence,
    /// threshold, gate, likely), most confident first.
    #[arg(long)]
    pub json: bool,
    /// List every category, not only those the clause reaches the threshold of.
    #[arg(long)]
    pub all: bool,
    /// One threshold for every category instead of each category's own (tuned for LegalBench's
    /// balanced accuracy, which favours recall: 0.03-0.4). 0.5 keeps only the surer types.
    #[arg(long)]
    pub threshold: Option<f32>,
    /// Stdin holds several clauses, one per paragraph (separated by blank lines), as when
    /// classifying a file of clauses: `precedent classify --paragraphs < clauses.txt`.
    #[arg(long)]
    pub paragraphs: bool,
    /// The classifier without its MiniLM readings (faster to train, ~1 min; 1.4 points lower
    /// mean balanced accuracy on the development set).
    #[arg(long)]
    pub words_only: bool,
    /// Mark types likely by the classifier's confidence alone (0.5 and up), without the type
    /// gate (docs/review.md).
    #[arg(long)]
    pub no_gate: bool,
    #[command(flatten)]
    pub typer: TyperArgs,
}

pub fn run(args: ClassifyArgs) -> Result<()> {
    let mut read_stdin = || -> Result<String> {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading clauses from stdin")?;
        Ok(text)
    };
    let texts = clauses_to_classify(&args.texts, args.paragraphs, &mut read_stdin)?;
    // `--classifier` is the classify model here, so the gate comes from the cache.
    let model = args.typer.models().with_classifier(None).load_classify(
        args.typer.classifier.clone(),
        args.words_only,
        !args.no_gate,
    )?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let listed = model.types_of(&refs, args.threshold, args.all)?;
    for (text, types) in refs.iter().zip(listed) {
        if args.json {
            let line = ClassifiedLine {
                text,
                types: &types,
            };
            println!("{}", serde_json::to_string(&line)?);
            continue;
        }
        print!("{}", classified_text(text, &types));
    }
    Ok(())
}
