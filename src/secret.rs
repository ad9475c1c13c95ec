//! Files that hold a secret (`[homeassistant] token_file`, `[mqtt] password_file`): used only
//! when no other user of the machine can read or change them. hearth runs on machines other
//! people log into; a token that opens the house must not be readable by all of them.

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
}
