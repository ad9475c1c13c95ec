//! The `exec` executor: run a program with its argv rendered from the call's arguments.
//!
//! `argv[0]` is the program, fixed when the manifest loads and never a template (a manifest
//! that templates it fails to load): a bare name is looked up in PATH, an absolute path is
//! used as written, any other relative path (`./demo-home`) is the manifest directory's.
//! Every later element is a minijinja template rendered against the call's arguments plus
//! `manifest_dir` (strict: a missing argument is an error). Each element becomes exactly
//! one argument; there is no shell, so quotes, `;`, `$(…)` and spaces in argument values
//! are passed through literally. Arguments come from the model and are only as safe as the
//! tool's schema makes them: prefer enums and bounded numbers, and write scripts that treat
//! every argument as data.
//!
//! Each value a template puts into an element (each `{{ … }}` output, `manifest_dir`
//! included) is checked where it landed before anything runs; a call that breaks a rule is
//! an `error` naming the element, the value and the fix, and the program does not run:
//! - a value that begins the element may not begin with `-` (`-rf`, `-3`): the program
//!   would take it as an option. `allow_leading_dash = [2]` lets the values of the listed
//!   argv indexes do so (for a program that takes negative numbers as data, say); a `-` the
//!   manifest writes (`"-v"`, `"--level={{ n }}"`) is never a value's;
//! - no value may hold a `..` path component (`..`, `../x`, `x/../y`), so
//!   `"{{ manifest_dir }}/sounds/{{ name }}.wav"` stays in that directory;
//! - no value may hold a NUL character.
//!
//! The program does not inherit hearth's environment: it gets `PATH`, `HOME`, `LANG`,
//! `LANGUAGE`, `TZ` and every `LC_*` variable hearth has ([`STANDARD_ENV`]), and those the
//! manifest names in `pass_env = ["XDG_RUNTIME_DIR"]` (when hearth has them); nothing else
//! (a token or a password in hearth's environment stays there). It inherits hearth's
//! working directory, gets a null stdin and its own process group. The call ends when the
//! program exits, even if a child it left in the background still holds its stdout; then
//! the whole group is killed, so nothing a tool starts outlives its call (a tool that
//! starts something long-running hands it to a service manager: `systemd-run --user …`).
//! The program has `timeout` to exit: after that the group is killed too, and the call is
//! an error. A call dropped while the program runs (the turn was cancelled) kills the group
//! as well. Stdout beyond `max_output_bytes` is dropped and the result says so.
//!
//! Result: exit status 0 with non-blank stdout is `ok` (stdout trimmed), 0 with blank stdout
//! is `empty`; a non-zero exit, a signal, a timeout, or a failure to render or start is an
//! `error` whose message names the tool, the program and the problem (stderr included).

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::output::values::{self, Place};
use super::{ExecOutput, ToolStatus};

/// The variable argv templates get besides the arguments: the manifest's directory.
pub(crate) const MANIFEST_DIR_VAR: &str = "manifest_dir";

/// `timeout_ms` when a manifest does not give one.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// `max_output_bytes` when a manifest does not give one: what the prompt can hold (see
/// [`super::output::MAX_RESULT_BYTES`], the same bound on every other executor's results).
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: usize = super::output::MAX_RESULT_BYTES;

/// How to run one `exec` tool (the checked `[tool.exec]` table).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecSpec {
    /// The program (fixed text, never rendered), then its arguments' templates.
    pub argv: Vec<String>,
    /// Time the program has to finish before its process group is killed.
    pub timeout: Duration,
    /// Stdout (and stderr) kept; the rest is read and dropped.
    pub max_output_bytes: usize,
    /// The manifest's directory, `{{ manifest_dir }}` in argv templates.
    pub manifest_dir: PathBuf,
    /// Indexes of the argv elements a value may begin with `-` (`exec.allow_leading_dash`).
    pub allow_leading_dash: Vec<usize>,
    /// Variables of hearth's environment passed on besides the standard ones
    /// (`exec.pass_env`).
    pub pass_env: Vec<String>,
}

/// Output read from one pipe: the first `cap` bytes and the total length.
#[derive(Default)]
struct Captured {
    kept: Vec<u8>,
    total: usize,
}

impl Captured {
    fn truncated(&self) -> bool {
        self.total > self.kept.len()
    }

