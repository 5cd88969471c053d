//! A config error in the words of the YAML a person wrote, not of the Rust types it is read
//! into: "a whole number, 0 or more" for `u64`, "a mapping" for `struct Labels`, "a list" for a
//! sequence, unknown fields called keys. It does not place the error (the caller adds file,
//! line and column) or decide what is valid.

/// yaml_serde's message for `e`, without its trailing position, in YAML words:
/// `labels: unknown key `redy` (expected one of ready, in_progress, hand_off)`.
pub(super) fn describe(e: &yaml_serde::Error) -> String {
    let full = e.to_string();
    let suffix = e
        .location()
        .map(|l| format!(" at line {} column {}", l.line(), l.column()));
    let msg = suffix.and_then(|s| full.strip_suffix(&s)).unwrap_or(&full);
    in_yaml_words(&unknown_keys(msg))
}

/// `unknown field `x`, expected …` as `unknown key `path.x` (expected …)`.
fn unknown_keys(msg: &str) -> String {
    let Some(i) = msg.find("unknown field `") else {
        return msg.to_string();
    };
    let (path, rest) = msg.split_at(i);
    let rest = &rest["unknown field `".len()..];
    let Some((key, expected)) = rest.split_once('`') else {
        return msg.to_string();
    };
    let expected = expected.trim_start_matches(", ").replace('`', "");
    let path = path.trim_end_matches(": ");
    let key = if path.is_empty() || path == "." {
        key.to_string()
    } else {
        format!("{path}.{key}")
    };
    format!("unknown key `{key}` ({expected})")
}

/// What serde calls the value found or expected, as a person reads YAML. Longest first where
/// one is the start of another.
const WORDS: &[(&str, &str)] = &[
    ("invalid type: ", "found "),
    ("invalid value: ", "found "),
    ("invalid length ", "found a list of length "),
    ("expected u64", "expected a whole number, 0 or more"),
    ("expected u32", "expected a whole number, 0 or more"),
    ("expected u16", "expected a whole number, 0 or more"),
    ("expected u8", "expected a whole number, 0 or more"),
    ("expected usize", "expected a whole number, 0 or more"),
    ("expected i64", "expected a whole number"),
    ("expected i32", "expected a whole number"),
    ("expected a sequence", "expected a list"),
    ("expected a map", "expected a mapping (key: value lines)"),
    ("expected a boolean", "expected true or false"),
    ("expected a borrowed string", "expected text"),
    ("expected a string", "expected text"),
    ("unknown variant", "unknown value"),
    ("integer `", "the number `"),
    ("floating point `", "the number `"),
    ("boolean `", "`"),
    ("string \"", "the text \""),
    ("found sequence", "found a list"),
    ("found map", "found a mapping"),
    ("found unit value", "found nothing (an empty value)"),
];

/// `msg` with serde's type words replaced ([`WORDS`]) and `expected struct Name` (a settings
/// section) said as a mapping.
fn in_yaml_words(msg: &str) -> String {
    let mut out = msg.to_string();
    for (rust, yaml) in WORDS {
        out = out.replace(rust, yaml);
    }
    while let Some(i) = out.find("expected struct ") {
        let name_end = out[i + "expected struct ".len()..]
            .find(|c: char| !c.is_alphanumeric())
            .map_or(out.len(), |n| i + "expected struct ".len() + n);
        out.replace_range(i..name_end, "expected a mapping (key: value lines)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_are_said_as_yaml_values() {
        let said =
            in_yaml_words("observe.refresh_mins: invalid type: string \"soon\", expected u64");
        assert_eq!(
            said,
            "observe.refresh_mins: found the text \"soon\", expected a whole number, 0 or more"
        );
        let said = in_yaml_words("labels: invalid type: sequence, expected struct Labels");
        assert_eq!(
            said,
            "labels: found a list, expected a mapping (key: value lines)"
        );
        let said = in_yaml_words("hosts.h1.capacity: invalid value: integer `-1`, expected u32");
        assert_eq!(
            said,
            "hosts.h1.capacity: found the number `-1`, expected a whole number, 0 or more"
        );
        let said = in_yaml_words("pickup.skip_labels: invalid type: map, expected a sequence");
        assert_eq!(said, "pickup.skip_labels: found a mapping, expected a list");
    }

    #[test]
    fn no_rust_type_name_is_left_in_any_message_of_a_wrong_value() {
        for yaml in [
            "observe:\n  refresh_mins: soon\n",
            "labels: [a, b]\n",
            "hosts:\n  h1:\n    capacity: -1\n",
            "pickup:\n  skip_labels: {a: b}\n",
            "thirdshift:\n  adopt: maybe\n",
            "recovery:\n  on_dead: later\n",
            "labels:\n  ready: [x]\n",
        ] {
            let err = yaml_serde::from_str::<crate::protocol::config::Config>(yaml).unwrap_err();
            let said = describe(&err);
            let words: Vec<&str> = said.split(|c: char| !c.is_alphanumeric()).collect();
            for rust in [
                "u64", "u32", "struct", "sequence", "variant", "map", "boolean",
            ] {
                assert!(!words.contains(&rust), "{yaml:?}: {said}");
            }
        }
    }
}
