//! ONNX Runtime, loaded at run time: finding its shared library ([`find_library`]) and
//! making it this process's, once ([`load`]). The Piper voice and the Silero VAD share it.
//!
//! ort 2.0.0-rc.12 deadlocks on any failure to load the library (missing, not a library, too
//! old: building its error re-enters its own loader), so the library is found and test-loaded
//! here first, and every failure is an [`OnnxError`] naming the file and the fix. The first
//! library loaded is the process's for good: later calls with another path keep it (and say
//! so).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The ONNX Runtime library file `scripts/fetch-models` stores in the model directory (from
/// the PyPI `onnxruntime==1.31.1` wheel).
pub(crate) const ORT_LIB_FILE: &str = "libonnxruntime.so.1.31.1";
/// The environment variable naming the ONNX Runtime library file (ort's own convention).
pub(crate) const ORT_DYLIB_ENV: &str = "ORT_DYLIB_PATH";
/// What to say when the ONNX Runtime library is missing.
const ORT_FIX: &str = "run `hearth models pull lib:onnxruntime` (it puts libonnxruntime.so.1.31.1 in the model directory), or set ORT_DYLIB_PATH to a libonnxruntime.so file";

/// ONNX Runtime cannot be found or loaded.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    /// The ONNX Runtime shared library is not where it was looked for.
    #[error("ONNX Runtime library not found: looked for {}; {ORT_FIX}", looked_for(.looked))]
    Missing {
        /// Every file looked for, in order.
        looked: Vec<PathBuf>,
    },
    /// The ONNX Runtime library is there but does not load.
    #[error("cannot load the ONNX Runtime library {}: {cause}; use ONNX Runtime 1.24 or newer built for this machine: {ORT_FIX}", path.display())]
    Load {
        /// The library file.
        path: PathBuf,
        /// The loader's error.
        cause: String,
    },
}

/// The files looked for, for an error ("nothing" when there was no place to look).
fn looked_for(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nothing (no place to look)".to_string();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The directories [`find_library`] searches for a model's ONNX Runtime besides the
/// environment: the model file's own directory, the model directory and the executable's
/// directory (the voice and the Silero VAD look alike).
pub fn search_dirs(model: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = model.parent().filter(|d| !d.as_os_str().is_empty()) {
        dirs.push(d.to_path_buf());
    }
    if let Ok(d) = crate::models::model_dir() {
        dirs.push(d);
    }
    if let Some(d) = crate::models::exe_dir() {
        dirs.push(d);
    }
    dirs
}

/// The ONNX Runtime library to load, found without loading anything.
///
/// Looks, in order: `explicit` (must exist); `$ORT_DYLIB_PATH` when set (must exist); in each
/// of `dirs` (in order) for [`ORT_LIB_FILE`], `libonnxruntime.so` and `libonnxruntime.so.1`;
/// the same names in each `$LD_LIBRARY_PATH` entry and in `/usr/local/lib`, the multiarch
/// `/usr/lib/<triple>` and `/usr/lib`. A missing library is [`OnnxError::Missing`] listing
/// every file looked for. `env` looks environment variables up (empty counts as unset).
pub fn find_library(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
    dirs: &[PathBuf],
) -> Result<PathBuf, OnnxError> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(OnnxError::Missing {
                looked: vec![p.to_path_buf()],
            })
        };
    }
    if let Some(p) = get(ORT_DYLIB_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(OnnxError::Missing { looked: vec![p] })
        };
    }
    let mut search: Vec<PathBuf> = dirs.to_vec();
    if let Some(ld) = get("LD_LIBRARY_PATH") {
        search.extend(std::env::split_paths(&ld).filter(|d| !d.as_os_str().is_empty()));
    }
    search.push(PathBuf::from("/usr/local/lib"));
    search.extend(multiarch_lib_dirs());
    search.push(PathBuf::from("/usr/lib"));
    let mut looked = Vec::new();
    for dir in search {
        for name in [ORT_LIB_FILE, "libonnxruntime.so", "libonnxruntime.so.1"] {
            let p = dir.join(name);
            if looked.contains(&p) {
                continue;
            }
            if p.is_file() {
                return Ok(p);
            }
            looked.push(p);
        }
    }
    Err(OnnxError::Missing { looked })
}

/// `/usr/lib/<multiarch triple>` for this machine (all the common ones on an architecture
/// without a known triple).
pub(crate) fn multiarch_lib_dirs() -> Vec<PathBuf> {
    let known = [
        ("x86_64", "x86_64-linux-gnu"),
        ("aarch64", "aarch64-linux-gnu"),
        ("arm", "arm-linux-gnueabihf"),
        ("riscv64", "riscv64-linux-gnu"),
    ];
    let lib = Path::new("/usr/lib");
    match known.iter().find(|(a, _)| *a == std::env::consts::ARCH) {
        Some((_, triple)) => vec![lib.join(triple)],
        None => known.iter().map(|(_, t)| lib.join(t)).collect(),
    }
}

