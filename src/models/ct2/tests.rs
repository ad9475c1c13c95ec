//! The converter on a small synthetic Whisper and on the real faster-whisper tiny.en.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use half::f16;
use sha2::{Digest, Sha256};

use super::mel::mel_filters;
use super::model_bin::{values, ModelBin};
use super::vocabulary::byte_decoder;
use super::write::q8_0_block;
use super::*;

/// The sha256 of ggml-tiny.en.bin as scripts/ct2-to-ggml makes it from faster-whisper
/// tiny.en (`../shared/models/ggml-tiny.en.bin`).
const TINY_EN_SHA: &str = "49b35c0f0fa5e8fe48396546d4c3308e7cc3e8a50589273a99710c76fd373fdf";
const TINY_EN_BYTES: u64 = 77_704_698;

/// A real input or None when `HEARTH_SKIP_REAL_MODEL=1`; missing otherwise, the test
/// fails saying how to get it.
fn real(path: PathBuf, fix: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
        eprintln!(
            "skipping: {} is missing (HEARTH_SKIP_REAL_MODEL=1)",
            path.display()
        );
        return None;
    }
    panic!(
        "{} is missing: {fix} (or set HEARTH_SKIP_REAL_MODEL=1 locally)",
        path.display()
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-ct2-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A model.bin writer: variables of f16 values (or other types), aliases.
struct Bin {
    vars: Vec<(String, Vec<u32>, u8, Vec<u8>)>,
    aliases: Vec<(String, String)>,
}

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend(((s.len() + 1) as u16).to_le_bytes());
    out.extend(s.as_bytes());
    out.push(0);
}

impl Bin {
    /// A tiny Whisper: width 32, one layer each side, 4 mel bins, `vocab` tokens; the
    /// values count up from `seed` so that every tensor differs.
    fn whisper(vocab: u32) -> Bin {
        let mut b = Bin {
            vars: Vec::new(),
            aliases: vec![(
                "decoder/projection/weight".into(),
                "decoder/embeddings/weight".into(),
            )],
        };
        let d = 32;
        b.f16("encoder/conv1/weight", &[d, 4, 3]);
        b.f16("encoder/conv1/bias", &[d]);
        b.f16("encoder/conv2/weight", &[d, d, 3]);
        b.f16("encoder/conv2/bias", &[d]);
        b.f16("encoder/position_encodings/encodings", &[10, d]);
        b.int16("encoder/num_heads", 2);
        b.block("encoder/layer_0", d, false);
        b.norm("encoder/layer_norm", d);
        b.f16("decoder/embeddings/weight", &[vocab, d]);
        b.f16("decoder/position_encodings/encodings", &[8, d]);
        b.int16("decoder/num_heads", 2);
        b.block("decoder/layer_0", d, true);
        b.norm("decoder/layer_norm", d);
        b
    }

    fn block(&mut self, src: &str, d: u32, cross: bool) {
        let sa = format!("{src}/self_attention");
        self.f16(&format!("{sa}/linear_0/weight"), &[3 * d, d]);
        self.key_bias(&format!("{sa}/linear_0/bias"), 3, d);
        self.linear(&format!("{sa}/linear_1"), d, d);
        self.norm(&format!("{sa}/layer_norm"), d);
        if cross {
            let a = format!("{src}/attention");
            self.linear(&format!("{a}/linear_0"), d, d);
            self.f16(&format!("{a}/linear_1/weight"), &[2 * d, d]);
            self.key_bias(&format!("{a}/linear_1/bias"), 2, d);
            self.linear(&format!("{a}/linear_2"), d, d);
            self.norm(&format!("{a}/layer_norm"), d);
        }
        self.linear(&format!("{src}/ffn/linear_0"), 4 * d, d);
        self.linear(&format!("{src}/ffn/linear_1"), d, 4 * d);
        self.norm(&format!("{src}/ffn/layer_norm"), d);
    }

