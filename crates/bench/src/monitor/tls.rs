//! TLS for talking to a BMC (Redfish over https): which certificates are trusted, and a
//! client stream over a TCP connection.
//!
//! BMCs usually present a certificate their vendor or the site made, not one a public CA
//! signed, so besides the public roots an operator can name the BMC's CA (or its own
//! certificate) in a PEM file, or, knowingly, skip verification.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{WebPkiSupportedAlgorithms, ring};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme, StreamOwned,
};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;

/// Whom to trust.
#[derive(Debug, Clone, PartialEq)]
pub enum Trust {
    /// The public CAs (Mozilla's list), plus the certificates in this PEM file if given.
    Verify { extra_ca: Option<std::path::PathBuf> },
    /// Any certificate: for a BMC with a self-made certificate, on a network the operator trusts.
    Anything,
}

/// A client configuration for `trust`; an unreadable or empty CA file is an error naming it.
pub fn client_config(trust: &Trust) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("setting up TLS: {e}"))?;
    let config = match trust {
        Trust::Verify { extra_ca } => {
            let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
            if let Some(path) = extra_ca {
                add_pem(&mut roots, path)?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::Anything => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAny(provider.signature_verification_algorithms)))
            .with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

fn add_pem(roots: &mut RootCertStore, path: &Path) -> Result<(), String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("reading certificates from {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    for cert in certs {
        roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// A TLS client stream to `host` over `tcp`.
pub fn connect(
    config: &Arc<ClientConfig>,
    host: &str,
    tcp: TcpStream,
) -> Result<StreamOwned<ClientConnection, TcpStream>, String> {
    let name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']').to_owned())
        .map_err(|e| format!("{host} is not a host name TLS can check: {e}"))?;
    let conn =
        ClientConnection::new(config.clone(), name).map_err(|e| format!("starting TLS with {host}: {e}"))?;
    Ok(StreamOwned::new(conn, tcp))
}

/// Accepts every certificate, while still checking that the handshake is signed by it.
#[derive(Debug)]
struct AcceptAny(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
