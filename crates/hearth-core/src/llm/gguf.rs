//! A GGUF file's metadata, read in Rust without llama.cpp: the remote engine takes the chat
//! template and the BOS/EOS tokens of the model a server runs from the preset's GGUF when
//! the server does not report them (llama-cpp-python does not), in a build with or without
//! the `llm` feature. Only the metadata is read (a few MB at the front of the file, most of
//! it skipped over), never the weights.
//!
//! The format (GGUF v2 and v3, little-endian): the magic `GGUF`, the version (`u32`), the
//! tensor count and the key-value count (`u64` each), then each key (a string: `u64` length
//! and bytes), its value type (`u32`) and its value; an array is its element type (`u32`),
//! its length (`u64`) and its elements. A string, or an array, longer than the file could
//! hold is an error, not an allocation.
//!
//! Hand-written rather than a crate's: the GGUF readers on crates.io (gguf-rs, gguf) decode
//! the whole header, every key and tensor entry, into maps of their own; here three keys are
//! wanted, the rest is skipped over, and every length is held to the file's size.

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// What the remote engine needs of a model's metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ModelMeta {
    /// `tokenizer.chat_template`.
    pub chat_template: Option<String>,
    /// The text of `tokenizer.ggml.bos_token_id`'s token.
    pub bos_token: Option<String>,
    /// The text of `tokenizer.ggml.eos_token_id`'s token.
    pub eos_token: Option<String>,
}

/// The largest string or array length taken from a file (a longer one means a damaged
/// file, not a model).
const MAX_LEN: u64 = 1 << 28;

/// Read `path`'s metadata; an error says what is wrong with the file.
pub(crate) fn read_meta(path: &Path) -> Result<ModelMeta, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open it ({e})"))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut r = Reader {
        inner: BufReader::new(file),
        size,
    };
    r.meta()
}

struct Reader<R> {
    inner: R,
    /// The file's size: no length read from it may go past it.
    size: u64,
}

/// GGUF value types.
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;

/// The size of a scalar of type `t`, or `None` for a string, an array or no such type.
fn scalar_size(t: u32) -> Option<u64> {
    match t {
        0 | 1 | 7 => Some(1), // u8, i8, bool
        2 | 3 => Some(2),     // u16, i16
        4..=6 => Some(4),     // u32, i32, f32
        10..=12 => Some(8),   // u64, i64, f64
        _ => None,
    }
}

impl<R: Read + Seek> Reader<R> {
    fn meta(&mut self) -> Result<ModelMeta, String> {
        let mut magic = [0u8; 4];
        self.bytes(&mut magic)?;
        if &magic != b"GGUF" {
            return Err("is not a GGUF file (its first bytes are not GGUF)".into());
        }
        let version = self.u32()?;
        if !(2..=3).contains(&version) {
            return Err(format!(
                "is GGUF version {version}; versions 2 and 3 are read"
            ));
        }
        let _tensors = self.u64()?;
        let count = self.u64()?;
        let mut meta = ModelMeta::default();
        let (mut bos, mut eos, mut tokens) = (None, None, None::<Vec<String>>);
        for _ in 0..count {
            let key = self.string()?;
            let t = self.u32()?;
            match (key.as_str(), t) {
                ("tokenizer.chat_template", T_STRING) => meta.chat_template = Some(self.string()?),
                ("tokenizer.ggml.bos_token_id", _) => bos = self.integer(t)?,
                ("tokenizer.ggml.eos_token_id", _) => eos = self.integer(t)?,
                ("tokenizer.ggml.tokens", T_ARRAY) => tokens = Some(self.strings()?),
                _ => self.skip(t)?,
            }
        }
        let token = |id: Option<u64>| {
            let tokens = tokens.as_ref()?;
            tokens.get(usize::try_from(id?).ok()?).cloned()
        };
        meta.bos_token = token(bos);
        meta.eos_token = token(eos);
        Ok(meta)
    }

