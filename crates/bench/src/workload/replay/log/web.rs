//! Web server logs, as Apache and nginx write them (the Combined Log Format, or the Common
//! one without its referrer and user agent), turned into DVD Store calls by a mapping: routes
//! tried in order, each a pattern of the URL's path (with named captures), optionally a
//! method and query values it must have, the call's type and its parameters, written as
//! templates over the captures and the query string's values (`{name}`: the first value,
//! `{name*}`: all of them joined with commas, as DS3's purchase page gets `item[]`; a template
//! with lists leaves their empty items out, so `{item[]*},{selected_item[]*}` is the items of
//! both, whichever is absent). A query value a route asks for is a regular expression the
//! whole value must match (`yes`; `title|actor|category`; `.+`: present and not empty).
//!
//! A request no route takes (a static page, an image) is counted per path and skipped
//! ([`LineError::unmatched`]); one a route takes whose parameters do not make a call (a value
//! missing, or not a number where one is needed) is a line that cannot be read.
//!
//! Sessions: every request on its own (a web tier serves each request on whatever connection
//! its pool gives), or those of one client address, or of one authenticated user, each in
//! order (`SessionBy`).

use super::{Body, Close, Entry, LineError, Lines, Read, What};
use crate::workload::oltp::ds3::call::{CALL_TYPES, Call};
use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::BufRead;

/// A mapping as its TOML file holds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappingFile {
    #[serde(default)]
    pub session: SessionBy,
    #[serde(rename = "route", default)]
    pub routes: Vec<RouteFile>,
}

/// One route as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteFile {
    /// A regular expression the whole path must match (`/ds3/dslogin\.php`).
    pub path: String,
    /// GET, POST, ...; any when absent.
    pub method: Option<String>,
    /// Query values the request must have: each a regular expression its whole first value
    /// must match (`confirmpurchase = "yes"`, `browsetype = ".+"`).
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// The call's type: one of `CALL_TYPES`, or a template that makes one
    /// (`browse_by_{browsetype}`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The call's parameters: name -> template.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
}

/// Which requests are one session, replayed in order on one connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionBy {
    /// Each request on its own.
    #[default]
    Request,
    /// A client address's requests.
    Client,
    /// An authenticated user's requests (the log's third field).
    User,
}

/// A mapping, checked.
#[derive(Debug, Clone)]
pub struct Mapping {
    session: SessionBy,
    routes: Vec<Route>,
}

#[derive(Debug, Clone)]
struct Route {
    path: Regex,
    method: Option<String>,
    query: Vec<(String, Regex)>,
    kind: Template,
    params: Vec<(String, Template)>,
}

impl Mapping {
    /// Checks `file`: each path a regular expression, each template well formed, each literal
    /// type a DS3 call. Why not, naming the route (1 is the first).
    pub fn new(file: MappingFile) -> Result<Mapping, String> {
        if file.routes.is_empty() {
            return Err("the mapping has no [[route]]: give at least one".into());
        }
        let routes = file
            .routes
            .into_iter()
            .enumerate()
            .map(|(i, r)| Route::new(r).map_err(|e| format!("route {}: {e}", i + 1)));
        Ok(Mapping { session: file.session, routes: routes.collect::<Result<_, _>>()? })
    }

    /// Line `line` of a log as the call it makes.
    fn entry(&self, line: u64, text: &str) -> Read {
        let l = parse(text).map_err(|why| LineError::new(line, why))?;
        let call = match self.call(&l.request) {
            None => return Err(LineError::unmatched(line, &l.request.path)),
            Some(made) => made.map_err(|why| LineError::new(line, why))?,
        };
        let session = match self.session {
            SessionBy::Request => format!("#{line}"),
            SessionBy::Client => l.client.to_string(),
            SessionBy::User => l.user.to_string(),
        };
        let kind = call.kind().to_string();
        Ok(Entry {
            at_ns: l.at_ns,
            session,
            user: l.user.to_string(),
            database: String::new(),
            kind,
            what: What::Request(Body::Ds3(call)),
            line,
        })
    }

