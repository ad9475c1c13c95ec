//! Where things are: the hearth checkout the tests and benches read (its tools, session sets,
//! texts) and the `hearth` binary cargo built for them.

use std::path::{Path, PathBuf};

/// The hearth checkout: the workspace root, two directories above this crate's manifest.
pub fn root() -> &'static Path {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().and_then(Path::parent).unwrap_or(manifest)
}

/// The `hearth` binary of the test or bench running. Cargo builds it for hearth's integration
/// tests and benches and, since 1.94, says where at run time (`CARGO_BIN_EXE_hearth`); before
/// that only at build time, to the test's own crate, so otherwise it is found where cargo puts
/// it: in the directory above the running executable's `deps/`.
pub fn hearth_exe() -> PathBuf {
    if let Some(exe) = std::env::var_os("CARGO_BIN_EXE_hearth") {
        return PathBuf::from(exe);
    }
    let name = format!("hearth{}", std::env::consts::EXE_SUFFIX);
    match std::env::current_exe() {
        Ok(exe) => {
            let dir = exe.parent().unwrap_or(Path::new("."));
            let dir = if dir.ends_with("deps") {
                dir.parent().unwrap_or(dir)
            } else {
                dir
            };
            dir.join(name)
        }
        Err(_) => PathBuf::from(name),
    }
}
