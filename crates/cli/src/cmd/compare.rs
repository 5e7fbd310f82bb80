//! `storbench compare A B`: two bundles read as `report` reads them, the findings table on
//! stdout and, with --out, compare.html and compare.md.

use crate::args::CompareArgs;
use crate::cmd::Ending;
use crate::cmd::report::{read_bundle, write_reports};
use anyhow::Result;
use storbench_report::render::compare::{Side, compare_html, compare_markdown, compare_text};

pub fn run(args: &CompareArgs) -> Result<Ending> {
    let (a, b) = (read_bundle(&args.a)?, read_bundle(&args.b)?);
    let (source_a, source_b) = (args.a.display().to_string(), args.b.display().to_string());
    let sa = Side { input: &a, name: "A", source: &source_a };
    let sb = Side { input: &b, name: "B", source: &source_b };
    tell_raw!("{}", compare_text(&sa, &sb));
    if let Some(dir) = &args.out.out {
        let files = [("compare.html", compare_html(&sa, &sb)), ("compare.md", compare_markdown(&sa, &sb))];
        for path in write_reports(dir, &files)? {
            say!("wrote {}", path.display());
        }
    }
    Ok(Ending::Ok)
}
