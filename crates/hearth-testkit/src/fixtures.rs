//! The spoken fixtures as utterances, and transcripts as plain words.

/// A fixture WAV (`$HEARTH_AUDIO_DIR`, else `../shared/audio` beside the checkout) as one
/// whole utterance at 16 kHz.
pub fn utterance(name: &str) -> hearth::voice::Utterance {
    let path = std::env::var_os("HEARTH_AUDIO_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::root().join("../shared/audio"))
        .join(name);
    hearth::voice::Utterance::whole(
        hearth::audio::wav::read_16k_mono(&path).expect("the fixture reads"),
    )
}

/// Lower case, letters, digits and spaces only: "Turn on the kitchen light." → "turn on the
/// kitchen light".
pub fn words(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect()
}

/// Write a secret (a token, a password) as hearth wants it: readable by its owner alone.
pub fn write_secret(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("writing a secret file");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .expect("chmod 600 on a secret file");
}
