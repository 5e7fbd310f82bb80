//! The host a run happened on: name, kernel and CPU count, for every summary.

use storbench_report::Host;

pub fn host() -> Host {
    let uts = rustix::system::uname();
    Host {
        hostname: uts.nodename().to_string_lossy().into_owned(),
        kernel: uts.release().to_string_lossy().into_owned(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_host_has_a_kernel_release_and_at_least_one_cpu() {
        let h = super::host();
        assert!(h.kernel.chars().next().is_some_and(|c| c.is_ascii_digit()), "{}", h.kernel);
        assert!(h.cpus >= 1);
    }
}
