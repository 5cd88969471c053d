//! The fuzz targets' properties (`fuzz/props.rs`) on stable, always built: a seeded generator
//! mutates valid records and commands (byte flips, cuts, splices, inserted markers, fences,
//! quotes and JSON punctuation) and makes random text, and every input goes through the record
//! decoder, the ownership rule and the command parser. It is reproducible (fixed seeds, or
//! `THIRDSHIFT_PROP_SEED`), bounded by count, not by time; `cargo fuzz` (docs/reliability.md)
//! explores further with coverage feedback. It does not replace the unit tests' named cases.

#[path = "../fuzz/props.rs"]
mod props;

use thirdshift_reconciler::record::{decode, Decoded};

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
        for _ in 0..400 {
            let n = 1 + rng.below(12);
            let picked: Vec<&str> = (0..n).map(|_| all[rng.below(all.len())].as_str()).collect();
            let data = picked
                .iter()
                .map(|b| format!("{}{b}", char::from(b'a' + rng.below(4) as u8)))
                .collect::<Vec<_>>()
                .join("\0");
            props::check_ownership(7, &props::comments_of(&data));
        }
    }
}

#[test]
fn mutated_and_random_commands_parse_without_panic_and_answer_safely() {
    for seed in seeds_to_run() {
        for body in inputs(seed, 6_000) {
            props::check_command(&body);
        }
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
    let owner = thirdshift_reconciler::record::Ownership::of(
        7,
        &comments,
        &thirdshift_reconciler::record::Trust::new([props::TRUSTED]),
    )
    .owner
    .expect("the trusted claim owns");
    assert_eq!(owner.author, props::TRUSTED);
    // And a command error is answered in one line that quotes the word safely.
    props::check_command("/thirdshift <!--\u{7} -->");
}
