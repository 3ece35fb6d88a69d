//! `.shaderfs/errors`: the diagnostics of refused saves and unreadable views, where the
//! user finds them after `cp` or an editor reported only "Invalid argument", and the
//! warnings of saves that succeeded, which nothing else reports. It is a log, newest last:
//! a later save adds to it and takes nothing back, as the times on its lines say.

use std::collections::VecDeque;
use std::time::SystemTime;

use parking_lot::Mutex;

/// Entries kept; older ones are dropped so a looping script cannot grow the daemon.
const KEEP: usize = 1000;

#[derive(Debug, Default)]
pub struct ErrorLog {
    inner: Mutex<Log>,
}

#[derive(Debug, Default)]
struct Log {
    entries: VecDeque<Diagnostic>,
    /// Entries ever recorded, dropped ones included.
    recorded: u64,
    modified: Option<SystemTime>,
}

/// One diagnostic: the path it is about (from the mount's root) and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub time: SystemTime,
    pub path: String,
    pub message: String,
}

impl ErrorLog {
    /// Record a diagnostic about `path` (as seen from the mount's root).
    pub fn record(&self, path: &str, message: &str) {
        log::error!("{path}: {message}");
        let now = SystemTime::now();
        let mut log = self.inner.lock();
        log.modified = Some(now);
        log.recorded += 1;
        if log.entries.len() == KEEP {
            log.entries.pop_front();
        }
        log.entries.push_back(Diagnostic {
            time: now,
            path: path.to_owned(),
            message: message.to_owned(),
        });
    }

    /// The log as `.shaderfs/errors` shows it: one line per entry, a multi-line message
    /// indented under its first line.
    pub fn render(&self) -> Vec<u8> {
        let log = self.inner.lock();
        let mut out = String::new();
        for d in &log.entries {
            let message = d.message.replace('\n', "\n    ");
            out.push_str(&format!("{} {}: {message}\n", format_time(d.time), d.path));
        }
        out.into_bytes()
    }

    /// How many diagnostics were ever recorded: a mark for [`ErrorLog::since`].
    pub fn recorded(&self) -> u64 {
        self.inner.lock().recorded
    }

    /// The diagnostics recorded after the mark `recorded` (those still kept).
    pub fn since(&self, recorded: u64) -> Vec<Diagnostic> {
        let log = self.inner.lock();
        let new = log.recorded.saturating_sub(recorded);
        let skip = log.entries.len().saturating_sub(new as usize);
        log.entries.iter().skip(skip).cloned().collect()
    }

    /// When the last diagnostic was recorded.
    pub fn modified(&self) -> Option<SystemTime> {
        self.inner.lock().modified
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
        let mark = log.recorded();
        log.record("a/b", "one\ntwo");
        let new = log.since(mark);
        assert_eq!(new.len(), 1);
        assert_eq!(
            (new[0].path.as_str(), new[0].message.as_str()),
            ("a/b", "one\ntwo")
        );
        assert!(String::from_utf8(log.render())
            .unwrap()
            .ends_with("a/b: one\n    two\n"));
    }
}
