//! thirdshift's Pickup reservations, read and judged: before a Pickup takes a Ready issue it
//! pushes `refs/heads/thirdshift/pickup/<N>` to origin, created only if absent, whose commit
//! message names the host, the launch folder, the process and the moment
//! (`src/reservation.rs` of thirdshift 0.19.0, `take_ref`). Its own `Drop` deletes it with a
//! lease on that commit; a Pickup killed outright leaves it, and no Pickup on any host takes
//! that issue again.
//!
//! This file decides, from the reservation and a dead Command's record, whether the reservation
//! is that Command's: the same host name, the same process id, and made while that process
//! ran (after it started in this boot, or before this boot began). Anything else, and anything
//! that does not parse, is not its own, and is never touched. Pure: releasing is
//! `crate::observe::reservation`'s.

use chrono::{DateTime, Utc};

/// The Issue's reservation ref, as thirdshift names it (`reservation::reference`).
pub fn reference(issue: u64) -> String {
    format!("refs/heads/thirdshift/pickup/{issue}")
}

/// What a reservation commit says of its owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    pub host: String,
    /// The launch folder the Pickup ran from (a clone of the repository on its host).
    pub launch: String,
    pub process: u32,
    pub started: DateTime<Utc>,
}

/// Reads a reservation commit's message: `thirdshift Pickup reservation for <subject>`, a blank
/// line, then `Token:`, `Host:`, `Launch:`, `Process:` and `Started:` lines. `None` when any of
/// them is missing or malformed.
pub fn parse(message: &str) -> Option<Reservation> {
    let mut lines = message.lines();
    if !lines
        .next()?
        .starts_with("thirdshift Pickup reservation for ")
    {
        return None;
    }
    let field = |name: &str| {
        message
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
            .map(str::trim)
    };
    let started = field("Started")?;
    // chrono's `Display` of a UTC time: `2026-12-05 08:22:10.835145371 UTC`.
    let started = started.strip_suffix(" UTC")?;
    let started = chrono::NaiveDateTime::parse_from_str(started, "%Y-%m-%d %H:%M:%S%.f").ok()?;
    Some(Reservation {
        host: field("Host")?.to_string(),
        launch: field("Launch")?.to_string(),
        process: field("Process")?.parse().ok()?,
        started: started.and_utc(),
    })
}

/// The dead Command a reservation is judged against, and this machine now.
#[derive(Clone, Debug)]
pub struct DeadOwner<'a> {
    /// The system host name the Command's record names.
    pub hostname: &'a str,
    pub pid: u32,
    pub boot_id: &'a str,
    pub start_ticks: u64,
    /// This boot's id, when it began, and the kernel's clock ticks per second.
    pub boot_now: &'a str,
    pub booted_at: DateTime<Utc>,
    pub ticks_per_second: u64,
}

/// How far the kernel's boot time (whole seconds) and a reservation's clock may disagree.
const SLACK_SECS: i64 = 2;

/// Whether `reservation` is the dead Command's own: `Ok(())`, or why not.
pub fn judge(reservation: &Reservation, owner: &DeadOwner) -> Result<(), String> {
    if reservation.host != owner.hostname {
        return Err(format!("it names host {}", reservation.host));
    }
    if reservation.process != owner.pid {
        return Err(format!("it names process {}", reservation.process));
    }
    let slack = chrono::Duration::seconds(SLACK_SECS);
    let made = reservation.started;
    if owner.boot_id != owner.boot_now {
        return if made < owner.booted_at + slack {
            Ok(())
        } else {
            Err(format!(
                "it was made at {made}, in this boot, after process {} of an earlier boot",
                owner.pid
            ))
        };
    }
    let ticks = i64::try_from(owner.start_ticks).unwrap_or(i64::MAX);
    let per_second = i64::try_from(owner.ticks_per_second.max(1)).unwrap_or(100);
    let started = owner.booted_at + chrono::Duration::milliseconds(ticks * 1000 / per_second);
    if made + slack < started {
        return Err(format!(
            "it was made at {made}, before process {} started at {started}",
            owner.pid
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str =
        "thirdshift Pickup reservation for https://github.com/acme/widgets/issues/1\n\n\
        Token: /tmp/.tmpQEhDpMHXCsqN9ETVIQscfEYtbuERUDYJ\nHost: vm\n\
        Launch: /home/day/src/widgets\nProcess: 5446\nStarted: 2026-12-05 08:22:10.835145371 UTC\n";

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn owner<'a>(boot_id: &'a str, start_ticks: u64) -> DeadOwner<'a> {
        DeadOwner {
            hostname: "vm",
            pid: 5446,
            boot_id,
            start_ticks,
            boot_now: "boot-b",
            // booted at 08:00:00; 100 ticks a second
            booted_at: at("2026-12-05T08:00:00Z"),
            ticks_per_second: 100,
        }
    }

    #[test]
    fn a_reservation_commit_as_thirdshift_writes_it_is_read() {
        let r = parse(MESSAGE).unwrap();
        assert_eq!(r.host, "vm");
        assert_eq!(r.launch, "/home/day/src/widgets");
        assert_eq!(r.process, 5446);
        assert_eq!(r.started, at("2026-12-05T08:22:10.835145371Z"));
    }

    #[test]
    fn a_message_missing_a_line_or_of_another_commit_is_not_a_reservation() {
        assert_eq!(parse("work on issue 1\n\nHost: vm"), None);
        for line in [
            "Host: vm\n",
            "Launch: /home/day/src/widgets\n",
            "Process: 5446\n",
        ] {
            assert_eq!(parse(&MESSAGE.replace(line, "")), None, "without {line}");
        }
        assert_eq!(
            parse(&MESSAGE.replace("Process: 5446", "Process: me")),
            None
        );
        assert_eq!(parse(&MESSAGE.replace(" UTC\n", "\n")), None);
    }

    #[test]
    fn a_reservation_made_by_the_dead_process_while_it_ran_is_its_own() {
        // Given the Pickup started 22 minutes into this boot and reserved 10 s later
        let r = parse(MESSAGE).unwrap();
        assert_eq!(judge(&r, &owner("boot-b", 22 * 60 * 100)), Ok(()));
        // and one from the boot before this one is the earlier boot's Pickup's
        let earlier = Reservation {
            started: at("2026-12-05T07:59:00Z"),
            ..r
        };
        assert_eq!(judge(&earlier, &owner("boot-a", 5_000)), Ok(()));
    }

    #[test]
    fn a_reservation_of_another_host_process_or_time_is_never_the_dead_ones() {
        let r = parse(MESSAGE).unwrap();
        let o = owner("boot-b", 22 * 60 * 100);
        let other_host = DeadOwner {
            hostname: "vm2",
            ..o.clone()
        };
        assert_eq!(judge(&r, &other_host), Err("it names host vm".into()));
        let other_pid = DeadOwner {
            pid: 5447,
            ..o.clone()
        };
        assert_eq!(judge(&r, &other_pid), Err("it names process 5446".into()));
        // made before the dead process started: an earlier process with the same PID made it
        let later = owner("boot-b", 23 * 60 * 100);
        assert!(judge(&r, &later)
            .unwrap_err()
            .contains("before process 5446 started"));
        // made in this boot, while the dead process is of an earlier one
        let earlier_boot = owner("boot-a", 5_000);
        assert!(judge(&r, &earlier_boot)
            .unwrap_err()
            .contains("earlier boot"));
    }
}
