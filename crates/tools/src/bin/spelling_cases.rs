//! Scores the spelling corrector on single misspelt words whose intended spelling is known:
//! how many it puts back, leaves as typed, or turns into another word.
//!
//! The library is a corpus's clauses (as `index` stores them), the words left alone are the
//! default embedder's vocabulary and the word lists, exactly as a search corrects. Each case is
//! one line `typo<TAB>intended` (codespell's `typo->intended` lines are read too; a line with
//! several intended words is ambiguous and skipped). A case is scored only when the corrector
//! could put it right: the intended word is a library word of at least
//! [`spelling::MIN_CLAUSES`] clauses and of [`spelling::MIN_WORD_CHARS`] letters or more, and
//! the typo is all lowercase letters and not itself a known word (a typo that is a word is
//! left as typed by design).
//!
//!
//! `--real-words DIR` scores the other side: the words of a folder of contracts (`.txt` files)
//! that occur in at least [`REAL_WORD_CONTRACTS`] of them, have [`spelling::MIN_WORD_CHARS`]
//! letters or more and are not words of the library. They are real words a lawyer may type
//! that this library lacks; each one the corrector changes is a false correction.
//!
//! ```text
//! cargo run --release -p precedent-tools --bin spelling_cases -- \
//!     --corpus ../shared/data/acord/corpus.jsonl --cases pairs.tsv \
//!     [--real-words ../shared/data/cuad/full_contract_txt] [--list]
//! ```
use std::collections::HashSet;
use std::io::BufRead;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use precedent_models::Embedder;
use precedent_text::spelling::{self, LibraryWords};

fn main() -> Result<()> {
    let mut corpus: Option<PathBuf> = None;
    let mut cases: Vec<PathBuf> = Vec::new();
    let mut real_words: Option<PathBuf> = None;
    let mut list = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--corpus" => corpus = args.next().map(PathBuf::from),
            "--cases" => cases.extend(args.next().map(PathBuf::from)),
            "--real-words" => real_words = args.next().map(PathBuf::from),
            "--list" => list = true,
            other => bail!(
                "unknown argument {other:?} (--corpus FILE --cases FILE [--real-words DIR] [--list])"
            ),
        }
    }
    let Some(corpus) = corpus else {
        bail!("--corpus FILE is required");
    };
    if cases.is_empty() && real_words.is_none() {
        bail!("--cases FILE or --real-words DIR is required");
    }
    let docs = precedent_formats::read_corpus(&corpus)?;
    let texts: Vec<String> = docs.iter().map(precedent_library::indexed_text).collect();
    let words = LibraryWords::from_texts(texts.iter().map(String::as_str));
    let embedder = Embedder::load_default()?;
    let knows = |w: &str| embedder.knows_word(w);
    let protected = spelling::query_vocabulary();
    for file in cases {
        let pairs = read_pairs(&file)?;
        score(&file, &pairs, &words, &knows, &protected, list);
    }
    if let Some(dir) = real_words {
        let real = contract_words(&dir, &words)?;
        let mut changed = 0usize;
        for word in &real {
            let correction = spelling::correct(word, &words, &knows, &protected);
            if correction.changed() {
                changed += 1;
                if list {
                    println!("changed\t{word}\t{}", correction.text);
                }
            }
        }
        println!(
            "{}: {} real words the library lacks: {changed} turned into another word",
            dir.display(),
            real.len()
        );
    }
    Ok(())
}

/// A word in this many contracts of a folder is taken as a real word, not a typo.
const REAL_WORD_CONTRACTS: usize = 2;

/// The lowercase words of [`spelling::MIN_WORD_CHARS`] letters or more that occur in at least
/// [`REAL_WORD_CONTRACTS`] of the `.txt` contracts in `dir` and are not words of `library`,
/// sorted.
fn contract_words(dir: &std::path::Path, library: &LibraryWords) -> Result<Vec<String>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    // One text per contract, so a word's count is the number of contracts using it.
    let mut contracts = LibraryWords::default();
    for file in files {
        let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        contracts.add_texts([String::from_utf8_lossy(&bytes).as_ref()]);
    }
    let mut real: Vec<String> = contracts
        .counts()
        .filter(|&(word, n)| {
            n as usize >= REAL_WORD_CONTRACTS
                && word.chars().count() >= spelling::MIN_WORD_CHARS
                && word.chars().all(|c| c.is_ascii_lowercase())
                && library.clauses_with(word) == 0
        })
        .map(|(word, _)| word.to_owned())
        .collect();
    real.sort();
    Ok(real)
}

/// `(typo, intended)` pairs of a file of `typo<TAB>intended` or `typo->intended` lines.
fn read_pairs(file: &PathBuf) -> Result<Vec<(String, String)>> {
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?,
    );
    let mut pairs = Vec::new();
    for (number, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("{}:{}", file.display(), number + 1))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((typo, intended)) = line.split_once('\t').or_else(|| line.split_once("->")) else {
            bail!(
                "{}:{}: expected `typo<TAB>intended`",
                file.display(),
                number + 1
            );
        };
        let intended = intended.trim().trim_end_matches(',');
        if intended.contains(',') || intended.contains(' ') {
            continue;
        }
        pairs.push((typo.trim().to_owned(), intended.to_owned()));
    }
    Ok(pairs)
}

fn score(
    file: &std::path::Path,
    pairs: &[(String, String)],
    words: &LibraryWords,
    knows: &dyn Fn(&str) -> bool,
    protected: &HashSet<String>,
    list: bool,
) {
    let (mut right, mut kept, mut wrong) = (0usize, 0usize, 0usize);
    let mut seen = HashSet::new();
    for (typo, intended) in pairs {
        let scorable = typo.chars().all(|c| c.is_ascii_lowercase())
            && typo != intended
            && intended.chars().count() >= spelling::MIN_WORD_CHARS
            && words.clauses_with(intended) >= spelling::MIN_CLAUSES
            && words.clauses_with(typo) == 0
            && !knows(typo)
            && !spelling::is_dictionary_word(typo)
            && seen.insert((typo.clone(), intended.clone()));
        if !scorable {
            continue;
        }
        let correction = spelling::correct(typo, words, knows, protected);
        if correction.text == *intended {
            right += 1;
        } else if correction.text == *typo {
            kept += 1;
            if list {
                println!("kept\t{typo}\t{intended}");
            }
        } else {
            wrong += 1;
            if list {
                println!("wrong\t{typo}\t{intended}\t{}", correction.text);
            }
        }
    }
    let total = right + kept + wrong;
    println!(
        "{}: {total} scorable cases: {right} put right, {kept} left as typed, {wrong} turned into another word",
        file.display()
    );
}
