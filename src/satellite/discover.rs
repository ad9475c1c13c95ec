//! Zeroconf: the Wyoming services that announce themselves on the network
//! (`_wyoming._tcp.local.`, as `wyoming-satellite` does unless run with `--no-zeroconf`),
//! by instance name (its `--zeroconf-name`). A `[[satellite]]` without a `url` is looked up
//! here by its `name`; only configured names are ever connected to (a device on the network
//! that announces itself is no satellite of this house until it is named in the
//! configuration), and the others are logged once, with the line that would add them.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use mdns_sd::{ServiceDaemon, ServiceEvent};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::SatelliteError;

/// The service type Wyoming peers announce.
const SERVICE: &str = "_wyoming._tcp.local.";

/// Where each announced instance listens (`HOST:PORT`), by instance name, as it changes.
pub type Found = watch::Receiver<BTreeMap<String, String>>;

/// The browsing, for as long as it is kept.
pub struct Discovery {
    found: Found,
    daemon: ServiceDaemon,
    task: JoinHandle<()>,
}

impl Discovery {
    /// Browse for Wyoming peers; `wanted` are the configured names.
    pub fn start(wanted: BTreeSet<String>) -> Result<Discovery, SatelliteError> {
        let daemon = ServiceDaemon::new().map_err(|e| SatelliteError::Zeroconf(e.to_string()))?;
        let events = daemon
            .browse(SERVICE)
            .map_err(|e| SatelliteError::Zeroconf(e.to_string()))?;
        let (tx, found) = watch::channel(BTreeMap::new());
        let task = tokio::spawn(async move {
            let mut told = BTreeSet::new();
            while let Ok(event) = events.recv_async().await {
                match event {
                    ServiceEvent::ServiceResolved(s) => {
                        let Some(name) = instance(&s.fullname) else {
                            continue;
                        };
                        let ips = s.addresses.iter().map(|a| a.to_ip_addr());
                        let Some(address) = address(ips, s.port) else {
                            continue;
                        };
                        if wanted.contains(&name) {
                            tracing::info!(satellite = %name, %address, "satellite found by zeroconf");
                        } else if told.insert(name.clone()) {
                            tracing::info!(name = %name, %address, "a Wyoming service announces itself on the network; if it is a satellite of this house, add [[satellite]] name = {name:?} (and its room) to the configuration");
                        }
                        tx.send_modify(|m| {
                            m.insert(name, address);
                        });
                    }
                    ServiceEvent::ServiceRemoved(_, fullname) => {
                        if let Some(name) = instance(&fullname) {
                            tx.send_modify(|m| {
                                m.remove(&name);
                            });
                        }
                    }
                    _ => {}
                }
            }
        });
        Ok(Discovery {
            found,
            daemon,
            task,
        })
    }

    /// What has been found, as it changes.
    pub fn found(&self) -> Found {
        self.found.clone()
    }
}

impl Drop for Discovery {
    fn drop(&mut self) {
        self.task.abort();
        let _ = self.daemon.shutdown();
    }
}

/// `bedroom._wyoming._tcp.local.` → `bedroom`.
fn instance(fullname: &str) -> Option<String> {
    let name = fullname.strip_suffix(SERVICE)?.strip_suffix('.')?;
    (!name.is_empty()).then(|| name.to_string())
}

/// `HOST:PORT` to connect to: an IPv4 address first, not loopback if there is another.
fn address(ips: impl Iterator<Item = IpAddr>, port: u16) -> Option<String> {
    let mut ips: Vec<IpAddr> = ips.collect();
    ips.sort_by_key(|ip| (!ip.is_ipv4(), ip.is_loopback()));
    let ip = ips.first()?;
    Some(match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_is_named_and_reached_by_ipv4_first() {
        assert_eq!(
            instance("bedroom._wyoming._tcp.local.").as_deref(),
            Some("bedroom")
        );
        assert_eq!(instance("._wyoming._tcp.local."), None);
        assert_eq!(instance("bedroom._http._tcp.local."), None);
        let v6: IpAddr = "fd00::2".parse().unwrap();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(
            address([v6, lo, v4].into_iter(), 10700).as_deref(),
            Some("192.0.2.7:10700")
        );
        assert_eq!(
            address([v6].into_iter(), 10700).as_deref(),
            Some("[fd00::2]:10700")
        );
        assert_eq!(address(std::iter::empty(), 1), None);
    }
}
