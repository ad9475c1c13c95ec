//! The ggml file written: header, mel filters, tokens, then each tensor converted a chunk at a
//! time, hashed as it goes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use half::f16;
use sha2::{Digest, Sha256};

use super::mel::mel_filters;
use super::model_bin::{values, ModelBin};
use super::plan::Tensor;
use super::{
    io_err, ConvertError, CHUNK_VALUES, GGML_MAGIC, GGML_TYPE_F16, GGML_TYPE_F32, N_FFT, Q8_BLOCK,
};

/// The output file, hashed and counted as it is written.
struct Sink {
    w: BufWriter<File>,
    hasher: Sha256,
    bytes: u64,
    path: PathBuf,
}

impl Sink {
    fn create(path: &Path) -> Result<Sink, ConvertError> {
        let f = File::create(path).map_err(|cause| io_err("create", path, cause))?;
        Ok(Sink {
            w: BufWriter::with_capacity(1 << 20, f),
            hasher: Sha256::new(),
            bytes: 0,
            path: path.to_path_buf(),
        })
    }

    fn put(&mut self, b: &[u8]) -> Result<(), ConvertError> {
        self.w
            .write_all(b)
            .map_err(|cause| io_err("write", &self.path, cause))?;
        self.hasher.update(b);
        self.bytes += b.len() as u64;
        Ok(())
    }

    fn i32s(&mut self, v: &[i32]) -> Result<(), ConvertError> {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.put(&b)
    }

    /// Flush and sync; the size and the sha256.
    fn finish(self) -> Result<(u64, String), ConvertError> {
        let path = self.path;
        let f = self
            .w
            .into_inner()
            .map_err(|e| io_err("write", &path, e.into_error()))?;
        f.sync_all()
            .map_err(|cause| io_err("write", &path, cause))?;
        Ok((self.bytes, crate::models::hex(&self.hasher.finalize())))
    }
}

pub(super) fn write_ggml(
    out: &Path,
    bin: &ModelBin,
    hp: &[i32; 11],
    tokens: &[Vec<u8>],
    tensors: &[Tensor],
) -> Result<(u64, String), ConvertError> {
    let mut sink = Sink::create(out)?;
    sink.put(&GGML_MAGIC.to_le_bytes())?;
    sink.i32s(hp)?;
    // hp[9] is n_mels
    let n_mels = usize::try_from(hp[9]).unwrap_or(0);
    sink.i32s(&[hp[9], (N_FFT / 2 + 1) as i32])?;
    let mel: Vec<u8> = mel_filters(n_mels)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    sink.put(&mel)?;
    sink.i32s(&[len_i32(tokens.len())])?;
    for t in tokens {
        sink.i32s(&[len_i32(t.len())])?;
        sink.put(t)?;
    }
    for t in tensors {
        write_tensor(&mut sink, bin, t)?;
    }
    sink.finish()
}

fn len_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A tensor's header and its data, converted a chunk at a time.
fn write_tensor(sink: &mut Sink, bin: &ModelBin, t: &Tensor) -> Result<(), ConvertError> {
    let dims: Vec<i32> = t.src.shape.iter().rev().map(|&d| len_i32(d)).collect();
    sink.i32s(&[len_i32(dims.len()), len_i32(t.name.len()), t.ggml_type])?;
    sink.i32s(&dims)?;
    sink.put(t.name.as_bytes())?;
    let size = if t.src.f16 { 2 } else { 4 };
    let mut raw = vec![0u8; CHUNK_VALUES.min(t.src.count) * size];
    let mut done = 0;
    while done < t.src.count {
        let n = (t.src.count - done).min(CHUNK_VALUES);
        let chunk = &mut raw[..n * size];
        bin.read_at(t.src.offset + (done * size) as u64, chunk)?;
        sink.put(&encode(chunk, t.src.f16, t.ggml_type))?;
        done += n;
    }
    Ok(())
}

/// Values (f16 or f32 bytes) in the ggml type: f32 ones to f16 rounded to nearest even, as
/// numpy's `astype(float16)` does; q8_0 from the f16 values.
fn encode(raw: &[u8], f16_data: bool, ggml_type: i32) -> Vec<u8> {
    match (ggml_type, f16_data) {
        (GGML_TYPE_F16, true) | (GGML_TYPE_F32, false) => raw.to_vec(),
        (GGML_TYPE_F32, true) => values(raw, true)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        (GGML_TYPE_F16, false) => as_f16(raw).iter().flat_map(|h| h.to_le_bytes()).collect(),
        _ => {
            let halves = if f16_data {
                values(raw, true)
            } else {
                as_f16(raw).iter().map(|h| h.to_f32()).collect()
            };
            halves.chunks_exact(Q8_BLOCK).flat_map(q8_0_block).collect()
        }
    }
}

fn as_f16(raw_f32: &[u8]) -> Vec<f16> {
    values(raw_f32, false)
        .into_iter()
        .map(f16::from_f32)
        .collect()
}

/// ggml's reference q8_0 of 32 values: the f16 scale d = max|x|/127, then each x/d rounded
/// half away from zero (C's roundf), as i8.
pub(super) fn q8_0_block(x: &[f32]) -> Vec<u8> {
    let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let inv = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut out = Vec::with_capacity(2 + x.len());
    out.extend(f16::from_f32(d).to_le_bytes());
    out.extend(x.iter().map(|v| (v * inv).round() as i8 as u8));
    out
}