    /// The kept bytes as text (a character cut at the cap is dropped), trimmed.
    fn text(&self) -> String {
        let bytes = match std::str::from_utf8(&self.kept) {
            Err(e) if self.truncated() && e.error_len().is_none() => &self.kept[..e.valid_up_to()],
            _ => &self.kept[..],
        };
        String::from_utf8_lossy(bytes).trim().to_string()
    }
}

/// Read a pipe to its end into `out`, keeping the first `cap` bytes (the rest is drained so
/// the program never blocks on a full pipe). What was read stays in `out` if the read is
/// dropped before the end.
async fn read_into<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    cap: usize,
    out: &mut Captured,
) -> std::io::Result<()> {
    let Some(mut pipe) = pipe else {
        return Ok(());
    };
    let mut buf = [0u8; 8192];
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        out.total += n;
        let room = cap.saturating_sub(out.kept.len()).min(n);
        out.kept.extend_from_slice(&buf[..room]);
    }
}

/// The argv of a call: the program as written (never rendered), then every later element
/// rendered against the arguments plus `manifest_dir`, each value in it checked where it
/// landed. An error names the element, the value and the fix.
pub(crate) fn render_argv(
    tool: &str,
    spec: &ExecSpec,
    arguments: &Value,
) -> Result<Vec<String>, String> {
    let Value::Object(args) = arguments else {
        return Err(format!(
            "{tool}: arguments must be a JSON object, got {}",
            crate::toolcall::scan::type_name(arguments)
        ));
    };
    let mut vars = args.clone();
    vars.insert(
        MANIFEST_DIR_VAR.into(),
        Value::String(spec.manifest_dir.to_string_lossy().into_owned()),
    );
    let vars = Value::Object(vars);
    let Some((program, templates)) = spec.argv.split_first() else {
        return Err(format!("{tool}: exec.argv is empty"));
    };
    std::iter::once(Ok(program.clone()))
        .chain(
            templates
                .iter()
                .enumerate()
                .map(|(i, t)| render_element(tool, spec, i + 1, t, &vars)),
        )
        .collect()
}

/// Render argv element `index` from its template `t`, and check each value in it where it
/// landed ([`values::check`]).
fn render_element(
    tool: &str,
    spec: &ExecSpec,
    index: usize,
    t: &str,
    vars: &Value,
) -> Result<String, String> {
    let rendered = values::render_marked(t, vars)
        .map_err(|e| format!("{tool}: cannot build argv[{index}] from `{t}`: {e}"))?;
    for (range, value) in rendered.values() {
        let place = Place::Argv {
            first: range.start == 0,
            dash_ok: spec.allow_leading_dash.contains(&index),
        };
        values::check(place, value).map_err(|refusal| {
            format!(
                "{tool}: not run: argv[{index}] `{t}` got {}, which {refusal}",
                values::quoted(value)
            )
        })?;
    }
    Ok(rendered.text)
}

/// Run one call of the tool `tool` (its name is used in messages only).
pub async fn run(tool: &str, spec: &ExecSpec, arguments: &Value) -> ExecOutput {
    let argv = match render_argv(tool, spec, arguments) {
        Ok(a) => a,
        Err(e) => return ExecOutput::error(e),
    };
    let Some((program, args)) = argv.split_first() else {
        return ExecOutput::error(format!("{tool}: exec.argv is empty"));
    };
    if program.trim().is_empty() {
        return ExecOutput::error(format!("{tool}: the program (argv[0]) is blank"));
    }
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| passed_on(name, &spec.pass_env)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    tracing::debug!(?argv, "exec");
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return ExecOutput::error(format!("{tool}: cannot run `{program}`: {e}")),
    };
    // declared after `child`, so dropped first: a dropped call kills the group while the
    // program is still unreaped
    let mut group = Group::of(&child);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let cap = spec.max_output_bytes;
    let (mut out, mut err) = (Captured::default(), Captured::default());
    let (ended, read) = {
        let reading = async {
            let (o, e) = tokio::join!(
                read_into(stdout, cap, &mut out),
                read_into(stderr, cap, &mut err)
            );
            o.and(e)
        };
        watch(&mut group, spec.timeout, reading).await
    };
    match ended {
        Ended::Exited => {}
        Ended::TimedOut => {
            // the group is killed; reap the program (kill_on_drop would not wait for it)
            if let Err(e) = child.kill().await {
                tracing::debug!(error = %e, "killing a timed-out tool");
            }
            return ExecOutput::error(format!(
                "{tool}: `{program}` did not finish within {} ms and was stopped",
                spec.timeout.as_millis()
            ));
        }
        Ended::Unknown(e) => {
            return ExecOutput::error(format!("{tool}: waiting for `{program}` failed: {e}"))
        }
    }
    let status = match child.wait().await {
        Ok(s) => s,
        Err(e) => return ExecOutput::error(format!("{tool}: waiting for `{program}` failed: {e}")),
    };
    match read {
        Some(Err(e)) => {
            return ExecOutput::error(format!(
                "{tool}: cannot read the output of `{program}`: {e}"
            ))
        }
        Some(Ok(())) => {}
        None => tracing::debug!(
            tool,
            "a process that left the tool's process group still holds its output; read what came before"
        ),
    }
    result(tool, program, status, &out, &err, cap)
}

