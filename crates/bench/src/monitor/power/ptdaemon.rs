//! SPEC PTDaemon: an AC power analyzer behind SPEC's daemon, read with its text protocol.
//! The protocol has no credentials: PTDaemon is reached by `host:port` on a trusted network.

use super::{Meter, PowerError, connect, watts_in};
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Instant;

const PTD_FIX: &str =
    "start PTDaemon with the analyzer attached and name its host:port (its default port is 8888)";

/// A client of SPEC's PTDaemon, which talks to an AC power analyzer and answers text commands,
/// one line each way, ended by CRLF (as MLCommons' power client does).
///
/// Minimal on purpose: `Hello` checks that it is PTDaemon, `Identify` names the analyzer for the
/// report, and each sample asks `Watts` for the latest reading. Ranging (`SR`), logging
/// (`Go`/`Stop`) and uncertainty are left to the operator's PTDaemon setup. After a failed
/// exchange the connection is dropped and the next sample connects again.
#[derive(Debug)]
pub(super) struct PtDaemon {
    addr: String,
    identity: String,
    conn: Option<BufReader<TcpStream>>,
}

impl PtDaemon {
    pub(super) fn open(addr: String) -> Result<Self, PowerError> {
        let mut ptd = PtDaemon { addr, identity: String::new(), conn: None };
        ptd.identity = ptd.greet()?;
        Ok(ptd)
    }

    /// Connects, checks the greeting and returns the analyzer's identity.
    fn greet(&mut self) -> Result<String, PowerError> {
        let stream = connect(&self.addr).map_err(|error| self.read_error(error))?;
        self.conn = Some(BufReader::new(stream));
        let hello = self.command("Hello")?;
        if !hello.starts_with("Hello, PTDaemon here") {
            self.conn = None;
            return Err(PowerError::NoReading {
                meter: "PTDaemon",
                what: format!("the greeting of {}", self.addr),
                got: hello,
                fix: "this is not a PTDaemon; check the port (PTDaemon's default is 8888)",
            });
        }
        self.command("Identify")
    }

    /// Sends one command and returns the one-line reply; drops the connection on failure.
    fn command(&mut self, command: &str) -> Result<String, PowerError> {
        let Some(conn) = self.conn.as_mut() else {
            return Err(self.read_error(io::ErrorKind::NotConnected.into()));
        };
        let mut line = String::new();
        let exchange = conn
            .get_mut()
            .write_all(format!("{command}\r\n").as_bytes())
            .and_then(|()| conn.read_line(&mut line))
            .and_then(|n| match n {
                0 => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "PTDaemon closed the connection")),
                _ => Ok(()),
            });
        if let Err(error) = exchange {
            self.conn = None;
            return Err(self.read_error(error));
        }
        Ok(line.trim_end().to_owned())
    }

    fn read_error(&self, error: io::Error) -> PowerError {
        PowerError::Read { meter: "PTDaemon", what: self.addr.clone(), error, fix: PTD_FIX }
    }
}

impl Meter for PtDaemon {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        if self.conn.is_none() {
            self.greet()?;
        }
        let reply = self.command("Watts")?;
        let what = format!("the Watts reply of {}", self.addr);
        watts_in("PTDaemon", what, &reply, "check the analyzer's connection and PTDaemon's log").map(Some)
    }

    fn describe(&self) -> String {
        format!("SPEC PTDaemon at {} ({})", self.addr, self.identity)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PowerSampler, PowerSource};
    use super::*;
    use std::net::TcpListener;
    use std::sync::mpsc;
    /// A fake PTDaemon on one connection, greeting with `hello`; the commands it received come
    /// back on the channel when the client hangs up.
    fn fake_ptdaemon(hello: &'static str) -> (String, mpsc::Receiver<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut seen = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                let command = line.trim_end_matches("\r\n").to_owned();
                let reply = match command.as_str() {
                    "Hello" => hello,
                    "Identify" => "PTDaemon v1.10.0, WT310",
                    "Watts" => "Watts,23.430000",
                    _ => "Error: unknown command",
                };
                if reader.get_mut().write_all(format!("{reply}\r\n").as_bytes()).is_err() {
                    break;
                }
                seen.push(command);
                line.clear();
            }
            tx.send(seen).unwrap();
        });
        (addr, rx)
    }

    #[test]
    fn ptdaemon_greets_identifies_and_reads_watts() {
        let (addr, commands) = fake_ptdaemon("Hello, PTDaemon here!");
        let mut sampler = PowerSampler::new(PowerSource::PtDaemon { addr: addr.clone() }).unwrap();
        assert_eq!(sampler.describe(), format!("SPEC PTDaemon at {addr} (PTDaemon v1.10.0, WT310)"));
        assert_eq!(sampler.sample().unwrap(), Some(23.43));
        assert_eq!(sampler.sample().unwrap(), Some(23.43));
        drop(sampler);
        assert_eq!(commands.recv().unwrap(), ["Hello", "Identify", "Watts", "Watts"]);
    }

    #[test]
    fn something_else_than_ptdaemon_is_refused() {
        let (addr, _commands) = fake_ptdaemon("SSH-2.0-OpenSSH_9.6");
        let err = PowerSampler::new(PowerSource::PtDaemon { addr }).unwrap_err().to_string();
        assert!(err.contains("not a PTDaemon") && err.contains("SSH-2.0"), "{err}");
    }
}
