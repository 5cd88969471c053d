//! GitHub's published OpenAPI description, loaded for tests, and the checks of a reply against
//! the operation that documents it.
//!
//! It exists so that the emulator in `crates/github-emulator` can be held to the shapes GitHub documents
//! (`tests/it/conformance.rs`), without a JSON-Schema crate: the spec is installed by
//! `.ci/install-fixtures.sh` (npm `@octokit/openapi`) into `.ci/vendor`, or named by the
//! `THIRDSHIFT_OPENAPI` environment variable. A missing spec is a panic, never a skip, so CI
//! cannot pass by not looking.
//!
//! It finds an operation by method and path template and the schema of its reply for a status;
//! `super::schema` does the validating (its doc lists the keywords checked). Not checked here:
//! request bodies, parameters and response headers.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::schema::{describe, Validator};
pub use super::schema::{report, Violation};

/// Where `.ci/install-fixtures.sh` puts the spec, relative to the crate root.
pub const DEFAULT_SPEC: &str =
    ".ci/vendor/node_modules/@octokit/openapi/generated/api.github.com.json";

/// GitHub's OpenAPI description, parsed once.
pub struct Spec {
    doc: Value,
}

impl Spec {
    /// The spec for this test run, loaded on first use. Panics with what to do when it is
    /// missing or unreadable: the conformance test must fail, not skip, without it.
    pub fn get() -> &'static Spec {
        static SPEC: OnceLock<Spec> = OnceLock::new();
        SPEC.get_or_init(|| load_or_panic(&spec_path()))
    }

    /// Reads and parses a spec file.
    pub fn from_path(path: &Path) -> Result<Spec, String> {
        let text =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_slice(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        if doc.pointer("/paths").and_then(Value::as_object).is_none() {
            return Err(format!(
                "{} has no `paths`: not an OpenAPI description",
                path.display()
            ));
        }
        Ok(Spec { doc })
    }

    /// `components/schemas/NAME`; panics if the spec has no such schema.
    pub fn schema(&self, name: &str) -> &Value {
        self.pointer(&format!("/components/schemas/{name}"))
            .unwrap_or_else(|| panic!("the spec has no schema `{name}`"))
    }

    /// The value of `components/examples/NAME`; panics if the spec has no such example.
    pub fn example(&self, name: &str) -> &Value {
        self.pointer(&format!("/components/examples/{name}/value"))
            .unwrap_or_else(|| panic!("the spec has no example `{name}`"))
    }

    /// Every path template the description documents.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.doc["paths"]
            .as_object()
            .expect("checked at load")
            .keys()
            .map(String::as_str)
    }

    /// The operation for `method` on `route`, where `route` is a path template whose parameter
    /// names need not match the spec's (`/labels/{label}` finds `/labels/{name}`).
    pub fn operation(&self, method: &str, route: &str) -> Result<&Value, String> {
        let wanted = template_shape(route);
        let paths = self.doc["paths"].as_object().expect("checked at load");
        let (_, item) = paths
            .iter()
            .find(|(path, _)| template_shape(path) == wanted)
            .ok_or_else(|| format!("the spec has no path matching {route}"))?;
        item.get(method.to_ascii_lowercase()).ok_or_else(|| {
            format!(
                "the spec has no {} operation on {route}",
                method.to_ascii_uppercase()
            )
        })
    }

    /// The JSON schema of the `status` reply of `method route`: `Ok(None)` when the operation
    /// declares that status without a JSON body (204, 304), `Err` when it does not declare the
    /// status at all.
    pub fn response_schema(
        &self,
        method: &str,
        route: &str,
        status: u16,
    ) -> Result<Option<&Value>, String> {
        let op = self.operation(method, route)?;
        let responses = op
            .get("responses")
            .and_then(Value::as_object)
            .ok_or("operation has no responses")?;
        let response = responses.get(&status.to_string()).ok_or_else(|| {
            let declared: Vec<&str> = responses.keys().map(String::as_str).collect();
            format!(
                "{} {route} does not declare status {status}; it declares {}",
                method.to_ascii_uppercase(),
                declared.join(", ")
            )
        })?;
        let response = Validator::new(&self.doc).resolve(response)?;
        Ok(json_schema_of(response))
    }

    /// The JSON schema of `components/responses/NAME` (`not_found`, `requires_authentication`…).
    pub fn component_response_schema(&self, name: &str) -> Result<Option<&Value>, String> {
        let response = self
            .pointer(&format!("/components/responses/{name}"))
            .ok_or_else(|| format!("the spec has no response component `{name}`"))?;
        Ok(json_schema_of(Validator::new(&self.doc).resolve(response)?))
    }

    /// Checks one reply: its status must be declared by the operation, and its body must match
    /// the declared schema (or be absent when none is declared).
    pub fn validate_response(
        &self,
        method: &str,
        route: &str,
        status: u16,
        body: Option<&Value>,
    ) -> Result<(), Vec<Violation>> {
        let at_top = |message: String| {
            vec![Violation {
                path: "$".into(),
                message,
            }]
        };
        let schema = self
            .response_schema(method, route, status)
            .map_err(at_top)?;
        match (schema, body) {
            (Some(schema), Some(body)) => self.validate(schema, body),
            (Some(_), None) => Err(at_top(format!(
                "status {status} declares a JSON body, found none"
            ))),
            (None, Some(body)) => Err(at_top(format!(
                "status {status} declares no body, found {}",
                describe(body)
            ))),
            (None, None) => Ok(()),
        }
    }

    /// Validates `value` against `schema` (which may be a `$ref`).
    pub fn validate(&self, schema: &Value, value: &Value) -> Result<(), Vec<Violation>> {
        Validator::new(&self.doc).validate(schema, value)
    }

    fn pointer(&self, pointer: &str) -> Option<&Value> {
        self.doc.pointer(pointer)
    }
}

/// The `application/json` schema of a resolved response object, if it declares one.
fn json_schema_of(response: &Value) -> Option<&Value> {
    let content = response.get("content")?.as_object()?;
    content
        .iter()
        .find(|(media, _)| media.as_str() == "application/json" || media.ends_with("+json"))
        .and_then(|(_, media)| media.get("schema"))
}

/// A path template with its parameter names erased: `/a/{x}/b` becomes `/a/{}/b`.
fn template_shape(template: &str) -> String {
    let mut shape = String::with_capacity(template.len());
    let mut in_param = false;
    for c in template.chars() {
        match c {
            '{' => {
                in_param = true;
                shape.push('{');
            }
            '}' => {
                in_param = false;
                shape.push('}');
            }
            _ if in_param => {}
            _ => shape.push(c),
        }
    }
    shape
}

/// Loads the spec at `path`, or panics saying how to install it.
pub fn load_or_panic(path: &Path) -> Spec {
    Spec::from_path(path).unwrap_or_else(|e| {
        panic!(
            "GitHub's OpenAPI description is not available ({e}).\n\
             Run `.ci/install-fixtures.sh` to install it into .ci/vendor, or set \
             THIRDSHIFT_OPENAPI to the path of api.github.com.json.\n\
             Looked at: {}",
            path.display()
        )
    })
}

/// The spec's location: `THIRDSHIFT_OPENAPI`, else [`DEFAULT_SPEC`] under the crate root.
pub fn spec_path() -> PathBuf {
    match std::env::var_os("THIRDSHIFT_OPENAPI") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SPEC),
    }
}
