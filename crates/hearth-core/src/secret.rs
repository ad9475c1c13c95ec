//! Files that hold a secret (`[homeassistant] token_file`, `[mqtt] password_file`,
//! `[agent.openai] api_key_file`): used only when no other user of the machine can read or
//! change them. hearth runs on machines other people log into; a token that opens the house
//! must not be readable by all of them. And a secret sent over plain `http://` to another
//! machine crosses the network in clear: [`in_clear`] says when.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Why a secret file is refused: its mode lets other users in. The text (which the caller
/// puts after the file's name) says the mode and the commands that fix it.
pub(crate) fn check_private(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read its permissions ({e})"))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o007 != 0 {
        return Err(format!(
            "has mode {mode:03o}: other users of this machine can {} it; make it readable by \
             hearth alone: `sudo chown root:hearth {p} && sudo chmod 640 {p}` (or chmod 600 \
             when hearth's user owns it)",
            if mode & 0o002 != 0 { "change" } else { "read" },
            p = path.display()
        ));
    }
    if mode & 0o020 != 0 {
        return Err(format!(
            "has mode {mode:03o}: its group can change it; `sudo chmod g-w {}`",
            path.display()
        ));
    }
    Ok(())
}

/// The one word a secret file holds, trimmed, once the file is private ([`check_private`]).
/// The error (which the caller puts after the file's name) says what is wrong and ends with
/// `fix`, which says how to make the secret.
pub(crate) fn read_word(path: &Path, fix: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read ({e}): {fix}"))?;
    let word = text.trim();
    if word.is_empty() {
        return Err(format!("is empty: {fix}"));
    }
    if word.contains(char::is_whitespace) {
        return Err(format!(
            "holds more than one word; it must hold the secret alone: {fix}"
        ));
    }
    check_private(path)?;
    Ok(word.to_string())
}

/// Whether `url` sends a secret over plain `http://` to another machine, where it crosses
/// the network in clear (a server on this machine is fine).
pub(crate) fn in_clear(url: &str) -> bool {
    let Some(rest) = url.trim().strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    !(host == "localhost" || host == "::1" || host.starts_with("127."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with_mode(name: &str, mode: u32) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hearth-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, "token\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn only_the_owner_and_its_group_may_read_a_secret() {
        for mode in [0o600, 0o640, 0o400, 0o440] {
            let p = file_with_mode(&format!("ok{mode:o}"), mode);
            assert_eq!(check_private(&p), Ok(()), "{mode:o}");
        }
        let p = file_with_mode("world", 0o644);
        let e = check_private(&p).unwrap_err();
        assert!(e.contains("mode 644") && e.contains("can read it"), "{e}");
        assert!(e.contains("chmod 640"), "{e}");
        let p = file_with_mode("writable", 0o606);
        assert!(check_private(&p).unwrap_err().contains("can change it"));
        let p = file_with_mode("group-writable", 0o660);
        assert!(check_private(&p).unwrap_err().contains("g-w"));
        let e = check_private(Path::new("/nonexistent/hearth-token")).unwrap_err();
        assert!(e.starts_with("cannot read its permissions"), "{e}");
    }

    #[test]
    fn a_secret_goes_in_clear_only_over_http_to_another_machine() {
        for url in [
            "http://homeassistant.local:8123",
            "http://192.168.1.5:8123/",
            " http://gpu-box:8080/v1",
        ] {
            assert!(in_clear(url), "{url}");
        }
        for url in [
            "https://ha.lan:8123",
            "http://localhost:8123",
            "http://127.0.0.1:8080",
            "http://[::1]:8123",
        ] {
            assert!(!in_clear(url), "{url}");
        }
    }

    #[test]
    fn a_secret_file_holds_one_private_word() {
        let ok = file_with_mode("word", 0o600);
        assert_eq!(read_word(&ok, "FIX").unwrap(), "token");
        let p = file_with_mode("two-words", 0o600);
        std::fs::write(&p, "sk-1 sk-2\n").unwrap();
        let e = read_word(&p, "FIX").unwrap_err();
        assert!(
            e.contains("more than one word") && e.ends_with("FIX"),
            "{e}"
        );
        std::fs::write(&p, "\n").unwrap();
        assert_eq!(read_word(&p, "FIX").unwrap_err(), "is empty: FIX");
        let open = file_with_mode("open", 0o644);
        assert!(read_word(&open, "FIX").unwrap_err().contains("chmod"));
        let e = read_word(Path::new("/nonexistent/hearth-key"), "FIX").unwrap_err();
        assert!(e.starts_with("cannot be read") && e.ends_with("FIX"), "{e}");
    }
}