/// The outcome of a program that exited with `status` after writing `out` and `err`.
fn result(
    tool: &str,
    program: &str,
    status: ExitStatus,
    out: &Captured,
    err: &Captured,
    cap: usize,
) -> ExecOutput {
    if !status.success() {
        let detail = [err.text(), out.text()]
            .into_iter()
            .find(|t| !t.is_empty())
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        return ExecOutput::error(format!("{tool}: `{program}` {}{detail}", describe(status)));
    }
    let text = out.text();
    if out.truncated() {
        return ExecOutput {
            status: ToolStatus::Ok,
            text: format!("{text}\n{}", super::output::cut_note(out.total, cap)),
        };
    }
    if text.is_empty() {
        return ExecOutput {
            status: ToolStatus::Empty,
            text,
        };
    }
    ExecOutput {
        status: ToolStatus::Ok,
        text,
    }
}

/// Time the pipes get to reach their end once the program has exited and its process group
/// is killed: only a process that left the group (`setsid`) can still hold them then.
const DRAIN: Duration = Duration::from_millis(200);

/// How the wait for a program ended.
enum Ended {
    /// It exited (it is not reaped yet).
    Exited,
    /// It did not exit within the timeout.
    TimedOut,
    /// Waiting failed: whether it runs cannot be known.
    Unknown(std::io::Error),
}

/// Read the program's output (`reading`) while waiting, at most `timeout`, for the program
/// itself to exit: not for its pipes to close, which a child it left in the background may
/// hold open. Then kill its process group (what it left running dies with it) and give the
/// pipes [`DRAIN`] to reach their end. The read's result is None when they did not.
async fn watch(
    group: &mut Group,
    timeout: Duration,
    reading: impl std::future::Future<Output = std::io::Result<()>>,
) -> (Ended, Option<std::io::Result<()>>) {
    tokio::pin!(reading);
    let exited = exited(group.pid);
    tokio::pin!(exited);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut read = None;
    let ended = loop {
        tokio::select! {
            r = &mut reading, if read.is_none() => read = Some(r),
            e = &mut exited => break e,
            () = &mut deadline => break Ended::TimedOut,
        }
    };
    match ended {
        Ended::Unknown(_) => group.forget(),
        Ended::Exited | Ended::TimedOut => group.kill(),
    }
    if read.is_none() {
        read = tokio::time::timeout(DRAIN, &mut reading).await.ok();
    }
    (ended, read)
}

/// Wait, on a blocking thread, until the program `pid` has exited, leaving it unreaped.
async fn exited(pid: Option<Pid>) -> Ended {
    let Some(pid) = pid else {
        return Ended::Unknown(std::io::Error::other("the program has no process id"));
    };
    match tokio::task::spawn_blocking(move || wait_exited(pid)).await {
        Ok(Ok(())) => Ended::Exited,
        Ok(Err(e)) => Ended::Unknown(e),
        Err(e) => Ended::Unknown(std::io::Error::other(e)),
    }
}

#[cfg(unix)]
type Pid = libc::pid_t;
#[cfg(not(unix))]
type Pid = u32;

/// The program's process group (its id is the program's pid: `process_group(0)`), killed
/// once: when the program has exited or timed out, or when the call is dropped. Its id
/// surely names this group only while the program is unreaped, so it is killed before the
/// program is reaped, and forgotten when that cannot be known.
struct Group {
    pid: Option<Pid>,
}

