//! Fuzz target: any comment body through the `/thirdshift` command parser (no panic; a command
//! reads back from its canonical spelling; an error's reply is one bounded line that is never a
//! record). The properties live in `../props.rs`, shared with `tests/it/fuzz_properties.rs`.
#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    props::check_command(&String::from_utf8_lossy(data));
});
