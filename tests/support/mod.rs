//! Helpers shared by the integration tests in `tests/`; a test file includes this module with
//! `mod support;`. It holds no tests of its own (those live in the files that use it).

#[allow(dead_code)]
pub mod exchange;
#[allow(dead_code)]
pub mod graphql;
#[allow(dead_code)]
pub mod keys;
#[allow(dead_code, unused_imports)]
pub mod openapi;
#[allow(dead_code)]
pub mod origin;
#[allow(dead_code)]
pub mod replay;
#[allow(dead_code)]
pub mod schema;
