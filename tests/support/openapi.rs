//! GitHub's published OpenAPI description, loaded for tests, and a validator for the subset of
//! OpenAPI 3.0 schema keywords that GitHub's description of the REST API uses.
//!
//! It exists so that the emulator in `src/sim` can be held to the shapes GitHub documents
//! (`tests/conformance.rs`), without a JSON-Schema crate: the spec is installed by
//! `.ci/install-fixtures.sh` (npm `@octokit/openapi`) into `.ci/vendor`, or named by the
//! `THIRDSHIFT_OPENAPI` environment variable. A missing spec is a panic, never a skip, so CI
//! cannot pass by not looking.
//!
//! Checked: `$ref` (into `components/schemas` and `components/responses`), `type`, `nullable`,
//! `required`, `properties`, `additionalProperties` (false, or a schema), `items`, `enum`,
//! `allOf`, `anyOf`, `oneOf` (exactly one, or the `discriminator`'s pick), and `format`
//! `date-time` and `uri`. Not checked: numeric and length bounds, `pattern`, other formats,
//! request bodies, parameters and response headers.

use serde_json::Value;
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where `.ci/install-fixtures.sh` puts the spec, relative to the crate root.
pub const DEFAULT_SPEC: &str =
    ".ci/vendor/node_modules/@octokit/openapi/generated/api.github.com.json";

/// One way a value departs from its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the value, as `$`, `$.user.login`, `$[2].labels[0]`.
    pub path: String,
    /// What the schema expected and what was found.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.path, self.message)
    }
}

/// Renders violations one per line, for assertion messages.
pub fn report(violations: &[Violation]) -> String {
    violations.iter().map(|v| format!("  {v}\n")).collect()
}

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
    pub fn from_path(path: &std::path::Path) -> Result<Spec, String> {
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
        let response = self.resolve(response)?;
        Ok(json_schema_of(response))
    }

    /// The JSON schema of `components/responses/NAME` (`not_found`, `requires_authentication`…).
    pub fn component_response_schema(&self, name: &str) -> Result<Option<&Value>, String> {
        let response = self
            .pointer(&format!("/components/responses/{name}"))
            .ok_or_else(|| format!("the spec has no response component `{name}`"))?;
        Ok(json_schema_of(self.resolve(response)?))
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
        let mut out = Vec::new();
        self.check(schema, value, &mut String::from("$"), &mut out);
        if out.is_empty() {
            Ok(())
        } else {
            Err(out)
        }
    }

    fn pointer(&self, pointer: &str) -> Option<&Value> {
        self.doc.pointer(pointer)
    }

    /// Follows `$ref` chains to the referenced object.
    fn resolve<'a>(&'a self, mut node: &'a Value) -> Result<&'a Value, String> {
        for _ in 0..32 {
            match node.get("$ref").and_then(Value::as_str) {
                None => return Ok(node),
                Some(reference) => {
                    let pointer = reference
                        .strip_prefix('#')
                        .ok_or_else(|| format!("external $ref not supported: {reference}"))?;
                    node = self
                        .pointer(pointer)
                        .ok_or_else(|| format!("dangling $ref: {reference}"))?;
                }
            }
        }
        Err("$ref chain longer than 32".into())
    }

    fn check(&self, schema: &Value, value: &Value, path: &mut String, out: &mut Vec<Violation>) {
        let schema = match self.resolve(schema) {
            Ok(s) => s,
            Err(message) => {
                return out.push(Violation {
                    path: path.clone(),
                    message,
                })
            }
        };
        let fail = |out: &mut Vec<Violation>, path: &String, message: String| {
            out.push(Violation {
                path: path.clone(),
                message,
            })
        };
        if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
            return;
        }
        if let Some(ty) = schema.get("type").and_then(Value::as_str) {
            if !type_matches(ty, value) {
                let nullness = if value.is_null() {
                    " (the schema is not nullable)"
                } else {
                    ""
                };
                return fail(
                    out,
                    path,
                    format!("expected {ty}, found {}{nullness}", describe(value)),
                );
            }
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.contains(value) {
                fail(
                    out,
                    path,
                    format!(
                        "expected one of {}, found {}",
                        Value::Array(options.clone()),
                        describe(value)
                    ),
                );
            }
        }
        if let (Some(format), Some(text)) =
            (schema.get("format").and_then(Value::as_str), value.as_str())
        {
            if let Err(why) = check_format(format, text) {
                fail(out, path, why);
            }
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for branch in all {
                self.check(branch, value, path, out);
            }
        }
        if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
            let results = self.branches(any, value, path);
            if !results.iter().any(Vec::is_empty) {
                out.extend(closest("anyOf", path, results));
            }
        }
        if let Some(one) = schema.get("oneOf").and_then(Value::as_array) {
            self.check_one_of(schema, one, value, path, out);
        }
        if let Some(object) = value.as_object() {
            self.check_object(schema, object, path, out);
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (i, item) in array.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                self.check(items, item, path, out);
                path.truncate(len);
            }
        }
    }

    fn check_object(
        &self,
        schema: &Value,
        object: &serde_json::Map<String, Value>,
        path: &mut String,
        out: &mut Vec<Violation>,
    ) {
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    out.push(Violation {
                        path: path.clone(),
                        message: format!("missing required property `{name}`"),
                    });
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        for (name, child) in object {
            let len = path.len();
            path.push_str(&member(name));
            match (properties.and_then(|p| p.get(name)), additional) {
                (Some(property), _) => self.check(property, child, path, out),
                (None, Some(Value::Bool(false))) => out.push(Violation {
                    path: path.clone(),
                    message: "property not allowed (additionalProperties is false)".into(),
                }),
                (None, Some(extra @ Value::Object(_))) => self.check(extra, child, path, out),
                (None, _) => {}
            }
            path.truncate(len);
        }
    }

    /// `oneOf`: the branch named by the discriminator when the value names one, else exactly one
    /// branch must match.
    fn check_one_of(
        &self,
        schema: &Value,
        one: &[Value],
        value: &Value,
        path: &mut String,
        out: &mut Vec<Violation>,
    ) {
        if let Some(target) = discriminated(schema, value) {
            return self.check(&serde_json::json!({ "$ref": target }), value, path, out);
        }
        let results = self.branches(one, value, path);
        let matched: Vec<usize> = (0..results.len())
            .filter(|&i| results[i].is_empty())
            .collect();
        match matched.len() {
            1 => {}
            0 => out.extend(closest("oneOf", path, results)),
            _ => out.push(Violation {
                path: path.clone(),
                message: format!("matches oneOf alternatives {matched:?}; exactly one must match"),
            }),
        }
    }

    fn branches(
        &self,
        branches: &[Value],
        value: &Value,
        path: &mut String,
    ) -> Vec<Vec<Violation>> {
        branches
            .iter()
            .map(|branch| {
                let mut errors = Vec::new();
                self.check(branch, value, path, &mut errors);
                errors
            })
            .collect()
    }
}