    /// The call `request` makes: None when no route takes it.
    fn call(&self, request: &Request<'_>) -> Option<Result<Call, String>> {
        self.routes.iter().find_map(|r| r.call(request))
    }
}

impl Route {
    fn new(r: RouteFile) -> Result<Route, String> {
        let whole = |what: &str, re: &str| {
            Regex::new(&format!("^(?:{re})$")).map_err(|e| format!("{what} {re:?}: {e}"))
        };
        let path = whole("path", &r.path)?;
        let query = r.query.iter().map(|(k, v)| Ok((k.clone(), whole(&format!("query {k}"), v)?)));
        let query = query.collect::<Result<_, String>>()?;
        let kind = Template::new(&r.kind)?;
        if kind.is_literal() && !CALL_TYPES.contains(&r.kind.as_str()) {
            return Err(format!(
                "type {:?} is no DVD Store call; the calls are {}",
                r.kind,
                CALL_TYPES.join(", ")
            ));
        }
        let params = r
            .params
            .iter()
            .map(|(k, v)| Ok((k.clone(), Template::new(v)?)))
            .collect::<Result<_, String>>()?;
        Ok(Route { path, method: r.method.map(|m| m.to_ascii_uppercase()), query, kind, params })
    }

    /// The call this route makes of `request`, where it takes it.
    fn call(&self, request: &Request<'_>) -> Option<Result<Call, String>> {
        if self.method.as_deref().is_some_and(|m| m != request.method) {
            return None;
        }
        let captures = self.path.captures(&request.path)?;
        if !self.query.iter().all(|(k, v)| request.first(k).is_some_and(|got| v.is_match(got))) {
            return None;
        }
        let value = |name: &str| -> Option<String> {
            if let Some(m) = captures.name(name) {
                return Some(m.as_str().to_string());
            }
            request.first(name).map(str::to_string)
        };
        Some(self.made(request, &value))
    }

    fn made(&self, request: &Request<'_>, value: &dyn Fn(&str) -> Option<String>) -> Result<Call, String> {
        let fill = |t: &Template| t.fill(value, &|name| request.all(name));
        let kind = fill(&self.kind)?;
        let mut params = serde_json::Map::new();
        for (name, t) in &self.params {
            params.insert(name.clone(), serde_json::Value::String(fill(t)?));
        }
        let call = serde_json::json!({ "type": kind, "params": params });
        serde_json::from_value(call).map_err(|e| format!("{} {}: {e}", request.method, request.path))
    }
}

/// Text with `{name}` and `{name*}` in it.
#[derive(Debug, Clone)]
struct Template(Vec<Part>);

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    First(String),
    All(String),
}

impl Template {
    fn new(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let (before, after) = rest.split_at(open);
            let close = after.find('}').ok_or_else(|| format!("{text:?}: a '{{' is not closed"))?;
            let name = &after[1..close];
            if name.is_empty() || name.contains('{') {
                return Err(format!("{text:?}: write a name between the braces, as {{customerid}}"));
            }
            parts.push(Part::Text(before.to_string()));
            parts.push(match name.strip_suffix('*') {
                Some(n) => Part::All(n.to_string()),
                None => Part::First(name.to_string()),
            });
            rest = &after[close + 1..];
        }
        parts.push(Part::Text(rest.to_string()));
        Ok(Template(parts))
    }

    fn is_literal(&self) -> bool {
        self.0.iter().all(|p| matches!(p, Part::Text(_)))
    }

    fn fill(
        &self,
        first: &dyn Fn(&str) -> Option<String>,
        all: &dyn Fn(&str) -> Vec<String>,
    ) -> Result<String, String> {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::First(name) => {
                    out.push_str(&first(name).ok_or_else(|| format!("the request has no {name}"))?)
                }
                Part::All(name) => out.push_str(&all(name).join(",")),
            }
        }
        if self.0.iter().any(|p| matches!(p, Part::All(_))) {
            out = out.split(',').filter(|item| !item.is_empty()).collect::<Vec<_>>().join(",");
        }
        Ok(out)
    }
}

/// One request of the log.
struct Request<'a> {
    method: &'a str,
    /// Percent-decoded.
    path: String,
    query: Vec<(String, String)>,
}

