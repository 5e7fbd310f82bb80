//! TLS for talking to a BMC (Redfish over https): which certificates are trusted.
//!
//! BMCs usually present a certificate their vendor or the site made, not one a public CA
//! signed, so besides the public roots an operator can name the BMC's CA (or its own
//! certificate) in a PEM file, or, knowingly, skip verification. The HTTP client does the
//! TLS itself; this file only says whom it trusts.

use std::path::{Path, PathBuf};
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

/// Whom to trust.
#[derive(Debug, Clone, PartialEq)]
pub enum Trust {
    /// The public CAs (Mozilla's list), plus the certificates in this PEM file if given.
    Verify { extra_ca: Option<PathBuf> },
    /// Any certificate: for a BMC with a self-made certificate, on a network the operator trusts.
    Anything,
}

/// The client's TLS settings for `trust`; an unreadable or empty CA file is an error naming it.
pub fn client_config(trust: &Trust) -> Result<TlsConfig, String> {
    let roots = match trust {
        Trust::Verify { extra_ca: None } => RootCerts::WebPki,
        Trust::Verify { extra_ca: Some(path) } => {
            // The client's built-in public roots take no additions: the same Mozilla list
            // comes here as certificates, and the file's join it.
            let public =
                webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().map(|der| Certificate::from_der(der));
            RootCerts::from(public.chain(pem_certificates(path)?))
        }
        Trust::Anything => return Ok(TlsConfig::builder().disable_verification(true).build()),
    };
    Ok(TlsConfig::builder().root_certs(roots).build())
}

/// The certificates in a PEM file (keys and other sections beside them are skipped).
fn pem_certificates(path: &Path) -> Result<Vec<Certificate<'static>>, String> {
    let unreadable = |e: &dyn std::fmt::Display| format!("reading certificates from {}: {e}", path.display());
    let pem = std::fs::read(path).map_err(|e| unreadable(&e))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let PemItem::Certificate(cert) = item.map_err(|e| unreadable(&e))? {
            certs.push(cert);
        }
    }
    match certs.is_empty() {
        true => Err(format!("{} holds no PEM certificate", path.display())),
        false => Ok(certs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_ca_joins_the_public_roots_and_a_file_without_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("bmc.pem");
        let cert = rcgen::generate_simple_self_signed(vec!["bmc".to_owned()]).unwrap();
        std::fs::write(&ca, cert.cert.pem()).unwrap();
        let config = client_config(&Trust::Verify { extra_ca: Some(ca.clone()) }).unwrap();
        let RootCerts::Specific(roots) = config.root_certs() else { panic!("{config:?}") };
        assert_eq!(roots.len(), webpki_root_certs::TLS_SERVER_ROOT_CERTS.len() + 1);
        assert_eq!(roots.last().unwrap().der(), cert.cert.der().as_ref());

        std::fs::write(&ca, "not a certificate\n").unwrap();
        let err = client_config(&Trust::Verify { extra_ca: Some(ca.clone()) }).unwrap_err();
        assert_eq!(err, format!("{} holds no PEM certificate", ca.display()));
    }
}
