//! One file fetched over HTTP: downloaded to `<file>.part`, resumed with `Range: bytes=N-`,
//! hashed while it streams, and renamed into place only once its sha256 matches.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sha2::{Digest, Sha256};
use tracing::{debug, info, warn};

use super::{hash_into, hex, io_err, with_suffix, write_stamp, ModelError, PART_SUFFIX};

/// Download attempts within one [`fetch`] when a transfer breaks off after making progress.
const MAX_ATTEMPTS: u32 = 5;
/// Read and hash buffer size.
pub(super) const CHUNK: usize = 256 * 1024;

/// Download `url` to `dest` (through `dest.part`, resuming one that is there), check its
/// sha256 against `expected` (lowercase hex) and stamp it. A transfer that breaks off after
/// making progress is resumed up to a few times; if it still fails, the part is kept and the
/// next call resumes it. Returns the bytes this call received.
pub(super) fn fetch(
    url: &str,
    dest: &Path,
    expected: &str,
    bar: &ProgressBar,
) -> Result<u64, ModelError> {
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| io_err("create the directory", parent, e))?;
    }
    let part = with_suffix(dest, PART_SUFFIX);
    let agent = agent();
    let before = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let mut attempt = 1;
    loop {
        match download_once(&agent, url, expected, &part, dest, bar) {
            Ok(Step::Complete) => break,
            Ok(Step::Again(e)) if attempt < MAX_ATTEMPTS => {
                warn!(attempt, error = %e, "download interrupted: resuming");
                attempt += 1;
            }
            Ok(Step::Again(e)) | Err(e) => return Err(e),
        }
    }
    let size = fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
    Ok(size.saturating_sub(before))
}

fn file_label(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What one download attempt leaves to do.
enum Step {
    /// The file is in place and verified.
    Complete,
    /// Worth another attempt (progress was made or the part was reset); the error is the
    /// one to report when out of attempts.
    Again(ModelError),
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        // byte ranges must index the file itself, not a compressed encoding of it
        .accept_encoding("identity")
        .user_agent(concat!("hearth/", env!("CARGO_PKG_VERSION")))
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        // the system's CA certificates, as apt and pip trust them (a mirror or proxy with a
        // local CA), not only the ones compiled in
        .tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                .build(),
        )
        .build()
        .new_agent()
}

/// A progress bar for a pull on stderr (hidden unless `progress`): bytes, rate, time left.
pub fn progress_bar(progress: bool, file: &str) -> ProgressBar {
    if !progress {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(style)
        .with_message(file.to_string())
}

fn download_once(
    agent: &ureq::Agent,
    url: &str,
    expected: &str,
    part: &Path,
    dest: &Path,
    bar: &ProgressBar,
) -> Result<Step, ModelError> {
    let label = file_label(dest);
    let mut offset = match fs::metadata(part) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
        Err(e) => return Err(io_err("read the metadata of", part, e)),
    };
    let mut hasher = Sha256::new();
    if offset > 0 {
        info!(part = %part.display(), bytes = offset, "resuming a partial download");
        bar.set_message(format!("{label} (checking the partial download)"));
        hash_into(part, &mut hasher, bar)?;
        bar.set_message(label.clone());
    }

    let mut req = agent.get(url);
    if offset > 0 {
        req = req.header("Range", format!("bytes={offset}-"));
    }
    debug!(url, offset, "GET");
    let resp = req.call().map_err(|e| ModelError::Network {
        url: url.to_string(),
        cause: e.to_string(),
        hint: resume_hint(part, offset),
    })?;
    let status = resp.status().as_u16();
    let content_range = resp
        .headers()
        .get("content-range")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut total = None;
    match status {
        206 => {
            let (start, len) = content_range
                .as_deref()
                .and_then(parse_content_range)
                .unwrap_or((u64::MAX, None));
            if start != offset {
                super::remove_file_if_there(part)?;
                return Ok(Step::Again(ModelError::BadRange {
                    url: url.to_string(),
                    asked: offset,
                    got: content_range.unwrap_or_default(),
                }));
            }
            total = len;
        }
        200 => {
            if offset > 0 {
                info!(
                    url,
                    "the server ignored the Range request: downloading from the start"
                );
                offset = 0;
                hasher = Sha256::new();
            }
        }
        416 if offset > 0 => {
            // Nothing past `offset`: the part is the whole file, or it is bad.
            let got = hex(&hasher.finalize());
            if got == expected {
                finish(part, dest, expected)?;
                return Ok(Step::Complete);
            }
            super::remove_file_if_there(part)?;
            return Ok(Step::Again(ModelError::ShaMismatch {
                url: url.to_string(),
                expected: expected.to_string(),
                got,
            }));
        }
        _ => {
            return Err(ModelError::HttpStatus {
                url: url.to_string(),
                status,
                fix: status_fix(status),
            })
        }
    }
    let mut body = resp.into_body();
    let total = total.or_else(|| body.content_length().map(|n| offset + n));
    if let Some(t) = total {
        bar.set_length(t);
    }
    bar.set_position(offset);

    let Copied { received, failed } =
        append_body(body.as_reader(), part, offset, &mut hasher, bar)?;
    if let Some(e) = failed {
        let err = ModelError::Network {
            url: url.to_string(),
            cause: e.to_string(),
            hint: resume_hint(part, offset + received),
        };
        return if received > 0 {
            Ok(Step::Again(err))
        } else {
            Err(err)
        };
    }
    let have = offset + received;
    if let Some(t) = total.filter(|&t| have < t) {
        let err = ModelError::Network {
            url: url.to_string(),
            cause: format!("the connection closed after {have} of {t} bytes"),
            hint: resume_hint(part, have),
        };
        return if received > 0 {
            Ok(Step::Again(err))
        } else {
            Err(err)
        };
    }
    let got = hex(&hasher.finalize());
    if got != expected {
        super::remove_file_if_there(part)?;
        return Err(ModelError::ShaMismatch {
            url: url.to_string(),
            expected: expected.to_string(),
            got,
        });
    }
    finish(part, dest, expected)?;
    Ok(Step::Complete)
}

