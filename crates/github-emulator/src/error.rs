//! GitHub's error responses, byte-compatible in shape: `basic-error` (`message`,
//! `documentation_url`, `status` as a string) and `validation-error` (plus `errors`).
//!
//! Routes return [`ApiError`]; this file only builds bodies and statuses. It does not decide
//! when an error applies, and it adds no headers (the `http` pipeline adds those to every
//! response).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// Where GitHub's error bodies point.
pub(crate) const DOCS: &str = "https://docs.github.com/rest";

/// An error answer in GitHub's shape.
#[derive(Clone, Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub errors: Option<Vec<Value>>,
    pub documentation_url: &'static str,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            errors: None,
            documentation_url: DOCS,
        }
    }

    /// 404 `Not Found`, GitHub's answer for anything missing or invisible.
    pub(crate) fn not_found() -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "Not Found")
    }

    /// 401 for an unknown token.
    pub(crate) fn bad_credentials() -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "Bad credentials")
    }

    /// 401 for an anonymous caller of something that needs a login.
    pub(crate) fn requires_auth() -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "Requires authentication")
    }

    /// 403 for a caller whose role is too low.
    pub(crate) fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    /// 400 for a body that is not JSON.
    pub(crate) fn bad_json() -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "Problems parsing JSON")
    }

    /// 422 `Validation Failed` with one entry in `errors`.
    pub(crate) fn validation(resource: &str, code: &str, field: &str) -> ApiError {
        ApiError {
            errors: Some(vec![
                json!({"resource": resource, "code": code, "field": field}),
            ]),
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed")
        }
    }

    /// 422 for a field of the wrong JSON type, worded like GitHub's schema validator.
    pub(crate) fn invalid_type(field: &str, value: &Value, expected: &str) -> ApiError {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("Invalid request.\n\nFor 'properties/{field}', {value} is not {expected}."),
        )
    }

    /// The JSON body of this error.
    pub(crate) fn body(&self) -> Value {
        let mut v = json!({
            "message": self.message,
            "documentation_url": self.documentation_url,
            "status": self.status.as_u16().to_string(),
        });
        if let Some(errors) = &self.errors {
            v["errors"] = Value::Array(errors.clone());
        }
        v
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body().to_string();
        (
            self.status,
            [(
                axum::http::header::CONTENT_TYPE,
                "application/json; charset=utf-8",
            )],
            body,
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_error_has_githubs_shape() {
        let body = ApiError::validation("Issue", "missing_field", "title").body();
        assert_eq!(
            body,
            json!({
                "message": "Validation Failed",
                "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}],
                "documentation_url": DOCS,
                "status": "422",
            })
        );
    }
}
