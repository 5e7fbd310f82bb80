//! Keeping secrets out of everything storbench prints or writes.
//!
//! Two nets, because a password can reach a message by paths no one planned:
//! - by shape: `redact` replaces the password of every `scheme://user:password@host` in a text
//!   and the value of every `password=`-like key (URL query, conninfo, TOML line);
//! - by value: every password storbench is handed (`remember`) is replaced wherever it appears,
//!   even inside a driver's error message that quotes it without a URL around it. A password
//!   that is a plain word (letters only) is replaced where it stands as a word of its own, not
//!   inside a longer word: a password `pass` leaves "passes" as it is.

use std::sync::Mutex;

/// What a hidden secret reads as.
pub const MASK: &str = "***";

/// Keys whose value is a secret, in URLs (`?password=`), conninfo strings and plan lines.
const SECRET_KEYS: &[&str] = &["password", "passwd", "pwd", "pass", "secret", "token", "api_key", "apikey"];

/// Secrets seen so far in this process (shorter ones would match too much ordinary text).
static KNOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());
const MIN_REMEMBERED_LEN: usize = 3;

/// Remembers `secret` so that `redact` hides it wherever it appears later.
pub fn remember(secret: &str) {
    if secret.len() < MIN_REMEMBERED_LEN {
        return;
    }
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|k| k == secret) {
        known.push(secret.to_owned());
        // Longest first, so a secret that contains another is hidden whole.
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }
}

/// Remembers the password of every URL in `text` (see `remember`), as written and
/// percent-decoded (`pa%40ss` reaches a server, and its error messages, as `pa@ss`).
pub fn remember_in(text: &str) {
    for range in url_passwords(text) {
        let written = &text[range];
        remember(written);
        remember(&percent_decoded(written));
    }
}

/// `text` with every `%XX` escape decoded; an escape that is not one stays as written.
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match hex.filter(|_| bytes[i] == b'%').and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `text` holds a secret that `redact` already hid: a URL password or secret key's
/// value that is just the mask. Such text cannot be used to connect again.
pub fn holds_hidden_secret(text: &str) -> bool {
    url_passwords(text).into_iter().chain(key_values(text)).any(|r| &text[r] == MASK)
}

/// `text` with every secret it holds replaced by `***`: URL passwords, values of secret keys,
/// and every remembered secret.
pub fn redact(text: &str) -> String {
    let mut out = mask_ranges(text, url_passwords(text));
    out = mask_ranges(&out, key_values(&out));
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    for secret in known.iter() {
        // As written, and as JSON writes it inside a string (`"` and `\` escaped).
        let escaped = secret.replace('\\', "\\\\").replace('"', "\\\"");
        let plain_word = secret.chars().all(char::is_alphabetic);
        for form in [secret.as_str(), escaped.as_str()] {
            if out.contains(form) {
                let places = match plain_word {
                    true => standing_alone(&out, form),
                    false => out.match_indices(form).map(|(at, _)| at..at + form.len()).collect(),
                };
                out = mask_ranges(&out, places);
            }
        }
    }
    out
}

/// As `redact`, of a histogram log (`latency.hlog`): each histogram line's last field, the
/// histogram in base64, is kept as it is. Base64 holds no secret, and its letters between
/// `+` and `/` can spell a remembered one: masked, the histogram would be damaged.
pub fn redact_hlog(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_prefix("Tag=").and_then(|_| line.rfind(',')) {
            Some(at) => {
                out.push_str(&redact(&line[..at]));
                out.push_str(&line[at..]);
            }
            None => out.push_str(&redact(line)),
        }
    }
    out
}

/// Whether `text` holds a secret `redact` would hide.
pub fn holds_secret(text: &str) -> bool {
    redact(text) != text
}

/// The places `form` stands in `text` as a word of its own: no letter or digit runs on from it
/// on either side (where its own edge is a letter or digit).
fn standing_alone(text: &str, form: &str) -> Vec<std::ops::Range<usize>> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let (first, last) = (form.chars().next(), form.chars().next_back());
    text.match_indices(form)
        .map(|(at, _)| at..at + form.len())
        .filter(|r| {
            let before = text[..r.start].chars().next_back();
            let after = text[r.end..].chars().next();
            let runs_on = (word(first) && word(before)) || (word(last) && word(after));
            !runs_on
        })
        .collect()
}

