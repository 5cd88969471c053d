//! The scenario the view's snapshot tests render: three hosts (one never reported), a live Run,
//! an orphaned one (its Run process died, its writers live on), a dead one, a superseded claim,
//! a Claim awaiting its host, an issue `in-progress` with no Claim, two machines' thirdshift
//! Commands on one issue (the later one colliding), and one recovery kept from an earlier
//! view. Built from real record comments through the real ownership rule and `plan`.

use chrono::{DateTime, Duration, TimeZone, Utc};

use crate::protocol::config::Config;
use crate::protocol::record::claim::tests::sample_claim;
use crate::protocol::record::{
    AdoptRecord, AdoptedEvidence, AdoptedRun, ClaimRecord, ClaimVerdict, DeathReason, HostReport,
    Ownership, RawComment, RunOf, Trust, Verdict,
};
use crate::reconcile::apply::EndedClaim;
use crate::reconcile::{plan, Plan, PlanInput};
use crate::snapshot::{IssueSnapshot, RegistryPage, ReportView, Snapshot};
use crate::text::ToComment;
use crate::view::model::{build, Inputs, View};

pub const BASE: u64 = 5_000_000_000;
pub const REPO: &str = "acme/widgets";

/// The time the scenario is looked at.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 5, 12, 0, 0).unwrap()
}

fn url(n: u64) -> String {
    format!("https://github.com/acme/widgets/issues/{n}")
}

fn claim(issue: u64, id: &str, host: &str, minutes_ago: i64) -> ClaimRecord {
    ClaimRecord {
        claim_id: id.into(),
        issue,
        host: host.into(),
        machine_id: format!("m-{host}"),
        branch: Some(format!("issue-{issue}")),
        agent_session: Some(format!("sess-{issue}")),
        logs: vec![format!("/var/log/thirdshift/{issue}.log")],
        stage_since: now() - Duration::minutes(minutes_ago),
        claimed_at: now() - Duration::minutes(minutes_ago + 7),
        ..sample_claim()
    }
}

fn issue(n: u64, title: &str, comments: &[(u64, String)]) -> IssueSnapshot {
    let raw: Vec<RawComment> = comments
        .iter()
        .map(|(id, body)| RawComment {
            id: BASE + id,
            author: "bot".into(),
            body: body.clone(),
        })
        .collect();
    IssueSnapshot {
        number: n,
        title: title.into(),
        open: true,
        labels: vec!["in-progress".into()],
        html_url: url(n),
        ownership: Ownership::of(n, &raw, &Trust::new(["bot"])),
        origin: None,
        since_end: None,
    }
}

fn verdict(c: &ClaimRecord, verdict: Verdict) -> ClaimVerdict {
    ClaimVerdict {
        claim_id: c.claim_id.clone(),
        issue: c.issue,
        verdict,
        kept: None,
        run: Default::default(),
        finished: None,
        watched: false,
    }
}

fn report(host: &str, claims: Vec<ClaimVerdict>, cap: u32, used: u32, id: u64) -> ReportView {
    ReportView {
        comment_id: BASE + id,
        author: "bot".into(),
        updated_at: now() - Duration::minutes(id as i64 % 60),
        report: HostReport {
            host: host.into(),
            machine_id: format!("m-{host}"),
            boot_id: format!("boot-{host}"),
            claims,
            capacity: Some(cap),
            slots_used: Some(used),
            booted_at: Some(Utc.with_ymd_and_hms(2025, 3, 1, 8, 0, 0).unwrap()),
            refresh_secs: Some(3600),
            written_at: None,
        },
    }
}

/// A live thirdshift Command on `issue` of `host`, `ts-<name>`: its adoption comment and verdict.
fn command(issue: u64, name: &str, host: &str, pid: u32) -> (String, ClaimVerdict) {
    let record = format!("acme/widgets/commands/issue/{issue}-{name}.command.json");
    let facts = AdoptedRun {
        record: record.clone(),
        kind: "Ticket".into(),
        pid,
        process_start: format!("boot-{host}:{pid}00"),
        stage: Some("implementing".into()),
        stage_since: Some("2025-03-05T11:30:00+00:00".into()),
        harness: Some("claude".into()),
        model: Some("opus".into()),
        effort: None,
        branch: Some(format!("issue-{issue}")),
        pull_request: None,
        session_log: None,
        resume: None,
        session: None,
    };
    let adoption = AdoptRecord {
        claim_id: format!("ts-{name}"),
        issue,
        kind: facts.kind.clone(),
        command: AdoptedEvidence {
            host: host.into(),
            machine_id: format!("m-{host}"),
            record,
            pid,
            process_start: facts.process_start.clone(),
        },
        seen_at: now() - Duration::minutes(30),
    };
    let verdict = ClaimVerdict {
        claim_id: adoption.claim_id.clone(),
        issue,
        verdict: Verdict::Alive,
        kept: None,
        run: RunOf::thirdshift_of(facts),
        finished: None,
        watched: false,
    };
    (adoption.to_comment(), verdict)
}

