//! The BM25 side of the library: a tantivy index whose tokenizer is Precedent's own [`Analyzer`].
//!
//! Tantivy scores with Lucene's BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5)/(n + 0.5)),
//! lossy one-byte field norms), which is the reference the ACORD paper measured. Each clause is one
//! tantivy document with its library row in a fast field; the text is indexed but not stored, since
//! the clause store keeps it.

use std::path::Path;

use precedent_text::{Analyzer, AnalyzerConfig};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::LibraryError;

const TOKENIZER_NAME: &str = "precedent_legal";
const ROW_FIELD: &str = "row";
const BODY_FIELD: &str = "body";
const WRITER_HEAP_BYTES: usize = 200_000_000;

/// Adapts [`Analyzer`] to tantivy's tokenizer interface.
#[derive(Clone)]
struct LegalTokenizer {
    analyzer: Analyzer,
    tokens: Vec<Token>,
}

struct VecTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    cursor: Option<usize>,
}

impl TokenStream for VecTokenStream<'_> {
    fn advance(&mut self) -> bool {
        let next = self.cursor.map_or(0, |c| c + 1);
        self.cursor = Some(next);
        next < self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.cursor.unwrap_or(0)]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.cursor.unwrap_or(0)]
    }
}

impl Tokenizer for LegalTokenizer {
    type TokenStream<'a> = VecTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        self.tokens.clear();
        let tokens = &mut self.tokens;
        self.analyzer.for_each_term(text, |t| {
            tokens.push(Token {
                offset_from: t.start,
                offset_to: t.end,
                position: t.position,
                text: t.text,
                position_length: 1,
            })
        });
        VecTokenStream {
            tokens: &mut self.tokens,
            cursor: None,
        }
    }
}

fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_u64_field(ROW_FIELD, FAST | INDEXED);
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER_NAME)
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    builder.add_text_field(
        BODY_FIELD,
        TextOptions::default().set_indexing_options(indexing),
    );
    builder.build()
}

/// A BM25 index over the clauses of one library generation.
pub struct LexicalIndex {
    index: Index,
    reader: IndexReader,
    analyzer: Analyzer,
    row: Field,
    body: Field,
}

fn tantivy_err(context: &str) -> impl Fn(tantivy::TantivyError) -> LibraryError + '_ {
    move |e| LibraryError::Lexical(format!("{context}: {e}"))
}

impl LexicalIndex {
    /// Creates an empty index in `dir` (which must exist and be empty).
    pub fn create(dir: &Path, config: &AnalyzerConfig) -> Result<Self, LibraryError> {
        let index = Index::create_in_dir(dir, schema()).map_err(tantivy_err("creating index"))?;
        Self::wrap(index, config)
    }

    /// Opens an existing index; the analyzer must be the one it was built with (from the manifest).
    pub fn open(dir: &Path, config: &AnalyzerConfig) -> Result<Self, LibraryError> {
        let index = Index::open_in_dir(dir).map_err(tantivy_err("opening lexical index"))?;
        Self::wrap(index, config)
    }

    fn wrap(index: Index, config: &AnalyzerConfig) -> Result<Self, LibraryError> {
        let analyzer = Analyzer::new(config.clone());
        index.tokenizers().register(
            TOKENIZER_NAME,
            LegalTokenizer {
                analyzer: analyzer.clone(),
                tokens: Vec::new(),
            },
        );
        let schema = index.schema();
        let field = |name: &str| {
            schema
                .get_field(name)
                .map_err(|_| LibraryError::Lexical(format!("index schema lacks field `{name}`")))
        };
        let (row, body) = (field(ROW_FIELD)?, field(BODY_FIELD)?);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(tantivy_err("opening reader"))?;
        Ok(LexicalIndex {
            index,
            reader,
            analyzer,
            row,
            body,
        })
    }

    /// Adds clauses (row, text) and commits. Tantivy's commit is atomic on its own; the library
    /// generation switch makes it atomic together with the clause store.
    pub fn add<'a>(
        &mut self,
        clauses: impl Iterator<Item = (u64, &'a str)>,
        progress: &dyn Fn(u64),
    ) -> Result<(), LibraryError> {
        // One indexing thread: several threads spread clauses over several segments in an order
        // that depends on scheduling, and BM25 scores then differ in the last float bit from run
        // to run, which reorders near-ties (seen on ACORD). Same input, same library.
        let mut writer: IndexWriter = self
            .index
            .writer_with_num_threads(1, WRITER_HEAP_BYTES)
            .map_err(tantivy_err("opening writer"))?;
        for (row, text) in clauses {
            let mut doc = TantivyDocument::default();
            doc.add_u64(self.row, row);
            doc.add_text(self.body, text);
            writer
                .add_document(doc)
                .map_err(tantivy_err("adding clause"))?;
            progress(1);
        }
        writer.commit().map_err(tantivy_err("committing"))?;
        writer
            .wait_merging_threads()
            .map_err(tantivy_err("merging"))?;
        self.reader.reload().map_err(tantivy_err("reloading"))?;
        Ok(())
    }

    /// The analysed terms of a query (what BM25 will look up): see
    /// [`Analyzer::query_term_texts`].
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.analyzer.query_term_texts(query)
    }

    /// BM25 top-`k` as (row, score), best first. A query whose terms are all stop words matches
    /// nothing and returns an empty list.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<(u32, f32)>, LibraryError> {
        let terms = self.query_terms(query);
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        // One SHOULD clause per query term, repeats included, as Lucene's classic query parser
        // builds it: a term typed twice weighs twice.
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.body, t);
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(k).order_by_score())
            .map_err(tantivy_err("searching"))?;
        let mut out = Vec::with_capacity(top.len());
        let mut columns: Vec<Option<tantivy::columnar::Column<u64>>> =
            vec![None; searcher.segment_readers().len()];
        for (score, address) in top {
            let slot = address.segment_ord as usize;
            let column = match columns.get_mut(slot) {
                Some(Some(c)) => c.clone(),
                Some(entry) => {
                    let c = searcher
                        .segment_reader(address.segment_ord)
                        .fast_fields()
                        .u64(ROW_FIELD)
                        .map_err(tantivy_err("reading rows"))?;
                    *entry = Some(c.clone());
                    c
                }
                None => return Err(LibraryError::Lexical("segment out of range".into())),
            };
            let row = column
                .first(address.doc_id)
                .ok_or_else(|| LibraryError::Lexical("clause without row".into()))?;
            let row = u32::try_from(row)
                .map_err(|_| LibraryError::Lexical(format!("row {row} out of range")))?;
            out.push((row, score));
        }
        Ok(out)
    }

    /// The analyzer the index was built with (terms, stems and their offsets in a text).
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// BM25's inverse document frequency of an analysed term, as the index scores it
    /// (`ln(1 + (N - n + 0.5) / (n + 0.5))`): how much finding the term in a clause says. A term
    /// the index cannot look up counts as absent from every clause.
    pub fn idf(&self, term: &str) -> f32 {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs() as f32;
        let df = searcher
            .doc_freq(&Term::from_field_text(self.body, term))
            .unwrap_or(0) as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Number of indexed clauses.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
