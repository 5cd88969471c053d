//! The fuzz targets' properties (`fuzz/props.rs`) on stable, always built: a seeded generator
//! mutates valid records and commands (byte flips, cuts, splices, inserted markers, fences,
//! quotes and JSON punctuation) and makes random text, and every input goes through the record
//! decoder, the ownership rule and the command parser. It is reproducible (fixed seeds, or
//! `THIRDSHIFT_PROP_SEED`), bounded by count, not by time; `cargo fuzz` (docs/reliability.md)
//! explores further with coverage feedback. It does not replace the unit tests' named cases.
//!
//! Truth on write is one more property here: every value the field rules (`record::field`)
//! accept for a record field makes a comment the writer's own check accepts, and after a round
//! trip through GitHub's comment body (posted and read back over HTTP on the emulator) the
//! reader decodes the same record; a value a rule refuses is refused by the writer, naming the
//! field.

use crate::props;

use crate::harness;

use chrono::{TimeZone, Utc};
use harness::*;
use thirdshift_reconciler::github::{Client, Repo};
use thirdshift_reconciler::host::ProcessIdentity;
use thirdshift_reconciler::protocol::record::{
    decode, field, write_refusal, CancelRecord, ClaimRecord, Decoded, EndRecord, Outcome,
    Ownership, Record, Trust,
};
use thirdshift_reconciler::text::ToComment;

/// A small seeded PRNG (xorshift64*): no dependency, same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Fragments a hostile writer would reach for.
const TOKENS: [&str; 24] = [
    "<!-- thirdshift:",
    "<!-- thirdshift:v1:claim ",
    "<!-- thirdshift:v2:end ",
    "-->",
    "\n",
    "\r\n",
    "```",
    "~~~",
    "> ",
    "    ",
    "{",
    "}",
    "[",
    "\"",
    "\\u003c",
    ":",
    ",",
    "null",
    "99999999999999999999",
    "-1",
    "\u{0}",
    "é",
    "/thirdshift ",
    "--",
];

fn mutate(rng: &mut Rng, seed: &str, other: &str) -> String {
    let mut bytes = seed.as_bytes().to_vec();
    for _ in 0..=rng.below(2) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(7) {
            0 if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                bytes[i] ^= 1 << rng.below(8);
            }
            1 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 => {
                let from = rng.below(other.len() + 1);
                let to = (from + rng.below(64)).min(other.len());
                bytes.splice(at..at, other.as_bytes()[from..to].iter().copied());
            }
            3 => bytes.truncate(at),
            // Readable text before the record line keeps the record valid.
            4 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(0..0, format!("{t} text\n\n").bytes());
            }
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())];
                bytes.splice(at..at, t.bytes());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn random_text(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(40) {
        if rng.below(2) == 0 {
            out.push_str(TOKENS[rng.below(TOKENS.len())]);
        } else {
            out.push(char::from(b' ' + rng.below(95) as u8));
        }
    }
    out
}

/// `n` inputs from `seed`: mutated seeds, mutations of mutations, and random text.
fn inputs(seed: u64, n: usize) -> Vec<String> {
    let seeds = props::seeds();
    let mut rng = Rng(seed | 1);
    let mut out = seeds.clone();
    while out.len() < n {
        let base = match rng.below(2) {
            0 => seeds[rng.below(seeds.len())].clone(),
            _ => out[rng.below(out.len())].clone(),
        };
        let base = &base;
        let other = &seeds[rng.below(seeds.len())];
        let next = match rng.below(5) {
            0 => random_text(&mut rng),
            _ => mutate(&mut rng, base, other),
        };
        out.push(next);
    }
    out
}

fn seeds_to_run() -> Vec<u64> {
    match std::env::var("THIRDSHIFT_PROP_SEED") {
        Ok(s) => vec![s.parse().expect("THIRDSHIFT_PROP_SEED is a number")],
        Err(_) => vec![1, 0x5eed, 20_260_103],
    }
}

#[test]
fn mutated_and_random_records_decode_without_panic_and_read_back_unchanged() {
    for seed in seeds_to_run() {
        let all = inputs(seed, 10_000);
        let records = all
            .iter()
            .filter(|b| matches!(decode(b), Decoded::Record(_)))
            .count();
        assert!(
            records > 300,
            "the generator reaches valid records: {records}"
        );
        for body in &all {
            props::check_record(body);
        }
    }
}

