//! Build script: link libsonic when the `piper` feature is on. piper-rs bundles espeak-ng, which
//! calls into sonic (speed changes) without linking it; Debian's `libsonic-dev` provides it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_PIPER").is_some() {
        println!("cargo:rustc-link-lib=dylib=sonic");
    }
}
