//! `model.bin` indexed: every variable's shape, data type and offset (aliases resolved), read
//! through its header with the data skipped; values read where they lie.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use half::f16;

use super::{io_err, ConvertError, CT2_VERSION};

/// A variable's place in model.bin.
#[derive(Debug, Clone)]
pub(super) struct Var {
    pub(super) shape: Vec<usize>,
    pub(super) dtype: u8,
    pub(super) offset: u64,
}

/// model.bin, indexed: its variables (aliases resolved) and the open file.
pub(super) struct ModelBin {
    pub(super) path: PathBuf,
    file: File,
    pub(super) vars: HashMap<String, Var>,
}

impl ModelBin {
    /// Index `path`: every variable's shape, type and offset, the data skipped.
    pub(super) fn open(path: &Path) -> Result<ModelBin, ConvertError> {
        let file = File::open(path).map_err(|cause| io_err("open", path, cause))?;
        let len = file
            .metadata()
            .map_err(|cause| io_err("read the metadata of", path, cause))?
            .len();
        let mut r = Header {
            inner: BufReader::new(&file),
            pos: 0,
            len,
            path,
        };
        let vars = r.index()?;
        Ok(ModelBin {
            path: path.to_path_buf(),
            file,
            vars,
        })
    }

    /// The variable `name`, or the error naming it.
    pub(super) fn var(&self, name: &str) -> Result<&Var, ConvertError> {
        self.vars
            .get(name)
            .ok_or_else(|| ConvertError::MissingVariable {
                path: self.path.clone(),
                name: name.to_string(),
            })
    }

    /// Fill `buf` from `offset`.
    pub(super) fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), ConvertError> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|cause| io_err("read", &self.path, cause))
    }

    /// A scalar variable (a head count) as an integer.
    pub(super) fn scalar(&self, name: &str) -> Result<i64, ConvertError> {
        let v = self.var(name)?;
        let size = dtype_size(v.dtype);
        if !v.shape.is_empty() || size == 0 {
            return Err(self.shape_err(name, "is not a scalar"));
        }
        let mut b = [0u8; 4];
        self.read_at(v.offset, &mut b[..size])?;
        Ok(match v.dtype {
            0 => f32::from_le_bytes(b) as i64,
            1 => i64::from(b[0] as i8),
            2 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            3 => i64::from(i32::from_le_bytes(b)),
            _ => f16::from_le_bytes([b[0], b[1]]).to_f32() as i64,
        })
    }

    pub(super) fn shape_err(&self, name: &str, problem: &str) -> ConvertError {
        ConvertError::Shape {
            path: self.path.clone(),
            name: name.to_string(),
            problem: problem.to_string(),
        }
    }
}

/// The bytes of one data type (0: not one this reads).
fn dtype_size(dtype: u8) -> usize {
    match dtype {
        1 => 1,
        2 | 4 => 2,
        0 | 3 => 4,
        _ => 0,
    }
}

/// model.bin's header, read in order, the data skipped.
struct Header<'a> {
    inner: BufReader<&'a File>,
    pos: u64,
    len: u64,
    path: &'a Path,
}

impl Header<'_> {
    /// Every variable and alias, after checking the version and the spec.
    fn index(&mut self) -> Result<HashMap<String, Var>, ConvertError> {
        let version = self.u32()?;
        if version != CT2_VERSION {
            return Err(ConvertError::Version {
                path: self.path.to_path_buf(),
                version,
            });
        }
        let spec = self.string()?;
        self.u32()?; // the spec revision
        if spec != "WhisperSpec" {
            return Err(ConvertError::NotWhisper {
                path: self.path.to_path_buf(),
                spec,
            });
        }
        let mut vars = HashMap::new();
        for _ in 0..self.u32()? {
            let (name, var) = self.variable()?;
            vars.insert(name, var);
        }
        for _ in 0..self.u32()? {
            let (alias, target) = (self.string()?, self.string()?);
            let var = vars.get(&target).cloned().ok_or_else(|| {
                self.malformed(format!("the alias {alias} names no variable {target}"))
            })?;
            vars.insert(alias, var);
        }
        if self.pos != self.len {
            return Err(self.malformed(format!(
                "{} bytes after the last alias",
                self.len - self.pos
            )));
        }
        Ok(vars)
    }

    /// One variable's header; its data is skipped.
    fn variable(&mut self) -> Result<(String, Var), ConvertError> {
        let name = self.string()?;
        let rank = self.u8()?;
        let shape = (0..rank)
            .map(|_| self.u32().map(|d| d as usize))
            .collect::<Result<Vec<_>, _>>()?;
        let dtype = self.u8()?;
        let nbytes = self.u32()?;
        let what = match dtype {
            5 => Some("bfloat16"),
            d if dtype_size(d) == 0 => Some("unknown"),
            _ => None,
        };
        if let Some(what) = what {
            return Err(ConvertError::DataType {
                path: self.path.to_path_buf(),
                name,
                dtype,
                what,
            });
        }
        let count: usize = shape.iter().product();
        if count * dtype_size(dtype) != nbytes as usize {
            return Err(self.malformed(format!(
                "variable {name} has {nbytes} bytes for its shape {shape:?}"
            )));
        }
        let offset = self.pos;
        self.skip(u64::from(nbytes))?;
        Ok((
            name,
            Var {
                shape,
                dtype,
                offset,
            },
        ))
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], ConvertError> {
        let mut b = [0u8; N];
        self.fill(&mut b)?;
        Ok(b)
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), ConvertError> {
        match self.inner.read_exact(buf) {
            Ok(()) => {
                self.pos += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(self.truncated()),
            Err(cause) => Err(io_err("read", self.path, cause)),
        }
    }

    fn u8(&mut self) -> Result<u8, ConvertError> {
        Ok(self.take::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, ConvertError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    /// A u16 length (counting the NUL) and the bytes with the NUL.
    fn string(&mut self) -> Result<String, ConvertError> {
        let n = u16::from_le_bytes(self.take()?);
        let mut b = vec![0u8; usize::from(n)];
        self.fill(&mut b)?;
        if b.pop() != Some(0) {
            return Err(self.malformed("a string without its NUL".into()));
        }
        String::from_utf8(b).map_err(|_| self.malformed("a string that is not UTF-8".into()))
    }

    fn skip(&mut self, n: u64) -> Result<(), ConvertError> {
        if self.pos + n > self.len {
            return Err(self.truncated());
        }
        let step = i64::try_from(n).map_err(|_| self.truncated())?;
        self.inner
            .seek_relative(step)
            .map_err(|cause| io_err("read", self.path, cause))?;
        self.pos += n;
        Ok(())
    }

    fn truncated(&self) -> ConvertError {
        ConvertError::Truncated {
            path: self.path.to_path_buf(),
            detail: format!(
                "it ends at byte {} in the middle of its header or data",
                self.len
            ),
        }
    }

    fn malformed(&self, problem: String) -> ConvertError {
        ConvertError::Malformed {
            path: self.path.to_path_buf(),
            problem,
        }
    }
}

/// f16 or f32 little-endian bytes as f32 values.
pub(super) fn values(raw: &[u8], f16_data: bool) -> Vec<f32> {
    if f16_data {
        raw.chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect()
    } else {
        raw.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}
