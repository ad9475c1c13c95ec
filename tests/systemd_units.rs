//! The systemd integration in `systemd/`, checked by the real tools:
//!
//! - `hearth.service`: `systemd-analyze verify` (no warnings about it) and
//!   `systemd-analyze security --offline=true` (exposure at most 2.5), and the directives the
//!   daemon relies on (Type=notify, the watchdog, the directories, the devices).
//! - `hearth.sysusers` and `hearth.tmpfiles`: applied by `systemd-sysusers --root` and
//!   `systemd-tmpfiles --root --create` to an empty image; users, groups, owners and modes.
//! - `io.hearth.Agent1.conf`: loaded by a real `dbus-daemon` with the system bus's default deny
//!   rules; a small zbus service owns io.hearth.Agent1 as user hearth, and clients running as
//!   other users (this test binary again, under `setpriv`) show what is allowed and denied.
//! - `install`: `bash -n`, a `--dry-run` that names every destination, and a real install into
//!   an image root (`--root`): files, owners, modes, the generated configuration, the board
//!   drop-ins (verified and scored like the unit) and a second run that keeps local edits.
//!
//! The tests that create users or run processes as other users need root (CI runs as root);
//! without root they fail saying so, unless HEARTH_SKIP_ROOT_TESTS=1 (never set in CI).
//! A missing tool (systemd-analyze, dbus-daemon, setpriv) fails with the package to install.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The highest exposure score `systemd-analyze security` may give the unit.
const MAX_EXPOSURE: f64 = 2.5;
/// The ExecStart line of the shipped unit (the install script rewrites the prefix).
const EXEC_START: &str = "ExecStart=/usr/local/bin/hearth run --bus system";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn systemd_file(name: &str) -> PathBuf {
    repo().join("systemd").join(name)
}

/// A scratch directory (mode 0755, so processes of other users can reach into it), removed
/// when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        use std::os::unix::fs::PermissionsExt;
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hearth-units-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a scratch directory");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
            .expect("chmod 0755 on the scratch directory");
        Scratch(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run a command to its end; a program that cannot be started fails the test with the fix.
fn output(cmd: &mut Command, package: &str) -> Output {
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run {program} ({e}): install the Debian package {package} (scripts/setup does)"
        )
    })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// True when the test may do what needs root. Not root but `sudo -n` works (a CI machine
/// with passwordless sudo): this test is run again under sudo, its result asserted, and
/// false returned. Otherwise a failure saying so, or with HEARTH_SKIP_ROOT_TESTS=1 a
/// printed skip.
fn root_or_skip(what: &str) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    if std::env::var("HEARTH_SKIP_ROOT_TESTS").as_deref() == Ok("1") {
        eprintln!(
            "SKIPPED: {what} needs root; HEARTH_SKIP_ROOT_TESTS=1 is set (CI runs it as root)"
        );
        return false;
    }
    let sudo = Command::new("sudo")
        .args(["-n", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if sudo {
        // libtest names each test's thread after the test
        let name = std::thread::current()
            .name()
            .expect("libtest names the test thread")
            .to_string();
        let exe = std::env::current_exe().expect("the test binary's path");
        let status = Command::new("sudo")
            .args(["-n", "--preserve-env"])
            .arg(&exe)
            .args(["--exact", &name, "--nocapture", "--include-ignored"])
            .status()
            .expect("running the test under sudo");
        assert!(
            status.success(),
            "{what}: {name} failed when run as root (sudo)"
        );
        return false;
    }
    panic!(
        "{what} needs root. Run the tests as root (as CI does), or set \
         HEARTH_SKIP_ROOT_TESTS=1 to skip this test locally"
    );
}

/// The unit with ExecStart pointing at the hearth binary cargo built (verify checks that the
/// executable exists), written to `dir/hearth.service`.
fn unit_for_test(dir: &Path) -> PathBuf {
    let unit =
        std::fs::read_to_string(systemd_file("hearth.service")).expect("systemd/hearth.service");
    assert_eq!(
        unit.lines()
            .filter(|l| l.starts_with("ExecStart="))
            .collect::<Vec<_>>(),
        [EXEC_START],
        "hearth.service must start the daemon with `{EXEC_START}`"
    );
    let exe = env!("CARGO_BIN_EXE_hearth");
    let path = dir.join("hearth.service");
    std::fs::write(&path, unit.replace("/usr/local/bin/hearth", exe))
        .expect("writing the unit copy");
    path
}

/// `systemd-analyze verify` on a unit (with the drop-ins found on `SYSTEMD_UNIT_PATH`=`dir`):
/// it must succeed and say nothing about hearth.service.
fn assert_verifies(unit: &Path, dir: &Path) {
    let out = output(
        Command::new("systemd-analyze")
            .args(["verify", "--man=false", "--generators=false"])
            .arg(unit)
            .env("SYSTEMD_UNIT_PATH", format!("{}:", dir.display())),
        "systemd",
    );
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "systemd-analyze verify {} failed ({}):\n{stderr}",
        unit.display(),
        out.status
    );
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("hearth.service"))
        .collect();
    assert!(
        ours.is_empty(),
        "systemd-analyze verify warns about the unit:\n{}",
        ours.join("\n")
    );
}

/// The overall exposure `systemd-analyze security --offline=true` gives a unit (drop-ins from
/// `dir`), and its whole report.
fn exposure(unit: &Path, dir: &Path) -> (f64, String) {
    let out = output(
        Command::new("systemd-analyze")
            .args(["security", "--offline=true", "--no-pager"])
            .arg(unit)
            .env("SYSTEMD_UNIT_PATH", format!("{}:", dir.display())),
        "systemd",
    );
    let report = text(&out.stdout);
    let marker = "Overall exposure level for hearth.service:";
    let score = report
        .lines()
        .find_map(|l| {
            l.split_once(marker)
                .map(|(_, rest)| rest.trim().to_string())
        })
        .and_then(|rest| {
            rest.split_whitespace()
                .next()
                .and_then(|s| s.parse::<f64>().ok())
        })
        .unwrap_or_else(|| {
            panic!(
                "systemd-analyze security --offline=true printed no \"{marker} X.Y\" line \
                 (this systemd is too old for --offline: it needs 250 or later); status {}, \
                 stdout:\n{report}\nstderr:\n{}",
                out.status,
                text(&out.stderr)
            )
        });
    (score, report)
}

