//! The timers' state file: `timers.json` in hearth's state directory ([`state_dir`]).
//!
//! Written whole on every change: to `timers.json.tmp`, fsynced, renamed over the file,
//! and the directory fsynced, so the file on disk is always one complete version, the old
//! or the new. Read at start: a missing file is no timers; a file that is not this
//! format's JSON (damaged, truncated by a disk that lied, another program's) is renamed to
//! `timers.json.bad-UNIX` and logged, and hearth starts with none.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Timer;

/// The file's name in the state directory.
pub const STATE_FILE: &str = "timers.json";

/// The lock a process holds while it keeps the timers ([`Store::lock`]).
const LOCK_FILE: &str = "timers.lock";

/// The format this build writes and reads.
const VERSION: u32 = 1;

/// Why the state could not be written (reading never fails: see the module).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no state directory: none of HEARTH_STATE_DIR, STATE_DIRECTORY, XDG_STATE_HOME or HOME is set; set HEARTH_STATE_DIR to a directory hearth may write")]
    NoDir,
    #[error("cannot write the timers to {path}: {source}; make the directory writable by hearth's user (systemd's StateDirectory= does)")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the timers in {dir} are kept by another hearth process (the service, or another `hearth run`); set, change and hear timers there, or give this one its own HEARTH_STATE_DIR")]
    Held { dir: PathBuf },
}

