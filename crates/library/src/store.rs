//! The clause store: every clause's id, text and metadata, addressed by row.
//!
//! Rows are the library's internal clause numbers (0..n, in insertion order); the BM25 index and
//! the vector store speak rows, people speak clause ids. Ids are kept in memory (a few bytes each,
//! even at a million clauses); texts stay on disk and are read on demand through an offset table,
//! so opening a large library does not read every clause.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use precedent_formats::CorpusDoc;

use crate::LibraryError;

pub(crate) const CLAUSES_FILE: &str = "clauses.jsonl";
pub(crate) const OFFSETS_FILE: &str = "clauses.offsets";
pub(crate) const IDS_FILE: &str = "ids.jsonl";

pub struct ClauseStore {
    dir: PathBuf,
    ids: Vec<String>,
    rows: HashMap<String, u32>,
    offsets: Vec<u64>,
    file: Mutex<File>,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> LibraryError + '_ {
    move |e| LibraryError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

impl ClauseStore {
    /// Writes `existing` (from a previous generation, if any) followed by `new` into `dir`.
    pub(crate) fn write(
        dir: &Path,
        previous: Option<&ClauseStore>,
        new: &[CorpusDoc],
    ) -> Result<(), LibraryError> {
        let clauses_path = dir.join(CLAUSES_FILE);
        let ids_path = dir.join(IDS_FILE);
        let mut clauses =
            BufWriter::new(File::create(&clauses_path).map_err(io_err(&clauses_path))?);
        let mut ids = BufWriter::new(File::create(&ids_path).map_err(io_err(&ids_path))?);
        let mut offsets: Vec<u64> = vec![0];
        let mut position = 0u64;
        let mut emit = |line: &[u8], id: &str| -> Result<(), LibraryError> {
            clauses.write_all(line).map_err(io_err(&clauses_path))?;
            position += line.len() as u64;
            offsets.push(position);
            let id_line = serde_json::to_string(id).map_err(LibraryError::json(&ids_path))?;
            writeln!(ids, "{id_line}").map_err(io_err(&ids_path))
        };
        if let Some(prev) = previous {
            for row in 0..prev.len() as u32 {
                let raw = prev.raw_line(row)?;
                emit(&raw, prev.id(row).unwrap_or_default())?;
            }
        }
        for doc in new {
            let mut line = serde_json::to_vec(doc).map_err(LibraryError::json(&clauses_path))?;
            line.push(b'\n');
            emit(&line, &doc.id)?;
        }
        clauses.flush().map_err(io_err(&clauses_path))?;
        ids.flush().map_err(io_err(&ids_path))?;
        let offsets_path = dir.join(OFFSETS_FILE);
        let mut out = BufWriter::new(File::create(&offsets_path).map_err(io_err(&offsets_path))?);
        for o in offsets {
            out.write_all(&o.to_le_bytes())
                .map_err(io_err(&offsets_path))?;
        }
        out.flush().map_err(io_err(&offsets_path))?;
        for path in [&clauses_path, &ids_path, &offsets_path] {
            File::open(path)
                .and_then(|f| f.sync_all())
                .map_err(io_err(path))?;
        }
        Ok(())
    }

    pub(crate) fn open(dir: &Path) -> Result<Self, LibraryError> {
        let ids_path = dir.join(IDS_FILE);
        let reader = BufReader::new(File::open(&ids_path).map_err(io_err(&ids_path))?);
        let mut ids = Vec::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(io_err(&ids_path))?;
            let id: String = serde_json::from_str(&line).map_err(|e| LibraryError::Corrupt {
                path: ids_path.clone(),
                message: format!("line {}: {e}", i + 1),
            })?;
            ids.push(id);
        }
        let offsets_path = dir.join(OFFSETS_FILE);
        let mut bytes = Vec::new();
        File::open(&offsets_path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(io_err(&offsets_path))?;
        let offsets: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if bytes.len() % 8 != 0 || offsets.len() != ids.len() + 1 {
            return Err(LibraryError::Corrupt {
                path: offsets_path,
                message: format!(
                    "{} offsets for {} clauses (expected {})",
                    offsets.len(),
                    ids.len(),
                    ids.len() + 1
                ),
            });
        }
        let clauses_path = dir.join(CLAUSES_FILE);
        let file = File::open(&clauses_path).map_err(io_err(&clauses_path))?;
        let size = file.metadata().map_err(io_err(&clauses_path))?.len();
        if offsets.last().copied() != Some(size) {
            return Err(LibraryError::Corrupt {
                path: clauses_path,
                message: format!(
                    "file has {size} bytes, offset table expects {:?}",
                    offsets.last()
                ),
            });
        }
        let rows = ids
            .iter()
            .enumerate()
            .map(|(row, id)| (id.clone(), row as u32))
            .collect();
        Ok(ClauseStore {
            dir: dir.to_path_buf(),
            ids,
            rows,
            offsets,
            file: Mutex::new(file),
        })
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn id(&self, row: u32) -> Option<&str> {
        self.ids.get(row as usize).map(String::as_str)
    }

    pub fn row(&self, id: &str) -> Option<u32> {
        self.rows.get(id).copied()
    }

    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    fn raw_line(&self, row: u32) -> Result<Vec<u8>, LibraryError> {
        let path = self.dir.join(CLAUSES_FILE);
        let (start, end) = match (
            self.offsets.get(row as usize),
            self.offsets.get(row as usize + 1),
        ) {
            (Some(&s), Some(&e)) if e >= s => (s, e),
            _ => return Err(LibraryError::NoSuchRow(row)),
        };
        let mut buf = vec![0u8; (end - start) as usize];
        let mut file = self.file.lock().map_err(|_| LibraryError::Corrupt {
            path: path.clone(),
            message: "clause store lock poisoned".into(),
        })?;
        file.seek(SeekFrom::Start(start)).map_err(io_err(&path))?;
        file.read_exact(&mut buf).map_err(io_err(&path))?;
        Ok(buf)
    }

    /// The full clause at `row`.
    pub fn clause(&self, row: u32) -> Result<CorpusDoc, LibraryError> {
        let raw = self.raw_line(row)?;
        serde_json::from_slice(&raw).map_err(|e| LibraryError::Corrupt {
            path: self.dir.join(CLAUSES_FILE),
            message: format!("row {row}: {e}"),
        })
    }
}
