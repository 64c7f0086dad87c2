//! Bearer-token checks for the admin API's mutating calls: the token comes from the
//! environment variable (or file) the config names; with none configured, every mutating call
//! is refused. Tokens are compared in constant time.

use actix_web::HttpRequest;

use super::AdminState;
use super::error::ApiError;

/// Whether `given` equals `expected`, in a time that does not depend on where they differ.
fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    let difference = given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}

/// `Ok` when `request` carries `Authorization: Bearer <the configured token>`.
pub fn require_token(state: &AdminState, request: &HttpRequest) -> Result<(), ApiError> {
    let Some(token) = &state.token else {
        return Err(ApiError::Unauthorized);
    };
    let given = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|given| constant_time_eq(given.as_bytes(), token.expose().as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::Unauthorized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(!constant_time_eq(b"s3cres", b"s3cret"));
        assert!(!constant_time_eq(b"s3cre", b"s3cret"));
        assert!(!constant_time_eq(b"", b"s3cret"));
    }
}
