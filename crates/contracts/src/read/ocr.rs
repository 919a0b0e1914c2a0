//! OCR for scanned PDFs, through Debian's `pdftoppm` (poppler-utils) and `tesseract`
//! (tesseract-ocr) run as child processes.
//!
//! Why external programs and not a crate: no maintained pure-Rust OCR engine reads contract
//! scans well, and Tesseract's Rust bindings need its C++ headers at build time. The command
//! line tools are one `apt-get install` away, their output is plain text, and when they are absent
//! the reader still says precisely what is missing instead of failing the build.
//!
//! Pages are rendered at 300 dpi in grey (Tesseract's recommended input) and recognised one by
//! one with automatic page segmentation; each page's text goes through the same header/footer and
//! hyphenation clean-up as a text layer, so OCR'd and typeset PDFs segment alike.
//! `PRECEDENT_OCR=off` turns OCR off (a scan is then reported as having no text layer);
//! `PRECEDENT_OCR_LANG` picks Tesseract's language data (default `eng`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rendering resolution: Tesseract's accuracy drops quickly below 300 dpi on 10–12 pt type.
const DPI: &str = "300";

/// Time allowed to recognise one page (about 2.3 s is usual) and to render one page.
const PAGE_LIMIT: Duration = Duration::from_secs(120);

/// Why OCR produced no text.
#[derive(Debug)]
pub(crate) enum OcrFailure {
    /// OCR is turned off, or a program is not installed: the message says which.
    Unavailable(String),
    /// The programs ran but failed on this file.
    Failed(String),
}

/// Whether OCR is allowed by the environment (`PRECEDENT_OCR=off|0|false` turns it off).
fn enabled() -> bool {
    !matches!(
        std::env::var("PRECEDENT_OCR")
            .unwrap_or_default()
            .to_ascii_lowercase()
            .as_str(),
        "off" | "0" | "false" | "no"
    )
}

/// The text of pages of a PDF, recognised from their rendered images: every page (`None`), or
/// the given 1-based page numbers, in that order.
pub(crate) fn recognise_pages(
    pdf: &[u8],
    pages: Option<&[usize]>,
) -> Result<Vec<String>, OcrFailure> {
    if !enabled() {
        return Err(OcrFailure::Unavailable("OCR is off (PRECEDENT_OCR)".into()));
    }
    let dir = ScratchDir::new().map_err(|e| OcrFailure::Failed(format!("temp dir: {e}")))?;
    let input = dir.0.join("scan.pdf");
    std::fs::write(&input, pdf).map_err(|e| OcrFailure::Failed(format!("temp file: {e}")))?;
    let render = |first_last: Option<usize>, prefix: &std::path::Path| {
        let mut command = Command::new("pdftoppm");
        command.args(["-r", DPI, "-gray", "-png"]);
        if let Some(page) = first_last {
            let page = page.to_string();
            command.args(["-f", &page, "-l", &page, "-singlefile"]);
        }
        // A whole document gets the per-page allowance for each of up to 500 pages.
        let limit = if first_last.is_some() {
            PAGE_LIMIT
        } else {
            PAGE_LIMIT * 500
        };
        run(
            command.arg(&input).arg(prefix),
            "pdftoppm",
            "poppler-utils",
            limit,
            &dir.0.join("pdftoppm.log"),
        )
    };
    let images: Vec<PathBuf> = match pages {
        Some(pages) => pages
            .iter()
            .map(|&page| {
                let prefix = dir.0.join(format!("page-{page}"));
                render(Some(page), &prefix)?;
                Ok(prefix.with_extension("png"))
            })
            .collect::<Result<_, OcrFailure>>()?,
        None => {
            render(None, &dir.0.join("page"))?;
            // pdftoppm names pages page-1.png .. page-N.png, zero-padded to N's width.
            let mut numbered: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir.0)
                .map_err(|e| OcrFailure::Failed(format!("temp dir: {e}")))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter_map(|path| {
                    let name = path.file_name()?.to_str()?;
                    let number = name.strip_prefix("page-")?.strip_suffix(".png")?;
                    Some((number.parse().ok()?, path))
                })
                .collect();
            numbered.sort();
            numbered.into_iter().map(|(_, path)| path).collect()
        }
    };
    if images.is_empty() {
        return Err(OcrFailure::Failed("pdftoppm rendered no page".into()));
    }
    let lang = std::env::var("PRECEDENT_OCR_LANG").unwrap_or_else(|_| "eng".into());
    images
        .iter()
        .map(|image| {
            // Tesseract writes OUTBASE.txt.
            let base = image.with_extension("");
            run(
                Command::new("tesseract")
                    .arg(image)
                    .arg(&base)
                    .args(["-l", &lang, "--psm", "3"])
                    // One thread per page: ingest already reads files in parallel.
                    .env("OMP_THREAD_LIMIT", "1"),
                "tesseract",
                "tesseract-ocr",
                PAGE_LIMIT,
                &base.with_extension("log"),
            )?;
            let text = std::fs::read(base.with_extension("txt"))
                .map_err(|e| OcrFailure::Failed(format!("tesseract output: {e}")))?;
            Ok(clean_page(&String::from_utf8_lossy(&text)))
        })
        .collect()
}

