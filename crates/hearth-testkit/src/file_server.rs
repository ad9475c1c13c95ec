//! A real HTTP file server for the model pull tests: a private nginx (Debian's `nginx-light`,
//! installed by `scripts/setup --test`) serving a directory on a free loopback port, with its access
//! log (URI, status, Range header) readable; killed when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::services::free_port;

/// One request nginx logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The path asked for.
    pub uri: String,
    /// The HTTP status answered.
    pub status: u16,
    /// The Range header, `-` when none.
    pub range: String,
}

/// A private nginx serving `root()`.
pub struct FileServer {
    child: Child,
    dir: PathBuf,
    /// Its loopback port.
    pub port: u16,
}

impl FileServer {
    /// Start nginx on a free port, serving an empty `root()`; `limit_rate` (e.g. `"200k"`)
    /// slows every response to that many bytes a second.
    pub fn start(tag: &str, limit_rate: Option<&str>) -> FileServer {
        let dir = std::env::temp_dir().join(format!("hearth-nginx-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root")).expect("a temp dir");
        let port = free_port();
        let d = dir.display();
        let rate = limit_rate
            .map(|r| format!("limit_rate {r};"))
            .unwrap_or_default();
        let conf = format!(
            "master_process off;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  log_format served '$uri $status $http_range';\n  access_log {d}/access.log served;\n\
             client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;\n\
             uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
             default_type application/octet-stream;\n\
             server {{ listen 127.0.0.1:{port}; root {d}/root; {rate} }}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).expect("writing nginx.conf");
        let program = ["/usr/sbin/nginx", "nginx"]
            .into_iter()
            .find(|p| !p.starts_with('/') || Path::new(p).is_file())
            .unwrap_or("nginx");
        let child = Command::new(program)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start nginx ({e}): run scripts/setup --test (apt package nginx-light)"
                )
            });
        let server = FileServer { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen on {port}: {}",
                std::fs::read_to_string(server.dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// The directory it serves.
    pub fn root(&self) -> PathBuf {
        self.dir.join("root")
    }

    /// Put `bytes` at `url`'s host and path under the root, so that `--mirror HOST=`
    /// [`base`](Self::base)`(HOST)` serves it.
    pub fn put(&self, url: &str, bytes: &[u8]) {
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let path = self.root().join(rest);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a served directory");
        std::fs::write(&path, bytes).expect("writing a served file");
    }

    /// `http://127.0.0.1:PORT/HOST`: the mirror base of a host put under the root.
    pub fn base(&self, host: &str) -> String {
        format!("http://127.0.0.1:{}/{host}", self.port)
    }

    /// Every request logged so far.
    pub fn served(&self) -> Vec<Served> {
        std::fs::read_to_string(self.dir.join("access.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, ' ');
                Some(Served {
                    uri: f.next()?.to_string(),
                    status: f.next()?.parse().ok()?,
                    range: f.next()?.to_string(),
                })
            })
            .collect()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