impl Group {
    fn of(child: &tokio::process::Child) -> Group {
        Group {
            pid: child
                .id()
                .and_then(|p| Pid::try_from(p).ok())
                .filter(|p| *p > 0),
        }
    }

    /// Kill every process in the group, once.
    fn kill(&mut self) {
        if let Some(pid) = self.pid.take() {
            kill_group(pid);
        }
    }

    /// Never kill the group (its id may no longer be ours).
    fn forget(&mut self) {
        self.pid = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Block until the child `pid` has exited, without reaping it (`WNOWAIT`): it stays a
/// zombie, so its pid, and the process group id equal to it, cannot be reused until
/// `wait` reaps it.
#[cfg(unix)]
fn wait_exited(pid: Pid) -> std::io::Result<()> {
    let id = libc::id_t::try_from(pid).map_err(std::io::Error::other)?;
    loop {
        // SAFETY: siginfo_t is plain old data; all zeroes is a valid value of it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t that outlives the call.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(not(unix))]
fn wait_exited(_pid: Pid) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "exec tools need a Unix system",
    ))
}

/// The variables of hearth's environment every program gets (with every `LC_*`): where
/// programs are (`PATH`), the service user's home (`HOME`: scripts find their files under
/// it, and it is a place, not a secret), and how to write text and times for people
/// (`LANG`, `LANGUAGE`, `TZ`).
pub(crate) const STANDARD_ENV: [&str; 5] = ["PATH", "HOME", "LANG", "LANGUAGE", "TZ"];

/// Whether hearth's variable `name` is passed on to a program: a standard one
/// ([`STANDARD_ENV`], `LC_*`) or one the manifest names in `pass_env`.
fn passed_on(name: &std::ffi::OsStr, pass_env: &[String]) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    STANDARD_ENV.contains(&name) || name.starts_with("LC_") || pass_env.iter().any(|p| p == name)
}

/// "exited with status 2", "was killed by signal 9".
fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    format!("failed ({status})")
}