/// The unit's directives as (section, key, value), in order.
fn directives(unit: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut all = Vec::new();
    for line in unit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.to_string();
        } else if let Some((k, v)) = line.split_once('=') {
            all.push((section.clone(), k.trim().to_string(), v.trim().to_string()));
        }
    }
    all
}

#[test]
fn the_unit_passes_systemd_analyze_verify() {
    let dir = Scratch::new("verify");
    let unit = unit_for_test(dir.path());
    assert_verifies(&unit, dir.path());
}

#[test]
fn the_unit_exposure_is_at_most_2_5() {
    let dir = Scratch::new("security");
    let unit = unit_for_test(dir.path());
    let (score, report) = exposure(&unit, dir.path());
    println!("systemd-analyze security --offline=true: hearth.service exposure {score}");
    assert!(
        score <= MAX_EXPOSURE,
        "exposure {score} > {MAX_EXPOSURE}:\n{report}"
    );
}

#[test]
fn the_unit_sets_what_the_daemon_relies_on() {
    let unit =
        std::fs::read_to_string(systemd_file("hearth.service")).expect("systemd/hearth.service");
    let d = directives(&unit);
    let values = |key: &str| -> Vec<String> {
        d.iter()
            .filter(|(s, k, _)| s == "Service" && k == key)
            .map(|(_, _, v)| v.clone())
            .collect()
    };
    let one = |key: &str| -> String {
        let v = values(key);
        assert_eq!(v.len(), 1, "[Service] {key}= should be set once: {v:?}");
        v[0].clone()
    };
    let words = |key: &str| -> BTreeSet<String> {
        values(key)
            .iter()
            .flat_map(|v| v.split_whitespace().map(String::from).collect::<Vec<_>>())
            .collect()
    };
    let seconds = |key: &str| -> u64 {
        let v = one(key);
        v.trim_end_matches('s')
            .parse()
            .unwrap_or_else(|_| panic!("{key}={v}: expected plain seconds"))
    };
    for (key, want) in [
        ("Type", "notify"),
        ("NotifyAccess", "main"),
        ("ExecStart", "/usr/local/bin/hearth run --bus system"),
        ("Restart", "on-failure"),
        ("User", "hearth"),
        ("Group", "hearth"),
        ("StateDirectory", "hearth"),
        ("CacheDirectory", "hearth"),
        ("ConfigurationDirectory", "hearth"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("DevicePolicy", "closed"),
        ("SystemCallArchitectures", "native"),
        ("MemoryDenyWriteExecute", "yes"),
        ("RestrictRealtime", "yes"),
        ("LockPersonality", "yes"),
        ("RestrictSUIDSGID", "yes"),
        ("ProtectProc", "invisible"),
        ("UMask", "0077"),
        ("CapabilityBoundingSet", ""),
        // bounded for a run of months (the exposure test still holds with them)
        ("MemoryMax", "75%"),
        ("TasksMax", "256"),
    ] {
        assert_eq!(one(key), want, "[Service] {key}");
    }
    assert_eq!(seconds("WatchdogSec"), 30);
    assert!(
        (1..=10).contains(&seconds("RestartSec")),
        "RestartSec: a few seconds"
    );
    assert!(
        seconds("TimeoutStartSec") >= 120,
        "TimeoutStartSec: long enough to load models on a Pi"
    );
    assert_eq!(
        words("SupplementaryGroups"),
        BTreeSet::from(["audio".to_string(), "gpio".to_string()])
    );
    assert_eq!(
        words("RestrictAddressFamilies"),
        ["AF_UNIX", "AF_INET", "AF_INET6"].map(String::from).into()
    );
    let devices = values("DeviceAllow");
    assert!(
        devices.contains(&"char-alsa rw".to_string()),
        "DeviceAllow: {devices:?}"
    );
    assert!(
        devices.contains(&"char-gpiochip rw".to_string()),
        "DeviceAllow: {devices:?}"
    );
    assert!(values("SystemCallFilter").contains(&"@system-service".to_string()));
    // fork/exec of hearth-stt and tool programs must stay possible: no filter removes @process
    assert!(
        values("SystemCallFilter")
            .iter()
            .all(|v| !v.contains("@process")),
        "SystemCallFilter must leave fork/exec (hearth-stt, tool programs)"
    );
    assert!(d.contains(&(
        "Install".into(),
        "WantedBy".into(),
        "multi-user.target".into()
    )));
}

#[test]
fn sysusers_creates_the_user_and_groups_in_an_image() {
    let root = Scratch::new("sysusers");
    let conf = systemd_file("hearth.sysusers");
    // syntax first: --dry-run parses every line
    let dry = output(
        Command::new("systemd-sysusers")
            .arg("--dry-run")
            .arg("--root")
            .arg(root.path())
            .arg(&conf),
        "systemd",
    );
    assert!(
        dry.status.success(),
        "systemd-sysusers --dry-run: {}",
        text(&dry.stderr)
    );
    let dry_err = text(&dry.stderr);
    assert!(
        !dry_err.contains("hearth.sysusers:"),
        "systemd-sysusers complains about a line:\n{dry_err}"
    );
    std::fs::create_dir_all(root.path().join("etc")).expect("image /etc");
    let out = output(
        Command::new("systemd-sysusers")
            .arg("--root")
            .arg(root.path())
            .arg(&conf),
        "systemd",
    );
    assert!(
        out.status.success(),
        "systemd-sysusers --root: {}",
        text(&out.stderr)
    );
    let passwd =
        std::fs::read_to_string(root.path().join("etc/passwd")).expect("image /etc/passwd");
    let group = std::fs::read_to_string(root.path().join("etc/group")).expect("image /etc/group");
    let user: Vec<&str> = passwd
        .lines()
        .find(|l| l.starts_with("hearth:"))
        .unwrap_or_else(|| panic!("no hearth user in:\n{passwd}"))
        .split(':')
        .collect();
    assert_eq!(user[5], "/var/lib/hearth", "home: the state directory");
    assert!(user[6].ends_with("nologin"), "no login shell: {}", user[6]);
    let uid: u32 = user[2].parse().expect("numeric uid");
    assert!(uid > 0 && uid < 1000, "a system uid: {uid}");
    let gid_of = |name: &str| {
        group
            .lines()
            .find(|l| l.starts_with(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no group {name} in:\n{group}"))
            .split(':')
            .nth(2)
            .map(String::from)
    };
    assert_eq!(
        gid_of("hearth").as_deref(),
        Some(user[3]),
        "the user's own group"
    );
    assert!(
        gid_of("gpio").is_some(),
        "the gpio group SupplementaryGroups= names"
    );
    // hearth is a member of audio and gpio
    for g in ["audio", "gpio"] {
        let members = group
            .lines()
            .find(|l| l.starts_with(&format!("{g}:")))
            .and_then(|l| l.split(':').nth(3))
            .unwrap_or_default();
        assert!(
            members.split(',').any(|m| m == "hearth"),
            "hearth is not in group {g}:\n{group}"
        );
    }
    // again: nothing changes
    let before = (passwd.clone(), group.clone());
    let again = output(
        Command::new("systemd-sysusers")
            .arg("--root")
            .arg(root.path())
            .arg(&conf),
        "systemd",
    );
    assert!(again.status.success());
    let after = (
        std::fs::read_to_string(root.path().join("etc/passwd")).expect("passwd"),
        std::fs::read_to_string(root.path().join("etc/group")).expect("group"),
    );
    assert_eq!(
        before, after,
        "a second systemd-sysusers run changed the image"
    );
}

#[test]
fn tmpfiles_creates_the_directories_with_owners_and_modes() {
    use std::os::unix::fs::MetadataExt;
    if !root_or_skip("applying hearth.tmpfiles to an image (chown)") {
        return;
    }
    let root = Scratch::new("tmpfiles");
    std::fs::create_dir_all(root.path().join("etc")).expect("image /etc");
    let sysusers = output(
        Command::new("systemd-sysusers")
            .arg("--root")
            .arg(root.path())
            .arg(systemd_file("hearth.sysusers")),
        "systemd",
    );
    assert!(sysusers.status.success(), "{}", text(&sysusers.stderr));
    let out = output(
        Command::new("systemd-tmpfiles")
            .arg("--root")
            .arg(root.path())
            .arg("--create")
            .arg(systemd_file("hearth.tmpfiles")),
        "systemd",
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "systemd-tmpfiles --create ({}): {}",
        out.status,
        text(&out.stderr)
    );
    let ids = image_ids(root.path());
    for (dir, mode, owner, group) in [
        ("etc/hearth", 0o750, "root", "hearth"),
        ("var/lib/hearth", 0o750, "hearth", "hearth"),
        ("var/cache/hearth", 0o750, "hearth", "hearth"),
        ("var/cache/hearth/models", 0o750, "hearth", "hearth"),
    ] {
        let m = std::fs::metadata(root.path().join(dir)).unwrap_or_else(|e| panic!("/{dir}: {e}"));
        assert!(m.is_dir(), "/{dir}");
        assert_eq!(m.mode() & 0o7777, mode, "/{dir} mode");
        assert_eq!(
            (m.uid(), m.gid()),
            (ids.uid(owner), ids.gid(group)),
            "/{dir} owner"
        );
    }
}

/// User and group ids of an image (its /etc/passwd and /etc/group).
struct ImageIds {
    passwd: String,
    group: String,
}

impl ImageIds {
    fn find(db: &str, name: &str) -> u32 {
        if name == "root" {
            return 0;
        }
        db.lines()
            .find(|l| l.starts_with(&format!("{name}:")))
            .and_then(|l| l.split(':').nth(2))
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("{name} is not in the image's database:\n{db}"))
    }
    fn uid(&self, name: &str) -> u32 {
        Self::find(&self.passwd, name)
    }
    fn gid(&self, name: &str) -> u32 {
        Self::find(&self.group, name)
    }
}

fn image_ids(root: &Path) -> ImageIds {
    ImageIds {
        passwd: std::fs::read_to_string(root.join("etc/passwd")).unwrap_or_default(),
        group: std::fs::read_to_string(root.join("etc/group")).unwrap_or_default(),
    }
}

// ---- the D-Bus policy -------------------------------------------------------------------------

/// A private dbus-daemon configured like the system bus (its default deny rules) with our
/// policy file included; killed when dropped.
struct SystemLikeBus {
    child: std::process::Child,
    address: String,
    log: PathBuf,
}

impl SystemLikeBus {
    fn start(dir: &Path) -> SystemLikeBus {
        let policy = systemd_file("io.hearth.Agent1.conf");
        let socket = dir.join("system_bus_socket");
        let config = dir.join("system-like.conf");
        // The rules of Debian's /usr/share/dbus-1/system.conf that matter here: anyone may
        // connect; owning names and sending method calls are denied unless a policy file opens
        // them; replies, signals and the bus driver are allowed.
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"#,
                socket = socket.display(),
                policy = policy.display()
            ),
        )
        .expect("writing the bus configuration");
        let log = dir.join("dbus-daemon.log");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start dbus-daemon ({e}): install the Debian package dbus")
            });
        let mut line = String::new();
        let stdout = child.stdout.take().expect("dbus-daemon's stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reading the bus address");
        let address = line.trim().to_string();
        let bus = SystemLikeBus {
            child,
            address,
            log,
        };
        assert!(
            bus.address.starts_with("unix:"),
            "dbus-daemon did not start with the policy (it printed {:?}): {}",
            bus.address,
            bus.log()
        );
        bus
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for SystemLikeBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which process identity a helper runs as (`setpriv` arguments).
#[derive(Debug, Clone, Copy, PartialEq)]
enum As {
    /// The test's own identity (root).
    Root,
    /// User hearth with its groups.
    Hearth,
    /// nobody, no supplementary groups.
    Nobody,
    /// nobody with group hearth as a supplementary group (a member of the group).
    Member,
}