#[test]
fn ownership_over_mutated_comments_trusts_only_trusted_claims_in_any_order() {
    for seed in seeds_to_run() {
        let all = inputs(seed, 3_000);
        let mut rng = Rng(seed ^ 0xabcd);
        let (mut owned, mut with_strangers_claims) = (0, 0);
        for _ in 0..400 {
            let n = 1 + rng.below(12);
            let picked: Vec<&str> = (0..n).map(|_| all[rng.below(all.len())].as_str()).collect();
            let data = picked
                .iter()
                .map(|b| format!("{}{b}", char::from(b'a' + rng.below(4) as u8)))
                .collect::<Vec<_>>()
                .join("\0");
            let comments = props::comments_of(&data);
            props::check_ownership(7, &comments);
            let trust = Trust::new([props::TRUSTED]);
            owned += usize::from(Ownership::of(7, &comments, &trust).owner.is_some());
            with_strangers_claims += usize::from(comments.iter().any(|c| {
                c.author != props::TRUSTED
                    && matches!(decode(&c.body), Decoded::Record(Record::Claim(_)))
            }));
        }
        // The generator reaches the cases the property is about: issues a trusted claim owns,
        // and issues where a stranger posted a valid-looking claim
        assert!(owned > 10, "seed {seed}: {owned} owned issues");
        assert!(
            with_strangers_claims > 10,
            "seed {seed}: {with_strangers_claims} with a stranger's claim"
        );
    }
}

#[test]
fn mutated_and_random_commands_parse_without_panic_and_answer_safely() {
    for seed in seeds_to_run() {
        let (mut commands, mut invalid) = (0, 0);
        for body in inputs(seed, 6_000) {
            props::check_command(&body);
            match thirdshift_reconciler::protocol::command::parse(&body) {
                thirdshift_reconciler::protocol::command::Parsed::Command(_) => commands += 1,
                thirdshift_reconciler::protocol::command::Parsed::Invalid(_) => invalid += 1,
                _ => {}
            }
        }
        // The generator reaches both kinds of answer the property checks
        assert!(
            commands > 20 && invalid > 100,
            "seed {seed}: {commands} {invalid}"
        );
    }
}

#[test]
fn the_properties_catch_what_they_claim_to() {
    // A stranger's claim must not own the issue: the property sees the trusted one only.
    let claim = &props::seeds()[0];
    let data = format!("a{claim}\0d{claim}");
    let comments = props::comments_of(&data);
    assert_eq!(comments[0].author, "mallory");
    assert_eq!(comments[1].author, props::TRUSTED);
    props::check_ownership(7, &comments);
    let owner = thirdshift_reconciler::protocol::record::Ownership::of(
        7,
        &comments,
        &thirdshift_reconciler::protocol::record::Trust::new([props::TRUSTED]),
    )
    .owner
    .expect("the trusted claim owns");
    assert_eq!(owner.author, props::TRUSTED);
    // And a command error is answered in one line that quotes the word safely.
    props::check_command("/thirdshift <!--\u{7} -->");
}

/// What a script, a shell or a hostile value puts into a field.
const PIECES: [&str; 28] = [
    "implementing",
    "a",
    " ",
    "<",
    ">",
    "-->",
    "<!-- thirdshift:v1:claim {} -->",
    "\n<!-- thirdshift:v1:end {} -->\n",
    "```",
    "\n```\n",
    "~~~",
    "\n> ",
    "|",
    "*_`",
    "\\",
    "\"",
    "\n",
    "\r\n",
    "\t",
    "\u{0}",
    "\u{7}",
    "é",
    "🦀",
    "\u{202e}",
    "/thirdshift recover",
    "https://ci.example/logs/1?a=b&c=<d>",
    "$UNSET",
    "%",
];

/// A value: empty, a run of pieces, or a long run near a field's limit.
fn value(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => String::new(),
        1 => {
            let unit = PIECES[rng.below(PIECES.len())];
            let near = [
                field::MAX_NAME_CHARS,
                field::MAX_PATH_CHARS,
                field::MAX_TEXT_CHARS,
            ];
            let target = near[rng.below(near.len())] + rng.below(3);
            unit.repeat(target / unit.chars().count().max(1))
        }
        _ => (0..1 + rng.below(8))
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect(),
    }
}

fn claim() -> ClaimRecord {
    let owner = ProcessIdentity {
        pid: 42,
        start_ticks: 7,
    };
    claim_record(1, "build-01", "m", owner, "b", "c-00000000000000aa")
}

