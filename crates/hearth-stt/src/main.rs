//! The `hearth-stt` command: loads a whisper model once and serves speech recognition over the
//! Wyoming protocol on stdio (one session: hearth's Stt actor runs it as a child) or TCP.
//!
//! Exit codes: 0 after a clean end (stdin closed, or SIGINT/SIGTERM), 2 for a configuration
//! error (model missing or unusable, bad arguments), 1 for a runtime failure. Logs go to stderr
//! (`RUST_LOG` filters them); in stdio mode stdout carries only the protocol.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use hearth_stt::recognizer::{
    default_threads, DEFAULT_ASK_MARGIN, DEFAULT_AUDIO_CTX_MARGIN, DEFAULT_MEND_MARGIN,
    DEFAULT_PHRASE_BEAM, DEFAULT_PHRASE_BUDGET, DEFAULT_PHRASE_MARGIN, DEFAULT_WAY_CONTRAST,
};
use hearth_stt::server::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_AUDIO_BYTES, DEFAULT_MAX_AUDIO_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
};
use hearth_stt::{Recognizer, RecognizerConfig, ServeUri, Server, ServerConfig};
use tracing::{info, warn};

/// Speech recognition for hearth: whisper.cpp over the Wyoming protocol.
#[derive(Debug, Parser)]
#[command(name = "hearth-stt", version)]
struct Cli {
    /// whisper.cpp ggml model file, e.g. ggml-tiny.en.bin
    #[arg(long, value_name = "PATH")]
    model: PathBuf,

    /// Where to serve: stdio:// (one session on stdin/stdout) or tcp://HOST:PORT (port 0: any)
    #[arg(long, value_name = "URI", default_value = "stdio://")]
    uri: ServeUri,

    /// Language when a request names none: a code such as en, or auto (multilingual models)
    #[arg(long, value_name = "LANG", default_value = "en")]
    language: String,

    /// CPU threads for whisper.cpp, at most: an utterance is decoded on fewer when other
    /// programs keep cores busy
    #[arg(long, value_name = "N", default_value_t = default_threads())]
    threads: usize,

    /// Initial prompt for the decoder: words to expect, such as room and device names
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,

    /// Run the encoder over the full 30 s window instead of trimming it to the utterance
    #[arg(long)]
    full_audio_ctx: bool,

    /// Encoder frames (50 per second) added to the utterance's when trimming the window
    #[arg(long, value_name = "FRAMES", default_value_t = DEFAULT_AUDIO_CTX_MARGIN)]
    audio_ctx_margin: usize,

    /// How much less likely than the open transcript (nats of log-likelihood) the phrase
    /// set's likeliest request may be and still be taken, when a client names a phrase set
    #[arg(long, value_name = "NATS", default_value_t = DEFAULT_PHRASE_MARGIN)]
    phrase_margin: f32,

    /// The same for a phrase that mends at most two words of the open transcript (two out,
    /// two in); a smaller value than --phrase-margin changes nothing
    #[arg(long, value_name = "NATS", default_value_t = DEFAULT_MEND_MARGIN)]
    mend_margin: f32,

    /// How much likelier (nats) the audio must make a phrase that chooses a way the open
    /// transcript did not say ("close" for "post") than the same phrase with each other way
    /// in its place ("open"); `inf`: such a phrase is never taken
    #[arg(long, value_name = "NATS", default_value_t = DEFAULT_WAY_CONTRAST)]
    way_contrast: f32,

    /// How much less likely (nats) than the open transcript a phrase that mends at most two
    /// of its words may be and still be offered to the client as near (`near` in the
    /// transcript's phrase pass, for a question back), never taken; at most --mend-margin:
    /// none offered
    #[arg(long, value_name = "NATS", default_value_t = DEFAULT_ASK_MARGIN)]
    ask_margin: f32,