impl As {
    fn command(self, program: &Path) -> Command {
        let hearth_gid = id_of_group("hearth");
        let mut cmd = match self {
            As::Root => return Command::new(program),
            _ => Command::new("setpriv"),
        };
        match self {
            As::Hearth => cmd.args(["--reuid=hearth", "--regid=hearth", "--init-groups"]),
            As::Nobody => cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]),
            As::Member => cmd
                .args(["--reuid=nobody", "--regid=nogroup"])
                .arg(format!("--groups={hearth_gid}")),
            As::Root => unreachable!(),
        };
        cmd.arg(program);
        cmd
    }
}

fn id_of_group(name: &str) -> u32 {
    let out = output(Command::new("getent").args(["group", name]), "libc-bin");
    text(&out.stdout)
        .split(':')
        .nth(2)
        .and_then(|g| g.trim().parse().ok())
        .unwrap_or_else(|| {
            panic!("no group {name}: systemd-sysusers systemd/hearth.sysusers creates it")
        })
}

/// The helper's harness arguments: run only `helper_dbus_peer`.
const HELPER_ARGS: [&str; 5] = [
    "--exact",
    "helper_dbus_peer",
    "--ignored",
    "--nocapture",
    "--test-threads=1",
];
/// What a helper prints before its result.
const RESULT: &str = "HEARTH-POLICY-RESULT ";
/// What the owner helper prints once it owns the name.
const READY: &str = "HEARTH-POLICY-OWNER-READY";