    fn f16(&mut self, name: &str, shape: &[u32]) {
        let n: u32 = shape.iter().product();
        let seed = self.vars.len() as f32;
        let data = (0..n)
            .flat_map(|i| f16::from_f32((seed + i as f32 * 0.37) % 5.0 - 2.5).to_le_bytes())
            .collect();
        self.vars.push((name.into(), shape.to_vec(), 4, data));
    }

    /// A fused bias whose key part (`[q; k; v]`'s second, `[k; v]`'s first) is zero.
    fn key_bias(&mut self, name: &str, parts: u32, d: u32) {
        self.f16(name, &[parts * d]);
        let data = &mut self.vars.last_mut().unwrap().3;
        let key = (parts as usize - 2) * 2 * d as usize;
        data[key..key + 2 * d as usize].fill(0);
    }

    fn linear(&mut self, src: &str, rows: u32, cols: u32) {
        self.f16(&format!("{src}/weight"), &[rows, cols]);
        self.f16(&format!("{src}/bias"), &[rows]);
    }

    fn norm(&mut self, src: &str, d: u32) {
        self.f16(&format!("{src}/gamma"), &[d]);
        self.f16(&format!("{src}/beta"), &[d]);
    }

    fn int16(&mut self, name: &str, v: i16) {
        self.vars
            .push((name.into(), vec![], 2, v.to_le_bytes().to_vec()));
    }

    fn bytes(&self, spec: &str) -> Vec<u8> {
        let mut out = 6u32.to_le_bytes().to_vec();
        string(&mut out, spec);
        out.extend(3u32.to_le_bytes());
        out.extend((self.vars.len() as u32).to_le_bytes());
        for (name, shape, dtype, data) in &self.vars {
            string(&mut out, name);
            out.push(shape.len() as u8);
            shape.iter().for_each(|d| out.extend(d.to_le_bytes()));
            out.push(*dtype);
            out.extend((data.len() as u32).to_le_bytes());
            out.extend(data);
        }
        out.extend((self.aliases.len() as u32).to_le_bytes());
        for (a, t) in &self.aliases {
            string(&mut out, a);
            string(&mut out, t);
        }
        out
    }
}

/// A folder with `bin` as model.bin and a small byte-level vocabulary.
fn folder(name: &str, model: &[u8], vocab: &str) -> PathBuf {
    let d = temp_dir(name);
    fs::write(d.join("model.bin"), model).unwrap();
    fs::write(d.join("vocabulary.txt"), vocab).unwrap();
    d
}

const VOCAB: &str = "!\n\"\nĠthe\nĊ\nhello\n<|endoftext|>\n<|startoftranscript|>\n";

/// A tensor of a ggml file: name, type, dims innermost first, data offset.
type GgmlTensor = (String, i32, Vec<i32>, usize);

/// A ggml file read back: its hyper-parameters, tokens and tensors.
fn ggml_tensors(b: &[u8]) -> (Vec<i32>, Vec<Vec<u8>>, Vec<GgmlTensor>) {
    let i32_at = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    assert_eq!(&b[..4], &GGML_MAGIC.to_le_bytes());
    let hp: Vec<i32> = (0..11).map(|i| i32_at(4 + 4 * i)).collect();
    let (n_mel, n_fft) = (i32_at(48) as usize, i32_at(52) as usize);
    let mut o = 56 + 4 * n_mel * n_fft;
    let mut toks = Vec::new();
    for _ in 0..i32_at(o) {
        o += 4;
        let n = i32_at(o) as usize;
        toks.push(b[o + 4..o + 4 + n].to_vec());
        o += n;
    }
    o += 4;
    let mut out = Vec::new();
    while o < b.len() {
        let (nd, nl, ty) = (i32_at(o) as usize, i32_at(o + 4) as usize, i32_at(o + 8));
        let dims: Vec<i32> = (0..nd).map(|i| i32_at(o + 12 + 4 * i)).collect();
        let name_at = o + 12 + 4 * nd;
        let name = String::from_utf8(b[name_at..name_at + nl].to_vec()).unwrap();
        let data = name_at + nl;
        let n: usize = dims.iter().map(|&d| d as usize).product();
        let size = match ty {
            GGML_TYPE_F32 => 4 * n,
            GGML_TYPE_F16 => 2 * n,
            _ => n / 32 * 34,
        };
        out.push((name, ty, dims, data));
        o = data + size;
    }
    (hp, toks, out)
}

