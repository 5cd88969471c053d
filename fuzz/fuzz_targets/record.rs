//! Fuzz target: any comment body through the record decoder (no panic; a decoded record
//! re-encodes to one line that reads back the same), and any list of comments by trusted and
//! untrusted authors through the ownership rule (only trusted claims count, order never
//! matters). The properties live in `../props.rs`, shared with `tests/it/fuzz_properties.rs`.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    props::check_record(&text);
    props::check_ownership(7, &props::comments_of(&text));
});