/// Run one call as `who` through the helper; "ok REPLY" or "err ERROR-NAME".
fn call_as(who: As, peer: &Path, bus: &str, call: &str) -> String {
    let out = output(
        who.command(peer)
            .args(HELPER_ARGS)
            .env("HEARTH_POLICY_ROLE", "client")
            .env("HEARTH_POLICY_BUS", bus)
            .env("HEARTH_POLICY_CALL", call),
        "util-linux (setpriv)",
    );
    let stdout = text(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.split_once(RESULT).map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| {
            panic!(
                "the helper ({who:?}, {call}) printed no result ({}):\n{stdout}\n{}",
                out.status,
                text(&out.stderr)
            )
        })
}

/// What a helper prints when the bus refused the call by policy.
const DENIED: &str = "err org.freedesktop.DBus.Error.AccessDenied";
/// Expected: the bus let the call through and the service answered with an error.
const REFUSED: &str = "refused by the service";
/// Expected: at least one of the owner's signals arrived.
const SOME_SIGNALS: &str = "some signals";
/// How long a client listens for the owner's signals (it sends one every 50 ms).
const LISTEN_FOR_SIGNALS: std::time::Duration = std::time::Duration::from_millis(1500);

#[test]
fn the_dbus_policy_allows_and_denies_as_documented() {
    if !root_or_skip(
        "the D-Bus policy test (it creates the hearth user and runs clients as other users)",
    ) {
        return;
    }
    // the hearth user and group, for real (this also applies hearth.sysusers to the machine)
    let sysusers = output(
        Command::new("systemd-sysusers").arg(systemd_file("hearth.sysusers")),
        "systemd",
    );
    assert!(
        sysusers.status.success(),
        "systemd-sysusers: {}",
        text(&sysusers.stderr)
    );

    let dir = Scratch::new("dbus");
    let bus = SystemLikeBus::start(dir.path());
    // the helpers are this test binary, copied where users hearth and nobody can run it
    let peer = dir.path().join("peer");
    std::fs::copy(std::env::current_exe().expect("the test binary"), &peer)
        .expect("copying the test binary");

    // the service, as user hearth
    let mut owner = As::Hearth
        .command(&peer)
        .args(HELPER_ARGS)
        .env("HEARTH_POLICY_ROLE", "owner")
        .env("HEARTH_POLICY_BUS", &bus.address)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting the owner helper under setpriv (package util-linux)");
    // read until READY (or the end: the helper failed), and keep reading at the end
    let mut owner_lines =
        std::io::BufReader::new(owner.stdout.take().expect("the owner's stdout")).lines();
    let mut seen = Vec::new();
    loop {
        match owner_lines.next() {
            Some(Ok(line)) if line.contains(READY) => break,
            Some(Ok(line)) => seen.push(line),
            _ => panic!(
                "the owner helper (user hearth) ended before owning io.hearth.Agent1:\n{}\n{}",
                seen.join("\n"),
                bus.log()
            ),
        }
    }

    // a tool provider (this process, root): serves io.hearth.ToolProvider1 on its unique name
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let provider = rt.block_on(async {
        zbus::connection::Builder::address(bus.address.as_str())
            .serve_at("/io/hearth/ToolProvider", FakeProvider)
            .build()
            .await
            .expect("connecting the provider")
    });
    let provider_name = provider.unique_name().expect("a unique name").to_string();
    let provider_call = format!("ProviderCall {provider_name}");
    let provider_other = format!("ProviderOther {provider_name}");

    let expect = [
        // everyone: introspection and ping, nothing more
        (As::Nobody, "Introspect", "ok introspected"),
        (As::Nobody, "Ping", "ok"),
        (As::Nobody, "Ask", DENIED),
        (As::Nobody, "ListTools", DENIED),
        (As::Nobody, "Cancel", DENIED),
        (As::Nobody, "GetMuted", DENIED),
        (As::Nobody, "GetAll", DENIED),
        (As::Nobody, "CallTool", DENIED),
        (As::Nobody, "RegisterTool", DENIED),
        (As::Nobody, "SetMuted", DENIED),
        (As::Nobody, "Listen", DENIED),
        (As::Nobody, "OwnName", DENIED),
        (As::Nobody, &provider_call, DENIED),
        // the signals are a transcript of the room: not for everyone
        (As::Nobody, "Signals", "ok 0 signals"),
        // a member of group hearth: all of the face
        (As::Member, "Ask", "ok heard: what time is it"),
        (As::Member, "ListTools", "ok []"),
        (As::Member, "Cancel", "ok"),
        (As::Member, "Introspect", "ok introspected"),
        (As::Member, "GetAll", "ok 3 properties"),
        (As::Member, "CallTool", "ok {\"called\":\"get_time\"}"),
        (As::Member, "RegisterTool", "ok"),
        (As::Member, "SetMuted", "ok"),
        (As::Member, "Listen", "ok"),
        (As::Member, "Signals", SOME_SIGNALS),
        (As::Member, "OwnName", DENIED),
        // the service refuses read-only properties itself (the policy cannot see names)
        (As::Member, "SetState", REFUSED),
        // root is no exception on this bus
        (As::Root, "Ask", DENIED),
        (As::Root, "CallTool", DENIED),
        (As::Root, "OwnName", DENIED),
        (As::Root, "Signals", "ok 0 signals"),
        // the service's user: may own the name and call providers back, nothing else
        (As::Hearth, "OwnName", "ok queued"),
        (As::Hearth, &provider_call, "ok provided probe"),
        (As::Hearth, &provider_other, DENIED),
    ];
    let mut wrong = Vec::new();
    for (who, call, want) in expect {
        let got = call_as(who, &peer, &bus.address, call);
        let matches = if want == REFUSED {
            got.starts_with("err org.freedesktop.DBus.Error.") && got != DENIED
        } else if want == SOME_SIGNALS {
            got.starts_with("ok ") && got != "ok 0 signals"
        } else {
            got == want
        };
        println!("{who:?} {call}: {got}");
        if !matches {
            wrong.push(format!("{who:?} {call}: expected {want}, got {got}"));
        }
    }
    // Muted was set by the member above, and reads back as set
    assert_eq!(
        call_as(As::Member, &peer, &bus.address, "GetMuted"),
        "ok true"
    );

    // closing its stdin ends the owner
    drop(owner.stdin.take());
    let rest: Vec<String> = owner_lines.map_while(Result::ok).collect();
    let _ = owner.wait();
    assert!(
        rest.iter().any(|l| l.contains(&format!("{RESULT}served"))),
        "the owner helper did not end cleanly:\n{}",
        rest.join("\n")
    );
    drop(provider);
    let log = bus.log();
    assert!(
        wrong.is_empty(),
        "{}\ndbus-daemon log:\n{log}",
        wrong.join("\n")
    );
    // the policy file loaded without complaints (an unknown user or group is only logged)
    let complaints: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("io.hearth.Agent1.conf") || l.contains("Unknown"))
        .collect();
    assert!(
        complaints.is_empty(),
        "dbus-daemon complained:\n{}",
        complaints.join("\n")
    );
}

