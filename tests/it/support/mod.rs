//! Helpers shared by the integration tests' modules (`tests/it/`): the OpenAPI and GraphQL
//! checkers, recorded exchanges and their replay server, real git origins, keys. It holds no tests
//! of its own (those live in the modules that use it).

pub mod exchange;
pub mod graphql;
pub mod keys;

pub mod openapi;
pub mod origin;
pub mod replay;
pub mod schema;
