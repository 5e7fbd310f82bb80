//! The quick evaluation on places the user names (`storbench run --target DIR --target DIR`):
//! the built-in quick plan with one configuration per place, written out as plan text so that
//! the evaluation's saved plan, and so `--resume`, name the same places.

use super::QUICK_PLAN;
use anyhow::{Result, bail};
use std::path::Path;

/// The quick plan's own configuration (the current directory), replaced by the places given.
const HERE: &str = "[[configuration]]\nname = \"here\"\ntarget = \".\"\n";

/// The quick plan's text with a configuration per `[NAME=]DIR` in `places`, in their order.
pub fn plan_for(places: &[String]) -> Result<String> {
    let Some((before, after)) = QUICK_PLAN.split_once(HERE) else {
        bail!("the built-in quick plan lost its configuration block (a bug in storbench)")
    };
    let mut names: Vec<String> = Vec::new();
    let mut blocks = String::new();
    for place in places {
        let (name, dir) = split(place)?;
        let name = unique(&name, &names);
        let target = std::path::absolute(&dir).unwrap_or_else(|_| dir.into());
        if !target.is_dir() {
            bail!(
                "--target {place}: {} is not a directory; create it (mount the storage under test there) or fix the path",
                target.display()
            );
        }
        blocks += &format!(
            "[[configuration]]\nname = {}\ntarget = {}\n\n",
            quoted(&name),
            quoted(&target.display().to_string())
        );
        names.push(name);
    }
    Ok(format!("{before}{blocks}{after}"))
}

/// `NAME=DIR`, or `DIR` named after its last component (the current directory's own name for
/// `.`), with characters a name cannot hold replaced by `_`.
fn split(place: &str) -> Result<(String, String)> {
    if place.is_empty() {
        bail!("--target needs a directory: --target DIR or --target NAME=DIR");
    }
    if let Some((name, dir)) = place.split_once('=')
        && !name.is_empty()
        && !name.contains('/')
    {
        if dir.is_empty() {
            bail!("--target {place}: give the directory after the '=' (--target NAME=DIR)");
        }
        return Ok((name.to_string(), dir.to_string()));
    }
    let absolute = std::path::absolute(Path::new(place)).unwrap_or_else(|_| place.into());
    let last = std::fs::canonicalize(&absolute).unwrap_or(absolute);
    let name = last.file_name().map_or("root".into(), |n| n.to_string_lossy().into_owned());
    let name: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    Ok((name, place.to_string()))
}

/// `name`, or `name-2`, `name-3`... where an earlier place took it.
fn unique(name: &str, taken: &[String]) -> String {
    (1..)
        .map(|n| if n == 1 { name.to_string() } else { format!("{name}-{n}") })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| name.to_string())
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_place_becomes_a_configuration_named_after_its_directory_or_as_given() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = ["a/ssd", "nvme", "b/ssd"].map(|d| tmp.path().join(d));
        dirs.iter().for_each(|d| std::fs::create_dir_all(d).unwrap());
        let given = [0, 1, 2].map(|i| format!("{}{}", ["", "fast=", ""][i], dirs[i].display()));
        let plan = crate::plan::parse::parse("(test)", &plan_for(&given).unwrap()).unwrap();
        let got: Vec<(&str, &Path)> =
            plan.configurations.iter().map(|c| (c.name.as_str(), c.target.as_path())).collect();
        assert_eq!(
            got,
            [("ssd", dirs[0].as_path()), ("fast", dirs[1].as_path()), ("ssd-2", dirs[2].as_path())]
        );
        assert_eq!(
            plan.workloads.len(),
            crate::plan::parse::parse("(q)", QUICK_PLAN).unwrap().workloads.len()
        );
    }

    #[test]
    fn a_place_without_a_directory_is_refused() {
        assert!(plan_for(&["".into()]).unwrap_err().to_string().contains("--target needs a directory"));
        assert!(plan_for(&["x=".into()]).unwrap_err().to_string().contains("after the '='"));
        let err = plan_for(&["/no/such/place".into()]).unwrap_err().to_string();
        assert!(err.contains("/no/such/place is not a directory; create it"), "{err}");
    }
}
