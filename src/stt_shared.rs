//! One `hearth-stt` for every voice pipeline (the local microphone's and each satellite's):
//! a child serving Wyoming on a loopback port, which every pipeline's Stt stage connects to.
//! Its decodes run one at a time (the server holds its recogniser behind a lock), which is
//! what a small board wants: two whisper decodes at once on two cores each took several times
//! as long (median 6 s from the end of speech to the reply, against 0.9 s for one), and every
//! process holds its own copy of the model. The child is started again if it dies.

use std::path::PathBuf;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use crate::stt::{SttError, SttServer};

/// How long the child may take to listen (it loads the model first).
const START_WAIT: Duration = Duration::from_secs(60);
/// The wait before starting it again after it died.
const RESTART_WAIT: Duration = Duration::from_secs(1);

/// The shared recogniser: stopped (the child killed) when dropped.
pub struct SharedStt {
    task: JoinHandle<()>,
}

impl Drop for SharedStt {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start `server` (a [`SttServer::Spawn`]) once, on a loopback port, and give the address
/// the pipelines connect to. Any other server is shared already: `None`.
pub async fn share(server: &SttServer) -> Result<Option<(SharedStt, SttServer)>, SttError> {
    let SttServer::Spawn {
        program,
        model,
        args,
    } = server
    else {
        return Ok(None);
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|source| SttError::Connect {
            addr: "127.0.0.1:0".into(),
            source,
        })?
        .port();
    let address = format!("127.0.0.1:{port}");
    let spawn = Spawner {
        program: program.clone(),
        model: model.clone(),
        args: args.clone(),
        uri: format!("tcp://{address}"),
    };
    let child = spawn.start()?;
    wait_listening(&address).await?;
    tracing::info!(%address, "one speech recogniser for every microphone and satellite");
    let task = tokio::spawn(spawn.keep(child));
    Ok(Some((SharedStt { task }, SttServer::Connect(address))))
}

struct Spawner {
    program: PathBuf,
    model: PathBuf,
    args: Vec<String>,
    uri: String,
}

impl Spawner {
    fn start(&self) -> Result<Child, SttError> {
        let child = Command::new(&self.program)
            .arg("--model")
            .arg(&self.model)
            .args(&self.args)
            .args(["--uri", &self.uri])
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| SttError::Spawn {
                program: self.program.display().to_string(),
                source,
            })?;
        if let Some(pid) = child.id() {
            // its recognising is this program's work, not another's load on the model's cores
            hearth_cores::count_as_ours(pid);
        }
        Ok(child)
    }

    /// Until aborted: start the child again whenever it exits.
    async fn keep(self, mut child: Child) {
        loop {
            let status = child.wait().await;
            tracing::error!(
                ?status,
                "the shared speech recogniser exited: starting it again"
            );
            tokio::time::sleep(RESTART_WAIT).await;
            child = loop {
                match self.start() {
                    Ok(c) => break c,
                    Err(e) => {
                        tracing::error!(error = %e, "cannot start the shared speech recogniser");
                        tokio::time::sleep(RESTART_WAIT * 10).await;
                    }
                }
            };
        }
    }
}

async fn wait_listening(address: &str) -> Result<(), SttError> {
    let started = tokio::time::Instant::now();
    loop {
        match tokio::net::TcpStream::connect(address).await {
            Ok(_) => return Ok(()),
            Err(source) if started.elapsed() > START_WAIT => {
                return Err(SttError::Connect {
                    addr: address.to_string(),
                    source,
                })
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
