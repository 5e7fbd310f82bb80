//! Redfish: a BMC's chassis `Power` resource over http or https. Credentials come from the
//! URL (`https://user:password@bmc/...`) or from two environment variables; the password is
//! remembered as a secret, and the URL is kept and shown with it hidden. HTTP and TLS are
//! ureq's; this file says what to ask, whom to trust and what the answer means.

use super::{IO_TIMEOUT, Meter, PowerError, first_line};
use crate::monitor::tls;
use crate::secret;
use base64::Engine as _;
use std::time::Instant;
use ureq::http::Uri;

/// Largest reply read from a Redfish BMC; a Power resource is a few KiB.
const MAX_HTTP_REPLY: u64 = 1 << 20;

const REDFISH_FIX: &str = "check that the URL names the chassis Power resource, e.g. \
                           http://bmc/redfish/v1/Chassis/1/Power";

/// The way out when the BMC's certificate did not pass.
const CERTIFICATE_FIX: &str = "the BMC's certificate is not signed by a public CA: give STORBENCH_REDFISH_CA \
                               a PEM file holding its CA (or the certificate itself), or set \
                               STORBENCH_REDFISH_INSECURE=1 to accept any certificate on a network you trust";

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
    /// The URL requested: without `user:password@`, which goes in `auth`.
    uri: Uri,
    /// The HTTP client, with its timeouts and, for https, whom it trusts.
    agent: ureq::Agent,
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
        let (uri, userinfo) = split_credentials(url, &url_shown)?;
        let (credentials, credential_vars) = match userinfo {
            Some(userinfo) => (Some(userinfo), "the URL".to_owned()),
            None => (env_credentials(user_env, password_env, env)?, format!("{user_env} and {password_env}")),
        };
        let auth = credentials.map(|(user, password)| {
            secret::remember(&password);
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            Secret(format!("Basic {token}"))
        });
        let tls = match uri.scheme_str() {
            Some("https") => tls_config(env)?,
            _ => ureq::tls::TlsConfig::default(),
        };
        Ok(Redfish { url: url_shown, uri, agent: agent(tls), auth, credential_vars })
    }

    /// Status code and body of the BMC's answer.
    fn get(&self) -> Result<(u16, Vec<u8>), PowerError> {
        let mut request = self.agent.get(&self.uri).header("Accept", "application/json");
        if let Some(Secret(auth)) = &self.auth {
            request = request.header("Authorization", auth);
        }
        let reply = request.call().and_then(|mut response| {
            let body = response.body_mut().with_config().limit(MAX_HTTP_REPLY).read_to_vec()?;
            Ok((response.status().as_u16(), body))
        });
        reply.map_err(|e| PowerError::Read {
            meter: "Redfish",
            what: self.url.clone(),
            fix: if e.to_string().contains("certificate") { CERTIFICATE_FIX } else { REDFISH_FIX },
            error: e.into_io(),
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

/// A client that returns every status (a 401 is ours to word), follows no redirect (its
/// status is shown instead), ignores proxy variables (a BMC sits on a management network),
/// opens a new connection for each reading (a BMC may close an idle one just as it is
/// reused, and a reading would fail) and waits [`IO_TIMEOUT`] at most to connect and for
/// each read or write.
fn agent(tls: ureq::tls::TlsConfig) -> ureq::Agent {
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .max_idle_connections(0)
        .timeout_connect(Some(IO_TIMEOUT))
        .timeout_per_read(Some(IO_TIMEOUT))
        .timeout_per_write(Some(IO_TIMEOUT))
        .build()
        .into()
}

/// The trust for https, from the environment.
fn tls_config(env: &dyn Fn(&str) -> Option<String>) -> Result<ureq::tls::TlsConfig, PowerError> {
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

/// An http(s) URL without its `user:password@`, and those, percent-decoded. `shown` is the
/// URL with its password hidden, for messages.
fn split_credentials(url: &str, shown: &str) -> Result<(Uri, Option<(String, String)>), PowerError> {
    let unusable = |problem: String| PowerError::Unusable { meter: "Redfish", problem, fix: REDFISH_FIX };
    let uri: Uri = url.parse().map_err(|e| unusable(format!("{shown} is not a valid http(s) URL: {e}")))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(unusable(format!("{shown} is not an http:// or https:// URL")));
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(unusable(format!("{shown} names no host")));
    }
    let authority = uri.authority().map(|a| a.as_str().to_owned()).unwrap_or_default();
    let Some((userinfo, host)) = authority.rsplit_once('@') else { return Ok((uri, None)) };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let credentials = (secret::percent_decoded(user), secret::percent_decoded(password));
    let mut parts = uri.into_parts();
    parts.authority = host.parse().ok();
    let uri =
        Uri::from_parts(parts).map_err(|e| unusable(format!("{shown} is not a valid http(s) URL: {e}")))?;
    Ok((uri, Some(credentials)))
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
    use std::io::{BufRead, BufReader, Write};
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

    /// The value of header `name` in a request; header names are case-insensitive.
    fn header<'r>(request: &'r str, name: &str) -> Option<&'r str> {
        request.lines().find_map(|line| {
            let (field, value) = line.split_once(':')?;
            field.eq_ignore_ascii_case(name).then(|| value.trim())
        })
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
        assert_eq!(header(&request, "Authorization"), Some("Basic cm9vdDpjYWx2aW4="), "{request}");
        assert_eq!(header(&request, "Accept"), Some("application/json"), "{request}");
    }

    #[test]
    fn redfish_takes_credentials_from_the_url_and_never_shows_the_password() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let url = url.replace("http://", "http://root:Rf5%40url-pw@");
        let mut sampler = redfish(&url, &|_| None).unwrap();
        assert!(sampler.describe().contains("http://root:***@127.0.0.1:"), "{}", sampler.describe());
        assert!(!format!("{sampler:?}").contains("url-pw"), "Debug output shows the password");
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        let token = base64::engine::general_purpose::STANDARD.encode("root:Rf5@url-pw");
        let request = request.recv().unwrap();
        assert_eq!(header(&request, "Authorization"), Some(format!("Basic {token}").as_str()), "{request}");
        assert_eq!(secret::redact("the BMC said Rf5@url-pw"), "the BMC said ***");
    }

    #[test]
    fn redfish_sends_no_credentials_when_none_are_set() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let mut sampler = redfish(&url, &|_| None).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        let request = request.recv().unwrap();
        assert_eq!(header(&request, "Authorization"), None, "{request}");
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
    fn url_credentials_are_split_off_decoded_and_kept_out_of_the_request_url() {
        let split = |url| split_credentials(url, url);
        let (uri, credentials) = split("https://admin:p%3Aw@bmc:8443/x").unwrap();
        assert_eq!(uri.to_string(), "https://bmc:8443/x");
        assert_eq!(credentials, Some(("admin".into(), "p:w".into())));
        let (uri, credentials) = split("https://[fe80::1]/x").unwrap();
        assert_eq!((uri.to_string(), credentials), ("https://[fe80::1]/x".into(), None));
        let err = split("ftp://bmc/x").unwrap_err().to_string();
        assert!(err.contains("not an http:// or https:// URL"), "{err}");
        let err = split("http://root:pw@:80/x").unwrap_err().to_string();
        assert!(err.contains("names no host"), "{err}");
        let err = split("bmc/redfish").unwrap_err().to_string();
        assert!(err.contains("not a valid http(s) URL"), "{err}");
    }
}