/// Whether ONNX Runtime's fast int8 matrix products saturate on this CPU: x86 without VNNI.
/// There the u8×s8 product adds pairs of products in 16 bits (AVX2's `vpmaddubsw`, and
/// AVX-512's without VNNI) and clips them (onnxruntime issues #6004, #14642, #16105): on an AVX2
/// CPU the int8 Smart Turn model said 0.026 where the reference says 0.878. VNNI
/// (`vpdpbusd`) adds in 32 bits, and arm64's dot products do too. The exact products cost
/// time (on an AVX-512 VNNI CPU, where they are not needed, a Smart Turn decision took 68 ms
/// instead of 45), so they are asked for only here.
pub fn int8_products_saturate() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !(std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

pub use loader::{builder, load};

mod loader {
    use std::panic::catch_unwind;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use tracing::warn;

    use super::OnnxError;

    /// Check that `path` is an ONNX Runtime library ort can use, by loading it here first:
    /// ort 2.0.0-rc.12 deadlocks on any failure while it loads the library (building its error
    /// re-enters the library loader), so it must only ever be handed one that loads. Returns
    /// the canonical path and the library's version.
    fn probe(path: &Path) -> Result<(PathBuf, String), OnnxError> {
        use std::ffi::{CStr, CString};
        use std::os::unix::ffi::OsStrExt;

        let fail = |cause: String| OnnxError::Load {
            path: path.to_path_buf(),
            cause,
        };
        let path = std::fs::canonicalize(path).map_err(|_| OnnxError::Missing {
            looked: vec![path.to_path_buf()],
        })?;
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| fail("the path holds a NUL byte".to_string()))?;
        // SAFETY: a valid C string; the handle is checked, and closed below.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a C string valid until the next dl* call.
            let err = unsafe { libc::dlerror() };
            let cause = if err.is_null() {
                "dlopen failed".to_string()
            } else {
                // SAFETY: non-null, NUL-terminated (see above)
                unsafe { CStr::from_ptr(err) }
                    .to_string_lossy()
                    .into_owned()
            };
            return Err(fail(cause));
        }
        let checked = (|| {
            // SAFETY: the handle is open; the name is a C string literal.
            let sym = unsafe { libc::dlsym(handle, c"OrtGetApiBase".as_ptr()) };
            if sym.is_null() {
                return Err(fail(
                    "it has no OrtGetApiBase: not an ONNX Runtime library".to_string(),
                ));
            }
            // SAFETY: OrtGetApiBase has this signature in every ONNX Runtime release.
            let get_base: unsafe extern "C" fn() -> *const ort::sys::OrtApiBase =
                unsafe { std::mem::transmute::<*mut libc::c_void, _>(sym) };
            // SAFETY: calling the library's own entry point; the result is checked.
            let base = unsafe { get_base() };
            if base.is_null() {
                return Err(fail("OrtGetApiBase returned nothing".to_string()));
            }
            // SAFETY: `base` points to the library's static OrtApiBase.
            let v = unsafe { ((*base).GetVersionString)() };
            let version = if v.is_null() {
                String::new()
            } else {
                // SAFETY: a static NUL-terminated string owned by the library
                unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned()
            };
            let mut parts = version.split('.');
            let major = parts.next().and_then(|m| m.parse::<u32>().ok());
            let minor = parts.next().and_then(|m| m.parse::<u32>().ok());
            if major != Some(1) || minor.is_none_or(|m| m < ort::MINOR_VERSION) {
                return Err(fail(format!(
                    "it is ONNX Runtime {version:?}; ort needs 1.{}.x or newer",
                    ort::MINOR_VERSION
                )));
            }
            // SAFETY: as above; asks for the API version ort was built against.
            let api = unsafe { ((*base).GetApi)(ort::sys::ORT_API_VERSION) };
            if api.is_null() {
                return Err(fail(format!(
                    "ONNX Runtime {version} does not offer API version {}",
                    ort::sys::ORT_API_VERSION
                )));
            }
            Ok(version)
        })();
        // SAFETY: the handle came from dlopen above and is not used after this.
        unsafe { libc::dlclose(handle) };
        checked.map(|v| (path, v))
    }

    /// The ONNX Runtime library this process loaded (ort keeps the first one for good).
    static ORT_LOADED: Mutex<Option<PathBuf>> = Mutex::new(None);

    /// Load ONNX Runtime from `path` once per process. `path` must have passed
    /// [`probe`] (ort hangs on a library it cannot load).
    fn init(path: &Path) -> Result<(), OnnxError> {
        let mut loaded = ORT_LOADED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = loaded.as_ref() {
            if first != path {
                warn!(
                    using = %first.display(),
                    asked = %path.display(),
                    "ONNX Runtime is already loaded in this process: keeping the first library"
                );
            }
            return Ok(());
        }
        let builder = catch_unwind(|| ort::init_from(path))
            .map_err(|_| OnnxError::Load {
                path: path.to_path_buf(),
                cause: "ort panicked while loading it".to_string(),
            })?
            .map_err(|e| OnnxError::Load {
                path: path.to_path_buf(),
                cause: e.to_string(),
            })?;
        builder.with_name("hearth").commit();
        *loaded = Some(path.to_path_buf());
        Ok(())
    }

    /// A session builder with what every model hearth runs on ONNX Runtime gets, decided
    /// here once: exact int8 products where the fast ones saturate
    /// ([`super::int8_products_saturate`]), through `session.x64quantprecision`, which makes
    /// ONNX Runtime multiply u8×u8 instead of u8×s8. Float models (the voice, Silero) have no
    /// int8 products to change.
    pub fn builder() -> Result<ort::session::builder::SessionBuilder, String> {
        let builder = ort::session::Session::builder().map_err(|e| e.to_string())?;
        if !super::int8_products_saturate() {
            return Ok(builder);
        }
        builder.with_precise_qmm().map_err(|e| e.to_string())
    }

    /// Make ONNX Runtime from `library` this process's (once; later calls keep the first):
    /// test-loaded first, since ort hangs on a library it cannot load. Returns the library
    /// used and its version. The Piper voice and the Silero VAD share it.
    pub fn load(library: &Path) -> Result<(PathBuf, String), OnnxError> {
        let (path, version) = probe(library)?;
        init(&path)?;
        Ok((path, version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let m: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("hearth-onnx-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn search_dirs_start_beside_the_model() {
        assert_eq!(
            search_dirs(Path::new("/m/en_US-joe-medium.onnx"))[0],
            PathBuf::from("/m")
        );
    }

    #[test]
    fn ort_library_lookup_order_and_errors() {
        let d = tmp("ort");
        let lib = d.join(ORT_LIB_FILE);
        // nothing there: every place is named, and the fix (unless this machine has a system
        // copy in /usr/lib or /usr/local/lib, which is then found)
        match find_library(None, env_of(&[]), std::slice::from_ref(&d)) {
            Err(err) => {
                let text = err.to_string();
                assert!(text.contains(&lib.display().to_string()), "{text}");
                assert!(text.contains("/usr/lib/libonnxruntime.so"), "{text}");
                assert!(
                    text.contains("hearth models pull lib:onnxruntime")
                        && text.contains("ORT_DYLIB_PATH"),
                    "{text}"
                );
            }
            Ok(found) => assert!(found.starts_with("/usr"), "{}", found.display()),
        }
        // found in a search directory
        std::fs::write(&lib, b"x").unwrap();
        assert_eq!(
            find_library(None, env_of(&[]), std::slice::from_ref(&d)).unwrap(),
            lib
        );
        // ORT_DYLIB_PATH wins over the directories, and must exist
        let other = d.join("libonnxruntime.so");
        let err = find_library(
            None,
            env_of(&[("ORT_DYLIB_PATH", other.to_str().unwrap())]),
            std::slice::from_ref(&d),
        )
        .unwrap_err();
        assert!(err.to_string().contains(&other.display().to_string()));
        std::fs::write(&other, b"x").unwrap();
        assert_eq!(
            find_library(
                None,
                env_of(&[("ORT_DYLIB_PATH", other.to_str().unwrap())]),
                &[]
            )
            .unwrap(),
            other
        );
        // an explicit path wins over everything and must exist
        let missing = d.join("nope.so");
        let err = find_library(
            Some(&missing),
            env_of(&[("ORT_DYLIB_PATH", other.to_str().unwrap())]),
            std::slice::from_ref(&d),
        )
        .unwrap_err();
        assert!(
            matches!(err, OnnxError::Missing { ref looked } if looked.as_slice() == std::slice::from_ref(&missing))
        );
        // LD_LIBRARY_PATH entries are searched too
        let ld = tmp("ort-ld");
        std::fs::write(ld.join("libonnxruntime.so.1"), b"x").unwrap();
        assert_eq!(
            find_library(
                None,
                env_of(&[("LD_LIBRARY_PATH", ld.to_str().unwrap())]),
                &[]
            )
            .unwrap(),
            ld.join("libonnxruntime.so.1")
        );
    }
}
