//! TLS to the MQTT broker (`mqtts://`): the rustls client configuration built from
//! `[mqtt] ca_file`, `client_cert_file` and `client_key_file`, on ring (the provider
//! ureq's HTTPS already links), and TLS failures as sentences that name the fix.
//!
//! Without `ca_file` the broker's certificate is checked against the system's CA store
//! (`/etc/ssl/certs`, or `SSL_CERT_FILE`/`SSL_CERT_DIR`). The broker's host in `url` is the
//! name its certificate must carry (a DNS name or an IP address).

use std::path::Path;
use std::sync::Arc;

use rumqttc::{ConnectionError, TlsError};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{AlertDescription, CertificateError, ClientConfig, RootCertStore};

use super::MqttError;
use crate::config::{misfit, Misfit, MqttSection};

/// The client configuration for a TLS broker (`tls`), or `None` for plain TCP. Every file is
/// read and checked here, so a bad one stops the start and names its key.
pub(crate) fn client_config(
    section: &MqttSection,
    tls: bool,
) -> Result<Option<Arc<ClientConfig>>, MqttError> {
    match misfit(section, tls) {
        Some((key, _, Misfit::NeedsTls)) => return Err(MqttError::TlsKeyWithoutTls(key)),
        Some((_, _, Misfit::NeedsItsPair)) => return Err(MqttError::ClientAuthHalf),
        None if !tls => return Ok(None),
        None => {}
    }
    let identity = section
        .client_cert_file
        .as_ref()
        .zip(section.client_key_file.as_ref());
    let roots = match &section.ca_file {
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(path, "ca_file")? {
                roots.add(cert).map_err(|e| MqttError::TlsFile {
                    key: "ca_file",
                    path: path.clone(),
                    problem: format!("a certificate in it cannot be used as a CA ({e})"),
                })?;
            }
            roots
        }
        None => system_roots()?,
    };
    let builder =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| MqttError::Tls(e.to_string()))?
            .with_root_certificates(roots);
    let config = match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = certificates(cert, "client_cert_file")?;
            crate::secret::check_private(key).map_err(|problem| MqttError::TlsFile {
                key: "client_key_file",
                path: key.clone(),
                problem,
            })?;
            let private = PrivateKeyDer::from_pem_file(key).map_err(|e| MqttError::TlsFile {
                key: "client_key_file",
                path: key.clone(),
                problem: pem_problem(e, "a private key (-----BEGIN PRIVATE KEY-----)"),
            })?;
            builder
                .with_client_auth_cert(chain, private)
                .map_err(|e| MqttError::ClientIdentity(e.to_string()))?
        }
    };
    Ok(Some(Arc::new(config)))
}

/// Every certificate of a PEM file; at least one.
fn certificates(path: &Path, key: &'static str) -> Result<Vec<CertificateDer<'static>>, MqttError> {
    let what = "certificates (-----BEGIN CERTIFICATE-----)";
    let bad = |e: pem::Error| MqttError::TlsFile {
        key,
        path: path.to_path_buf(),
        problem: pem_problem(e, what),
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(bad)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if certs.is_empty() {
        return Err(bad(pem::Error::NoItemsFound));
    }
    Ok(certs)
}

fn pem_problem(e: pem::Error, what: &str) -> String {
    match e {
        pem::Error::Io(io) => format!("cannot read it ({io})"),
        pem::Error::NoItemsFound => format!("it holds no PEM {what}"),
        other => format!("it is not valid PEM ({other}); expected {what}"),
    }
}

/// The system's CA certificates.
fn system_roots() -> Result<RootCertStore, MqttError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(MqttError::NoSystemRoots(why));
    }
    Ok(roots)
}

/// The rustls error somewhere in a connection error's chain, where there is one: a handshake
/// that failed, or an alert the broker sent after it (TLS 1.3 refuses a client certificate
/// then, so it surfaces while reading the CONNACK).
fn rustls_error(e: &ConnectionError) -> Option<&rustls::Error> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        // io::Error's source() skips its payload: look at the payload itself
        let payload = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if payload.is_some() {
            return payload;
        }
        next = err.source();
    }
    None
}

