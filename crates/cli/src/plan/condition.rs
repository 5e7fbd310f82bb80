//! A configuration's condition and storage (`condition = "rebuild"`, `storage = "ssd"`): their
//! defaults and checks, so that the report can put one storage's conditions side by side
//! (002's "Normal", "Ctlr Rebuild", "Vol Rebuild").
//!
//! The rules a plan's user can predict:
//! - condition: `normal` without background streams, else the streams as given joined by
//!   " + " (`io:rate=40MiB`); a given one is plain text of 1 to 40 characters.
//! - storage: the storage of the first configuration before it on the same target (the same
//!   directory or device, by device and inode), else its own name; a given one follows the
//!   condition's text rule.
//! - one storage is measured once per condition: a second configuration of the same storage
//!   and condition is refused, whatever its streams, since the report would have two figures
//!   for one cell (name the conditions apart: "rebuild-40MiB", "rebuild-full").

use super::configuration::Configuration;
use super::configuration::place_id;
use super::table::{PlanError, Source};
use std::ops::Range;
use storbench_report::evaluation::NORMAL;

/// The longest condition or storage label: it heads a report's column.
pub const MAX_LABEL: usize = 40;

/// `c` with its condition and storage filled in and checked against the configurations before
/// it (`seen`); `at` locates a key of `c`'s table in the plan.
pub(super) fn settle(
    src: &Source,
    seen: &[Configuration],
    c: Configuration,
    at: &dyn Fn(&str) -> Range<usize>,
) -> Result<Configuration, PlanError> {
    for (key, given) in [("condition", &c.condition), ("storage", &c.storage)] {
        if let Some((message, hint)) = given.as_deref().and_then(|t| label_problem(key, t)) {
            return Err(src.error(at(key), message, Some(hint)));
        }
    }
    let named = if c.condition.is_some() { "condition" } else { "name" };
    let condition = c.condition.clone().unwrap_or_else(|| default_condition(&c));
    let storage = c.storage.clone().unwrap_or_else(|| default_storage(seen, &c));
    let c = Configuration { condition: Some(condition), storage: Some(storage), ..c };
    if let Some(other) = seen.iter().find(|o| o.storage() == c.storage() && o.condition() == c.condition()) {
        let message = format!(
            "configurations `{}` and `{}` both measure storage `{}` in condition `{}`: the report would \
             have two figures for one condition",
            other.name,
            c.name,
            c.storage(),
            c.condition()
        );
        let hint = "give each its own condition (condition = \"rebuild-40MiB\"), or name the storage it \
                    measures (storage = \"...\")";
        return Err(src.error(at(named), message, Some(hint.into())));
    }
    Ok(c)
}

/// What is wrong with a given condition or storage label, and the fix; None when it will do.
fn label_problem(key: &str, text: &str) -> Option<(String, String)> {
    let hint = format!("write a short label: {key} = \"rebuild\" (plain text, 1 to {MAX_LABEL} characters)");
    if text.trim().is_empty() {
        return Some((format!("{key} is empty"), hint));
    }
    // A line break or a tab too: the label heads a table's column.
    if let Some(ch) = text.chars().find(|c| c.is_control()) {
        return Some((format!("{key} holds a control character (U+{:04X})", u32::from(ch)), hint));
    }
    if text.chars().count() > MAX_LABEL {
        return Some((format!("{key} is longer than {MAX_LABEL} characters"), hint));
    }
    None
}

/// `normal` without background streams, else the streams as the plan gives them.
fn default_condition(c: &Configuration) -> String {
    if c.background.is_empty() {
        return NORMAL.to_string();
    }
    c.background.iter().map(ToString::to_string).collect::<Vec<_>>().join(" + ")
}

/// The storage of the first configuration in `seen` on `c`'s target, else `c`'s name.
fn default_storage(seen: &[Configuration], c: &Configuration) -> String {
    let mine = place_id(&c.target);
    seen.iter()
        .find(|o| mine.is_some() && place_id(&o.target) == mine)
        .map_or_else(|| c.name.clone(), |o| o.storage().to_string())
}
