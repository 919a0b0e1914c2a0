//! Plain text: UTF-8 (with or without BOM), UTF-16 with BOM, else Windows-1252 — the encodings
//! contracts saved from Word or scraped from EDGAR actually come in.

use std::path::Path;

use super::ReadError;

pub(crate) fn read(path: &Path, bytes: &[u8]) -> Result<String, ReadError> {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _, malformed) = encoding.decode(&bytes[bom_len..]);
        if malformed && encoding != encoding_rs::UTF_8 {
            return Err(binary(path, "malformed UTF-16"));
        }
        return check_text(path, text.into_owned());
    }
    if let Some(offset) = bytes.iter().take(1 << 16).position(|&b| b == 0) {
        return Err(binary(path, &format!("NUL byte at offset {offset}")));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned(),
    };
    check_text(path, text)
}

/// Rejects text that decodes but is mostly control characters (an executable, an image renamed
/// `.txt`): more than 1% of the first 64 KiB characters being controls is not a contract.
fn check_text(path: &Path, text: String) -> Result<String, ReadError> {
    let sample = text.chars().take(1 << 16);
    let (mut total, mut controls) = (0usize, 0usize);
    for c in sample {
        total += 1;
        if c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}') {
            controls += 1;
        }
    }
    if total > 0 && controls * 100 > total {
        return Err(binary(
            path,
            &format!("{controls} control characters in the first {total}"),
        ));
    }
    Ok(text)
}

fn binary(path: &Path, reason: &str) -> ReadError {
    ReadError::Binary {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}
