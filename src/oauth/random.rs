//! Unpredictable bytes (PKCE verifiers, OAuth `state`, temporary file names), from the
//! operating system's secure source through ring, which is already in the tree as rustls's
//! provider.

use super::OAuthError;
use crate::result::reason::OAuthStep;

/// Fills `buf` with secure random bytes.
pub(crate) fn random(buf: &mut [u8]) -> Result<(), OAuthError> {
    use ring::rand::SecureRandom;
    ring::rand::SystemRandom::new()
        .fill(buf)
        .map_err(|_| OAuthError::step(OAuthStep::Callback))
}
