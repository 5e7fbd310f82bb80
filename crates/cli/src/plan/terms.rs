//! A workload's own messages in a plan's terms: its checks speak of flags (`--bs`), a plan's
//! user set keys (`bs`).

use super::table::{in_terms, keys_in, keys_of, words};

/// A message of a workload's own checks in a plan's terms: each `--flag` that is a plan key of
/// any kind, or a configuration's or a search's, becomes the key ([`in_terms`]).
pub fn in_plan_terms(text: &str) -> String {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let mut k: Vec<String> =
            crate::registry::KINDS.iter().flat_map(|kind| keys_in(&(kind.command)(), &[])).collect();
        k.extend(["log_target", "url"].map(String::from));
        k.extend(keys_of::<crate::search::args::SearchArgs>(&[]));
        k
    });
    in_terms(text, &words(keys))
}