/// The snapshot: what one read of the scenario's repository sees.
pub fn snapshot() -> Snapshot {
    let mut live = claim(12, "c-live", "build-01", 40);
    live.logs
        .insert(0, "https://ci.example.com/runs/12/log".into());
    let orphan = claim(15, "c-orphan", "build-01", 95);
    let dead = claim(21, "c-dead", "build-02", 300);
    let late = ClaimRecord {
        stage: "claimed".into(),
        ..claim(12, "c-late", "build-02", 2)
    };
    let silent = ClaimRecord {
        harness: Some("codex".into()),
        ..claim(30, "c-silent", "build-03", 3000)
    };
    // two machines' thirdshift Commands on issue 50: build-02's was seen first, so it keeps it
    let (first, first_verdict) = command(50, "first", "build-02", 5150);
    let (second, second_verdict) = command(50, "second", "build-01", 5151);
    let b1 = vec![
        verdict(&live, Verdict::Alive),
        second_verdict,
        verdict(
            &orphan,
            Verdict::WritersAlive {
                pids: vec![811],
                evidence: "PID 4242 gone; 1 process of its session (811) runs".into(),
            },
        ),
    ];
    let dead_verdict = Verdict::Dead {
        reason: DeathReason::PidGone,
        evidence: "PID 4242 is gone".into(),
    };
    let b2 = vec![verdict(&dead, dead_verdict), first_verdict];
    let quiet = claim(40, "c-quiet", "build-04", 400);
    // build-04's report is 5 hours old (it refreshes hourly) and uses more slots than it has
    let mut b4 = report("build-04", vec![verdict(&quiet, Verdict::Alive)], 1, 2, 930);
    b4.updated_at = now() - Duration::hours(5);
    let earlier = serde_json::json!({
        "registry": true,
        "recoveries": [{
            "issue": 9, "title": "Flaky upload test", "claim_id": "c-nine", "host": "build-02",
            "outcome": "recovered", "ended_at": "2025-03-04T22:10:00Z",
            "end_url": "https://github.com/acme/widgets/issues/9#issuecomment-5000000090"
        }]
    });
    Snapshot {
        issues: vec![
            issue(
                12,
                "Parse the config file strictly",
                &[(10, live.to_comment()), (11, late.to_comment())],
            ),
            issue(
                15,
                "Retry uploads when the network drops | and report progress to the caller",
                &[(20, orphan.to_comment())],
            ),
            issue(21, "Dead run's issue", &[(30, dead.to_comment())]),
            issue(30, "Silent host's issue", &[(40, silent.to_comment())]),
            issue(33, "Labelled by hand", &[]),
            issue(40, "Quiet host's issue", &[(50, quiet.to_comment())]),
            issue(
                50,
                "Two machines on one issue",
                &[(60, first), (61, second)],
            ),
        ],
        reports: vec![
            report("build-01", b1, 2, 2, 901),
            report("build-02", b2, 4, 0, 917),
            b4,
        ],
        registry_issue: Some(1),
        duplicate_reports: vec![],
        registry_page: Some(RegistryPage {
            html_url: url(1),
            view: Some(earlier),
        }),
        commands: vec![],
        refusals: Default::default(),
        listing: None,
        untrusted_outside_issues: Default::default(),
    }
}

/// The plan a pass makes of [`snapshot`].
pub fn planned(snapshot: &Snapshot) -> Plan {
    let input = PlanInput {
        actor: "reconcile@ci".into(),
        now: now(),
    };
    plan(snapshot, &Config::default(), &input)
}

/// What apply reports after a pass that ended the dead and the superseded claim.
pub fn ended() -> Vec<EndedClaim> {
    vec![
        EndedClaim {
            issue: 12,
            claim_id: "c-late".into(),
            comment_id: BASE + 501,
            url: format!(
                "https://github.com/acme/widgets/issues/12#issuecomment-{}",
                BASE + 501
            ),
        },
        EndedClaim {
            issue: 21,
            claim_id: "c-dead".into(),
            comment_id: BASE + 500,
            url: format!(
                "https://github.com/acme/widgets/issues/21#issuecomment-{}",
                BASE + 500
            ),
        },
    ]
}

/// The view of [`snapshot`] after a pass that applied `ended` (`status` applies nothing).
pub fn view(ended: &[EndedClaim]) -> View {
    let snapshot = snapshot();
    let plan = planned(&snapshot);
    build(&Inputs {
        repository: REPO,
        snapshot: &snapshot,
        plan: &plan,
        ended,
        now: now(),
    })
}
