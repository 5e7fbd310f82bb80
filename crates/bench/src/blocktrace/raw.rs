//! The block tracepoints read from the kernel's per-CPU binary buffers (`trace_pipe_raw`), as
//! perf reads them, instead of `trace_pipe`'s text: each read returns one ring-buffer page
//! (a timestamp, the length of its data, then the events, each with a 32-bit header of a type
//! and a time delta), and each event's fields sit where the event's `format` file says. The
//! CPUs' events are put in time order before they are paired: an event is released once every
//! CPU has been read past its time.

use super::capture::Event;
use std::collections::BTreeMap;
use std::path::Path;

/// The ring buffer's page: an 8-byte timestamp, an 8-byte commit (the data's length, with
/// flags in its high bits), then the data.
const PAGE_HEADER: usize = 16;
const COMMIT_LENGTH_MASK: u64 = (1 << 27) - 1;
/// Event header types (`header_event`): 29 padding, 30 a time extend, 31 an absolute time
/// stamp; 1 to 28 data of that many 4-byte words; 0 data whose length follows.
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;
/// An absolute time stamp holds the low 59 bits of the clock.
const ABS_TS_BITS: u32 = 59;

/// Where one event's fields are, from its `format` file.
#[derive(Debug, Clone, PartialEq)]
struct Fields {
    id: u16,
    sector: usize,
    nr_sector: usize,
    /// Issues only.
    bytes: Option<usize>,
    rwbs: (usize, usize),
    pid: usize,
}

/// The two block events' layouts on this kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    issue: Fields,
    complete: Fields,
}

impl Layout {
    /// Read from the instance's (or tracefs's) `events/block/*/format`.
    pub fn read(events: &Path) -> Result<Layout, String> {
        let format = |name: &str| {
            let path = events.join("block").join(name).join("format");
            crate::files::tracefs::read_small(&path).map_err(|e| e.to_string())
        };
        Ok(Layout {
            issue: fields(&format("block_rq_issue")?, true)?,
            complete: fields(&format("block_rq_complete")?, false)?,
        })
    }
}

/// An event's id and its fields' offsets from the text of its `format` file.
fn fields(text: &str, issue: bool) -> Result<Fields, String> {
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("ID:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or("the event's format has no ID")?;
    let mut at: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with("field:")) {
        let part = |key: &str| line.split(';').find_map(|p| p.trim().strip_prefix(key)).map(str::trim);
        let name =
            part("field:").and_then(|d| d.rsplit(' ').next()).map(|n| n.split('[').next().unwrap_or(n));
        let offset = part("offset:").and_then(|v| v.parse().ok());
        let size = part("size:").and_then(|v| v.parse().ok());
        if let (Some(name), Some(offset), Some(size)) = (name, offset, size) {
            at.insert(name, (offset, size));
        }
    }
    let get = |name: &str| at.get(name).copied().ok_or(format!("the event's format has no field {name}"));
    Ok(Fields {
        id,
        sector: get("sector")?.0,
        nr_sector: get("nr_sector")?.0,
        bytes: if issue { Some(get("bytes")?.0) } else { None },
        rwbs: get("rwbs")?,
        pid: get("common_pid")?.0,
    })
}

/// The events of one page as read from a CPU's `trace_pipe_raw`, each with its time, into
/// `out`; the page's last time (the CPU's clock as far as it was read).
pub fn page_events(page: &[u8], layout: &Layout, out: &mut Vec<(u64, Event)>) -> Option<u64> {
    let mut ts = u64_at(page, 0)?;
    let len = (u64_at(page, 8)? & COMMIT_LENGTH_MASK) as usize;
    let end = (PAGE_HEADER + len).min(page.len());
    let mut pos = PAGE_HEADER;
    while pos + 4 <= end {
        let header = u32_at(page, pos)?;
        let (kind, delta) = (header & 0x1f, u64::from(header >> 5));
        match kind {
            PADDING if delta == 0 => break,
            PADDING => pos += 4 + u32_at(page, pos + 4)? as usize,
            TIME_EXTEND => {
                ts += (u64::from(u32_at(page, pos + 4)?) << 27) | delta;
                pos += 8;
            }
            TIME_STAMP => {
                let low = (u64::from(u32_at(page, pos + 4)?) << 27) | delta;
                ts = (ts & !((1 << ABS_TS_BITS) - 1)) | low;
                pos += 8;
            }
            0 => {
                let len = (u32_at(page, pos + 4)? as usize).checked_sub(4)?;
                ts += delta;
                out.extend(event(page.get(pos + 8..pos + 8 + len)?, layout, ts).map(|e| (ts, e)));
                pos += 8 + len;
            }
            words => {
                let len = words as usize * 4;
                ts += delta;
                out.extend(event(page.get(pos + 4..pos + 4 + len)?, layout, ts).map(|e| (ts, e)));
                pos += 4 + len;
            }
        }
    }
    Some(ts)
}