fn mask_ranges(text: &str, mut ranges: Vec<std::ops::Range<usize>>) -> String {
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in ranges {
        if r.start < at || r.is_empty() {
            continue;
        }
        out.push_str(&text[at..r.start]);
        out.push_str(MASK);
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Byte ranges of the passwords in `scheme://user:password@host` URLs. The authority ends at
/// white space, a quote or a path; its last `@` ends the user part, so a password may hold `@`.
fn url_passwords(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find("://") {
        let start = from + pos + 3;
        let rest = &text[start..];
        let end = rest.find(|c: char| c.is_whitespace() || "\"'`/<>".contains(c)).unwrap_or(rest.len());
        let authority = &rest[..end];
        // `user[:password]@host` is how usage texts write the form: no password, and the
        // brackets are syntax a URL's user part cannot hold unescaped.
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && !authority[..colon].ends_with('[')
        {
            found.push(start + colon + 1..start + at);
        }
        from = start + end;
    }
    found
}

/// Byte ranges of the values of secret keys: `password=v`, `password: v`, `password = "v"`,
/// up to `&`, `;`, white space or the closing quote.
fn key_values(text: &str) -> Vec<std::ops::Range<usize>> {
    let lower = text.to_ascii_lowercase();
    let mut found = Vec::new();
    for key in SECRET_KEYS {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(key) {
            let key_start = from + pos;
            from = key_start + key.len();
            let word_start = key_start == 0 || !is_word(lower.as_bytes()[key_start - 1]);
            if !word_start || lower.as_bytes().get(from).is_some_and(|&b| is_word(b)) {
                continue;
            }
            if let Some(range) = value_after(text, from) {
                from = range.end;
                found.push(range);
            }
        }
    }
    found
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The value after a key ending at `at`: `= v`, `: v` or `=v`, quoted or bare.
fn value_after(text: &str, at: usize) -> Option<std::ops::Range<usize>> {
    let rest = &text[at..];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    let sep = trimmed.chars().next().filter(|c| *c == '=' || *c == ':')?;
    let after_sep = &trimmed[sep.len_utf8()..];
    let value = after_sep.trim_start_matches([' ', '\t']);
    let start = text.len() - value.len();
    let (start, len) = match value.chars().next() {
        Some(q @ ('"' | '\'')) => (start + 1, value[1..].find(q).unwrap_or(value.len() - 1)),
        Some(_) => {
            (start, value.find(|c: char| c.is_whitespace() || "&;,)}]".contains(c)).unwrap_or(value.len()))
        }
        None => return None,
    };
    (len > 0).then_some(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_logs_histograms_are_kept_whole_and_its_other_text_is_redacted() {
        remember("qzxv");
        let log = "#[Comment: postgres://bob:hunter2@db/x]\nTag=read,0.000,1.000,0.001,HISTFAAA+qzxv/AAA==\n";
        assert!(redact(log).contains("+***/"), "the plain redaction would damage the histogram");
        assert_eq!(
            redact_hlog(log),
            "#[Comment: postgres://bob:***@db/x]\nTag=read,0.000,1.000,0.001,HISTFAAA+qzxv/AAA==\n"
        );
    }

    #[test]
    fn url_passwords_are_hidden_even_when_they_hold_an_at_sign() {
        assert_eq!(redact("postgres://bob:pa@ss@db:5432/test"), "postgres://bob:***@db:5432/test");
        assert_eq!(
            redact("url = \"mysql://root:s3cr3t@10.0.0.1/x\""),
            "url = \"mysql://root:***@10.0.0.1/x\""
        );
        assert_eq!(redact("https://admin:hunter2@bmc/redfish/v1"), "https://admin:***@bmc/redfish/v1");
        assert_eq!(
            redact("postgres://bob@db/test and http://host:8080/x"),
            "postgres://bob@db/test and http://host:8080/x"
        );
    }

    #[test]
    fn a_usage_text_and_the_rest_of_every_url_stay_as_written() {
        let usage = "expected postgres://user[:password]@host[:port]/dbname";
        assert_eq!(redact(usage), usage);
        assert_eq!(redact("mysql://root:pw@[::1]:3306/test?ssl=1"), "mysql://root:***@[::1]:3306/test?ssl=1");
        assert_eq!(redact("(postgres://u:p%40ss@h1,h2:5432/db)"), "(postgres://u:***@h1,h2:5432/db)");
        assert_eq!(redact("postgres://[::1]:5432/db"), "postgres://[::1]:5432/db");
    }

    #[test]
    fn values_of_secret_keys_are_hidden_in_queries_conninfo_and_plan_lines() {
        assert_eq!(redact("http://bmc/x?user=a&password=abc123&y=1"), "http://bmc/x?user=a&password=***&y=1");
        assert_eq!(redact("host=db password=abc123 dbname=t"), "host=db password=*** dbname=t");
        assert_eq!(redact("password = \"two words\""), "password = \"***\"");
        assert_eq!(redact("passwords matter; compass=north"), "passwords matter; compass=north");
    }

    #[test]
    fn a_remembered_secret_is_hidden_wherever_it_appears() {
        remember_in("postgres://u:Zq9-distinctive@h/d");
        assert_eq!(redact("server said: bad password Zq9-distinctive"), "server said: bad password ***");
        assert!(holds_secret("x Zq9-distinctive y"));
        assert!(!holds_secret("nothing here"));
    }

    #[test]
    fn a_remembered_secret_that_is_no_plain_word_is_hidden_even_inside_a_word() {
        remember("Wq7-glued-secret");
        assert_eq!(redact("nWq7-glued-secret@h"), "n***@h");
    }

    #[test]
    fn a_remembered_secret_that_is_a_plain_word_leaves_longer_words_as_they_are() {
        // A word no other test prints: the remembered secrets are the process's.
        remember("Zebrafish");
        let verdict = "hdd fails: Zebrafishes 40 %; Zebrafish it? password Zebrafish, (Zebrafish)";
        assert_eq!(redact(verdict), "hdd fails: Zebrafishes 40 %; *** it? password ***, (***)");
    }

    #[test]
    fn a_remembered_secret_is_hidden_percent_decoded_and_json_escaped_too() {
        remember_in("mysql://u:Qx7%40\\back@h/d");
        assert_eq!(redact("denied for 'u' using Qx7@\\back"), "denied for 'u' using ***");
        assert_eq!(redact(r#"{"error": "Qx7@\\back"}"#), r#"{"error": "***"}"#);
        assert_eq!(percent_decoded("a%40b%zz%4"), "a@b%zz%4");
    }

    #[test]
    fn text_whose_secrets_are_already_hidden_is_recognised() {
        assert!(holds_hidden_secret("url = [\"postgres://u:***@h/d\"]"));
        assert!(holds_hidden_secret("host=h password=***"));
        assert!(!holds_hidden_secret("url = [\"postgres://u@h/d\"]"));
        assert!(!holds_hidden_secret("postgres://u:pw@h/d"));
    }
}
