//! The smallest HTTP/1.1 responder Prometheus needs: `GET /metrics` answered with the scrape,
//! anything else 404, one request per connection. A client that sends too much or too slowly
//! is cut off; the run never waits for one (the listener has its own thread).

use super::render::Format;
use anyhow::{Result, anyhow};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The most of a request read: its line and headers (a scraper's are a few hundred bytes).
const MAX_REQUEST: usize = 8 << 10;
/// How long a client may take to send its request or read the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// A listener on `given` (`HOST:PORT`, or `:PORT` for every interface), or an error saying
/// why not and what to give instead.
pub fn listen(given: &str) -> Result<TcpListener> {
    let addrs = addresses(given)?;
    TcpListener::bind(&addrs[..]).map_err(|e| match e.kind() {
        ErrorKind::AddrInUse => {
            anyhow!("--metrics-listen {given}: that port is in use by another program; give another port")
        }
        ErrorKind::AddrNotAvailable => {
            anyhow!("--metrics-listen {given}: this host has no such address; give one of its own, or :PORT")
        }
        _ => anyhow!("--metrics-listen {given}: cannot listen there ({e}); give another HOST:PORT"),
    })
}

fn addresses(given: &str) -> Result<Vec<SocketAddr>> {
    let full = if given.starts_with(':') { format!("0.0.0.0{given}") } else { given.to_string() };
    let bad = || {
        anyhow!(
            "--metrics-listen {given}: not an address to listen on; give HOST:PORT, such as \
             127.0.0.1:9464, or :9464 for every interface"
        )
    };
    let addrs: Vec<SocketAddr> = full.to_socket_addrs().map_err(|_| bad())?.collect();
    if addrs.is_empty() { Err(bad()) } else { Ok(addrs) }
}

/// Answers `listener`'s connections, one after another, with `scrape`, until the process ends.
pub fn spawn(listener: TcpListener, scrape: fn(Format) -> String) -> Result<()> {
    let serve = move || {
        for conn in listener.incoming().flatten() {
            // A client that fails (reset, timed out) costs only its own answer.
            let _ = answer(conn, scrape);
        }
    };
    std::thread::Builder::new().name("metrics".into()).spawn(serve)?;
    Ok(())
}

fn answer(mut conn: TcpStream, scrape: fn(Format) -> String) -> std::io::Result<()> {
    conn.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    conn.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let head = read_head(&mut conn)?;
    conn.write_all(&response(&head, scrape))?;
    conn.flush()
}

/// The request's line and headers, up to the blank line or `MAX_REQUEST` bytes.
fn read_head(conn: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while head.len() < MAX_REQUEST && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut buf)? {
            0 => break,
            n => head.extend_from_slice(&buf[..n]),
        }
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// The whole answer to a request whose head is `head`.
fn response(head: &str, scrape: fn(Format) -> String) -> Vec<u8> {
    let mut lines = head.lines();
    let target = lines.next().and_then(|l| l.strip_prefix("GET ")).and_then(|l| l.split(' ').next());
    let path = target.map(|t| t.split('?').next().unwrap_or(t));
    let accept = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim().eq_ignore_ascii_case("accept").then(|| value.trim().to_string())
    });
    let (status, content_type, body) = if path == Some("/metrics") {
        let format = Format::for_accept(accept.as_deref().unwrap_or(""));
        ("200 OK", format.content_type(), scrape(format))
    } else {
        ("404 Not Found", "text/plain; charset=utf-8", "storbench serves GET /metrics only\n".into())
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    [head.into_bytes(), body.into_bytes()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(format: Format) -> String {
        format!("{format:?}\n")
    }

    fn answer_to(head: &str) -> String {
        String::from_utf8(response(head, fake)).unwrap()
    }

    #[test]
    fn get_metrics_is_answered_in_the_format_accepted_and_anything_else_is_404() {
        let prometheus = answer_to(
            "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n",
        );
        assert!(prometheus.starts_with("HTTP/1.1 200 OK\r\n"), "{prometheus}");
        assert!(
            prometheus
                .contains("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n")
        );
        assert!(prometheus.ends_with("\r\n\r\nOpenMetrics\n"), "{prometheus}");
        let curl = answer_to("GET /metrics?x=1 HTTP/1.1\r\nAccept: */*\r\n\r\n");
        assert!(
            curl.contains("text/plain; version=0.0.4") && curl.contains("Content-Length: 5\r\n"),
            "{curl}"
        );
        for other in ["GET / HTTP/1.1\r\n\r\n", "POST /metrics HTTP/1.1\r\n\r\n", "", "\u{0}garbage"] {
            assert!(answer_to(other).starts_with("HTTP/1.1 404 Not Found\r\n"), "{other:?}");
        }
    }

    #[test]
    fn an_address_without_a_port_or_host_is_refused_with_the_form_to_give() {
        for bad in ["9464", "nohost", "127.0.0.1:99999", ":x"] {
            let e = listen(bad).unwrap_err().to_string();
            assert!(e.contains("give HOST:PORT, such as 127.0.0.1:9464"), "{bad}: {e}");
        }
        let used = TcpListener::bind("127.0.0.1:0").unwrap();
        let e = listen(&used.local_addr().unwrap().to_string()).unwrap_err().to_string();
        assert!(e.contains("in use"), "{e}");
    }
}
