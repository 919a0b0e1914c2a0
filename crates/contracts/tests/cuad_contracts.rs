//! Reading and segmenting the real CUAD contracts in `../shared/data/cuad/full_contract_txt`.

use std::path::{Path, PathBuf};

use precedent_contracts::{read_path, segment, segment_text, Format};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/cuad/full_contract_txt"
);

fn contracts() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(DATA)
        .expect("CUAD contracts are in ../shared/data")
        .map(|e| e.expect("readable dir entry").path())
        .collect();
    paths.sort();
    paths
}

fn chars(text: &str, start: usize, end: usize) -> String {
    text.chars().skip(start).take(end - start).collect()
}

#[test]
fn every_cuad_contract_segments_into_ordered_disjoint_clauses() {
    let paths = contracts();
    assert_eq!(paths.len(), 398);
    let mut total = 0usize;
    for path in &paths {
        let doc = read_path(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(doc.format, Format::Txt);
        let n_chars = doc.text.chars().count();
        let clauses = segment(&doc);
        assert!(!clauses.is_empty(), "{}", path.display());
        let mut previous_end = 0usize;
        for c in &clauses {
            assert!(
                c.start < c.end && c.end <= n_chars,
                "{}: {c:?}",
                path.display()
            );
            assert!(
                c.start >= previous_end,
                "{}: overlapping {c:?}",
                path.display()
            );
            previous_end = c.end;
            assert!(c.text.chars().any(char::is_alphanumeric));
            if let Some(number) = &c.number {
                assert_eq!(c.path.last(), Some(number), "{}: {c:?}", path.display());
            }
        }
        total += clauses.len();
    }
    // About 92 clauses per contract: sections and their lettered subsections.
    assert!((25_000..60_000).contains(&total), "{total} clauses");
}

#[test]
fn a_numbered_cuad_contract_has_its_sections_headings_and_references() {
    let path = Path::new(DATA).join(
        "2ThemartComInc_19990826_10-12G_EX-10.10_6700288_EX-10.10_Co-Branding Agreement_ Agency Agreement.txt",
    );
    let doc = read_path(&path).expect("readable");
    let clauses = segment(&doc);
    let find = |number: &str| {
        clauses
            .iter()
            .find(|c| c.number.as_deref() == Some(number))
            .unwrap_or_else(|| panic!("no clause {number}"))
    };
    let law = find("12.1");
    assert_eq!(law.heading.as_deref(), Some("GOVERNING LAW"));
    assert_eq!(law.path, ["12", "12.1"]);
    assert!(chars(&doc.text, law.start, law.end).starts_with("12.1 GOVERNING LAW."));
    assert!(law.text.contains("laws of the State of California"));

    // "EXCEPT IN THE EVENT OF A BREACH OF SECTION 11" brings Section 11's text along.
    let cap = find("10");
    assert_eq!(cap.refs, ["11"]);
    let (own, attached) = cap.text.split_once("<omitted>").expect("attachment");
    assert!(own.starts_with("10. LIMITATION ON LIABILITY."));
    assert!(attached.starts_with("11. CONFIDENTIAL INFORMATION."));

    // Definitions (a)..(l) under "1. DEFINITIONS." are one clause each.
    let definitions = clauses
        .iter()
        .filter(|c| c.path.first().map(String::as_str) == Some("1"));
    assert_eq!(definitions.count(), 12);
    // The EDGAR footer "Source: 2THEMART COM INC, 10-12G, 8/26/1999" is never clause text.
    assert!(clauses.iter().all(|c| !c.text.contains("Source: 2THEMART")));
}

/// The section numbers of a contract's clauses, sorted (a multiset).
fn section_numbers(text: &str) -> Vec<String> {
    let mut numbers: Vec<String> = segment_text(text)
        .into_iter()
        .filter_map(|c| c.number)
        .collect();
    numbers.sort();
    numbers
}

/// How many of `reference`'s numbers `other` also has, counting repeats.
fn shared_count(reference: &[String], other: &[String]) -> usize {
    let mut rest: Vec<&String> = other.iter().collect();
    reference
        .iter()
        .filter(|n| {
            rest.iter()
                .position(|o| o == n)
                .map(|i| rest.swap_remove(i))
                .is_some()
        })
        .count()
}

/// CUAD's text files are often flattened (a page or an article per line). A PDF made from one
/// wraps those lines, and must still segment and be titled as the text file is: sections that
/// follow a sentence's end inside a wrapped line start clauses, and a title the wrapping breaks
/// in two keeps its first words. The PDFs are made here by LibreOffice (scripts/setup.sh
/// installs it), as a user's audit made them.
#[test]
fn a_pdf_made_from_a_flattened_contract_reads_as_its_text_does() {
    const SOFFICE: &str = "/usr/bin/soffice";
    assert!(
        Path::new(SOFFICE).exists(),
        "{SOFFICE} is missing: run scripts/setup.sh (installs Debian's libreoffice-writer-nogui)"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let names = [
        "ACCURAYINC_09_01_2010-EX-10.31-DISTRIBUTOR AGREEMENT.txt",
        "ABILITYINC_06_15_2020-EX-4.25-SERVICES AGREEMENT.txt",
    ];
    let texts: Vec<PathBuf> = names.iter().map(|n| Path::new(DATA).join(n)).collect();
    let status = std::process::Command::new(SOFFICE)
        .arg(format!(
            "-env:UserInstallation=file://{}",
            dir.path().join("lo-profile").display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            "pdf",
            "--outdir",
        ])
        .arg(dir.path())
        .args(&texts)
        .status()
        .expect("run soffice");
    assert!(status.success(), "soffice --convert-to pdf failed");
    let read = |path: &Path| read_path(path).unwrap_or_else(|e| panic!("{e}")).text;
    let pdf_of = |name: &str| dir.path().join(name.replace(".txt", ".pdf"));

    let (text, pdf) = (read(&texts[0]), read(&pdf_of(names[0])));
    let (from_text, from_pdf) = (section_numbers(&text), section_numbers(&pdf));
    assert!(
        from_text.len() >= 130,
        "{} numbered clauses",
        from_text.len()
    );
    let shared = shared_count(&from_text, &from_pdf);
    assert!(
        shared * 100 >= from_text.len() * 85,
        "the PDF has {shared} of the text's {} section numbers: {from_pdf:?}",
        from_text.len()
    );

    let (text, pdf) = (read(&texts[1]), read(&pdf_of(names[1])));
    let title = |text: &str| precedent_contracts::meta::extract(text).title;
    assert_eq!(title(&text).as_deref(), Some("SERVICES AGREEMENT"));
    assert_eq!(title(&pdf), title(&text));
}