    /// Decoder calls the phrase pass may make per utterance
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PHRASE_BUDGET)]
    phrase_budget: usize,

    /// Sequences the phrase pass's beam holds
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PHRASE_BEAM)]
    phrase_beam: usize,

    /// Longest utterance accepted, in seconds of audio
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_MAX_AUDIO_SECONDS)]
    max_seconds: f64,

    /// Most bytes of PCM accepted for one utterance, whatever its rate, width and channels (the
    /// default is 65 s of 16 kHz 16-bit mono). The chunk that goes over gets an `audio-too-long`
    /// error, the utterance is dropped, and a TCP connection is closed. No event may carry more.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_AUDIO_BYTES)]
    max_audio_bytes: usize,

    /// TCP connections served at once. When all are taken, a new client closes the one idle the
    /// longest (a `server-busy` error tells it why), else a stalled stream (nothing sent for
    /// 5 s, or open longer than --max-seconds plus 5 s); if every one is mid-utterance, it waits
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,

    /// A TCP client that sends nothing for this long (between events or inside one), or reads
    /// nothing of what it is sent, is closed after a `timeout` error. Waiting for the model does
    /// not count
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_IDLE_TIMEOUT.as_secs_f64())]
    idle_timeout: f64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    // whisper.cpp and ggml log through tracing (to stderr), not straight to the terminal.
    whisper_rs::install_logging_hooks();

    // In stdio mode, take stdout for the protocol before anything can print to it.
    let protocol_out = match cli.uri {
        ServeUri::Stdio => match protocol_stdout() {
            Ok(out) => Some(out),
            Err(e) => {
                eprintln!("hearth-stt: cannot set up stdout for the protocol: {e}");
                return ExitCode::FAILURE;
            }
        },
        ServeUri::Tcp(_) => None,
    };

    if cli.prompt.as_deref().is_some_and(|p| p.contains('\0')) {
        eprintln!("hearth-stt: --prompt must not contain a NUL character");
        return ExitCode::from(2);
    }
    if !(cli.max_seconds.is_finite() && cli.max_seconds > 0.0) || cli.threads == 0 {
        eprintln!("hearth-stt: --max-seconds and --threads must be positive");
        return ExitCode::from(2);
    }
    if cli.max_audio_bytes == 0 || cli.max_connections == 0 {
        eprintln!("hearth-stt: --max-audio-bytes and --max-connections must be at least 1");
        return ExitCode::from(2);
    }
    // At most a day: longer is no timeout at all for a server meant to stay up for months.
    let idle_timeout = match Duration::try_from_secs_f64(cli.idle_timeout) {
        Ok(d) if !d.is_zero() && d <= Duration::from_secs(86_400) => d,
        _ => {
            eprintln!(
                "hearth-stt: --idle-timeout must be a number of seconds above 0 and at most \
                 86400 (default {})",
                DEFAULT_IDLE_TIMEOUT.as_secs()
            );
            return ExitCode::from(2);
        }
    };

    let config = RecognizerConfig {
        threads: cli.threads,
        language: cli.language.clone(),
        prompt: cli.prompt.clone().filter(|p| !p.trim().is_empty()),
        trim_audio_ctx: !cli.full_audio_ctx,
        audio_ctx_margin: cli.audio_ctx_margin,
        phrase_margin: cli.phrase_margin,
        mend_margin: cli.mend_margin,
        way_contrast: cli.way_contrast,
        ask_margin: cli.ask_margin,
        phrase_budget: cli.phrase_budget,
        phrase_beam: cli.phrase_beam,
    };
    let started = Instant::now();
    let recognizer = match Recognizer::load(&cli.model, config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hearth-stt: {e}");
            return ExitCode::from(2);
        }
    };
    info!(
        model = %cli.model.display(),
        r#type = recognizer.model_type(),
        multilingual = recognizer.is_multilingual(),
        threads = cli.threads,
        language = %cli.language,
        trim_audio_ctx = !cli.full_audio_ctx,
        prompt = ?cli.prompt,
        max_audio_bytes = cli.max_audio_bytes,
        max_seconds = cli.max_seconds,
        "model loaded in {} ms",
        started.elapsed().as_millis()
    );
    let server = Server::new(
        recognizer,
        ServerConfig {
            max_audio_seconds: cli.max_seconds,
            max_audio_bytes: cli.max_audio_bytes,
            max_connections: cli.max_connections,
            idle_timeout,
            ..ServerConfig::default()
        },
    );

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hearth-stt: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(server, cli.uri, protocol_out));
    // A read of stdin may still be pending in the blocking pool: do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hearth-stt: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    server: Server,
    uri: ServeUri,
    protocol_out: Option<tokio::fs::File>,
) -> anyhow::Result<()> {
    let serve = async {
        match (uri, protocol_out) {
            (ServeUri::Tcp(addr), _) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .with_context(|| format!("cannot listen on tcp://{addr}"))?;
                let local = listener.local_addr().context("listener address")?;
                let config = server.config();
                info!(
                    max_connections = config.max_connections,
                    idle_timeout_s = config.idle_timeout.as_secs_f64(),
                    "listening on tcp://{local}"
                );
                server.serve_tcp(listener).await.context("accepting")
            }
            (ServeUri::Stdio, Some(out)) => {
                info!("serving one session on stdin/stdout");
                server
                    .serve_stream(tokio::io::stdin(), out, None)
                    .await
                    .context("stdio session")?;
                info!("stdin closed; exiting");
                Ok(())
            }
            (ServeUri::Stdio, None) => anyhow::bail!("stdout was not set up for the protocol"),
        }
    };
    tokio::select! {
        result = serve => result,
        signal = shutdown_signal() => {
            info!("{signal}: shutting down");
            Ok(())
        }
    }
}

/// Resolves on SIGINT or SIGTERM, naming it.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            Err(e) => {
                warn!("cannot watch SIGTERM ({e}); only SIGINT stops the server");
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    // what was said is logged (target `transcript`) only when RUST_LOG names it: a journal
    // at info carries no household's speech
    let spec = std::env::var("RUST_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "info,whisper_rs=warn".into());
    let spec = if spec.contains("transcript") {
        spec
    } else {
        format!("{spec},transcript=off")
    };
    let filter = EnvFilter::new(spec);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .init();
}

/// The protocol's own handle on stdout; file descriptor 1 is then pointed at stderr, so anything
/// else that prints to stdout (a stray printf in C code) lands in the log, not in the protocol.
#[cfg(unix)]
fn protocol_stdout() -> std::io::Result<tokio::fs::File> {
    use std::os::fd::AsFd;
    // A duplicate of fd 1 (close-on-exec), owned by the protocol writer from now on.
    let protocol = std::io::stdout().as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 on the process's own standard descriptors 2 and 1, both open; it only makes
    // fd 1 another name for stderr. Nothing has been written to stdout's buffer yet.
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}

#[cfg(not(unix))]
fn protocol_stdout() -> std::io::Result<tokio::fs::File> {
    Err(std::io::Error::other("stdio:// is supported on Unix only"))
}