/// Tesseract marks page ends with a form feed and may emit ligatures and curly quotes that the
/// rest of the pipeline (word matching, cross-references) does not expect.
fn clean_page(text: &str) -> String {
    text.replace('\u{c}', "")
        .replace('\u{fb01}', "fi")
        .replace('\u{fb02}', "fl")
        .replace(['\u{2018}', '\u{2019}'], "'")
        .replace(['\u{201c}', '\u{201d}'], "\"")
}

/// Runs an OCR program to completion within `limit`, its output going to files (no pipe can
/// fill up and stall it) and its stderr to `log`; a program that overruns is killed, so one
/// pathological page cannot hang a whole ingest.
fn run(
    command: &mut Command,
    program: &str,
    package: &str,
    limit: Duration,
    log: &Path,
) -> Result<(), OcrFailure> {
    let failed = |what: String| OcrFailure::Failed(format!("{program}: {what}"));
    let stderr = std::fs::File::create(log).map_err(|e| failed(format!("log file: {e}")))?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                OcrFailure::Unavailable(format!(
                    "{program} is not installed (apt-get install {package})"
                ))
            } else {
                failed(e.to_string())
            }
        })?;
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!("stopped after {} s", limit.as_secs())));
            }
            Err(e) => return Err(failed(e.to_string())),
        }
    };
    if !status.success() {
        let stderr = std::fs::read_to_string(log).unwrap_or_default();
        let reason = stderr.lines().last().unwrap_or("").trim().to_owned();
        return Err(failed(format!("failed ({status}): {reason}")));
    }
    Ok(())
}

/// A private temporary directory removed on drop (the crate has no runtime `tempfile`
/// dependency, and these files never outlive one read).
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<ScratchDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let unique = format!(
            "precedent-ocr-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(unique);
        std::fs::create_dir(&path)?;
        Ok(ScratchDir(path))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether both OCR programs are installed (tests and `doctor`-style reports).
pub fn ocr_available() -> bool {
    let found = |program: &str, arg: &str| {
        Command::new(program)
            .arg(arg)
            .output()
            .map(|_| true)
            .unwrap_or(false)
    };
    enabled() && found("pdftoppm", "-v") && found("tesseract", "--version")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_lose_form_feeds_and_ligatures() {
        assert_eq!(
            clean_page("\u{201c}Con\u{fb01}dential\u{201d} isn\u{2019}t\n\u{c}"),
            "\"Confidential\" isn't\n"
        );
    }

    #[test]
    fn a_missing_program_names_its_package() {
        let dir = ScratchDir::new().expect("scratch dir");
        match run(
            &mut Command::new("precedent-no-such-program"),
            "precedent-no-such-program",
            "some-package",
            PAGE_LIMIT,
            &dir.0.join("log"),
        ) {
            Err(OcrFailure::Unavailable(message)) => {
                assert!(
                    message.contains("apt-get install some-package"),
                    "{message}"
                )
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[test]
    fn a_program_that_overruns_is_stopped() {
        let dir = ScratchDir::new().expect("scratch dir");
        let started = Instant::now();
        match run(
            Command::new("sleep").arg("30"),
            "sleep",
            "coreutils",
            Duration::from_millis(300),
            &dir.0.join("log"),
        ) {
            Err(OcrFailure::Failed(message)) => {
                assert!(message.contains("stopped after"), "{message}")
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_failing_program_reports_its_last_stderr_line() {
        let dir = ScratchDir::new().expect("scratch dir");
        match run(
            Command::new("sh").args(["-c", "echo first >&2; echo 'bad page' >&2; exit 3"]),
            "sh",
            "dash",
            PAGE_LIMIT,
            &dir.0.join("log"),
        ) {
            Err(OcrFailure::Failed(message)) => assert!(message.contains("bad page"), "{message}"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
