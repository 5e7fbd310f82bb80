//! The smallest HTTP/1.1 responder Prometheus needs: `GET /metrics` answered with the scrape,
//! anything else 404, one request per connection. Each connection is answered on a thread of
//! its own, [`MAX_CLIENTS`] at once (one more is told 503 at once, never queued), and each has
//! [`REQUEST_DEADLINE`] from its accept to its answer written, however it dribbles: one slow or
//! stuck client never delays another, and the run never waits for any (the listener has its
//! own thread).

use anyhow::{Result, anyhow};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use storbench_report::openmetrics::Format;

/// The most of a request read: its line and headers (a scraper's are a few hundred bytes).
const MAX_REQUEST: usize = 8 << 10;
/// How long one client may take, from its connection to its answer written.
const REQUEST_DEADLINE: Duration = Duration::from_secs(2);
/// Clients answered at once.
pub const MAX_CLIENTS: usize = 16;

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

/// Answers `listener`'s connections with `scrape`, each on a thread of its own, until the
/// process ends.
pub fn spawn(listener: TcpListener, scrape: fn(Format) -> String) -> Result<()> {
    let busy = Arc::new(AtomicUsize::new(0));
    let serve = move || {
        for conn in listener.incoming().flatten() {
            let Some(slot) = Slot::take(&busy) else {
                let _ = turn_away(conn);
                continue;
            };
            // A client that fails (reset, timed out) costs only its own answer; a thread
            // that cannot start drops its connection and its slot.
            let answering = move || {
                let _slot = slot;
                let _ = answer(conn, scrape);
            };
            let _ = std::thread::Builder::new().name("metrics-client".into()).spawn(answering);
        }
    };
    std::thread::Builder::new().name("metrics".into()).spawn(serve)?;
    Ok(())
}

/// One of the [`MAX_CLIENTS`] answered at once, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(busy: &Arc<AtomicUsize>) -> Option<Slot> {
        let taken = busy.fetch_add(1, Ordering::AcqRel) < MAX_CLIENTS;
        let slot = Slot(busy.clone());
        taken.then_some(slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Tells a client past [`MAX_CLIENTS`] to come back, waiting on it 100 ms at most: what it
/// sent is read and dropped after the answer (closing on unread bytes would reset the
/// connection before the client read the answer).
fn turn_away(mut conn: TcpStream) -> std::io::Result<()> {
    let deadline = Instant::now() + Duration::from_millis(100);
    conn.set_write_timeout(Some(left(deadline)?))?;
    conn.write_all(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
    conn.shutdown(std::net::Shutdown::Write)?;
    let mut sent = [0u8; MAX_REQUEST];
    loop {
        conn.set_read_timeout(Some(left(deadline)?))?;
        if conn.read(&mut sent)? == 0 {
            return Ok(());
        }
    }
}

fn answer(mut conn: TcpStream, scrape: fn(Format) -> String) -> std::io::Result<()> {
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let head = read_head(&mut conn, deadline)?;
    for chunk in response(&head, scrape).chunks(64 << 10) {
        conn.set_write_timeout(Some(left(deadline)?))?;
        conn.write_all(chunk)?;
    }
    conn.flush()
}

/// What is left until `deadline`; a timeout once it has passed.
fn left(deadline: Instant) -> std::io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() { Err(std::io::Error::from(ErrorKind::TimedOut)) } else { Ok(left) }
}

/// The request's line and headers, up to the blank line or `MAX_REQUEST` bytes, by `deadline`.
fn read_head(conn: &mut TcpStream, deadline: Instant) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while head.len() < MAX_REQUEST && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        conn.set_read_timeout(Some(left(deadline)?))?;
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

    /// `GET /metrics` from a new client of `addr`: its whole answer, and how long it took.
    fn scrape_of(addr: SocketAddr) -> (String, Duration) {
        let started = Instant::now();
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer).unwrap();
        (answer, started.elapsed())
    }

    #[test]
    fn a_stuck_or_dribbling_client_never_delays_another_and_is_cut_off_at_its_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        spawn(listener, fake).unwrap();
        // One stuck halfway through its request, one sending a byte every 300 ms.
        let mut stuck = TcpStream::connect(addr).unwrap();
        stuck.write_all(b"GET /metr").unwrap();
        let dribbling = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            let started = Instant::now();
            for b in b"GET /metrics HTTP/1.1\r\nX: ".iter().cycle() {
                if c.write_all(&[*b]).is_err() || started.elapsed() > Duration::from_secs(20) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            started.elapsed()
        });
        std::thread::sleep(Duration::from_millis(200));
        let (answer, took) = scrape_of(addr);
        assert!(answer.starts_with("HTTP/1.1 200 OK") && answer.ends_with("Text\n"), "{answer}");
        assert!(took < Duration::from_secs(1), "answered beside the slow ones in {took:?}");
        let cut = dribbling.join().unwrap();
        assert!(cut < Duration::from_secs(10), "a dribbling client is cut off at its deadline: {cut:?}");
        let mut rest = Vec::new();
        stuck.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = stuck.read_to_end(&mut rest);
        assert!(rest.is_empty(), "the stuck one got nothing and was closed");
        // Past the bound, a client is told to come back at once, never queued.
        let held: Vec<TcpStream> = (0..MAX_CLIENTS).map(|_| TcpStream::connect(addr).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(200));
        let (answer, took) = scrape_of(addr);
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(took < Duration::from_secs(1), "{took:?}");
        drop(held);
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
