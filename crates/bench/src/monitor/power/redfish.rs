//! Redfish: a BMC's chassis `Power` resource over http or https. Credentials come from the
//! URL (`https://user:password@bmc/...`) or from two environment variables; the password is
//! remembered as a secret, and the URL is kept and shown with it hidden.

use super::{Meter, PowerError, connect, first_line};
use crate::monitor::tls;
use crate::secret;
use base64::Engine as _;
use std::io::{self, Read, Write};
use std::time::Instant;

/// Largest reply read from a Redfish BMC; a Power resource is a few KiB.
const MAX_HTTP_REPLY: u64 = 1 << 20;

const REDFISH_FIX: &str = "check that the URL names the chassis Power resource, e.g. \
                           http://bmc/redfish/v1/Chassis/1/Power";

/// Names the https trust settings are read from: a PEM file of the BMC's CA (or its own
/// certificate), and `1` to accept any certificate.
pub const REDFISH_CA_ENV: &str = "STORBENCH_REDFISH_CA";
pub const REDFISH_INSECURE_ENV: &str = "STORBENCH_REDFISH_INSECURE";

/// A Redfish `Power` resource over HTTP or HTTPS (most BMCs serve https only, with a
/// certificate of their own: see [`REDFISH_CA_ENV`]).
#[derive(Debug)]
pub(super) struct Redfish {
    /// The URL as shown in messages and reports: its password hidden.
    url: String,
    /// `host:port` to connect to, and the `Host` header.
    authority: String,
    path: String,
    /// For https: the TLS configuration and the host name the certificate must carry.
    tls: Option<(std::sync::Arc<rustls::ClientConfig>, String)>,
    /// The value of the `Authorization` header, when credentials were given.
    auth: Option<Secret>,
    /// Where the credentials came from, for the error when the BMC refuses.
    credential_vars: String,
}

/// A header value holding a password: kept out of `Debug` output.
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Redfish {
    pub(super) fn open(
        url: &str,
        user_env: &str,
        password_env: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, PowerError> {
        secret::remember_in(url);
        let url_shown = secret::redact(url);
        let parts = split_http_url(url)?;
        let (credentials, credential_vars) = match parts.userinfo {
            Some(userinfo) => (Some(userinfo), "the URL".to_owned()),
            None => (env_credentials(user_env, password_env, env)?, format!("{user_env} and {password_env}")),
        };
        let auth = credentials.map(|(user, password)| {
            secret::remember(&password);
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            Secret(format!("Basic {token}"))
        });
        let tls = match parts.tls {
            false => None,
            true => Some((tls_config(env)?, parts.host)),
        };
        let (authority, path) = (parts.authority, parts.path);
        Ok(Redfish { url: url_shown, authority, path, tls, auth, credential_vars })
    }

    fn get(&self) -> Result<(u16, Vec<u8>), PowerError> {
        let read_error =
            |error| PowerError::Read { meter: "Redfish", what: self.url.clone(), error, fix: REDFISH_FIX };
        let tcp = connect(&self.authority).map_err(read_error)?;
        // HTTP/1.0 so the BMC answers with a plain body ended by closing, never chunked.
        let mut request =
            format!("GET {} HTTP/1.0\r\nHost: {}\r\nAccept: application/json\r\n", self.path, self.authority);
        if let Some(Secret(auth)) = &self.auth {
            request.push_str(&format!("Authorization: {auth}\r\n"));
        }
        request.push_str("Connection: close\r\n\r\n");
        let reply = match &self.tls {
            None => exchange(tcp, &request),
            Some((config, host)) => {
                let stream = tls::connect(config, host, tcp).map_err(|problem| PowerError::Unusable {
                    meter: "Redfish",
                    problem,
                    fix: REDFISH_FIX,
                })?;
                exchange(stream, &request)
            }
        };
        let reply = reply.map_err(|e| tls_hint(read_error(e)))?;
        split_http_reply(&reply).ok_or_else(|| PowerError::NoReading {
            meter: "Redfish",
            what: self.url.clone(),
            got: first_line(&String::from_utf8_lossy(&reply)),
            fix: REDFISH_FIX,
        })
    }
}

impl Meter for Redfish {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let (status, body) = self.get()?;
        let problem = format!("{} answered HTTP {status}", self.url);
        match status {
            200 => power_consumed_watts(&self.url, &body).map(Some),
            401 | 403 => Err(PowerError::Unusable {
                meter: "Redfish",
                problem: format!("{problem}; the credentials come from {}", self.credential_vars),
                fix: "give the credentials of a BMC account allowed to read the chassis",
            }),
            _ => Err(PowerError::Unusable { meter: "Redfish", problem, fix: REDFISH_FIX }),
        }
    }

    fn describe(&self) -> String {
        format!("Redfish PowerControl at {}", self.url)
    }
}

