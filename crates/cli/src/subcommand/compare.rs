//! `storbench compare A B`: two bundles read as `report` reads them, the findings table on
//! stdout and, with --out, compare.html and compare.md and the latency pictures (A's and B's
//! lines overlaid) as `latency-<workload>[-<type>].svg`.

use crate::args::report::CompareArgs;
use crate::subcommand::report::{read_bundle, spectrum, write_reports};
use anyhow::Result;
use storbench_bench::run::Ending;
use storbench_report::render::compare::{
    Side, compare_html, compare_markdown, compare_pictures, compare_text,
};

pub fn run(args: &CompareArgs) -> Result<Ending> {
    let (mut a, mut b) = (read_bundle(&args.a)?, read_bundle(&args.b)?);
    spectrum::add(&mut a, &args.a, None);
    spectrum::add(&mut b, &args.b, None);
    let (source_a, source_b) = (args.a.display().to_string(), args.b.display().to_string());
    let sa = Side { input: &a, name: "A", source: &source_a };
    let sb = Side { input: &b, name: "B", source: &source_b };
    tell_raw!("{}", compare_text(&sa, &sb));
    if let Some(dir) = &args.out.out {
        let mut files = vec![
            ("compare.html".into(), compare_html(&sa, &sb)),
            ("compare.md".into(), compare_markdown(&sa, &sb)),
        ];
        files.extend(compare_pictures(&sa, &sb));
        for path in write_reports(dir, &files)? {
            say!("wrote {}", path.display());
        }
    }
    Ok(Ending::Ok)
}