/// What [`append_body`] received: the bytes written, and the read error that cut it short.
struct Copied {
    received: u64,
    failed: Option<io::Error>,
}

/// Append the body to `part` (created when `offset` is 0), hashing and counting as it goes;
/// the part is flushed and synced before returning. A read error ends the copy (reported in
/// [`Copied::failed`], the part kept for a resume); a write error is the error.
fn append_body(
    mut reader: impl Read,
    part: &Path,
    offset: u64,
    hasher: &mut Sha256,
    bar: &ProgressBar,
) -> Result<Copied, ModelError> {
    let mut file = if offset == 0 {
        File::create(part)
    } else {
        OpenOptions::new().append(true).open(part)
    }
    .map_err(|e| io_err("open for writing", part, e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut received: u64 = 0;
    let mut failed = None;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                failed = Some(e);
                break;
            }
        };
        let chunk = &buf[..n];
        file.write_all(chunk)
            .map_err(|e| io_err("write", part, e))?;
        hasher.update(chunk);
        received += n as u64;
        bar.inc(n as u64);
    }
    file.sync_all().map_err(|e| io_err("write", part, e))?;
    Ok(Copied { received, failed })
}

/// Rename a verified part into place and stamp it.
fn finish(part: &Path, dest: &Path, sha: &str) -> Result<(), ModelError> {
    fs::rename(part, dest).map_err(|e| ModelError::Io {
        action: format!("rename {} to", part.display()),
        path: dest.to_path_buf(),
        cause: e,
    })?;
    write_stamp(dest, sha);
    Ok(())
}

fn resume_hint(part: &Path, kept: u64) -> String {
    if kept > 0 {
        format!(
            "check the network (or pass --url with a mirror) and run the command again: it resumes from the {kept} bytes kept in {}",
            part.display()
        )
    } else {
        "check the network and the URL (or pass --url with a mirror), then run the command again"
            .to_string()
    }
}

fn status_fix(status: u16) -> String {
    match status {
        404 | 410 => "the file is not at that URL: check the preset's [model] url, or pass --url with one that serves it".into(),
        401 | 403 => "access denied: the file may be gated or the mirror may need credentials; download it by hand into the model directory, or pass --url with another mirror".into(),
        429 | 500..=599 => "the server is busy or failing: try again later, or pass --url with a mirror".into(),
        _ => "unexpected answer: check the URL, or pass --url with a mirror".into(),
    }
}

/// `bytes START-END/TOTAL` → (START, TOTAL if known).
fn parse_content_range(v: &str) -> Option<(u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let (start, _end) = range.split_once('-')?;
    Some((start.trim().parse().ok()?, total.trim().parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_parses() {
        assert_eq!(
            parse_content_range("bytes 100-199/200"),
            Some((100, Some(200)))
        );
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("bytes */200"), None);
        assert_eq!(parse_content_range("items 1-2/3"), None);
    }

    #[test]
    fn status_codes_get_advice() {
        assert!(status_fix(404).contains("--url"));
        assert!(status_fix(403).contains("gated"));
        assert!(status_fix(503).contains("later"));
    }
}
