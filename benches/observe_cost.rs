//! What `observe` costs on a busy host (issue #9, target 4): filled in by the next commit.
fn main() {}