/// Sends `request` and reads the reply until the server closes. A TLS peer that closes
/// without saying so (many BMCs) ends the reply too, once something has arrived.
fn exchange<S: Read + Write>(mut stream: S, request: &str) -> io::Result<Vec<u8>> {
    stream.write_all(request.as_bytes())?;
    stream.flush()?;
    let mut reply = Vec::new();
    match stream.take(MAX_HTTP_REPLY).read_to_end(&mut reply) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !reply.is_empty() => Ok(reply),
        other => other.map(|_| reply),
    }
}

/// The trust for https, from the environment.
fn tls_config(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<std::sync::Arc<rustls::ClientConfig>, PowerError> {
    let trust = match env(REDFISH_INSECURE_ENV).as_deref() {
        Some("1") => tls::Trust::Anything,
        _ => tls::Trust::Verify { extra_ca: env(REDFISH_CA_ENV).map(std::path::PathBuf::from) },
    };
    tls::client_config(&trust).map_err(|problem| PowerError::Unusable {
        meter: "Redfish",
        problem,
        fix: "give STORBENCH_REDFISH_CA a PEM file holding the BMC's CA or certificate",
    })
}

/// A certificate the BMC's TLS did not pass gets the way out named.
fn tls_hint(e: PowerError) -> PowerError {
    match e {
        PowerError::Read { meter, what, error, .. } if error.to_string().contains("certificate") => {
            PowerError::Read {
                meter,
                what,
                error,
                fix: "the BMC's certificate is not signed by a public CA: give STORBENCH_REDFISH_CA a PEM \
                  file holding its CA (or the certificate itself), or set STORBENCH_REDFISH_INSECURE=1 \
                  to accept any certificate on a network you trust",
            }
        }
        other => other,
    }
}

/// A Redfish URL's parts.
#[derive(Debug, PartialEq)]
struct UrlParts {
    tls: bool,
    /// `user:password@` before the host, percent-decoded.
    userinfo: Option<(String, String)>,
    /// `host:port`, the port defaulting to 80 or 443.
    authority: String,
    host: String,
    path: String,
}

/// `http[s]://[user:password@]host[:port]/path` → its parts.
fn split_http_url(url: &str) -> Result<UrlParts, PowerError> {
    let unusable = |problem: String, fix| PowerError::Unusable { meter: "Redfish", problem, fix };
    let (tls, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => {
            return Err(unusable(format!("{url} is not an http:// or https:// URL"), REDFISH_FIX));
        }
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (userinfo, authority) = match authority.rsplit_once('@') {
        Some((info, host)) => {
            let (user, password) = info.split_once(':').unwrap_or((info, ""));
            (Some((secret::percent_decoded(user), secret::percent_decoded(password))), host)
        }
        None => (None, authority),
    };
    if authority.is_empty() {
        return Err(unusable(format!("{url} names no host"), REDFISH_FIX));
    }
    // A port follows the last ':' unless that ':' is inside an IPv6 literal "[...]".
    let port_at = authority.rfind(':').filter(|&i| !authority[i..].contains(']'));
    let host = port_at.map_or(authority, |i| &authority[..i]).to_owned();
    let authority = match port_at {
        Some(_) => authority.to_owned(),
        None => format!("{authority}:{}", if tls { 443 } else { 80 }),
    };
    let path = if path.is_empty() { "/" } else { path }.to_owned();
    Ok(UrlParts { tls, userinfo, authority, host, path })
}

/// User and password from the two variables; none when neither is set. One without the
/// other is a mistake worth stopping for, not a silent anonymous request.
fn env_credentials(
    user_env: &str,
    password_env: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(String, String)>, PowerError> {
    let missing = match (env(user_env), env(password_env)) {
        (Some(user), Some(password)) => return Ok(Some((user, password))),
        (None, None) => return Ok(None),
        (Some(_), None) => password_env,
        (None, Some(_)) => user_env,
    };
    Err(PowerError::Unusable {
        meter: "Redfish",
        problem: format!("{missing} is not set, but the other credential variable is"),
        fix: "set both the user and the password variable, or neither for a BMC without authentication",
    })
}

/// Status code and body of an HTTP reply; `None` when it is not one.
fn split_http_reply(reply: &[u8]) -> Option<(u16, Vec<u8>)> {
    let end = reply.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&reply[..end]).ok()?;
    let status_line = head.lines().next()?;
    let mut parts = status_line.split_whitespace();
    parts.next().filter(|v| v.starts_with("HTTP/"))?;
    let status = parts.next()?.parse().ok()?;
    Some((status, reply[end + 4..].to_vec()))
}

/// `PowerControl[0].PowerConsumedWatts` of a Power resource.
fn power_consumed_watts(url: &str, body: &[u8]) -> Result<f64, PowerError> {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let watts = json.pointer("/PowerControl/0/PowerConsumedWatts").and_then(serde_json::Value::as_f64);
    match watts {
        Some(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(PowerError::NoReading {
            meter: "Redfish",
            what: format!("PowerControl[0].PowerConsumedWatts of {url}"),
            got: first_line(&String::from_utf8_lossy(body)),
            fix: "this BMC may publish power only under PowerSubsystem or EnvironmentMetrics, which \
                  storbench does not read yet; use IPMI or an external meter",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PowerSampler, PowerSource};
    use super::*;
    use std::fs;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;
    use std::sync::mpsc;

    /// An HTTP server answering one request with `body`; the request comes back on the channel.
    fn serve_http_once(status: &str, body: &str) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut request = String::new();
            while reader.read_line(&mut request).unwrap() > 2 {}
            reader.get_mut().write_all(reply.as_bytes()).unwrap();
            tx.send(request).unwrap();
        });
        (format!("http://{addr}/redfish/v1/Chassis/1/Power"), rx)
    }

    const POWER_JSON: &str = r#"{"@odata.id":"/redfish/v1/Chassis/1/Power","PowerControl":[{"Name":"System Power Control","PowerConsumedWatts":344,"PowerMetrics":{"IntervalInMin":1,"AverageConsumedWatts":338}}]}"#;

    fn redfish(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<PowerSampler, PowerError> {
        let source = PowerSource::Redfish {
            url: url.to_owned(),
            user_env: "BMC_USER".into(),
            password_env: "BMC_PASS".into(),
        };
        PowerSampler::with_env(source, env)
    }

    #[test]
    fn redfish_reads_power_consumed_watts_with_basic_auth() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let env = |name: &str| match name {
            "BMC_USER" => Some("root".to_owned()),
            "BMC_PASS" => Some("calvin".to_owned()),
            _ => None,
        };
        let mut sampler = redfish(&url, &env).unwrap();
        assert!(!format!("{sampler:?}").contains("cm9vdDpjYWx2aW4="), "Debug output shows the password");
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        let request = request.recv().unwrap();
        assert!(request.starts_with("GET /redfish/v1/Chassis/1/Power HTTP/1."), "{request}");
        // base64("root:calvin")
        assert!(request.contains("Authorization: Basic cm9vdDpjYWx2aW4=\r\n"), "{request}");
    }

    #[test]
    fn redfish_takes_credentials_from_the_url_and_never_shows_the_password() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let url = url.replace("http://", "http://root:Rf5%40url-pw@");
        let mut sampler = redfish(&url, &|_| None).unwrap();
        assert!(sampler.describe().contains("http://root:***@127.0.0.1:"), "{}", sampler.describe());
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        let token = base64::engine::general_purpose::STANDARD.encode("root:Rf5@url-pw");
        assert!(request.recv().unwrap().contains(&format!("Authorization: Basic {token}\r\n")));
        assert_eq!(secret::redact("the BMC said Rf5@url-pw"), "the BMC said ***");
    }

    #[test]
    fn redfish_sends_no_credentials_when_none_are_set() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let mut sampler = redfish(&url, &|_| None).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        assert!(!request.recv().unwrap().contains("Authorization"));
    }

    #[test]
    fn redfish_refusals_and_missing_readings_name_the_fix() {
        let (url, _request) = serve_http_once("401 Unauthorized", "{}");
        let err = redfish(&url, &|_| None).unwrap().sample().unwrap_err().to_string();
        assert!(err.contains("answered HTTP 401") && err.contains("from BMC_USER and BMC_PASS"), "{err}");
        let (url, _request) = serve_http_once("200 OK", r#"{"PowerControl":[{"PowerConsumedWatts":null}]}"#);
        let err = redfish(&url, &|_| None).unwrap().sample().unwrap_err().to_string();
        assert!(err.contains("PowerConsumedWatts") && err.contains("PowerSubsystem"), "{err}");
        let only_user = |name: &str| (name == "BMC_USER").then(|| "root".to_owned());
        let err = redfish("http://bmc/redfish/v1/Chassis/1/Power", &only_user).unwrap_err().to_string();
        assert!(err.contains("BMC_PASS is not set"), "{err}");
    }

    /// An https server for `localhost` with a certificate of its own, answering one request
    /// with `body`; returns the URL and the certificate's PEM.
    fn serve_https_once(body: &str) -> (String, String) {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let pem = cert.cert.pem();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into());
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.cert.der().clone()], key)
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        std::thread::spawn(move || {
            let (tcp, _) = listener.accept().unwrap();
            let conn = rustls::ServerConnection::new(std::sync::Arc::new(config)).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let mut reader = BufReader::new(&mut tls);
            let mut request = String::new();
            // A client that refuses the certificate ends here.
            while reader.read_line(&mut request).unwrap_or(0) > 2 {}
            let _ = tls.write_all(reply.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        });
        (format!("https://localhost:{port}/redfish/v1/Chassis/1/Power"), pem)
    }

    #[test]
    fn redfish_over_https_trusts_the_bmcs_ca_when_named_and_says_how_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let (url, pem) = serve_https_once(POWER_JSON);
        let ca = dir.path().join("bmc.pem");
        fs::write(&ca, pem).unwrap();
        let with_ca = |name: &str| (name == REDFISH_CA_ENV).then(|| ca.display().to_string());
        assert_eq!(redfish(&url, &with_ca).unwrap().sample().unwrap(), Some(344.0));

        let (url, _) = serve_https_once(POWER_JSON);
        let err = redfish(&url, &|_| None).unwrap().sample().unwrap_err().to_string();
        assert!(
            err.contains("certificate") && err.contains(REDFISH_CA_ENV) && err.contains(REDFISH_INSECURE_ENV),
            "{err}"
        );

        let (url, _) = serve_https_once(POWER_JSON);
        let insecure = |name: &str| (name == REDFISH_INSECURE_ENV).then(|| "1".to_owned());
        assert_eq!(redfish(&url, &insecure).unwrap().sample().unwrap(), Some(344.0));

        let missing = |name: &str| (name == REDFISH_CA_ENV).then(|| "/no/such/ca.pem".to_owned());
        let err = redfish(&url, &missing).unwrap_err().to_string();
        assert!(err.contains("/no/such/ca.pem"), "{err}");
    }

    #[test]
    fn http_urls_split_into_address_and_path() {
        let split = |url| {
            let p = split_http_url(url).unwrap();
            (p.tls, p.authority, p.host, p.path)
        };
        assert_eq!(
            split("http://10.0.0.5/redfish/v1/Chassis/1/Power"),
            (false, "10.0.0.5:80".into(), "10.0.0.5".into(), "/redfish/v1/Chassis/1/Power".into())
        );
        assert_eq!(split("http://bmc:8000"), (false, "bmc:8000".into(), "bmc".into(), "/".into()));
        assert_eq!(
            split("https://[fe80::1]/x"),
            (true, "[fe80::1]:443".into(), "[fe80::1]".into(), "/x".into())
        );
        assert!(split_http_url("ftp://bmc/x").is_err());
        let with_user = split_http_url("https://admin:p%3Aw@bmc:8443/x").unwrap();
        assert_eq!(with_user.userinfo, Some(("admin".into(), "p:w".into())));
        assert_eq!((with_user.authority.as_str(), with_user.host.as_str()), ("bmc:8443", "bmc"));
    }
}
