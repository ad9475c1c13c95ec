//! What to write: the header's hyper-parameters and the tensors in OpenAI's state-dict order,
//! each a run of values in `model.bin` (fused projections split by rows) and its ggml type.

use super::model_bin::{values, ModelBin};
use super::{
    ConvertError, Matrices, F32_NAMES, FTYPE_F16, FTYPE_Q8_0, GGML_TYPE_F16, GGML_TYPE_F32,
    GGML_TYPE_Q8_0, Q8_BLOCK,
};

/// The 11 hyper-parameters of the header.
pub(super) fn hparams(bin: &ModelBin, matrices: Matrices) -> Result<[i32; 11], ConvertError> {
    let dim = |name: &str, axis: usize| -> Result<i32, ConvertError> {
        let v = bin.var(name)?;
        v.shape
            .get(axis)
            .and_then(|&d| i32::try_from(d).ok())
            .ok_or_else(|| bin.shape_err(name, &format!("has no dimension {axis}")))
    };
    let int = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
    let (emb, enc, dec) = (
        "decoder/embeddings/weight",
        "encoder/position_encodings/encodings",
        "decoder/position_encodings/encodings",
    );
    Ok([
        dim(emb, 0)?,
        dim(enc, 0)?,
        dim(enc, 1)?,
        int(bin.scalar("encoder/num_heads")?),
        int(layer_count(bin, "encoder") as i64),
        dim(dec, 0)?,
        dim(dec, 1)?,
        int(bin.scalar("decoder/num_heads")?),
        int(layer_count(bin, "decoder") as i64),
        dim("encoder/conv1/weight", 1)?,
        match matrices {
            Matrices::F16 => FTYPE_F16,
            Matrices::Q8_0 => FTYPE_Q8_0,
        },
    ])
}

fn layer_count(bin: &ModelBin, side: &str) -> usize {
    (0..)
        .take_while(|n| {
            bin.vars
                .contains_key(&format!("{side}/layer_{n}/ffn/linear_0/weight"))
        })
        .count()
}

/// A run of values in model.bin and the shape (outermost first) it is written with.
#[derive(Debug, Clone)]
pub(super) struct Slice {
    pub(super) offset: u64,
    pub(super) count: usize,
    pub(super) f16: bool,
    pub(super) shape: Vec<usize>,
}

/// One tensor to write.
#[derive(Debug)]
pub(super) struct Tensor {
    pub(super) name: String,
    pub(super) src: Slice,
    pub(super) ggml_type: i32,
}

/// The tensors in OpenAI's state-dict order, as whisper.cpp expects them.
pub(super) fn plan(bin: &ModelBin, matrices: Matrices) -> Result<Vec<Tensor>, ConvertError> {
    let mut p = Plan {
        bin,
        matrices,
        out: Vec::new(),
    };
    p.add(
        "encoder.positional_embedding",
        p.var("encoder/position_encodings/encodings")?,
    )?;
    for conv in ["conv1", "conv2"] {
        let src = format!("encoder/{conv}");
        p.add(
            &format!("encoder.{conv}.weight"),
            p.var(&format!("{src}/weight"))?,
        )?;
        p.add(
            &format!("encoder.{conv}.bias"),
            p.var(&format!("{src}/bias"))?.column(),
        )?;
    }
    for i in 0..layer_count(bin, "encoder") {
        let (dst, src) = (format!("encoder.blocks.{i}"), format!("encoder/layer_{i}"));
        p.self_attention(&dst, &src)?;
        p.mlp(&dst, &src)?;
    }
    p.norm("encoder.ln_post", "encoder/layer_norm")?;
    p.add(
        "decoder.positional_embedding",
        p.var("decoder/position_encodings/encodings")?,
    )?;
    p.add(
        "decoder.token_embedding.weight",
        p.var("decoder/embeddings/weight")?,
    )?;
    for i in 0..layer_count(bin, "decoder") {
        let (dst, src) = (format!("decoder.blocks.{i}"), format!("decoder/layer_{i}"));
        p.self_attention(&dst, &src)?;
        p.cross_attention(&dst, &src)?;
        p.mlp(&dst, &src)?;
    }
    p.norm("decoder.ln", "decoder/layer_norm")?;
    Ok(p.out)
}

/// The tensor list being built.
struct Plan<'a> {
    bin: &'a ModelBin,
    matrices: Matrices,
    out: Vec<Tensor>,
}

/// A projection's weight and bias.
type Linear = (Slice, Slice);

