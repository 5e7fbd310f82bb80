//! Text from plans, paths and bundles made safe to show: a control character (a NUL, an
//! escape sequence, a carriage return) would corrupt an HTML or SVG report, rewrite a terminal
//! or hide text in a log, so every output shows it as a visible escape instead.

use std::borrow::Cow;

/// `text` with every control character but the newline and the tab written as `\u{XX}`.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The first control character of `text` that [`visible`] would escape, if any: what a check
/// of user text refuses.
pub fn control_char(text: &str) -> Option<char> {
    text.chars().find(|&c| hidden(c))
}

fn hidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_show_as_escapes_and_plain_text_is_untouched() {
        assert_eq!(visible("disk\u{0}s \u{1b}[2Jwiped\r"), "disk\\u{0}s \\u{1b}[2Jwiped\\u{d}");
        assert_eq!(visible("two\nlines\tand tabs, ünïcode"), "two\nlines\tand tabs, ünïcode");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
        assert_eq!(visible("c1 \u{9b} too"), "c1 \\u{9b} too");
        assert_eq!(control_char("a\u{7}b"), Some('\u{7}'));
        assert_eq!(control_char("a\nb"), None);
    }
}