    fn bytes(&mut self, buf: &mut [u8]) -> Result<(), String> {
        self.inner
            .read_exact(buf)
            .map_err(|e| format!("ends inside its metadata ({e})"))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut b = [0u8; 4];
        self.bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut b = [0u8; 8];
        self.bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A length read from the file, checked against what the file could hold.
    fn length(&mut self) -> Result<u64, String> {
        let n = self.u64()?;
        if n > MAX_LEN || n > self.size {
            return Err(format!(
                "has a length of {n} in its metadata: the file is damaged"
            ));
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.length()?;
        let mut buf = vec![0u8; usize::try_from(n).map_err(|_| "a string too long")?];
        self.bytes(&mut buf)?;
        String::from_utf8(buf).map_err(|_| "has a metadata string that is not UTF-8".to_string())
    }

    /// An unsigned integer value of type `t` (a token id).
    fn integer(&mut self, t: u32) -> Result<Option<u64>, String> {
        Ok(match t {
            0 => {
                let mut b = [0u8; 1];
                self.bytes(&mut b)?;
                Some(u64::from(b[0]))
            }
            2 => {
                let mut b = [0u8; 2];
                self.bytes(&mut b)?;
                Some(u64::from(u16::from_le_bytes(b)))
            }
            4 | 5 => Some(u64::from(self.u32()?)),
            10 | 11 => Some(self.u64()?),
            other => {
                self.skip(other)?;
                None
            }
        })
    }

    /// An array of strings (the vocabulary).
    fn strings(&mut self) -> Result<Vec<String>, String> {
        let t = self.u32()?;
        let n = self.length()?;
        if t != T_STRING {
            self.skip_elements(t, n)?;
            return Ok(Vec::new());
        }
        (0..n).map(|_| self.string()).collect()
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), String> {
        let n = i64::try_from(n).map_err(|_| "a length too long".to_string())?;
        self.inner
            .seek(SeekFrom::Current(n))
            .map(|_| ())
            .map_err(|e| format!("cannot be read past its metadata ({e})"))
    }

    /// Skip a value of type `t`.
    fn skip(&mut self, t: u32) -> Result<(), String> {
        match t {
            T_STRING => {
                let n = self.length()?;
                self.skip_bytes(n)
            }
            T_ARRAY => {
                let et = self.u32()?;
                let n = self.length()?;
                self.skip_elements(et, n)
            }
            _ => match scalar_size(t) {
                Some(n) => self.skip_bytes(n),
                None => Err(format!("has a metadata value of unknown type {t}")),
            },
        }
    }

    fn skip_elements(&mut self, t: u32, n: u64) -> Result<(), String> {
        match scalar_size(t) {
            Some(size) => self.skip_bytes(size.saturating_mul(n)),
            None => (0..n).try_for_each(|_| self.skip(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF file's metadata, written as the format says (no tensors).
    fn gguf(kvs: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
        let mut f = b"GGUF".to_vec();
        f.extend(3u32.to_le_bytes());
        f.extend(0u64.to_le_bytes());
        f.extend((kvs.len() as u64).to_le_bytes());
        for (k, t, v) in kvs {
            f.extend(s(k));
            f.extend(t.to_le_bytes());
            f.extend(v);
        }
        f
    }

    fn s(text: &str) -> Vec<u8> {
        let mut v = (text.len() as u64).to_le_bytes().to_vec();
        v.extend(text.as_bytes());
        v
    }

    fn strings(items: &[&str]) -> Vec<u8> {
        let mut v = T_STRING.to_le_bytes().to_vec();
        v.extend((items.len() as u64).to_le_bytes());
        for i in items {
            v.extend(s(i));
        }
        v
    }

    fn meta_of(bytes: Vec<u8>) -> Result<ModelMeta, String> {
        let size = bytes.len() as u64;
        Reader {
            inner: std::io::Cursor::new(bytes),
            size,
        }
        .meta()
    }

    #[test]
    fn the_template_and_the_end_tokens_are_read_whatever_the_order() {
        let mut floats = 6u32.to_le_bytes().to_vec();
        floats.extend(3u64.to_le_bytes());
        floats.extend([0u8; 12]);
        let file = gguf(&[
            ("general.name", T_STRING, s("tiny")),
            (
                "tokenizer.ggml.eos_token_id",
                4,
                2u32.to_le_bytes().to_vec(),
            ),
            ("tokenizer.ggml.scores", T_ARRAY, floats),
            (
                "tokenizer.ggml.tokens",
                T_ARRAY,
                strings(&["<s>", "hi", "</s>"]),
            ),
            ("tokenizer.ggml.merges", T_ARRAY, strings(&["h i"])),
            (
                "tokenizer.ggml.bos_token_id",
                4,
                0u32.to_le_bytes().to_vec(),
            ),
            ("general.file_type", 4, 15u32.to_le_bytes().to_vec()),
            ("tokenizer.chat_template", T_STRING, s("{{ messages }}")),
        ]);
        let m = meta_of(file).unwrap();
        assert_eq!(m.chat_template.as_deref(), Some("{{ messages }}"));
        assert_eq!(m.bos_token.as_deref(), Some("<s>"));
        assert_eq!(m.eos_token.as_deref(), Some("</s>"));
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_panic() {
        assert!(meta_of(b"GGML1234".to_vec())
            .unwrap_err()
            .contains("not a GGUF"));
        let mut huge = gguf(&[]);
        huge.truncate(16);
        huge.extend(1u64.to_le_bytes());
        huge.extend(u64::MAX.to_le_bytes());
        assert!(meta_of(huge).unwrap_err().contains("damaged"));
        let cut = gguf(&[("tokenizer.chat_template", T_STRING, s("{{ x }}"))]);
        assert!(meta_of(cut[..cut.len() - 3].to_vec())
            .unwrap_err()
            .contains("ends inside"));
        let mut v1 = gguf(&[]);
        v1[4] = 1;
        assert!(meta_of(v1).unwrap_err().contains("version 1"));
        // every prefix of a good file fails cleanly
        let good = gguf(&[
            ("tokenizer.ggml.tokens", T_ARRAY, strings(&["a", "b"])),
            ("tokenizer.chat_template", T_STRING, s("t")),
        ]);
        for n in 0..good.len() {
            assert!(meta_of(good[..n].to_vec()).is_err(), "{n}");
        }
    }
}
