//! A plan's `[requirements]` table: each key a workload (label or kind, or `power`) and one of
//! its figures, each value a rule (`">= 20000"`, `"pass"`, `0`), read into the report's
//! requirements and checked against the plan's workloads before anything runs. `storbench
//! decide --requirements FILE` reads a file with the same table.

use super::configuration::FACT_KEYS;
use super::configuration::Facts;
use super::table::{Source, json_of};
use storbench_report::decision::requirement::{self, Relative, Requirement};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The requirements in table `t` (the value of `[requirements]` at `span`), each checked
/// against `workloads` (label and kind of each) and, where given, the `conditions` the plan's
/// configurations run under (a plan's; a requirements file for `decide` judges what was run).
pub fn read(
    src: &Source,
    value: &Spanned<DeValue>,
    workloads: &[(&str, &str)],
    conditions: Option<&[&str]>,
) -> Result<Vec<Requirement>, super::table::PlanError> {
    let hint = "write one line per limit, as in\n\n    [requirements]\n    \"oltp.opm\" = \">= 20000\"\n    \"oltp.order_p99_ms\" = \"<= 50\"\n    \"mailbox.result\" = \"pass\"";
    let Some(t): Option<&DeTable> = value.get_ref().as_table() else {
        return Err(src.error(value.span(), "[requirements] must be a table", Some(hint.into())));
    };
    let mut out = Vec::new();
    // In the file's order: the first requirement is the one a reader states first.
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    for (key, rule) in entries {
        let text = match json_of(rule.get_ref()) {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            _ => {
                return Err(src.error(
                    rule.span(),
                    format!(
                        "requirement `{}` must be a rule such as \">= 20000\" or \"pass\"",
                        key.get_ref()
                    ),
                    Some(hint.into()),
                ));
            }
        };
        let r = requirement::parse(key.get_ref(), &text)
            .map_err(|e| src.error(rule.span(), e, Some(hint.into())))?;
        requirement::check(&r, workloads, storbench_bench::workload::registry::figures_of).map_err(|e| {
            let fix = "name a workload by its label or kind (or `power` for every workload), then one of its figures";
            src.error(key.span(), e, Some(fix.into()))
        })?;
        if let (Some(conditions), Some(Relative::Condition(c))) = (conditions, &r.relative)
            && !conditions.contains(&c.as_str())
        {
            let fix = format!(
                "add the same storage as a [[configuration]] with condition = \"{c}\" and the stream that \
                 makes it (e.g. background = [\"rebuild\"]), or name one of the plan's conditions"
            );
            return Err(src.error(
                rule.span(),
                format!(
                    "`{r}`: no configuration runs under `{c}`; the plan's conditions are {}",
                    conditions.join(", ")
                ),
                Some(fix),
            ));
        }
        out.push(r);
    }
    Ok(out)
}

/// A configuration's facts as a requirements file gives them: its name and [`Facts`].
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Named {
    pub name: String,
    #[serde(flatten)]
    pub facts: Facts,
}

/// A requirements file (`storbench decide --requirements FILE`): its `[requirements]`, checked
/// against `workloads`, and its configurations' facts, each naming one of `configurations`.
pub fn read_file(
    file: &str,
    text: &str,
    workloads: &[(&str, &str)],
    configurations: &[&str],
) -> Result<(Vec<Requirement>, Vec<Named>), super::table::PlanError> {
    let src = Source::new(file, text);
    let doc = DeTable::parse(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        src.error(at..at, format!("the requirements file is not valid TOML: {}", e.message()), None)
    })?;
    let whole = doc.span();
    let root = doc.into_inner();
    let mut requirements = Vec::new();
    let mut facts = Vec::new();
    for (key, value) in root.iter() {
        match key.get_ref().as_ref() {
            "requirements" => requirements = read(&src, value, workloads, None)?,
            "configuration" => facts = configuration_facts(&src, value, configurations)?,
            other => {
                let hint = "a requirements file has a [requirements] table and [[configuration]] tables (name, price, currency, capacity, devices)";
                return Err(src.error(
                    key.span(),
                    format!("unknown key `{other}` in the requirements file"),
                    Some(hint.into()),
                ));
            }
        }
    }
    if requirements.is_empty() && facts.is_empty() {
        let hint =
            "add a [requirements] table, such as\n\n    [requirements]\n    \"oltp.opm\" = \">= 20000\"";
        return Err(src.error(
            whole.start..whole.start,
            "the requirements file states no requirement",
            Some(hint.into()),
        ));
    }
    Ok((requirements, facts))
}

fn configuration_facts(
    src: &Source,
    value: &Spanned<DeValue>,
    configurations: &[&str],
) -> Result<Vec<Named>, super::table::PlanError> {
    let mut keys = vec!["name"];
    keys.extend(FACT_KEYS);
    let mut out = Vec::new();
    for item in super::table::tables(src, value, "[[configuration]]")? {
        let f: Named = super::table::typed(src, item.get_ref(), item.span(), "a [[configuration]]", &keys)?;
        if !configurations.contains(&f.name.as_str()) {
            let names = configurations.join(", ");
            let fix = Some("name one of the evaluation's configurations".to_string());
            return Err(src.error(
                item.span(),
                format!(
                    "configuration `{}` is not in the evaluation, whose configurations are {names}",
                    f.name
                ),
                fix,
            ));
        }
        super::configuration::check_price(src, f.facts.price, item.span())?;
        out.push(f);
    }
    Ok(out)
}
