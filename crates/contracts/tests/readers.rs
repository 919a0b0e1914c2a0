//! Readers on real and broken files: every failure is an error naming the file and the reason.

use std::io::Write;
use std::path::Path;

use precedent_contracts::{read_path, read_path_with, segment, Format, ReadError, ReadOptions};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("write fixture");
    path
}

#[test]
fn edgar_html_becomes_paragraphs_and_segments_like_text() {
    let html = br#"<html><head><title>ex10</title><style>p {margin:0}</style></head><body>
<p align="center"><b>LICENSE&nbsp;AGREEMENT</b></p>
<p>This License Agreement is made between <i>Alpha&nbsp;Corp.</i> and Beta LLC.</p>
<p>1. <u>Grant</u>. Alpha grants Beta a non-exclusive
   license &amp; right to use the Software.</p>
<p align="center">2</p>
<hr style="page-break-after:always">
<table><tr><td>2.</td><td>Term. The term is five years.</td></tr></table>
<script>var x = "not contract text";</script>
</body></html>"#;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "license.htm", html);
    let doc = read_path(&path).expect("readable");
    assert_eq!(doc.format, Format::Html);
    assert!(doc
        .text
        .starts_with("LICENSE AGREEMENT\n\nThis License Agreement"));
    assert!(doc.text.contains(
        "1. Grant. Alpha grants Beta a non-exclusive license & right to use the Software."
    ));
    assert!(!doc.text.contains("not contract text"));
    let clauses = segment(&doc);
    let numbers: Vec<_> = clauses.iter().map(|c| c.number.clone()).collect();
    assert_eq!(
        numbers,
        [None, Some("1".into()), Some("2".into())],
        "{clauses:#?}"
    );
    assert_eq!(clauses[2].heading.as_deref(), Some("Term"));
    // The page number paragraph "2" is noise, not a clause or clause text.
    assert!(!clauses[1].text.ends_with('2'));
}

/// An exhibit as EDGAR serves it inside a filing: the SGML header's values (type, sequence,
/// file name, description) are the filing's, not the contract's, and must not open its text or
/// become its title.
#[test]
fn edgar_sgml_header_values_are_not_contract_text() {
    let html = br#"<HTML><HEAD><TITLE>EX-10.13</TITLE></HEAD><BODY>
<DOCUMENT><TYPE>EX-10.13<SEQUENCE>3<FILENAME>0001.txt<DESCRIPTION>PROMOTION AGREEMENT</DESCRIPTION>
<P ALIGN="CENTER"><B>PROMOTION AGREEMENT</B></P>
<P>This Promotion Agreement is dated as of January 26, 1998 between CNET, Inc. and Cyberian Outpost, Inc.</P>
<P>1. Promotions. CNET will provide links.</P>
</BODY></HTML>"#;
    let lines = b"<DOCUMENT>\n<TYPE>EX-10.2\n<SEQUENCE>2\n<FILENAME>ex10-2.htm\n<DESCRIPTION>SUPPLY AGREEMENT\n<TEXT>\n<html><body><p>SUPPLY AGREEMENT</p><p>1. Supply. Seller sells.</p></body></html>\n</TEXT>\n</DOCUMENT>";
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes, title) in [
        (
            "cyberian.htm",
            &html[..],
            "PROMOTION AGREEMENT

This Promotion Agreement",
        ),
        (
            "supply.htm",
            &lines[..],
            "SUPPLY AGREEMENT

1. Supply.",
        ),
    ] {
        let doc = read_path(&write(dir.path(), name, bytes)).expect("readable");
        assert!(doc.text.starts_with(title), "{name}: {:?}", doc.text);
        for value in ["EX-10", "0001.txt", "ex10-2.htm"] {
            assert!(!doc.text.contains(value), "{name}: {:?}", doc.text);
        }
    }
}

#[test]
fn text_in_legacy_encodings_is_decoded() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Windows-1252 curly quotes and a section sign.
    let path = write(
        dir.path(),
        "w1252.txt",
        b"\x93Licensor\x94 grants \xa7 2 rights.",
    );
    let doc = read_path(&path).expect("readable");
    assert_eq!(doc.text, "“Licensor” grants § 2 rights.");
    let path = write(dir.path(), "crlf.txt", b"1. Grant.\r\nText.\r\n");
    assert_eq!(
        read_path(&path).expect("readable").text,
        "1. Grant.\nText.\n"
    );
}

#[test]
fn bad_files_are_errors_with_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = write(dir.path(), "empty.txt", b"");
    assert!(matches!(read_path(&empty), Err(ReadError::Empty { .. })));
    let blank = write(dir.path(), "blank.txt", b"  \n\n ");
    assert!(matches!(read_path(&blank), Err(ReadError::Empty { .. })));

    let mut elf = b"\x7fELF\x02\x01\x01\x00\x00\x00".to_vec();
    elf.extend((0u8..=255).cycle().take(4096));
    let binary = write(dir.path(), "program.txt", &elf);
    let err = read_path(&binary).expect_err("binary");
    assert!(matches!(err, ReadError::Binary { .. }), "{err}");
    assert!(err.to_string().contains("program.txt"), "{err}");

    let pdf = write(
        dir.path(),
        "broken.pdf",
        b"%PDF-1.7\n1 0 obj << /Type /Catalog",
    );
    let err = read_path(&pdf).expect_err("corrupt pdf");
    assert!(
        matches!(err, ReadError::Corrupt { format: "PDF", .. }),
        "{err}"
    );
    let not_pdf = write(dir.path(), "notes.pdf", b"just some text");
    assert!(matches!(
        read_path(&not_pdf),
        Err(ReadError::Corrupt { .. })
    ));

    let docx = write(dir.path(), "broken.docx", b"PK\x03\x04 not really a zip");
    let err = read_path(&docx).expect_err("corrupt docx");
    assert!(
        matches!(err, ReadError::Corrupt { format: "DOCX", .. }),
        "{err}"
    );

    let other = write(dir.path(), "photo.jpg", b"\xff\xd8\xff");
    assert!(matches!(
        read_path(&other),
        Err(ReadError::Unsupported { .. })
    ));

    // The size limit is checked before reading: a sparse 100 MB file costs nothing.
    let huge = dir.path().join("huge.txt");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(100 * 1024 * 1024))
        .expect("sparse file");
    let err = read_path(&huge).expect_err("too large");
    assert!(
        matches!(
            err,
            ReadError::TooLarge {
                size: 104_857_600,
                ..
            }
        ),
        "{err}"
    );
    let options = ReadOptions { max_bytes: 8 };
    let small = write(dir.path(), "small.txt", b"1. Grant. Text.");
    assert!(matches!(
        read_path_with(&small, &options),
        Err(ReadError::TooLarge { .. })
    ));
}