impl Request<'_> {
    fn first(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn all(&self, name: &str) -> Vec<String> {
        self.query.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect()
    }
}

/// One line of the log, its fields.
struct LogLine<'a> {
    client: &'a str,
    user: &'a str,
    at_ns: i128,
    request: Request<'a>,
}

/// `host ident user [10/Oct/2000:13:55:36 -0700] "GET /path?query HTTP/1.1" status bytes ...`
fn parse(line: &str) -> Result<LogLine<'_>, String> {
    let mut words = line.splitn(4, ' ');
    let (Some(client), Some(_ident), Some(user), Some(rest)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err("not a line of a web server's access log (host ident user [time] \"request\" ...)".into());
    };
    let rest = rest.strip_prefix('[').ok_or("no [time] after host, ident and user")?;
    let (time, rest) = rest.split_once("] \"").ok_or("no \"request\" after the [time]")?;
    let at = jiff::fmt::strtime::parse("%d/%b/%Y:%H:%M:%S %z", time)
        .and_then(|t| t.to_timestamp())
        .map_err(|_| format!("[{time}] is not a time as dd/Mon/yyyy:hh:mm:ss +zzzz"))?;
    let (request, _) = rest.split_once('"').ok_or("the \"request\" is not closed")?;
    let mut parts = request.split(' ');
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(format!("\"{request}\" is not METHOD PATH PROTOCOL"));
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = form_urlencoded::parse(format!("p={}", path.replace('+', "%2B")).as_bytes())
        .next()
        .map_or_else(|| path.to_string(), |(_, p)| p.into_owned());
    let query =
        form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    Ok(LogLine { client, user, at_ns: at.as_nanosecond(), request: Request { method, path, query } })
}

/// Whether `line` is one a web server's access log writes: `... [dd/Mon/yyyy:... "`.
pub(super) fn is_access_line(line: &str) -> bool {
    parse(line).is_ok()
}

/// A web server log's calls, as `mapping` makes them.
pub struct WebLog<R> {
    lines: Lines<R>,
    mapping: Mapping,
    /// The end of the request just given, when each request is a session of its own.
    end: Option<Entry>,
}

impl<R: BufRead> WebLog<R> {
    pub fn new(input: R, mapping: Mapping) -> Self {
        WebLog { lines: Lines::new(input), mapping, end: None }
    }
}

impl<R: BufRead> Iterator for WebLog<R> {
    type Item = Read;