#[test]
fn the_mel_filters_are_librosas_bit_for_bit() {
    // the filters inside the ggml-tiny.en.bin that scripts/ct2-to-ggml wrote from
    // whisper's mel_filters.npz (librosa's output)
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models/ggml-tiny.en.bin");
    let Some(path) = real(
        shared,
        "it is the workplace's shared/models/ggml-tiny.en.bin",
    ) else {
        return;
    };
    let mut head = vec![0u8; 56 + 80 * 201 * 4];
    File::open(path).unwrap().read_exact(&mut head).unwrap();
    assert_eq!(&head[48..56], &[80, 0, 0, 0, 201, 0, 0, 0]);
    let want: Vec<u32> = head[56..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let got: Vec<u32> = mel_filters(80).iter().map(|v| v.to_bits()).collect();
    let differ: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    assert!(
        differ.is_empty(),
        "{} differ, first at {:?}",
        differ.len(),
        differ.first()
    );
    // numpy's maximum(0, -0.0) is -0.0: the first value's sign bit is set
    assert_eq!(got[0], 0x8000_0000);
}

#[test]
fn faster_whisper_tiny_en_converts_to_the_known_ggml_file() {
    let Ok(dir) = crate::models::model_dir() else {
        return;
    };
    let fix = "run scripts/fetch-models peer";
    let Some(folder) = real(dir.join("faster-whisper-tiny.en"), fix) else {
        return;
    };
    let out = temp_dir("real").join("ggml-tiny.en.bin");
    let c = convert(&folder, &out, Matrices::F16).unwrap();
    assert_eq!(c.sha256, TINY_EN_SHA);
    assert_eq!(c.bytes, TINY_EN_BYTES);
    assert_eq!(fs::metadata(&out).unwrap().len(), TINY_EN_BYTES);
    assert_eq!((c.n_vocab, c.n_state, c.layers), (51864, 384, (4, 4)));
    let _ = fs::remove_dir_all(out.parent().unwrap());
}

#[test]
fn a_small_whisper_converts_in_whisper_cpps_order_and_types() {
    let d = folder("small", &Bin::whisper(12).bytes("WhisperSpec"), VOCAB);
    let out = d.join("out.bin");
    let c = convert(&d, &out, Matrices::F16).unwrap();
    let bytes = fs::read(&out).unwrap();
    assert_eq!(c.bytes, bytes.len() as u64);
    assert_eq!(c.sha256, crate::models::hex(&Sha256::digest(&bytes)));
    let (hp, toks, tensors) = ggml_tensors(&bytes);
    assert_eq!(hp, [12, 10, 32, 2, 1, 8, 32, 2, 1, 4, FTYPE_F16]);
    let want: Vec<&[u8]> = vec![b"!", b"\"", b" the", b"\n", b"hello"];
    assert_eq!(toks, want);
    let names: Vec<&str> = tensors.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(
        names[..5],
        [
            "encoder.positional_embedding",
            "encoder.conv1.weight",
            "encoder.conv1.bias",
            "encoder.conv2.weight",
            "encoder.conv2.bias"
        ]
    );
    let block: Vec<&str> = names
        .iter()
        .filter(|n| n.starts_with("decoder.blocks.0."))
        .copied()
        .collect();
    let p = "decoder.blocks.0.";
    let want: Vec<String> = [
        "attn.query.weight",
        "attn.query.bias",
        "attn.key.weight",
        "attn.value.weight",
        "attn.value.bias",
        "attn.out.weight",
        "attn.out.bias",
        "attn_ln.weight",
        "attn_ln.bias",
        "cross_attn.query.weight",
        "cross_attn.query.bias",
        "cross_attn.key.weight",
        "cross_attn.value.weight",
        "cross_attn.value.bias",
        "cross_attn.out.weight",
        "cross_attn.out.bias",
        "cross_attn_ln.weight",
        "cross_attn_ln.bias",
        "mlp.0.weight",
        "mlp.0.bias",
        "mlp.2.weight",
        "mlp.2.bias",
        "mlp_ln.weight",
        "mlp_ln.bias",
    ]
    .iter()
    .map(|n| format!("{p}{n}"))
    .collect();
    assert_eq!(block, want);
    assert_eq!(names.last(), Some(&"decoder.ln.bias"));
    let find = |n: &str| tensors.iter().find(|t| t.0 == n).unwrap();
    // conv bias: f32 [1, 32]; positional embedding f32; matrices f16; conv weights 3-D f16
    assert_eq!(
        (find("encoder.conv1.bias").1, &find("encoder.conv1.bias").2),
        (GGML_TYPE_F32, &vec![1, 32])
    );
    assert_eq!(find("decoder.positional_embedding").1, GGML_TYPE_F32);
    assert_eq!(
        (
            find("encoder.conv2.weight").1,
            &find("encoder.conv2.weight").2
        ),
        (GGML_TYPE_F16, &vec![3, 32, 32])
    );
    assert_eq!(find("encoder.blocks.0.attn.key.weight").2, vec![32, 32]);
    // the key is the fused projection's second third, bit for bit
    let bin = ModelBin::open(&d.join("model.bin")).unwrap();
    let fused = bin
        .var("encoder/layer_0/self_attention/linear_0/weight")
        .unwrap();
    let mut want = vec![0u8; 32 * 32 * 2];
    bin.read_at(fused.offset + 32 * 32 * 2, &mut want).unwrap();
    let at = find("encoder.blocks.0.attn.key.weight").3;
    assert_eq!(&bytes[at..at + want.len()], &want[..]);
    // a vector: f16 widened to f32 exactly
    let ln = bin.var("encoder/layer_norm/gamma").unwrap();
    let mut raw = vec![0u8; 64];
    bin.read_at(ln.offset, &mut raw).unwrap();
    let at = find("encoder.ln_post.weight").3;
    let widened: Vec<u8> = values(&raw, true)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(&bytes[at..at + 128], &widened[..]);
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn q8_0_quantises_the_matrices_as_ggmls_reference() {
    let d = folder("q8", &Bin::whisper(12).bytes("WhisperSpec"), VOCAB);
    let out = d.join("out.bin");
    convert(&d, &out, Matrices::Q8_0).unwrap();
    let bytes = fs::read(&out).unwrap();
    let (hp, _, tensors) = ggml_tensors(&bytes);
    assert_eq!(hp[10], 2007);
    let ty = |n: &str| tensors.iter().find(|t| t.0 == n).unwrap().1;
    assert_eq!(ty("decoder.token_embedding.weight"), GGML_TYPE_Q8_0);
    assert_eq!(ty("encoder.conv1.weight"), GGML_TYPE_F16);
    assert_eq!(ty("encoder.positional_embedding"), GGML_TYPE_F32);
    // one block by hand: max |x| = 127 → scale 1; halves round away from zero (numpy's
    // round would take 2.5 to 2)
    let mut x = [0f32; 32];
    x[..4].copy_from_slice(&[127.0, -1.5, 0.5, 2.5]);
    let block = q8_0_block(&x);
    assert_eq!(&block[..2], &f16::ONE.to_le_bytes());
    assert_eq!(block[2..6], [127, (-2i8) as u8, 1, 3]);
    assert!(block[6..].iter().all(|&q| q == 0));
    assert!(q8_0_block(&[0.0; 32]).iter().all(|&b| b == 0));
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn a_truncated_model_bin_says_to_fetch_it_again_and_leaves_no_output() {
    let whole = Bin::whisper(12).bytes("WhisperSpec");
    for cut in [3, 40, whole.len() / 2, whole.len() - 1] {
        let d = folder("truncated", &whole[..cut], VOCAB);
        let out = d.join("out.bin");
        let e = convert(&d, &out, Matrices::F16).unwrap_err();
        assert!(matches!(e, ConvertError::Truncated { .. }), "{cut}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("model.bin: truncated") && msg.contains("fetch the model folder again"),
            "{msg}"
        );
        assert!(!out.exists());
        let _ = fs::remove_dir_all(&d);
    }
    let mut longer = whole.clone();
    longer.extend([0, 0]);
    let d = folder("trailing", &longer, VOCAB);
    let e = convert(&d, &d.join("out.bin"), Matrices::F16)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("2 bytes after the last alias") && e.contains("fetch the model folder again"),
        "{e}"
    );
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn another_spec_says_to_point_at_a_faster_whisper_folder() {
    let d = folder("spec", &Bin::whisper(12).bytes("TransformerSpec"), VOCAB);
    let e = convert(&d, &d.join("out.bin"), Matrices::F16).unwrap_err();
    assert!(matches!(e, ConvertError::NotWhisper { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("a TransformerSpec, not a WhisperSpec: point the converter at a faster-whisper model folder"), "{msg}");
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn a_vocabulary_without_endoftext_says_which_vocabulary_to_use() {
    let d = folder(
        "vocab",
        &Bin::whisper(12).bytes("WhisperSpec"),
        "!\nhello\n",
    );
    let out = d.join("out.bin");
    let e = convert(&d, &out, Matrices::F16).unwrap_err();
    assert!(matches!(e, ConvertError::NoEndOfText { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("vocabulary.txt: no <|endoftext|> token")
            && msg.contains("use the vocabulary.txt of the same faster-whisper folder"),
        "{msg}"
    );
    assert!(!out.exists());
    fs::write(d.join("vocabulary.txt"), "hello world\n<|endoftext|>\n").unwrap();
    let e = convert(&d, &out, Matrices::F16).unwrap_err().to_string();
    assert!(
        e.contains("\"hello world\" is not byte-level BPE text"),
        "{e}"
    );
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn other_models_are_refused_naming_the_variable_and_the_fix() {
    // a key bias: not Whisper
    let mut b = Bin::whisper(12);
    let bias = b
        .vars
        .iter_mut()
        .find(|v| v.0 == "decoder/layer_0/attention/linear_1/bias")
        .unwrap();
    bias.3[0] = 0x3c; // 1.0 in the key half
    bias.3[1] = 0x3c;
    let d = folder("keybias", &b.bytes("WhisperSpec"), VOCAB);
    let e = convert(&d, &d.join("out.bin"), Matrices::F16)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("decoder.blocks.0.cross_attn: the key bias is not zero"),
        "{e}"
    );
    // bfloat16
    let mut b = Bin::whisper(12);
    b.vars[0].2 = 5;
    let d = folder("bf16", &b.bytes("WhisperSpec"), VOCAB);
    let e = convert(&d, &d.join("out.bin"), Matrices::F16)
        .unwrap_err()
        .to_string();
    assert!(e.contains("encoder/conv1/weight has data type 5 (bfloat16); convert the model with --quantization float16"), "{e}");
    // a variable missing
    let mut b = Bin::whisper(12);
    b.vars.retain(|v| v.0 != "decoder/layer_norm/gamma");
    let d = folder("missing", &b.bytes("WhisperSpec"), VOCAB);
    let e = convert(&d, &d.join("out.bin"), Matrices::F16)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no variable decoder/layer_norm/gamma: not a faster-whisper Whisper model"),
        "{e}"
    );
    // another binary version
    let mut bytes = Bin::whisper(12).bytes("WhisperSpec");
    bytes[0] = 5;
    let d = folder("version", &bytes, VOCAB);
    let e = convert(&d, &d.join("out.bin"), Matrices::F16)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("version 5") && e.contains("ct2-transformers-converter"),
        "{e}"
    );
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn byte_level_tokens_decode_as_gpt2s_table() {
    let decode = byte_decoder();
    assert_eq!(decode.len(), 256);
    assert_eq!(decode[&'Ġ'], b' ');
    assert_eq!(decode[&'Ċ'], b'\n');
    assert_eq!(decode[&'!'], b'!');
    assert_eq!(decode[&'\u{100}'], 0);
}