/// hearth's state directory: `$HEARTH_STATE_DIR`, else systemd's `$STATE_DIRECTORY` (its
/// first entry), else `$XDG_STATE_HOME/hearth`, else `~/.local/state/hearth`.
pub fn state_dir() -> Result<PathBuf, StoreError> {
    state_dir_from(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
}

pub fn state_dir_from(
    get: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<PathBuf, StoreError> {
    if let Some(d) = get("HEARTH_STATE_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = get("STATE_DIRECTORY") {
        let first = d
            .to_string_lossy()
            .split(':')
            .next()
            .unwrap_or_default()
            .to_string();
        return Ok(PathBuf::from(first));
    }
    if let Some(d) = get("XDG_STATE_HOME") {
        return Ok(PathBuf::from(d).join("hearth"));
    }
    get("HOME")
        .map(|h| PathBuf::from(h).join(".local/state/hearth"))
        .ok_or(StoreError::NoDir)
}

/// What the file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    version: u32,
    /// The id the next timer gets (ids are never reused).
    next_id: u64,
    timers: Vec<Timer>,
}

/// The timers as read at start.
#[derive(Debug, Default)]
pub struct Loaded {
    pub timers: Vec<Timer>,
    pub next_id: u64,
}

/// The state file.
#[derive(Debug, Clone)]
pub struct Store {
    path: PathBuf,
}

impl Store {
    /// The file `timers.json` in `dir`.
    pub fn in_dir(dir: &Path) -> Store {
        Store {
            path: dir.join(STATE_FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Take the timers for this process: an exclusive lock on `timers.lock` beside the
    /// file, held while the returned file is open (the kernel lets go when the process
    /// dies, even by SIGKILL). Two processes writing one file would lose each other's
    /// changes; the second gets [`StoreError::Held`].
    pub fn lock(&self) -> Result<std::fs::File, StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let err = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(err)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))
            .map_err(err)?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Held {
                dir: dir.to_path_buf(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(err(e)),
        }
    }

    /// The timers on disk; none when there is no file or it is not one of ours (kept aside
    /// and logged).
    pub fn load(&self) -> Loaded {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::default(),
            Err(e) => return self.put_aside(&format!("cannot be read ({e})")),
        };
        match serde_json::from_str::<Saved>(&text) {
            Ok(s) if s.version == VERSION => {
                let next_id = s.timers.iter().map(|t| t.id + 1).fold(s.next_id, u64::max);
                Loaded {
                    timers: s.timers,
                    next_id,
                }
            }
            Ok(s) => self.put_aside(&format!(
                "is version {} of the format; this hearth reads version {VERSION}",
                s.version
            )),
            Err(e) => self.put_aside(&format!("is not hearth's timers ({e})")),
        }
    }

    /// A file that cannot be used: renamed aside (never deleted), and no timers.
    fn put_aside(&self, why: &str) -> Loaded {
        let aside = self
            .path
            .with_extension(format!("json.bad-{}", jiff::Timestamp::now().as_second()));
        match std::fs::rename(&self.path, &aside) {
            Ok(()) => tracing::error!(
                file = %self.path.display(),
                kept = %aside.display(),
                "the timers file {why}: kept aside, and hearth starts with no timers"
            ),
            Err(e) => tracing::error!(
                file = %self.path.display(),
                error = %e,
                "the timers file {why}, and it could not be moved aside: hearth starts with no timers, and the next change overwrites it"
            ),
        }
        Loaded::default()
    }

    /// Write `timers` (and the next id) as the file's new version, durably.
    pub fn save(&self, timers: &[Timer], next_id: u64) -> Result<(), StoreError> {
        let err = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let saved = Saved {
            version: VERSION,
            next_id,
            timers: timers.to_vec(),
        };
        let text = serde_json::to_vec(&saved)
            .map_err(|e| err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(err)?;
        let tmp = self.path.with_extension("json.tmp");
        let mut f = File::create(&tmp).map_err(err)?;
        f.write_all(&text).map_err(err)?;
        f.sync_all().map_err(err)?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(err)?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timers::Run;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hearth-store-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn pasta() -> Timer {
        Timer {
            id: 7,
            name: Some("pasta".into()),
            total_ms: 480_000,
            run: Run::Running {
                due_ms: 1_800_000_000_000,
            },
            room: Some("kitchen".into()),
            alarm: None,
            reminder: None,
        }
    }

    #[test]
    fn what_is_saved_is_what_is_loaded() {
        let d = dir("round");
        let store = Store::in_dir(&d);
        assert!(store.load().timers.is_empty(), "no file: no timers");
        store.save(&[pasta()], 8).unwrap();
        let loaded = store.load();
        assert_eq!(loaded.timers, vec![pasta()]);
        assert_eq!(loaded.next_id, 8);
        assert!(!d.join("timers.json.tmp").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_bad_file_is_kept_aside_and_no_timers_are_loaded() {
        for (tag, text) in [
            (
                "torn",
                "{\"version\": 1, \"next_id\": 3, \"timers\": [{\"id\"",
            ),
            ("foreign", "{\"alarms\": []}"),
            ("future", "{\"version\": 9, \"next_id\": 1, \"timers\": []}"),
            ("binary", "\u{0}\u{1}"),
        ] {
            let d = dir(tag);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(STATE_FILE), text).unwrap();
            let store = Store::in_dir(&d);
            assert!(store.load().timers.is_empty(), "{tag}");
            let kept: Vec<_> = std::fs::read_dir(&d)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            assert!(!kept.contains(&STATE_FILE.to_string()), "{tag}: {kept:?}");
            let aside = kept.iter().find(|n| n.starts_with("timers.json.bad-"));
            let aside = aside.unwrap_or_else(|| panic!("{tag}: nothing kept: {kept:?}"));
            assert_eq!(
                std::fs::read_to_string(d.join(aside)).unwrap(),
                text,
                "{tag}"
            );
            // and the next save starts the file afresh
            store.save(&[pasta()], 8).unwrap();
            assert_eq!(store.load().timers.len(), 1, "{tag}");
            let _ = std::fs::remove_dir_all(&d);
        }
    }

    #[test]
    fn ids_are_never_reused_even_if_next_id_lags() {
        let d = dir("ids");
        let store = Store::in_dir(&d);
        store.save(&[pasta()], 2).unwrap();
        assert_eq!(store.load().next_id, 8);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_state_directory_follows_the_environment() {
        let with = |pairs: &'static [(&str, &str)]| {
            state_dir_from(move |k| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            })
        };
        let all: &[(&str, &str)] = &[
            ("HEARTH_STATE_DIR", "/h"),
            ("STATE_DIRECTORY", "/s1:/s2"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(with(all).unwrap(), PathBuf::from("/h"));
        assert_eq!(with(&all[1..]).unwrap(), PathBuf::from("/s1"));
        assert_eq!(with(&all[2..]).unwrap(), PathBuf::from("/x/hearth"));
        assert_eq!(
            with(&all[3..]).unwrap(),
            PathBuf::from("/home/u/.local/state/hearth")
        );
        assert!(with(&[])
            .unwrap_err()
            .to_string()
            .contains("HEARTH_STATE_DIR"));
    }
}
