//! Reconcile: a pure `plan` from a snapshot to actions, and `apply`, the IO shell that performs
//! them end record first and labels second, so a pass killed half-way is finished by the next.

pub mod plan;

pub use plan::{plan, Action, Finding, Health, Plan, PlanInput};