/// The stand-in for hearth's D-Bus face: the same names, trivial answers.
struct FakeAgent {
    muted: bool,
}

#[zbus::interface(name = "io.hearth.Agent1")]
impl FakeAgent {
    async fn ask(&self, text: String) -> String {
        format!("heard: {text}")
    }

    async fn list_tools(&self) -> String {
        "[]".into()
    }

    async fn call_tool(&self, name: String, _arguments_json: String) -> String {
        format!("{{\"called\":\"{name}\"}}")
    }

    async fn cancel(&self) {}

    async fn listen(&self) {}

    async fn register_tool(&self, _spec_json: String) {}

    #[zbus(property)]
    async fn state(&self) -> String {
        "idle".into()
    }

    #[zbus(property)]
    async fn preset(&self) -> String {
        "qwen2.5-coder".into()
    }

    #[zbus(property)]
    async fn muted(&self) -> bool {
        self.muted
    }

    #[zbus(property)]
    async fn set_muted(&mut self, muted: bool) {
        self.muted = muted;
    }
}

/// A tool provider: what hearth calls back.
struct FakeProvider;

#[zbus::interface(name = "io.hearth.ToolProvider1")]
impl FakeProvider {
    async fn call(&self, name: String, _arguments_json: String) -> String {
        format!("provided {name}")
    }

    /// Not opened by the policy: even hearth may not call it.
    async fn other(&self) -> String {
        "other".into()
    }
}

/// One call a client helper makes; the reply in a few words.
async fn client_call(conn: &zbus::Connection, call: &str) -> zbus::Result<String> {
    use zbus::{OwnedVariant as OwnedValue, Variant as Value};
    const NAME: &str = "io.hearth.Agent1";
    const PATH: &str = "/io/hearth/Agent";
    const PROPS: &str = "org.freedesktop.DBus.Properties";
    let (what, target) = call.split_once(' ').unwrap_or((call, ""));
    let agent = |member: &'static str| async move {
        conn.call_method(Some(NAME), PATH, Some(NAME), member, &())
            .await
    };
    Ok(match what {
        "Ask" => conn
            .call_method(Some(NAME), PATH, Some(NAME), "Ask", &("what time is it",))
            .await?
            .body()
            .deserialize::<String>()?,
        "ListTools" => agent("ListTools").await?.body().deserialize::<String>()?,
        "Cancel" => {
            agent("Cancel").await?;
            String::new()
        }
        "Listen" => {
            agent("Listen").await?;
            String::new()
        }
        "CallTool" => conn
            .call_method(
                Some(NAME),
                PATH,
                Some(NAME),
                "CallTool",
                &("get_time", "{}"),
            )
            .await?
            .body()
            .deserialize::<String>()?,
        "RegisterTool" => {
            conn.call_method(
                Some(NAME),
                PATH,
                Some(NAME),
                "RegisterTool",
                &("{\"name\":\"x\"}",),
            )
            .await?;
            String::new()
        }
        "Introspect" => {
            let xml: String = conn
                .call_method(
                    Some(NAME),
                    PATH,
                    Some("org.freedesktop.DBus.Introspectable"),
                    "Introspect",
                    &(),
                )
                .await?
                .body()
                .deserialize()?;
            if xml.contains("io.hearth.Agent1") {
                "introspected".into()
            } else {
                xml
            }
        }
        "Ping" => {
            conn.call_method(
                Some(NAME),
                PATH,
                Some("org.freedesktop.DBus.Peer"),
                "Ping",
                &(),
            )
            .await?;
            String::new()
        }
        "GetMuted" => {
            let v: OwnedValue = conn
                .call_method(Some(NAME), PATH, Some(PROPS), "Get", &(NAME, "Muted"))
                .await?
                .body()
                .deserialize()?;
            match &*v {
                Value::Bool(b) => b.to_string(),
                other => format!("{other:?}"),
            }
        }
        "GetAll" => {
            let all: std::collections::HashMap<String, OwnedValue> = conn
                .call_method(Some(NAME), PATH, Some(PROPS), "GetAll", &(NAME,))
                .await?
                .body()
                .deserialize()?;
            format!("{} properties", all.len())
        }
        "SetMuted" => {
            conn.call_method(
                Some(NAME),
                PATH,
                Some(PROPS),
                "Set",
                &(NAME, "Muted", Value::from(true)),
            )
            .await?;
            String::new()
        }
        "SetState" => {
            conn.call_method(
                Some(NAME),
                PATH,
                Some(PROPS),
                "Set",
                &(NAME, "State", Value::from("speaking")),
            )
            .await?;
            String::new()
        }
        "OwnName" => {
            // DBUS_NAME_FLAG_DO_NOT_QUEUE is not used: a permitted second owner is queued
            let r: u32 = conn
                .call_method(
                    Some("org.freedesktop.DBus"),
                    "/org/freedesktop/DBus",
                    Some("org.freedesktop.DBus"),
                    "RequestName",
                    &(NAME, 0u32),
                )
                .await?
                .body()
                .deserialize()?;
            match r {
                1 => "primary owner".into(),
                2 => "queued".into(),
                other => format!("RequestName answered {other}"),
            }
        }
        "ProviderCall" => conn
            .call_method(
                Some(target),
                "/io/hearth/ToolProvider",
                Some("io.hearth.ToolProvider1"),
                "Call",
                &("probe", "{}"),
            )
            .await?
            .body()
            .deserialize::<String>()?,
        "ProviderOther" => conn
            .call_method(
                Some(target),
                "/io/hearth/ToolProvider",
                Some("io.hearth.ToolProvider1"),
                "Other",
                &(),
            )
            .await?
            .body()
            .deserialize::<String>()?,
        "Signals" => {
            // every signal from the agent's object, whatever its interface
            let rule = zbus::MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .path("/io/hearth/Agent")
                .build()?;
            let mut stream = zbus::MessageStream::for_match_rule(rule, conn, None).await?;
            let mut count = 0usize;
            let _ = tokio::time::timeout(LISTEN_FOR_SIGNALS, async {
                while let Some(Ok(_)) = futures_util::StreamExt::next(&mut stream).await {
                    count += 1;
                }
            })
            .await;
            format!("{count} signals")
        }
        other => return Err(zbus::Error::Failure(format!("unknown helper call {other}"))),
    })
}

