//! `.shaderfs/errors`: the diagnostics of refused saves and unreadable views, where the
//! user finds them after `cp` or an editor reported only "Invalid argument".

use std::collections::VecDeque;
use std::time::SystemTime;

use parking_lot::Mutex;

/// Entries kept; older ones are dropped so a looping script cannot grow the daemon.
const KEEP: usize = 1000;

#[derive(Debug, Default)]
pub struct ErrorLog {
    lines: Mutex<VecDeque<String>>,
    modified: Mutex<Option<SystemTime>>,
}

impl ErrorLog {
    /// Record a diagnostic about `path` (as seen from the mount's root).
    pub fn record(&self, path: &str, message: &str) {
        log::error!("{path}: {message}");
        let now = SystemTime::now();
        *self.modified.lock() = Some(now);
        let mut lines = self.lines.lock();
        if lines.len() == KEEP {
            lines.pop_front();
        }
        // One line per entry: a multi-line message is indented under its first line.
        let message = message.replace('\n', "\n    ");
        lines.push_back(format!("{} {path}: {message}\n", format_time(now)));
    }

    pub fn render(&self) -> Vec<u8> {
        self.lines.lock().iter().flat_map(|l| l.bytes()).collect()
    }

    /// When the last diagnostic was recorded.
    pub fn modified(&self) -> Option<SystemTime> {
        *self.modified.lock()
    }
}

/// `2026-11-30T03:22:10Z`, the time every line of the log starts with.
pub fn format_time(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_utc(secs)
}

/// `2026-11-30T03:22:10Z` without a date crate (civil-from-days, Howard Hinnant's method).
fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(1_796_008_930), "2026-11-30T03:22:10Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn keeps_the_newest() {
        let log = ErrorLog::default();
        for i in 0..KEEP + 5 {
            log.record("x", &format!("e{i}"));
        }
        let text = String::from_utf8(log.render()).unwrap();
        assert_eq!(text.lines().count(), KEEP);
        assert!(text
            .lines()
            .last()
            .unwrap()
            .ends_with(&format!("e{}", KEEP + 4)));
    }
}