/// One event's data, at `at_ns`, as an issue or a completion (another event's is none).
fn event(data: &[u8], layout: &Layout, at_ns: u64) -> Option<Event> {
    let id = u16::from_le_bytes(data.get(..2)?.try_into().ok()?);
    let f = if id == layout.issue.id {
        &layout.issue
    } else if id == layout.complete.id {
        &layout.complete
    } else {
        return None;
    };
    let sector = u64_at(data, f.sector)?;
    let sectors = u32_at(data, f.nr_sector)?;
    let rwbs = data.get(f.rwbs.0..f.rwbs.0 + f.rwbs.1)?;
    let rwbs = std::str::from_utf8(&rwbs[..rwbs.iter().position(|&b| b == 0).unwrap_or(rwbs.len())]).ok()?;
    let (op, flags) = super::capture::classify(rwbs, sectors);
    Some(match f.bytes {
        Some(at) => {
            let pid = u32_at(data, f.pid)?;
            Event::Issue { at_ns, pid, sector, sectors, bytes: u32_at(data, at)?, op, flags }
        }
        None => Event::Complete { at_ns, sector, sectors, op },
    })
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The CPUs' events put in time order: each CPU's come in order, and an event is released
/// once every CPU has been read past its time (an event another CPU still holds may be
/// earlier).
#[derive(Default)]
pub struct Ordered {
    held: Vec<(u64, Event)>,
}

impl Ordered {
    pub fn add(&mut self, events: &mut Vec<(u64, Event)>) {
        self.held.append(events);
    }

    /// The events before `watermark` (every one, with `u64::MAX`), in time order.
    pub fn release(&mut self, watermark: u64) -> Vec<(u64, Event)> {
        self.held.sort_by_key(|(t, _)| *t);
        let n = self.held.partition_point(|(t, _)| *t < watermark);
        self.held.drain(..n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocktrace::format::Op;

    /// An issue's and a completion's format as this kernel writes them (rwbs of 10 bytes).
    const ISSUE: &str = "name: block_rq_issue\nID: 2104\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\
        \tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n\
        \tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n\
        \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n";
    const COMPLETE: &str = "name: block_rq_complete\nID: 2107\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
        \tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n\
        \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n";

    fn layout() -> Layout {
        Layout { issue: fields(ISSUE, true).unwrap(), complete: fields(COMPLETE, false).unwrap() }
    }

    /// An event's data: its id, pid, sector, sectors, bytes and rwbs where the layout has them.
    fn data(id: u16, pid: u32, sector: u64, sectors: u32, bytes: u32, rwbs: &str) -> Vec<u8> {
        let mut d = vec![0u8; 48];
        d[..2].copy_from_slice(&id.to_le_bytes());
        d[4..8].copy_from_slice(&pid.to_le_bytes());
        d[16..24].copy_from_slice(&sector.to_le_bytes());
        d[24..28].copy_from_slice(&sectors.to_le_bytes());
        d[28..32].copy_from_slice(&bytes.to_le_bytes());
        d[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        d
    }

    fn header(kind: u32, delta: u32) -> [u8; 4] {
        (kind | (delta << 5)).to_le_bytes()
    }

    #[test]
    fn a_format_file_gives_each_fields_place_and_the_events_id() {
        let l = layout();
        assert_eq!((l.issue.id, l.issue.sector, l.issue.bytes, l.issue.rwbs), (2104, 16, Some(28), (34, 10)));
        assert_eq!((l.complete.id, l.complete.bytes, l.complete.pid), (2107, None, 4));
        assert!(fields("ID: 1\n", true).unwrap_err().contains("no field sector"));
    }

    #[test]
    fn a_page_gives_its_events_at_the_times_its_deltas_add_up_to() {
        let mut body = Vec::new();
        // An issue 100 ns after the page's time, in a short event (12 words).
        body.extend(header(12, 100));
        body.extend(data(2104, 77, 2048, 8, 4096, "RS"));
        // A time extend of 2^27 + 5 ns, then a completion in a long event (length after it).
        body.extend(header(TIME_EXTEND, 5));
        body.extend(1u32.to_le_bytes());
        body.extend(header(0, 50));
        body.extend(52u32.to_le_bytes());
        body.extend(data(2107, 0, 2048, 8, 0, "RS"));
        // Another tracepoint's event: skipped; then a padding that ends the page.
        body.extend(header(12, 1));
        body.extend(data(999, 0, 0, 0, 0, ""));
        body.extend(header(PADDING, 0));
        let mut page = 1_000_000u64.to_le_bytes().to_vec();
        page.extend((body.len() as u64 | 1 << 31).to_le_bytes());
        page.extend(&body);
        page.resize(4096, 0);
        let mut out = Vec::new();
        let last = page_events(&page, &layout(), &mut out);
        let issue_at = 1_000_100;
        let complete_at = issue_at + (1 << 27) + 5 + 50;
        assert_eq!(last, Some(complete_at + 1));
        let issue = Event::Issue {
            at_ns: issue_at,
            pid: 77,
            sector: 2048,
            sectors: 8,
            bytes: 4096,
            op: Op::Read,
            flags: crate::blocktrace::format::SYNC,
        };
        let complete = Event::Complete { at_ns: complete_at, sector: 2048, sectors: 8, op: Op::Read };
        assert_eq!(out, vec![(issue_at, issue), (complete_at, complete)]);
    }

    #[test]
    fn events_of_several_cpus_come_out_in_time_order_once_every_cpu_is_read_past_them() {
        let at = |t: u64| (t, Event::Complete { at_ns: t, sector: t, sectors: 1, op: Op::Read });
        let mut o = Ordered::default();
        o.add(&mut vec![at(10), at(30)]);
        o.add(&mut vec![at(20), at(40)]);
        assert_eq!(o.release(35), vec![at(10), at(20), at(30)]);
        o.add(&mut vec![at(36)]);
        assert_eq!(o.release(u64::MAX), vec![at(36), at(40)]);
    }
}
