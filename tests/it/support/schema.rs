//! Validation of JSON values against OpenAPI 3.0 schemas, in the subset GitHub's description of
//! its REST API uses; [`super::openapi::Spec`] hands it the description to resolve `$ref`s in.
//!
//! Checked: `$ref`, `type` (`integer` takes whole numbers only), `nullable` (which admits null
//! even where an `enum` omits it, as GitHub's own replies need: `state_reason: null`),
//! `required`, `properties`, `additionalProperties` (false, or a schema), `items`, `enum`, `const`,
//! `allOf`, `anyOf`, `oneOf` (exactly one, or the `discriminator`'s pick), and `format`
//! `date-time` and `uri`; for JSON Schema documents also `type` as a list and `"null"`. Not checked: numeric and length bounds, `pattern`, other formats.

use serde_json::Value;
use std::fmt;

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

/// Validates values against schemas that live in (or `$ref` into) one OpenAPI document.
pub struct Validator<'a> {
    doc: &'a Value,
}

impl<'a> Validator<'a> {
    pub fn new(doc: &'a Value) -> Validator<'a> {
        Validator { doc }
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

    /// Follows `$ref` chains to the referenced object.
    pub fn resolve<'b>(&self, mut node: &'b Value) -> Result<&'b Value, String>
    where
        'a: 'b,
    {
        for _ in 0..32 {
            match node.get("$ref").and_then(Value::as_str) {
                None => return Ok(node),
                Some(reference) => {
                    let pointer = reference
                        .strip_prefix('#')
                        .ok_or_else(|| format!("external $ref not supported: {reference}"))?;
                    node = self
                        .doc
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
        if let Some(ty) = type_names(schema) {
            if !ty.split(" or ").any(|t| type_matches(t, value)) {
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
        if let Some(expected) = schema.get("const") {
            if expected != value {
                fail(
                    out,
                    path,
                    format!("expected {expected}, found {}", describe(value)),
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

/// `type` as one string, or (JSON Schema) a list of names joined with ` or `.
fn type_names(schema: &Value) -> Option<String> {
    match schema.get("type")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(names) => Some(
            names
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
        ),
        _ => None,
    }
}

fn type_matches(ty: &str, value: &Value) -> bool {
    match ty {
        "null" => value.is_null(),
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
pub fn describe(value: &Value) -> String {
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