/// The `$ref` chosen by a `discriminator` mapping for this value, if the value names one.
fn discriminated<'a>(schema: &'a Value, value: &Value) -> Option<&'a str> {
    let discriminator = schema.get("discriminator")?;
    let property = discriminator.get("propertyName")?.as_str()?;
    let name = value.get(property)?.as_str()?;
    discriminator.get("mapping")?.get(name)?.as_str()
}

/// The violations of the alternative that came closest, introduced by a summary line.
fn closest(keyword: &str, path: &str, results: Vec<Vec<Violation>>) -> Vec<Violation> {
    let count = results.len();
    let (best, errors) = results
        .into_iter()
        .enumerate()
        .min_by_key(|(_, errors)| {
            // A branch of the wrong type fails with one error at `path`; rank it last.
            let wrong_type = errors
                .first()
                .is_some_and(|e| e.path == path && e.message.starts_with("expected "));
            (wrong_type, errors.len())
        })
        .unwrap_or_default();
    let mut out = vec![Violation {
        path: path.to_string(),
        message: format!("matches none of the {count} {keyword} alternatives; closest is #{best}:"),
    }];
    out.extend(errors);
    out
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

fn type_matches(ty: &str, value: &Value) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn check_format(format: &str, text: &str) -> Result<(), String> {
    match format {
        "date-time" => chrono::DateTime::parse_from_rfc3339(text)
            .map(|_| ())
            .map_err(|e| format!("expected an RFC 3339 date-time, found {text:?} ({e})")),
        "uri" if !is_absolute_uri(text) => Err(format!("expected an absolute URI, found {text:?}")),
        _ => Ok(()),
    }
}

/// RFC 3986 `scheme ":" hier-part`, with no whitespace: enough to catch relative paths, empty
/// strings and unexpanded junk.
fn is_absolute_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !text.chars().any(char::is_whitespace)
}

/// `.name` for plain keys, `["+1"]` for the rest.
fn member(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!(".{name}")
    } else {
        format!("[{name:?}]")
    }
}

/// A short description of a value for error messages.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut shown = value.to_string();
    if shown.chars().count() > 60 {
        shown = shown.chars().take(57).chain(['…']).collect();
    }
    format!("{kind} {shown}")
}

/// Loads the spec at `path`, or panics saying how to install it.
pub fn load_or_panic(path: &std::path::Path) -> Spec {
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