/// Not a test of its own: the D-Bus peer `the_dbus_policy_allows_and_denies_as_documented`
/// starts (this binary again, as another user). HEARTH_POLICY_ROLE=owner owns io.hearth.Agent1
/// and serves it until its stdin closes; =client makes the call HEARTH_POLICY_CALL names and
/// prints the outcome.
#[test]
#[ignore = "helper: the D-Bus peer the policy test runs as other users"]
fn helper_dbus_peer() {
    let (Ok(role), Ok(address)) = (
        std::env::var("HEARTH_POLICY_ROLE"),
        std::env::var("HEARTH_POLICY_BUS"),
    ) else {
        println!("nothing to do: the D-Bus policy test starts this helper with HEARTH_POLICY_ROLE");
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let outcome = rt.block_on(async {
        match role.as_str() {
            "owner" => {
                let conn = zbus::connection::Builder::address(address.as_str())
                    .name("io.hearth.Agent1")
                    .serve_at("/io/hearth/Agent", FakeAgent { muted: false })
                    .build()
                    .await
                    .map_err(|e| format!("owning io.hearth.Agent1: {e}"))?;
                // what hearth broadcasts: Heard (a face-owned signal) and PropertiesChanged
                let speaker = conn.clone();
                tokio::spawn(async move {
                    let path = "/io/hearth/Agent";
                    let changed: std::collections::HashMap<&str, zbus::Variant> =
                        [("State", zbus::Variant::from("listening"))].into();
                    let props = ("io.hearth.Agent1", changed, Vec::<&str>::new());
                    loop {
                        let heard = speaker.emit_signal(
                            None::<&str>,
                            path,
                            "io.hearth.Agent1",
                            "Heard",
                            &("the room",),
                        );
                        let state = speaker.emit_signal(
                            None::<&str>,
                            path,
                            "org.freedesktop.DBus.Properties",
                            "PropertiesChanged",
                            &props,
                        );
                        if heard.await.is_err() || state.await.is_err() {
                            return;
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                });
                println!("{READY}");
                // serve until the test closes stdin
                tokio::task::spawn_blocking(|| {
                    let mut sink = String::new();
                    let _ = std::io::stdin().read_line(&mut sink);
                })
                .await
                .map_err(|e| e.to_string())?;
                drop(conn);
                Ok("served".to_string())
            }
            "client" => {
                let call = std::env::var("HEARTH_POLICY_CALL").map_err(|e| e.to_string())?;
                let conn = zbus::connection::Builder::address(address.as_str())
                    .build()
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                match client_call(&conn, &call).await {
                    Ok(reply) if reply.is_empty() => Ok("ok".to_string()),
                    Ok(reply) => Ok(format!("ok {reply}")),
                    Err(zbus::Error::MethodError(name, _, _)) => Ok(format!("err {name}")),
                    Err(zbus::Error::FDO(e)) => {
                        Ok(format!("err {}", zbus::DBusError::name(e.as_ref())))
                    }
                    Err(e) => Err(format!("{call}: {e}")),
                }
            }
            other => Err(format!("unknown HEARTH_POLICY_ROLE {other}")),
        }
    });
    match outcome {
        Ok(line) => println!("{RESULT}{line}"),
        Err(e) => {
            println!("{RESULT}failed {e}");
            panic!("{e}");
        }
    }
}

// ---- the install script ------------------------------------------------------------------------

fn install_script() -> PathBuf {
    systemd_file("install")
}

/// A directory with the two binaries the script installs: cargo's hearth and a stand-in
/// hearth-stt (another package, not built for these tests).
fn bin_dir(scratch: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch.join("bin");
    std::fs::create_dir_all(&dir).expect("bin dir");
    std::fs::copy(env!("CARGO_BIN_EXE_hearth"), dir.join("hearth")).expect("copying hearth");
    let stt = dir.join("hearth-stt");
    std::fs::write(&stt, "#!/bin/sh\nexit 0\n").expect("a stand-in hearth-stt");
    std::fs::set_permissions(&stt, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn run_install(args: &[&str]) -> (bool, String, String) {
    let out = output(
        Command::new("bash").arg(install_script()).args(args),
        "bash",
    );
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// The destinations in the script's output ("install MODE OWNER:GROUP DEST <- SRC",
/// "mkdir MODE OWNER:GROUP DEST").
fn destinations(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("install ") || l.starts_with("mkdir "))
        .filter_map(|l| l.split_whitespace().nth(3).map(String::from))
        .collect()
}

#[test]
fn the_install_script_is_valid_bash() {
    let out = output(Command::new("bash").arg("-n").arg(install_script()), "bash");
    assert!(
        out.status.success(),
        "bash -n systemd/install: {}",
        text(&out.stderr)
    );
    let (ok, _, help) = run_install(&["--help"]);
    assert!(ok && help.is_empty());
    let (ok, _, err) = run_install(&["--frobnicate"]);
    assert!(!ok && err.contains("unknown option --frobnicate"), "{err}");
}

#[test]
fn the_install_dry_run_names_every_destination() {
    let scratch = Scratch::new("dry");
    let bins = bin_dir(scratch.path());
    let image = scratch.path().join("image");
    std::fs::create_dir_all(&image).expect("an empty image");
    let (ok, stdout, stderr) = run_install(&[
        "--dry-run",
        "--root",
        &image.to_string_lossy(),
        "--prefix",
        "/opt/hearth",
        "--board",
        "jetson-orin-nano",
        "--bin-dir",
        &bins.to_string_lossy(),
    ]);
    assert!(ok, "install --dry-run failed:\n{stdout}\n{stderr}");
    let mut examples: Vec<String> = std::fs::read_dir(repo().join("tools/examples"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".toml"))
                .map(|n| format!("/etc/hearth/tools/{n}.example"))
                .collect()
        })
        .unwrap_or_default();
    examples.sort();
    let mut want: Vec<String> = [
        "/opt/hearth/bin/hearth",
        "/opt/hearth/bin/hearth-stt",
        "/usr/lib/systemd/system/hearth.service",
        "/usr/lib/sysusers.d/hearth.conf",
        "/usr/lib/tmpfiles.d/hearth.conf",
        "/usr/share/dbus-1/system.d/io.hearth.Agent1.conf",
        "/etc/hearth/hearth.toml",
        "/etc/hearth/tools",
    ]
    .map(String::from)
    .into();
    want.extend(examples);
    want.extend(
        [
            "/etc/systemd/system/hearth.service.d/board.conf",
            "/etc/systemd/system/hearth.service.d/jetson-cuda.conf",
        ]
        .map(String::from),
    );
    assert_eq!(destinations(&stdout), want, "{stdout}");
    assert!(
        stdout.contains(&format!("run systemd-sysusers --root {}", image.display())),
        "{stdout}"
    );
    assert!(stdout.contains(&format!(
        "run systemctl --root {} enable hearth.service",
        image.display()
    )));
    // nothing was written
    assert_eq!(
        std::fs::read_dir(&image).map(|d| d.count()).unwrap_or(0),
        0,
        "the dry run wrote into the image"
    );

    // on a live system: users, directories, D-Bus, models as user hearth, enable and start
    let (ok, stdout, stderr) = run_install(&[
        "--dry-run",
        "--board",
        "pi5",
        "--bin-dir",
        &bins.to_string_lossy(),
    ]);
    assert!(ok, "install --dry-run failed:\n{stdout}\n{stderr}");
    for line in [
        "install 0755 root:root /usr/local/bin/hearth ",
        "run systemd-sysusers /usr/lib/sysusers.d/hearth.conf",
        "run systemd-tmpfiles --create /usr/lib/tmpfiles.d/hearth.conf",
        "run systemctl daemon-reload",
        "run busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig",
        // every file the configuration and hardware/pi5.toml load (its whisper:base.en-q8_0
        // too), each checked against its sha256, as user hearth
        "run runuser -u hearth -- /usr/local/bin/hearth models pull --dir /var/cache/hearth/models --config /etc/hearth/hearth.toml --board pi5",
        "run systemctl enable hearth.service",
        "run systemctl restart hearth.service",
    ] {
        assert!(stdout.contains(line), "the dry run does not show {line:?}:\n{stdout}");
    }
    assert!(stdout.contains("/etc/systemd/system/hearth.service.d/board.conf"));
    assert!(!stdout
        .contains("install 0644 root:root /etc/systemd/system/hearth.service.d/jetson-cuda.conf"));
    assert!(
        stdout
            .lines()
            .filter(|l| l.contains("/var/cache/hearth/models") && !l.starts_with("install"))
            .all(|l| l.starts_with("run runuser -u hearth -- ")),
        "model files must be written as user hearth:\n{stdout}"
    );

    // a board that does not exist, and missing binaries, are errors that say what to do
    let (ok, _, err) = run_install(&[
        "--dry-run",
        "--board",
        "pi3",
        "--bin-dir",
        &bins.to_string_lossy(),
    ]);
    assert!(
        !ok && err.contains("--board pi3") && err.contains("pi5"),
        "{err}"
    );
    let (ok, _, err) = run_install(&["--dry-run", "--bin-dir", "/nonexistent"]);
    assert!(!ok && err.contains("cargo build --release"), "{err}");
}

#[test]
fn installing_into_an_image_lays_out_files_owners_and_a_working_unit() {
    use std::os::unix::fs::MetadataExt;
    if !root_or_skip("installing into an image root (chown)") {
        return;
    }
    let scratch = Scratch::new("image");
    let bins = bin_dir(scratch.path());
    let image = scratch.path().join("image");
    std::fs::create_dir_all(&image).expect("an empty image");
    let image_s = image.to_string_lossy().into_owned();
    let bins_s = bins.to_string_lossy().into_owned();
    let install = |board: &str| {
        let (ok, stdout, stderr) = run_install(&[
            "--root",
            &image_s,
            "--prefix",
            "/opt/hearth",
            "--board",
            board,
            "--bin-dir",
            &bins_s,
        ]);
        assert!(
            ok,
            "install --root --board {board} failed:\n{stdout}\n{stderr}"
        );
        (stdout, stderr)
    };
    install("jetson-orin-nano");
    let ids = image_ids(&image);
    let check = |path: &str, mode: u32, owner: &str, group: &str| {
        let m = std::fs::symlink_metadata(image.join(path.trim_start_matches('/')))
            .unwrap_or_else(|e| panic!("{path} was not installed: {e}"));
        assert_eq!(m.mode() & 0o7777, mode, "{path} mode");
        assert_eq!(
            (m.uid(), m.gid()),
            (ids.uid(owner), ids.gid(group)),
            "{path} owner"
        );
    };
    check("/opt/hearth/bin/hearth", 0o755, "root", "root");
    check("/opt/hearth/bin/hearth-stt", 0o755, "root", "root");
    check(
        "/usr/lib/systemd/system/hearth.service",
        0o644,
        "root",
        "root",
    );
    check("/usr/lib/sysusers.d/hearth.conf", 0o644, "root", "root");
    check("/usr/lib/tmpfiles.d/hearth.conf", 0o644, "root", "root");
    check(
        "/usr/share/dbus-1/system.d/io.hearth.Agent1.conf",
        0o644,
        "root",
        "root",
    );
    check("/etc/hearth", 0o750, "root", "hearth");
    check("/etc/hearth/hearth.toml", 0o640, "root", "hearth");
    check("/etc/hearth/tools", 0o750, "root", "hearth");
    check("/var/lib/hearth", 0o750, "hearth", "hearth");
    check("/var/cache/hearth/models", 0o750, "hearth", "hearth");
    for e in std::fs::read_dir(repo().join("tools/examples"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".toml") {
            check(
                &format!("/etc/hearth/tools/{name}.example"),
                0o640,
                "root",
                "hearth",
            );
        }
    }
    // the tool set of the first start loads: the examples wait as *.toml.example
    let tools_dir = image.join("etc/hearth/tools");
    let registry = hearth::tools::Registry::load_dir(&tools_dir)
        .unwrap_or_else(|e| panic!("the installed tools directory does not load: {e}"));
    assert!(
        !registry
            .openai_tools()
            .as_array()
            .is_none_or(|a| a.is_empty()),
        "the built-ins"
    );
    // why they wait: enabled before [mqtt] is configured, one of them stops the whole set
    if tools_dir.join("lights.toml.example").is_file() {
        let enabled = Scratch::new("tools-enabled");
        std::fs::copy(
            tools_dir.join("lights.toml.example"),
            enabled.path().join("lights.toml"),
        )
        .expect("copying an example");
        let err = hearth::tools::Registry::load_dir(enabled.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("[mqtt]"),
            "expected a load error naming [mqtt]: {err:?}"
        );
    }
    // enabled: the symlink systemctl --root made
    let link = image.join("etc/systemd/system/multi-user.target.wants/hearth.service");
    assert_eq!(
        std::fs::read_link(&link).unwrap_or_else(|e| panic!("{}: {e}", link.display())),
        Path::new("/usr/lib/systemd/system/hearth.service")
    );
    // the installed unit starts the binary under the prefix; the board drop-in adds --board
    let unit =
        std::fs::read_to_string(image.join("usr/lib/systemd/system/hearth.service")).expect("unit");
    assert!(
        unit.contains("ExecStart=/opt/hearth/bin/hearth run --bus system\n"),
        "{unit}"
    );
    let dropins = image.join("etc/systemd/system/hearth.service.d");
    let board = std::fs::read_to_string(dropins.join("board.conf")).expect("board.conf");
    assert!(
        board.contains("ExecStart=\nExecStart=/opt/hearth/bin/hearth run --bus system --board jetson-orin-nano\n"),
        "{board}"
    );
    assert!(dropins.join("jetson-cuda.conf").is_file());

    // the unit with the Jetson's drop-ins: verified, and still well under the limit
    let units = Scratch::new("image-units");
    let exe = env!("CARGO_BIN_EXE_hearth");
    std::fs::write(
        units.path().join("hearth.service"),
        unit.replace("/opt/hearth/bin/hearth", exe),
    )
    .expect("unit copy");
    std::fs::create_dir_all(units.path().join("hearth.service.d")).expect("drop-in dir");
    for name in ["board.conf", "jetson-cuda.conf"] {
        let t = std::fs::read_to_string(dropins.join(name)).expect("drop-in");
        std::fs::write(
            units.path().join("hearth.service.d").join(name),
            t.replace("/opt/hearth/bin/hearth", exe),
        )
        .expect("drop-in copy");
    }
    let unit_copy = units.path().join("hearth.service");
    assert_verifies(&unit_copy, units.path());
    let (score, report) = exposure(&unit_copy, units.path());
    println!("hearth.service with the Jetson drop-ins: exposure {score}");
    assert!(
        score <= MAX_EXPOSURE,
        "exposure {score} with the Jetson drop-ins:\n{report}"
    );

    // the generated configuration: valid, only the tools directory set, so the board's values
    // and hearth's defaults apply under it
    let conf_path = image.join("etc/hearth/hearth.toml");
    let conf = std::fs::read_to_string(&conf_path).expect("hearth.toml");
    let parsed =
        hearth::config::Config::parse(&conf, &conf_path).unwrap_or_else(|e| panic!("{e}\n{conf}"));
    let mut only_tools = hearth::config::Config::default();
    only_tools.agent.tools = Some(PathBuf::from("/etc/hearth/tools"));
    assert_eq!(
        parsed, only_tools,
        "the generated hearth.toml sets more than [agent] tools:\n{conf}"
    );
    let profile = hearth::config::board_profile("jetson-orin-nano").expect("the Jetson profile");
    let merged =
        hearth::config::Config::over_board("jetson-orin-nano", profile, Some((&conf, &conf_path)))
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(merged.agent.gpu_layers, Some(99));
    assert_eq!(
        merged.agent.tools.as_deref(),
        Some(Path::new("/etc/hearth/tools"))
    );

    // again, for another board: local edits are kept, the Jetson's drop-in goes
    std::fs::write(
        &conf_path,
        "[agent]\ntools = \"/etc/hearth/tools\"\nthreads = 2\n",
    )
    .expect("editing hearth.toml");
    std::fs::remove_file(image.join("etc/hearth/tools/lights.toml.example")).ok();
    let (_, stderr) = install("pi4");
    assert!(
        stderr.contains("/etc/hearth/hearth.toml exists: kept"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&conf_path).expect("hearth.toml"),
        "[agent]\ntools = \"/etc/hearth/tools\"\nthreads = 2\n"
    );
    assert!(
        !image.join("etc/hearth/tools/lights.toml.example").exists(),
        "the tools directory was refilled"
    );
    assert!(
        !dropins.join("jetson-cuda.conf").exists(),
        "the Jetson drop-in stayed for a pi4"
    );
    let board = std::fs::read_to_string(dropins.join("board.conf")).expect("board.conf");
    assert!(board.contains("--board pi4\n"), "{board}");
    // and the user and groups were not made twice
    let passwd = std::fs::read_to_string(image.join("etc/passwd")).expect("passwd");
    assert_eq!(
        passwd.lines().filter(|l| l.starts_with("hearth:")).count(),
        1,
        "{passwd}"
    );
}