/// A failure to connect to a TLS broker as a sentence naming the problem and the fix, or
/// `None` if it is not a TLS one (a refused TCP connection, a refused login).
pub fn describe(e: &ConnectionError, addr: &str, host: &str) -> Option<String> {
    if let ConnectionError::Tls(TlsError::DNSName(_)) = e {
        return Some(format!(
            "cannot connect to the MQTT broker at {addr} over TLS: {host:?} is not a name a certificate can carry (write the broker's DNS name or IP address in [mqtt] url)"
        ));
    }
    let Some(tls) = rustls_error(e) else {
        return match e {
            ConnectionError::Tls(TlsError::Io(io)) => Some(format!(
                "cannot connect to the MQTT broker at {addr} over TLS: the TLS handshake failed ({io}) (is the port a TLS listener, 8883 by default? For a plain one write mqtt://)"
            )),
            _ => None,
        };
    };
    let (problem, fix) = match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => (
                "its certificate is not signed by a CA hearth trusts".to_string(),
                "set [mqtt] ca_file in hearth.toml to the CA certificate that signed the broker's"
                    .to_string(),
            ),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                (
                    format!("its certificate is not for {host:?}"),
                    "write the name its certificate carries in [mqtt] url".to_string(),
                )
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => (
                "its certificate has expired".to_string(),
                "renew the broker's certificate (and check this machine's clock)".to_string(),
            ),
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => (
                "its certificate is not valid yet".to_string(),
                "check this machine's clock".to_string(),
            ),
            other => (
                format!("its certificate was rejected ({other:?})"),
                "check the broker's certificate and [mqtt] ca_file".to_string(),
            ),
        },
        rustls::Error::AlertReceived(
            AlertDescription::CertificateRequired | AlertDescription::HandshakeFailure,
        ) => (
            "it wants a client certificate".to_string(),
            "set [mqtt] client_cert_file and client_key_file in hearth.toml".to_string(),
        ),
        rustls::Error::AlertReceived(
            AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::DecryptError,
        ) => (
            "it rejected hearth's client certificate".to_string(),
            "use a client certificate signed by the CA the broker trusts ([mqtt] client_cert_file)"
                .to_string(),
        ),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => (
            "it did not answer in TLS".to_string(),
            "is the port a TLS listener (8883 by default)? For a plain one write mqtt://"
                .to_string(),
        ),
        other => (
            format!("the TLS handshake failed ({other})"),
            "check the broker's TLS listener and [mqtt] in hearth.toml".to_string(),
        ),
    };
    Some(format!(
        "cannot connect to the MQTT broker at {addr} over TLS: {problem} ({fix})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn section(url: &str) -> MqttSection {
        MqttSection {
            url: url.into(),
            client_id: None,
            username: None,
            password_file: None,
            keep_alive_s: None,
            ca_file: None,
            client_cert_file: None,
            client_key_file: None,
        }
    }

    #[test]
    fn plain_tcp_takes_no_tls_keys() {
        assert!(client_config(&section("mqtt://h"), false)
            .unwrap()
            .is_none());
        let mut s = section("mqtt://h");
        s.client_key_file = Some("/k.pem".into());
        let e = client_config(&s, false).unwrap_err().to_string();
        assert!(
            e.contains("client_key_file") && e.contains("mqtts://"),
            "{e}"
        );
    }

    #[test]
    fn files_are_checked_when_the_config_loads() {
        let dir = std::env::temp_dir().join(format!("hearth-mqtt-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = section("mqtts://h");
        s.ca_file = Some(PathBuf::from("/nonexistent/ca.pem"));
        let e = client_config(&s, true).unwrap_err().to_string();
        assert!(
            e.contains("ca_file") && e.contains("/nonexistent/ca.pem") && e.contains("cannot read"),
            "{e}"
        );
        let text = dir.join("not-pem.txt");
        std::fs::write(&text, "hello\n").unwrap();
        s.ca_file = Some(text.clone());
        let e = client_config(&s, true).unwrap_err().to_string();
        assert!(e.contains("no PEM certificates"), "{e}");
        let broken = dir.join("broken.pem");
        std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\nAAAA\n").unwrap();
        s.ca_file = Some(broken);
        let e = client_config(&s, true).unwrap_err().to_string();
        assert!(e.contains("not valid PEM"), "{e}");
        let mut s = section("mqtts://h");
        s.client_cert_file = Some(text);
        let e = client_config(&s, true).unwrap_err().to_string();
        assert!(e.contains("client_cert_file and client_key_file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
