//! Developer knobs: each turns one technique of the daemon off, or sizes it, so
//! `bench/run` can measure what it is worth. Read by the mount (`mount.rs`) and the FUSE
//! adapter (`fuse.rs`), which otherwise know nothing of each other's insides.

/// Developer knobs for the benchmark harness, from `SHADERFS_TUNE` (comma-separated):
/// each turns one technique off, or sizes it, so `bench/run` can measure what it is worth.
/// `threads=N`, `cache=BYTES`, `no_keep_cache`, `no_open_off` (keep open/flush/release
/// round trips on read-only mounts), `short_ttl`, `no_readdirplus`, `readahead=BYTES`,
/// `ahead=N` (threads rendering views ahead of readers; 0 turns it off), `no_uring` (serve
/// /dev/fuse only, where the kernel would hand requests over io_uring), `uring_normal`
/// (io_uring threads at the normal scheduling class throughout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tuning {
    pub threads: Option<usize>,
    pub ahead_threads: usize,
    pub cache_bytes: usize,
    pub keep_cache: bool,
    pub no_open: bool,
    pub long_ttl: bool,
    pub readdirplus: bool,
    pub readahead: u32,
    pub uring: bool,
    pub uring_idle: bool,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            threads: None,
            // One per core but one, which the reader (cat, grep, the kernel, the fuser
            // thread answering it) needs: on 2 cores one thread beat two (3.6 s vs 3.8 s
            // for a first read of the whole database tree; none: 4.8 s).
            ahead_threads: (cores() - 1).clamp(1, 8),
            cache_bytes: crate::vfs::fs::CACHE_BYTES,
            keep_cache: true,
            no_open: true,
            long_ttl: true,
            readdirplus: true,
            readahead: 1 << 20,
            uring: true,
            uring_idle: true,
        }
    }
}

impl Tuning {
    pub fn from_env() -> Result<Tuning, String> {
        match std::env::var("SHADERFS_TUNE") {
            Ok(list) => Tuning::parse(&list),
            Err(_) => Ok(Tuning::default()),
        }
    }

    pub fn parse(list: &str) -> Result<Tuning, String> {
        let mut t = Tuning::default();
        for item in list.split(',').filter(|i| !i.is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or((item, ""));
            let number = || {
                value
                    .parse::<usize>()
                    .map_err(|_| format!("SHADERFS_TUNE: {item}: expected {key}=NUMBER"))
            };
            match key {
                "threads" => t.threads = Some(number()?.max(1)),
                "ahead" => t.ahead_threads = number()?.min(64),
                "cache" => t.cache_bytes = number()?,
                "readahead" => t.readahead = number()?.clamp(4096, 1 << 20) as u32,
                "no_keep_cache" => t.keep_cache = false,
                "no_open_off" => t.no_open = false,
                "short_ttl" => t.long_ttl = false,
                "no_readdirplus" => t.readdirplus = false,
                "no_uring" => t.uring = false,
                "uring_normal" => t.uring_idle = false,
                _ => return Err(format!("SHADERFS_TUNE: unknown knob '{item}'")),
            }
        }
        Ok(t)
    }
}

/// fuser threads: enough to overlap requests of parallel readers, few enough for a
/// small machine.
pub fn worker_threads() -> usize {
    cores().clamp(2, 8)
}

/// io_uring threads per CPU's queue: one answers while another's request takes long (a
/// commit), without a large machine's memory going to buffers (each holds a 1 MiB
/// payload).
pub fn uring_threads() -> usize {
    if cores() <= 8 {
        2
    } else {
        1
    }
}

/// The machine's cores (2 if it cannot say).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuning_knobs_parse_and_refuse_unknown_ones() {
        assert_eq!(Tuning::parse("").unwrap(), Tuning::default());
        let t = Tuning::parse("threads=1,no_keep_cache,cache=0,readahead=4096").unwrap();
        assert_eq!(t.threads, Some(1));
        assert!(!t.keep_cache && t.cache_bytes == 0 && t.readahead == 4096);
        assert!(Tuning::parse("threads=x").is_err());
        assert!(Tuning::parse("turbo").is_err());
    }
}
