//! What a route handler knows about its request: the caller (put there by the `http`
//! pipeline), the path parameters, the query, and the base URL that every URL in a response is
//! built from (the request's own Host, so links work whatever port the emulator bound). Also
//! the small JSON-body readers that turn bad input into GitHub's 400/422 answers.
//!
//! It decides nothing about permissions or data; it only reads the request.

use std::collections::HashMap;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use serde_json::Value;

use super::error::ApiError;
use super::state::State;
use super::Permission;

/// Who is calling, as the pipeline authenticated them.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub login: Option<String>,
    pub user_id: Option<u64>,
    pub token: Option<String>,
    pub permission: Permission,
    /// The GitHub App a valid JWT speaks for (then there is no login).
    pub app: Option<u64>,
}

impl Caller {
    pub(crate) fn anonymous() -> Caller {
        Caller {
            login: None,
            user_id: None,
            token: None,
            permission: Permission::None,
            app: None,
        }
    }

    /// The caller's login, or 401 `Requires authentication`.
    pub(crate) fn require_login(&self) -> Result<String, ApiError> {
        self.login.clone().ok_or_else(ApiError::requires_auth)
    }

    /// Whether the caller holds at least `role` on the repository.
    pub(crate) fn can(&self, role: Permission) -> bool {
        self.login.is_some() && self.permission.at_least(role)
    }

    /// Whether the caller is `login` (case-insensitive).
    pub(crate) fn is(&self, login: &str) -> bool {
        self.login
            .as_deref()
            .is_some_and(|l| l.eq_ignore_ascii_case(login))
    }
}

/// Everything a handler reads from the request besides its body.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub caller: Caller,
    params: Vec<(String, String)>,
    pub query: HashMap<String, String>,
    /// The query string as sent (for Link headers).
    pub raw_query: String,
    /// `http://HOST:PORT`, no trailing slash.
    pub base: String,
    pub path: String,
}

impl<S: Send + Sync> FromRequestParts<S> for Call {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Call, ApiError> {
        let params = match RawPathParams::from_request_parts(parts, state).await {
            Ok(raw) => raw
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            Err(_) => return Err(ApiError::not_found()),
        };
        let caller = parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or_else(Caller::anonymous);
        let raw_query = parts.uri.query().unwrap_or("").to_string();
        Ok(Call {
            caller,
            params,
            query: parse_query(&raw_query),
            raw_query,
            base: base_url(parts),
            path: parts.uri.path().to_string(),
        })
    }
}

impl Call {
    /// A path parameter (already percent-decoded).
    pub(crate) fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }

    /// A numeric path parameter; anything else is 404, as on GitHub.
    pub(crate) fn number(&self, name: &str) -> Result<u64, ApiError> {
        self.param(name).parse().map_err(|_| ApiError::not_found())
    }

    /// 404 unless `{owner}/{repo}` names the emulated repository (case-insensitive).
    pub(crate) fn check_repo(&self, st: &State) -> Result<(), ApiError> {
        let same_owner = self.param("owner").eq_ignore_ascii_case(&st.config.owner);
        let same_name = self.param("repo").eq_ignore_ascii_case(&st.config.name);
        if same_owner && same_name {
            Ok(())
        } else {
            Err(ApiError::not_found())
        }
    }

    /// The API URL of the repository, e.g. `http://127.0.0.1:4000/repos/acme/widgets`.
    pub(crate) fn repo_url(&self, st: &State) -> String {
        format!("{}/repos/{}/{}", self.base, st.config.owner, st.config.name)
    }

    /// A query parameter, if present and non-empty.
    pub(crate) fn q(&self, name: &str) -> Option<&str> {
        self.query
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// `http://` plus the Host header (or the URI's authority); a bare fallback otherwise.
fn base_url(parts: &Parts) -> String {
    let host = parts
        .headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| parts.uri.authority().map(|a| a.to_string()));
    match host {
        Some(h) if !h.is_empty() => format!("http://{h}"),
        _ => "http://127.0.0.1".to_string(),
    }
}

/// Parses `a=1&b=x%20y` into a map (last value wins; `+` is a space).
pub(crate) fn parse_query(raw: &str) -> HashMap<String, String> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// Decodes `%XX` escapes and `+`; invalid escapes are kept as written.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi * 16 + lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Percent-encodes everything but unreserved characters (for URLs we write).
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Parses a request body: empty is `{}`, anything not JSON is 400 `Problems parsing JSON`.
pub(crate) fn parse_body(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(bytes).map_err(|_| ApiError::bad_json())
}

/// The body as an object, or 422 when it is some other JSON value.
pub(crate) fn object(v: &Value) -> Result<&serde_json::Map<String, Value>, ApiError> {
    v.as_object()
        .ok_or_else(|| ApiError::invalid_type("body", v, "an object"))
}

/// A string field: absent is `None`; `null` is `None` unless `null_as_empty`; other types 422.
pub(crate) fn str_field(
    v: &Value,
    field: &str,
    null_as_empty: bool,
) -> Result<Option<String>, ApiError> {
    match v.get(field) {
        None => Ok(None),
        Some(Value::Null) if null_as_empty => Ok(Some(String::new())),
        Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ApiError::invalid_type(field, other, "a string")),
    }
}

/// Label names from an array of names or of `{ "name": ... }` objects.
pub(crate) fn label_names(v: &Value, field: &str) -> Result<Vec<String>, ApiError> {
    let Some(items) = v.as_array() else {
        return Err(ApiError::invalid_type(field, v, "an array"));
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            Value::Object(o) => match o.get("name") {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(ApiError::validation("Label", "missing_field", "name")),
            },
            other => Err(ApiError::invalid_type(field, other, "a string")),
        })
        .filter(|r| !matches!(r, Ok(s) if s.trim().is_empty()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_is_decoded_and_bad_escapes_survive() {
        let q = parse_query("labels=a%2Cb&since=2024-01-01T00%3A00%3A00Z&x=%zz&y=1+2&z=%4");
        assert_eq!(q["labels"], "a,b");
        assert_eq!(q["since"], "2024-01-01T00:00:00Z");
        assert_eq!(q["x"], "%zz");
        assert_eq!(q["y"], "1 2");
        assert_eq!(q["z"], "%4");
    }

    #[test]
    fn encode_escapes_brackets_and_spaces() {
        assert_eq!(percent_encode("thirdshift[bot]"), "thirdshift%5Bbot%5D");
        assert_eq!(percent_encode("in progress"), "in%20progress");
    }
}