    /// Each request; a session of one request is followed by its end, which gives its
    /// connection back to the source's pool, as the web tier's pool took it back.
    fn next(&mut self) -> Option<Read> {
        if let Some(end) = self.end.take() {
            return Some(Ok(end));
        }
        let mapping = &self.mapping;
        let read = self.lines.next_filled(|line, text| mapping.entry(line, text))?;
        if let (Ok(e), SessionBy::Request) = (&read, mapping.session) {
            let (session, user) = (e.session.clone(), e.user.clone());
            let what = What::End(Close::Pool);
            self.end =
                Some(Entry { session, user, database: String::new(), kind: String::new(), what, ..*e });
        }
        Some(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::oltp::ds3::NewCustomer;

    fn example() -> Mapping {
        let text = include_str!("../../../../../../examples/ds3-web.toml");
        Mapping::new(toml::from_str(text).expect("the example is TOML"))
            .expect("the example mapping is valid")
    }

    fn line(time: &str, target: &str) -> String {
        format!(
            "10.0.0.7 - - [26/Nov/2026:10:00:{time} +0100] \"GET {target} HTTP/1.1\" 200 512 \"-\" \"ds3webdriver\"\n"
        )
    }

    #[test]
    fn a_line_is_parsed_into_its_client_time_and_request() {
        let text = line("01", "/ds3/dsbrowse.php?browse_title=ALIEN+WIND&item%5B%5D=3&item%5B%5D=4");
        let l = parse(text.trim()).unwrap();
        assert_eq!((l.client, l.user), ("10.0.0.7", "-"));
        assert_eq!(l.at_ns, 1_795_683_601 * 1_000_000_000, "10:00:01 at +01:00 is 09:00:01 UTC");
        assert_eq!((l.request.method, l.request.path.as_str()), ("GET", "/ds3/dsbrowse.php"));
        assert_eq!(l.request.first("browse_title"), Some("ALIEN WIND"));
        assert_eq!(l.request.all("item[]"), ["3", "4"]);
        assert!(parse("hello world").is_err());
        assert!(
            parse(r#"h - - [26/Nov/2026:10:00:01] "GET / HTTP/1.1" 200 1"#).is_err(),
            "a time without its zone"
        );
        assert!(is_access_line(line("01", "/").trim()) && !is_access_line("2026-11-26 10:00:01 UTC,x"));
    }

    #[test]
    fn the_example_mapping_turns_ds3_web_requests_into_calls_and_counts_other_paths() {
        let log = [
            line("00", "/ds3/index.html"),
            line("01", "/ds3/dslogin.php?username=user12&password=password"),
            line("02", "/ds3/dsbrowse.php?browsetype=title&browse_category=&browse_actor=&browse_title=ALIEN+WIND&limit_num=5&customerid=12"),
            line("03", "/ds3/dsgetreviews.php?getreviewtype=star&productid=9&review_stars=4&limit_num=5&customerid=12"),
            line("04", "/ds3/dsgetreviews.php?getreviewtype=noorder&productid=9&review_stars=&limit_num=5&customerid=12"),
            line("05", "/ds3/dspurchase.php?confirmpurchase=yes&customerid=12&item%5B%5D=4&quan%5B%5D=1&item%5B%5D=7&quan%5B%5D=2"),
            line("06", "/ds3/dspurchase.php?customerid=12&item%5B%5D=4&quan%5B%5D=1"),
            line("07", "/ds3/dsnewcustomer.php?firstname=A&lastname=B&address1=x&address2=&city=c&state=s&zip=123&country=US&email=e&phone=p&creditcardtype=1&creditcard=1234&ccexpmon=1&ccexpyr=2030&username=newuser9&password=pw&age=40&income=50000&gender=F"),
            line("08", "/ds3/dsnewmember.php?customerid=x&membershiplevel=2"),
        ]
        .concat();
        let all: Vec<Read> = WebLog::new(log.as_bytes(), example()).collect();
        let is_end = |r: &Read| r.as_ref().is_ok_and(|e| matches!(e.what, What::End(_)));
        let got: Vec<&Read> = all.iter().filter(|r| !is_end(r)).collect();
        let unmatched: Vec<Option<String>> =
            got.iter().map(|r| r.as_ref().err().and_then(|e| e.unmatched.clone())).collect();
        assert_eq!(unmatched[0].as_deref(), Some("/ds3/index.html"));
        assert_eq!(
            unmatched[6].as_deref(),
            Some("/ds3/dspurchase.php"),
            "the cart page, not the confirmed order"
        );
        let call = |i: usize| match &got[i].as_ref().unwrap().what {
            What::Request(Body::Ds3(c)) => c.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(call(1), Call::Login { username: "user12".into(), password: "password".into() });
        assert_eq!(call(2), Call::BrowseByTitle { title: "ALIEN WIND".into(), batch: 5 });
        assert_eq!(call(3), Call::GetReviewsByStars { prod_id: 9, stars: 4, batch: 5 });
        assert_eq!(call(4), Call::GetReviews { prod_id: 9, batch: 5 });
        let purchase = Call::Purchase {
            customer_id: 12,
            prod_ids: vec![4, 7],
            quantities: vec![1, 2],
            net_cents: None,
            tax_cents: None,
            total_cents: None,
        };
        assert_eq!(call(5), purchase, "the page prices the order itself: no totals");
        let Call::NewCustomer { customer, id: None } = call(7) else { panic!("{:?}", call(7)) };
        let want = NewCustomer {
            creditcardexpiration: "2030/1".into(),
            region: 0,
            zip: 123,
            gender: 'F',
            ..*customer.clone()
        };
        assert_eq!(*customer, want);
        assert_eq!((customer.username.as_str(), customer.income), ("newuser9", 50_000));
        let bad = got[8].as_ref().unwrap_err();
        assert!(bad.unmatched.is_none() && bad.why.contains("\"x\" is not a whole number"), "{bad:?}");
        let sessions: Vec<&str> =
            got.iter().filter_map(|r| r.as_ref().ok()).map(|e| e.session.as_str()).collect();
        assert_eq!(sessions, ["#2", "#3", "#4", "#5", "#6", "#8"], "each request its own session");
        for (i, r) in all.iter().enumerate().filter(|(_, r)| is_end(r)) {
            let (end, request) = (r.as_ref().unwrap(), all[i - 1].as_ref().unwrap());
            assert_eq!((end.what.clone(), &end.session), (What::End(Close::Pool), &request.session));
        }
        assert_eq!(all.iter().filter(|r| is_end(r)).count(), 6, "a request's end follows it");
    }

    #[test]
    fn every_shape_of_ds3s_browse_page_is_its_search_its_cart_or_a_page_without_a_query() {
        let log = [
            line("00", "/ds3/dsbrowse.php?browsetype=actor&browse_category=&browse_actor=PENELOPE+GUINESS&browse_title=&limit_num=3&customerid=12"),
            line("01", "/ds3/dsbrowse.php?browsetype=category&browse_category=3&browse_actor=&browse_title=&limit_num=5&customerid=12"),
            line("02", "/ds3/dsbrowse.php?selected_item%5B%5D=585&selected_item%5B%5D=38&customerid=12"),
            line("03", "/ds3/dsbrowse.php?item%5B%5D=7&selected_item%5B%5D=585&customerid=12"),
            line("04", "/ds3/dsbrowse.php?item%5B%5D=7&item%5B%5D=9&customerid=12"),
            line("05", "/ds3/dsbrowse.php?customerid=12"),
            line("06", "/ds3/dsbrowse.php?browsetype=&customerid=12"),
        ]
        .concat();
        let got: Vec<Read> = WebLog::new(log.as_bytes(), example())
            .filter(|r| !r.as_ref().is_ok_and(|e| matches!(e.what, What::End(_))))
            .collect();
        let call = |i: usize| match &got[i].as_ref().unwrap_or_else(|e| panic!("line {i}: {e:?}")).what {
            What::Request(Body::Ds3(c)) => c.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(call(0), Call::BrowseByActor { actor: "PENELOPE GUINESS".into(), batch: 3 });
        assert_eq!(call(1), Call::BrowseByCategory { category: 3, batch: 5 });
        assert_eq!(call(2), Call::Prices { prod_ids: vec![585, 38] });
        assert_eq!(call(3), Call::Prices { prod_ids: vec![7, 585] }, "the cart's items and the new ones");
        assert_eq!(call(4), Call::Prices { prod_ids: vec![7, 9] });
        for i in [5, 6] {
            let e = got[i].as_ref().unwrap_err();
            assert_eq!(e.unmatched.as_deref(), Some("/ds3/dsbrowse.php"), "the empty search page: {e:?}");
        }
    }

    #[test]
    fn a_mapping_is_refused_with_the_route_and_what_is_wrong() {
        let refused = |toml: &str| Mapping::new(toml::from_str(toml).unwrap()).unwrap_err();
        assert!(refused("session = \"client\"").contains("no [[route]]"));
        let e = refused("[[route]]\npath = '('\ntype = \"login\"");
        assert!(e.starts_with("route 1: path \"(\""), "{e}");
        let e = refused("[[route]]\npath = '/x'\nquery = { a = '[' }\ntype = \"login\"");
        assert!(e.starts_with("route 1: query a \"[\""), "{e}");
        let e = refused("[[route]]\npath = '/a'\ntype = \"fly\"");
        assert!(e.contains("\"fly\" is no DVD Store call") && e.contains("browse_by_title"), "{e}");
        let e = refused("[[route]]\npath = '/a'\ntype = \"login\"\nparams = { username = \"{user\" }");
        assert!(e.contains("not closed"), "{e}");
        assert!(
            toml::from_str::<MappingFile>("[[route]]\npath = '/a'\ntype = \"login\"\nsesion = 1").is_err()
        );
    }
}
