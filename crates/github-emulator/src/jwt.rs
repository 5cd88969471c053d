//! Checking a GitHub App's JWT the way GitHub does: RS256, signed by the private key of the App
//! its `iss` names, `exp` in the future and at most 10 minutes after `iat` and after now,
//! `iat` not in the future. Refusals are 401 with GitHub's wording.
//!
//! It decides only whether a JWT is good and which App it speaks for; which endpoints accept
//! a JWT is the `http` pipeline's business.

use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use serde_json::Value;

use super::error::ApiError;
use super::state::State;
use axum::http::StatusCode;

/// GitHub's answer to a JWT it cannot read or whose signature does not match.
pub(crate) const UNDECODABLE: &str = "A JSON web token could not be decoded";
/// GitHub's answer to an expired `exp` (or a missing or non-numeric one).
pub(crate) const BAD_EXP: &str = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
/// GitHub's answer to an `exp` more than 10 minutes ahead.
pub(crate) const EXP_TOO_FAR: &str = "'Expiration time' claim ('exp') is too far in the future";
/// GitHub's answer to an `iat` in the future (or a missing or non-numeric one).
pub(crate) const BAD_IAT: &str =
    "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";

/// The longest life GitHub accepts for an App JWT, in seconds.
const MAX_LIFETIME_SECS: i64 = 600;
/// How far in the future GitHub tolerates `iat` (clock drift), in seconds.
const IAT_LEEWAY_SECS: i64 = 60;

#[derive(Deserialize)]
struct Claims {
    iss: Option<Value>,
    iat: Option<Value>,
    exp: Option<Value>,
}

/// Whether `token` looks like a JWT (three base64url parts) rather than a plain token.
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3 && token.starts_with("eyJ")
}

/// The App id a JWT speaks for, or GitHub's 401.
pub(crate) fn verify(st: &State, token: &str, now: i64) -> Result<u64, ApiError> {
    let refuse = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, m);
    let unverified = jsonwebtoken::dangerous::insecure_decode::<Claims>(token)
        .map_err(|_| refuse(UNDECODABLE))?;
    let app_id = unverified
        .claims
        .iss
        .as_ref()
        .and_then(number)
        .ok_or_else(|| refuse(UNDECODABLE))?;
    let app = st.app(app_id).ok_or_else(|| refuse(UNDECODABLE))?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let claims = jsonwebtoken::decode::<Claims>(token, &app.key, &validation)
        .map_err(|_| refuse(UNDECODABLE))?
        .claims;
    let iat = claims.iat.as_ref().and_then(number).map(|n| n as i64);
    let exp = claims.exp.as_ref().and_then(number).map(|n| n as i64);
    let iat = iat
        .filter(|&iat| iat <= now + IAT_LEEWAY_SECS)
        .ok_or_else(|| refuse(BAD_IAT))?;
    let exp = exp
        .filter(|&exp| exp > now)
        .ok_or_else(|| refuse(BAD_EXP))?;
    if exp - iat > MAX_LIFETIME_SECS || exp > now + MAX_LIFETIME_SECS {
        return Err(refuse(EXP_TOO_FAR));
    }
    Ok(app_id)
}

/// A non-negative integer claim, as a JSON number or a string of digits.
fn number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_part_tokens_starting_like_json_are_jwts() {
        assert!(looks_like_jwt("eyJhbGciOi.eyJpc3Mi.c2ln"));
        assert!(!looks_like_jwt("ghs_abc"));
        assert!(!looks_like_jwt("eyJ.only-two"));
    }

    #[test]
    fn claims_are_read_as_numbers_or_digit_strings() {
        assert_eq!(number(&serde_json::json!(12)), Some(12));
        assert_eq!(number(&serde_json::json!("12")), Some(12));
        assert_eq!(number(&serde_json::json!(-1)), None);
        assert_eq!(number(&serde_json::json!("Iv1.x")), None);
    }
}