/// Kill the process group `pid` leads (see [`Group`] for when this is safe).
#[cfg(unix)]
fn kill_group(pid: Pid) {
    if pid <= 0 {
        return;
    }
    // SAFETY: kill(2) takes no pointers. `Group` calls this only while the program is
    // unreaped (a zombie at most), so its pid, and the group id equal to it, still name
    // the group it was started in and cannot have been reused.
    let rc = unsafe { libc::kill(-pid, libc::SIGKILL) };
    if rc != 0 {
        tracing::debug!(
            error = %std::io::Error::last_os_error(),
            "killing a tool's process group"
        );
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Pid) {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Instant;

    fn spec(argv: &[&str]) -> ExecSpec {
        ExecSpec {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            timeout: Duration::from_secs(10),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            manifest_dir: PathBuf::from("/opt/tools"),
            allow_leading_dash: Vec::new(),
            pass_env: Vec::new(),
        }
    }

    fn sh(script: &str) -> ExecSpec {
        spec(&["sh", "-c", script])
    }

    #[tokio::test]
    async fn ok_output_is_trimmed_and_rendered_from_arguments() {
        let s = spec(&[
            "printf",
            "  %s|%s|%s  \n",
            "{{ room }}",
            "{{ 'on' if on else 'off' }}",
            "{{ manifest_dir }}",
        ]);
        let o = run("t", &s, &json!({"room": "living room", "on": true})).await;
        assert_eq!(o.status, ToolStatus::Ok, "{}", o.text);
        assert_eq!(o.text, "living room|on|/opt/tools");
    }

    #[tokio::test]
    async fn the_program_is_taken_as_written_never_rendered() {
        // a spec built in code, not loaded: argv[0] is still not a template
        let s = spec(&["{{ program }}", "x"]);
        let o = run("t", &s, &json!({"program": "/bin/echo"})).await;
        assert_eq!(o.status, ToolStatus::Error);
        assert!(
            o.text.starts_with("t: cannot run `{{ program }}`: "),
            "{}",
            o.text
        );
    }

    /// A call that must not run: its error names the argv element and `fragments`.
    async fn refused(s: &ExecSpec, arguments: Value, fragments: &[&str]) {
        let o = run("t", s, &arguments).await;
        assert_eq!(o.status, ToolStatus::Error, "{arguments}: {}", o.text);
        assert!(o.text.starts_with("t: not run: argv["), "{}", o.text);
        for f in fragments {
            assert!(o.text.contains(f), "{f:?} not in {}", o.text);
        }
    }

    #[tokio::test]
    async fn a_value_that_would_start_an_option_is_refused() {
        let marker =
            std::env::temp_dir().join(format!("hearth-exec-option-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        // `touch -r FILE` would read FILE's time instead of making the file named
        let s = spec(&["touch", "{{ x }}", marker.to_str().unwrap()]);
        refused(
            &s,
            json!({"x": "-r/etc/passwd"}),
            &[
                "argv[1] `{{ x }}` got \"-r/etc/passwd\"",
                "would start an option",
                "exec.allow_leading_dash",
            ],
        )
        .await;
        assert!(!marker.exists(), "the program must not run");
        let echo = spec(&[
            "printf",
            "%s|",
            "{{ n }}",
            "{{ a }}{{ b }}",
            "a{{ b }}",
            "-{{ a }}",
        ]);
        // a negative number is an option to most programs too
        refused(
            &echo,
            json!({"n": -3, "a": "x", "b": "y"}),
            &["argv[2]", "\"-3\""],
        )
        .await;
        // an empty value first does not hide the next one
        refused(&echo, json!({"n": 1, "a": "", "b": "-v"}), &["argv[3]"]).await;
        // after the manifest's text, or after a dash the manifest wrote, a dash is data
        let o = run("t", &echo, &json!({"n": 1, "a": "x", "b": "-y"})).await;
        assert_eq!(o.text, "1|x-y|a-y|-x|", "{}", o.text);
    }

    #[tokio::test]
    async fn allow_leading_dash_lets_one_element_start_with_a_value_dash() {
        let mut s = spec(&["printf", "%s|", "{{ n }}", "{{ m }}"]);
        s.allow_leading_dash = vec![2];
        let o = run("t", &s, &json!({"n": -3, "m": 4})).await;
        assert_eq!((o.status, o.text.as_str()), (ToolStatus::Ok, "-3|4|"));
        refused(&s, json!({"n": -3, "m": -4}), &["argv[3]"]).await;
    }

    #[tokio::test]
    async fn a_value_with_a_parent_component_or_nul_is_refused() {
        let s = spec(&["printf", "%s", "{{ manifest_dir }}/sounds/{{ x }}.wav"]);
        for bad in ["../../../etc/shadow", "..", "a/../../b", "a/.."] {
            refused(&s, json!({ "x": bad }), &["argv[2]", "`..` path component"]).await;
        }
        // a whole argument may not climb out either
        let whole = spec(&["printf", "%s", "{{ x }}"]);
        refused(&whole, json!({"x": "../secret"}), &["`..` path component"]).await;
        refused(&whole, json!({"x": "a\u{0}b"}), &["NUL"]).await;
        // dots that are not a `..` component are fine, and so is the manifest's own `..`
        for ok in ["...", "a..b", "..a", "v1.2/x"] {
            let o = run("t", &s, &json!({ "x": ok })).await;
            assert_eq!(o.text, format!("/opt/tools/sounds/{ok}.wav"), "{}", o.text);
        }
        let up = spec(&["printf", "%s", "{{ manifest_dir }}/../{{ x }}"]);
        let o = run("t", &up, &json!({"x": "y"})).await;
        assert_eq!(o.text, "/opt/tools/../y");
    }

    #[tokio::test]
    async fn a_value_holding_the_value_markers_is_refused() {
        let s = spec(&["printf", "%s", "{{ x }}"]);
        let o = run("t", &s, &json!({"x": "a\u{FDD0}-b\u{FDD1}"})).await;
        assert_eq!(o.status, ToolStatus::Error, "{}", o.text);
        assert!(o.text.contains("U+FDD0"), "{}", o.text);
    }

    #[tokio::test]
    async fn the_program_gets_only_the_allowed_environment() {
        let tag = std::process::id();
        let secret = format!("HEARTH_EXEC_SECRET_{tag}");
        let named = format!("HEARTH_EXEC_NAMED_{tag}");
        std::env::set_var(&secret, "s3cret");
        std::env::set_var(&named, "passed");
        std::env::set_var("LC_HEARTH_TEST", "c");
        let mut s = spec(&["env"]);
        let vars = |text: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
                .collect()
        };
        let o = run("t", &s, &json!({})).await;
        assert_eq!(o.status, ToolStatus::Ok, "{}", o.text);
        let got = vars(&o.text);
        assert!(!got.contains(&secret), "{got:?}");
        assert!(!got.contains(&named), "{got:?}");
        for always in ["PATH", "HOME", "LC_HEARTH_TEST", "TZ"] {
            if std::env::var_os(always).is_some() {
                assert!(got.iter().any(|k| k == always), "{always} not in {got:?}");
            }
        }
        assert!(
            got.iter().all(
                |k| ["PATH", "HOME", "LANG", "LANGUAGE", "TZ"].contains(&k.as_str())
                    || k.starts_with("LC_")
            ),
            "{got:?}"
        );
        // a variable the manifest names is passed on when hearth has it
        s.pass_env = vec![named.clone(), format!("HEARTH_EXEC_UNSET_{tag}")];
        let o = run("t", &s, &json!({})).await;
        assert!(o.text.contains(&format!("{named}=passed")), "{}", o.text);
        assert!(!o.text.contains(&secret), "{}", o.text);
        assert!(!o.text.contains("HEARTH_EXEC_UNSET"), "{}", o.text);
        std::env::remove_var(&secret);
        std::env::remove_var(&named);
        std::env::remove_var("LC_HEARTH_TEST");
    }

    #[tokio::test]
    async fn no_shell_arguments_are_literal() {
        let s = spec(&["printf", "%s", "{{ x }}"]);
        let o = run("t", &s, &json!({"x": "a; echo pwned $(id) `id`"})).await;
        assert_eq!(o.text, "a; echo pwned $(id) `id`");
    }

    #[tokio::test]
    async fn blank_output_is_empty() {
        let o = run("t", &sh("printf '  \\n'"), &json!({})).await;
        assert_eq!(o.status, ToolStatus::Empty);
        assert_eq!(o.text, "");
    }

    #[tokio::test]
    async fn non_zero_exit_is_an_error_naming_tool_program_and_stderr() {
        let o = run(
            "set_light",
            &sh("echo partial; echo unknown room >&2; exit 2"),
            &json!({}),
        )
        .await;
        assert_eq!(o.status, ToolStatus::Error);
        assert_eq!(o.text, "set_light: `sh` exited with status 2: unknown room");
        // no stderr: stdout explains
        let o = run("t", &sh("echo why; exit 1"), &json!({})).await;
        assert_eq!(o.text, "t: `sh` exited with status 1: why");
        let o = run("t", &sh("kill -9 $$"), &json!({})).await;
        assert_eq!(o.text, "t: `sh` was killed by signal 9");
    }

    #[tokio::test]
    async fn spawn_failure_is_an_error() {
        let o = run("t", &spec(&["/nonexistent/hearth-tool"]), &json!({})).await;
        assert_eq!(o.status, ToolStatus::Error);
        assert!(
            o.text
                .starts_with("t: cannot run `/nonexistent/hearth-tool`: "),
            "{}",
            o.text
        );
    }

    #[tokio::test]
    async fn missing_argument_is_an_error_not_an_empty_string() {
        let marker =
            std::env::temp_dir().join(format!("hearth-exec-missing-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let s = spec(&["touch", "{{ path }}", "{{ room }}"]);
        let o = run("t", &s, &json!({"path": marker.to_string_lossy()})).await;
        assert_eq!(o.status, ToolStatus::Error);
        assert!(
            o.text
                .starts_with("t: cannot build argv[2] from `{{ room }}`: "),
            "{}",
            o.text
        );
        assert!(o.text.contains("undefined"), "{}", o.text);
        assert!(!marker.exists(), "the program must not run");
        let o = run(
            "t",
            &spec(&["echo", "{{ 'on' if on else 'off' }}"]),
            &json!({}),
        )
        .await;
        assert_eq!(o.status, ToolStatus::Error, "{}", o.text);
    }

    #[tokio::test]
    async fn timeout_kills_the_program() {
        let mut s = spec(&["sleep", "5"]);
        s.timeout = Duration::from_millis(300);
        let t = Instant::now();
        let o = run("slow", &s, &json!({})).await;
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert_eq!(o.status, ToolStatus::Error);
        assert_eq!(
            o.text,
            "slow: `sleep` did not finish within 300 ms and was stopped"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn timeout_kills_the_whole_process_group() {
        let pidfile = pid_file("group");
        let mut s = sh("sleep 30 & echo $! > \"$0\"; wait");
        s.argv.push(pidfile.to_string_lossy().into_owned());
        s.timeout = Duration::from_millis(500);
        let o = run("t", &s, &json!({})).await;
        assert_eq!(o.status, ToolStatus::Error, "{}", o.text);
        // the grandchild is gone (or a zombie waiting for init) soon after
        assert!(
            dies_soon(&pidfile),
            "the background sleep survived the timeout"
        );
    }

    /// A temp file for a script to write its background child's pid to.
    fn pid_file(tag: &str) -> PathBuf {
        let f = std::env::temp_dir().join(format!("hearth-exec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_file(&f);
        f
    }

    /// Whether the process whose pid `file` holds is gone (or a zombie) within a second.
    #[cfg(target_os = "linux")]
    fn dies_soon(file: &std::path::Path) -> bool {
        let pid = std::fs::read_to_string(file).unwrap().trim().to_string();
        let _ = std::fs::remove_file(file);
        let stat = format!("/proc/{pid}/stat");
        (0..50).any(|_| {
            let alive = std::fs::read_to_string(&stat)
                .map(|s| !s.contains(") Z"))
                .unwrap_or(false);
            if alive {
                std::thread::sleep(Duration::from_millis(20));
            }
            !alive
        })
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_background_child_holding_stdout_does_not_hold_the_call() {
        let pids = pid_file("background");
        // the child inherits stdout and stderr and outlives the script
        let mut s = sh("echo started; sleep 30 & echo $! > \"$0\"; exit 0");
        s.argv.push(pids.to_string_lossy().into_owned());
        s.timeout = Duration::from_secs(5);
        let t = Instant::now();
        let o = run("t", &s, &json!({})).await;
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert_eq!((o.status, o.text.as_str()), (ToolStatus::Ok, "started"));
        assert!(dies_soon(&pids), "the background child survived the call");

        // the script's own exit status is the result
        let mut s = sh("echo bad room >&2; sleep 30 & echo $! > \"$0\"; exit 3");
        s.argv.push(pids.to_string_lossy().into_owned());
        s.timeout = Duration::from_secs(5);
        let o = run("t", &s, &json!({})).await;
        assert_eq!(o.text, "t: `sh` exited with status 3: bad room");
        assert!(dies_soon(&pids), "the background child survived the call");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn dropping_the_call_kills_the_whole_process_group() {
        let pids = pid_file("dropped");
        let mut s = sh("sleep 30 & echo $! > \"$0\"; wait");
        s.argv.push(pids.to_string_lossy().into_owned());
        let args = json!({});
        let call = run("t", &s, &args);
        assert!(tokio::time::timeout(Duration::from_millis(500), call)
            .await
            .is_err());
        assert!(
            dies_soon(&pids),
            "a dropped call's background child survived"
        );
    }

    #[tokio::test]
    async fn the_default_output_cap_fits_the_prompt() {
        let o = run("t", &sh("head -c 16000 /dev/zero | tr '\\0' x"), &json!({})).await;
        assert_eq!(o.status, ToolStatus::Ok, "{}", o.text);
        assert!(
            o.text
                .ends_with("\n[output cut: 16000 bytes, only the first 2048 kept]"),
            "{}",
            &o.text[o.text.len().saturating_sub(80)..]
        );
        assert!(o.text.len() < 2048 + 60);
    }

    #[tokio::test]
    async fn output_is_capped_and_says_so() {
        let mut s = sh("i=0; while [ $i -lt 2000 ]; do echo 0123456789; i=$((i+1)); done");
        s.max_output_bytes = 25;
        let o = run("t", &s, &json!({})).await;
        assert_eq!(o.status, ToolStatus::Ok);
        assert_eq!(
            o.text,
            "0123456789\n0123456789\n012\n[output cut: 22000 bytes, only the first 25 kept]"
        );
        // a multi-byte character cut at the cap is dropped, not mangled
        let mut s = spec(&["printf", "ééé"]);
        s.max_output_bytes = 3;
        let o = run("t", &s, &json!({})).await;
        assert!(o.text.starts_with("é\n[output cut: 6 bytes"), "{}", o.text);
    }
}