impl Plan<'_> {
    /// Append `name`: matrices f16 (q8_0 when asked for and two-dimensional), the rest f32.
    fn add(&mut self, name: &str, src: Slice) -> Result<(), ConvertError> {
        let f16 = src.shape.len() >= 2 && !F32_NAMES.contains(&name);
        let q8 = f16 && self.matrices == Matrices::Q8_0 && src.shape.len() == 2;
        if q8 && !src.count.is_multiple_of(Q8_BLOCK) {
            return Err(self
                .bin
                .shape_err(name, "cannot be cut into q8_0 blocks of 32"));
        }
        let ggml_type = match (q8, f16) {
            (true, _) => GGML_TYPE_Q8_0,
            (false, true) => GGML_TYPE_F16,
            (false, false) => GGML_TYPE_F32,
        };
        self.out.push(Tensor {
            name: name.to_string(),
            src,
            ggml_type,
        });
        Ok(())
    }

    /// The whole variable `name`, which must be f16 or f32.
    fn var(&self, name: &str) -> Result<Slice, ConvertError> {
        let v = self.bin.var(name)?;
        if !matches!(v.dtype, 0 | 4) {
            let what = if v.dtype == 1 { "int8" } else { "an integer" };
            return Err(ConvertError::DataType {
                path: self.bin.path.clone(),
                name: name.to_string(),
                dtype: v.dtype,
                what,
            });
        }
        Ok(Slice {
            offset: v.offset,
            count: v.shape.iter().product(),
            f16: v.dtype == 4,
            shape: v.shape.clone(),
        })
    }

    /// Part `i` of `parts` equal parts of `name` along its first axis.
    fn rows(&self, name: &str, parts: usize, i: usize) -> Result<Slice, ConvertError> {
        let whole = self.var(name)?;
        let first = whole.shape.first().copied().unwrap_or(0);
        if first == 0 || !first.is_multiple_of(parts) {
            let problem = format!("cannot be split in {parts} along its first axis");
            return Err(self.bin.shape_err(name, &problem));
        }
        let n = first / parts;
        let row = whole.count / first;
        let size = if whole.f16 { 2 } else { 4 };
        let mut shape = whole.shape.clone();
        shape[0] = n;
        Ok(Slice {
            offset: whole.offset + (i * n * row * size) as u64,
            count: n * row,
            f16: whole.f16,
            shape,
        })
    }

    fn linear_of(&self, src: &str) -> Result<Linear, ConvertError> {
        Ok((
            self.var(&format!("{src}/weight"))?,
            self.var(&format!("{src}/bias"))?,
        ))
    }

    fn split_linear(&self, src: &str, parts: usize, i: usize) -> Result<Linear, ConvertError> {
        Ok((
            self.rows(&format!("{src}/weight"), parts, i)?,
            self.rows(&format!("{src}/bias"), parts, i)?,
        ))
    }

    fn linear(&mut self, prefix: &str, (w, b): Linear) -> Result<(), ConvertError> {
        self.add(&format!("{prefix}.weight"), w)?;
        self.add(&format!("{prefix}.bias"), b)
    }

    fn norm(&mut self, prefix: &str, src: &str) -> Result<(), ConvertError> {
        let gamma = self.var(&format!("{src}/gamma"))?;
        let beta = self.var(&format!("{src}/beta"))?;
        self.linear(prefix, (gamma, beta))
    }

    /// query (weight, bias), key (weight; its bias must be zero), value, out.
    fn attention(&mut self, prefix: &str, qkvo: [Linear; 4]) -> Result<(), ConvertError> {
        let [q, (kw, kb), v, o] = qkvo;
        if !self.all_zero(&kb)? {
            return Err(ConvertError::KeyBias {
                name: prefix.to_string(),
            });
        }
        self.linear(&format!("{prefix}.query"), q)?;
        self.add(&format!("{prefix}.key.weight"), kw)?;
        self.linear(&format!("{prefix}.value"), v)?;
        self.linear(&format!("{prefix}.out"), o)
    }

    fn self_attention(&mut self, dst: &str, src: &str) -> Result<(), ConvertError> {
        let fused = format!("{src}/self_attention/linear_0");
        let qkvo = [
            self.split_linear(&fused, 3, 0)?,
            self.split_linear(&fused, 3, 1)?,
            self.split_linear(&fused, 3, 2)?,
            self.linear_of(&format!("{src}/self_attention/linear_1"))?,
        ];
        self.attention(&format!("{dst}.attn"), qkvo)?;
        self.norm(
            &format!("{dst}.attn_ln"),
            &format!("{src}/self_attention/layer_norm"),
        )
    }

    fn cross_attention(&mut self, dst: &str, src: &str) -> Result<(), ConvertError> {
        let fused = format!("{src}/attention/linear_1");
        let qkvo = [
            self.linear_of(&format!("{src}/attention/linear_0"))?,
            self.split_linear(&fused, 2, 0)?,
            self.split_linear(&fused, 2, 1)?,
            self.linear_of(&format!("{src}/attention/linear_2"))?,
        ];
        self.attention(&format!("{dst}.cross_attn"), qkvo)?;
        self.norm(
            &format!("{dst}.cross_attn_ln"),
            &format!("{src}/attention/layer_norm"),
        )
    }

    fn mlp(&mut self, dst: &str, src: &str) -> Result<(), ConvertError> {
        let first = self.linear_of(&format!("{src}/ffn/linear_0"))?;
        self.linear(&format!("{dst}.mlp.0"), first)?;
        let second = self.linear_of(&format!("{src}/ffn/linear_1"))?;
        self.linear(&format!("{dst}.mlp.2"), second)?;
        self.norm(&format!("{dst}.mlp_ln"), &format!("{src}/ffn/layer_norm"))
    }

    /// Whether every value of a (short) slice is zero.
    fn all_zero(&self, s: &Slice) -> Result<bool, ConvertError> {
        let mut raw = vec![0u8; s.count * if s.f16 { 2 } else { 4 }];
        self.bin.read_at(s.offset, &mut raw)?;
        Ok(values(&raw, s.f16).iter().all(|&v| v == 0.0))
    }
}

impl Slice {
    /// The same values as an [n, 1] matrix (a conv bias, as whisper.cpp wants it).
    fn column(mut self) -> Slice {
        self.shape = vec![self.count, 1];
        self
    }
}