fn end() -> EndRecord {
    EndRecord {
        claim_id: "c-00000000000000aa".into(),
        issue: 1,
        outcome: Outcome::Failed,
        actor: "run@build-01".into(),
        reason: "the Run's command exited with status 1".into(),
        exit_code: Some(1),
        signal: None,
        cause: None,
        claim_comment_id: None,
        events_seen: None,
        labels_after: Some(vec!["ready-for-agent".into()]),
        kept: None,
        pull_request: None,
        continuation: None,
        resume: None,
        session: None,
        run: Default::default(),
        failures: Vec::new(),
        ended_at: Utc.with_ymd_and_hms(2026, 1, 2, 4, 0, 0).unwrap(),
    }
}

fn cancel() -> CancelRecord {
    CancelRecord {
        request_id: "cx-00000000000000bb".into(),
        claim_id: "c-00000000000000aa".into(),
        issue: 1,
        requested_by: "octo".into(),
        reason: None,
        requested_at: Utc.with_ymd_and_hms(2026, 1, 2, 4, 0, 0).unwrap(),
        recover: false,
        requeue: false,
    }
}

/// The field the case varies, the record holding `v` there, and the field rule's verdict.
fn case(pick: usize, v: String) -> (&'static str, Record, Result<(), String>) {
    let mut c = claim();
    let mut e = end();
    let (name, rule) = match pick {
        0 => ("stage", field::name("stage", &v)),
        1 => ("host", field::name("host", &v)),
        2 => ("harness", field::name("harness", &v)),
        3 => ("model", field::name("model", &v)),
        4 => ("agent_session", field::name("agent_session", &v)),
        5 => ("branch", field::name("branch", &v)),
        6 => ("worktree", field::path("worktree", &v)),
        7 => ("logs", field::path("logs", &v)),
        8 => ("actor", field::name("actor", &v)),
        9 => ("reason", field::text("reason", &v)),
        10 => ("resume", field::path("resume", &v)),
        _ => ("cancel reason", field::text("reason", &v)),
    };
    let record = match pick {
        0 => Record::Claim(ClaimRecord { stage: v, ..c }),
        1 => Record::Claim(ClaimRecord { host: v, ..c }),
        2..=7 => {
            let slot = match pick {
                2 => &mut c.harness,
                3 => &mut c.model,
                4 => &mut c.agent_session,
                5 => &mut c.branch,
                6 => &mut c.worktree,
                _ => {
                    c.logs = vec!["/var/log/first".into(), v];
                    return (name, Record::Claim(c), rule);
                }
            };
            *slot = Some(v);
            Record::Claim(c)
        }
        8 => Record::End(EndRecord { actor: v, ..e }),
        9 => Record::End(EndRecord { reason: v, ..e }),
        10 => {
            e.resume = Some(v);
            Record::End(e)
        }
        _ => Record::Cancel(CancelRecord {
            reason: Some(v),
            ..cancel()
        }),
    };
    (name, record, rule)
}

fn comment_of(record: &Record) -> String {
    match record {
        Record::Claim(r) => r.to_comment(),
        Record::End(r) => r.to_comment(),
        Record::Cancel(r) => r.to_comment(),
        other => panic!("no case makes {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_value_a_writer_accepts_reads_back_unchanged_through_github() {
    let world = World::new().await;
    let issue = world.ready_issue("field round trips");
    let repo: Repo = world.sim.repo_full_name().parse().unwrap();
    let client = Client::new(&world.server.url, Some(BOT_TOKEN.to_string()), repo).unwrap();
    let (mut accepted, mut refused) = (0, 0);
    for seed in seeds_to_run() {
        let mut rng = Rng(seed | 1);
        for _ in 0..150 {
            // Given a record with one field set to a generated value
            let (name, record, rule) = case(rng.below(12), value(&mut rng));
            let body = comment_of(&record);
            // When the writer checks its comment
            let writer = write_refusal(&body);
            let Ok(()) = rule else {
                // Then a value the field rule refuses is refused by the writer, naming the field
                let why = writer.unwrap_or_else(|| panic!("{name}: refused value written"));
                assert!(why.contains(name.trim_start_matches("cancel ")), "{why}");
                refused += 1;
                continue;
            };
            assert_eq!(
                writer, None,
                "{name}: an accepted value made a refused comment"
            );
            // And an accepted one, posted and read back, decodes to the same record
            let posted = client.create_comment(issue, &body).await.expect("posted");
            let back = client.get_comment(posted.id).await.expect("read back");
            assert_eq!(
                decode(back.body.as_deref().unwrap_or_default()),
                Decoded::Record(record),
                "{name} reads back"
            );
            accepted += 1;
        }
    }
    // The generator reaches both sides of every rule
    assert!(
        accepted > 100 && refused > 50,
        "{accepted} accepted, {refused} refused"
    );
}
