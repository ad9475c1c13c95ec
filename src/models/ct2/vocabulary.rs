//! `vocabulary.txt`: the byte-level BPE tokens below `<|endoftext|>`, as bytes.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use super::{io_err, ConvertError};

/// The ordinary tokens (those below `<|endoftext|>`) of `vocabulary.txt`, as bytes.
pub(super) fn tokens(path: &Path) -> Result<Vec<Vec<u8>>, ConvertError> {
    let text = fs::read_to_string(path).map_err(|cause| io_err("read", path, cause))?;
    // Python's text mode, as the reference reads it: universal newlines
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut words: Vec<&str> = text.split('\n').collect();
    if words.last() == Some(&"") {
        words.pop();
    }
    let end = words
        .iter()
        .position(|w| *w == "<|endoftext|>")
        .ok_or_else(|| ConvertError::NoEndOfText {
            path: path.to_path_buf(),
        })?;
    let decode = byte_decoder();
    words[..end]
        .iter()
        .map(|w| {
            w.chars()
                .map(|c| decode.get(&c).copied())
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| ConvertError::NotByteLevel {
                    path: path.to_path_buf(),
                    token: w.to_string(),
                })
        })
        .collect()
}

/// The inverse of GPT-2's byte-to-printable-character table (byte-level BPE).
pub(super) fn byte_decoder() -> HashMap<char, u8> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut extra = 0u32;
    let mut out = HashMap::new();
    for b in 0..=255u8 {
        let c = if printable(b) {
            char::from(b)
        } else {
            extra += 1;
            char::from_u32(255 + extra).unwrap_or(char::REPLACEMENT_CHARACTER)
        };
        out.insert(c, b);
    }
    out
}
