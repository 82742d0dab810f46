//! SHA-256 in lowercase hex: the one spelling of every hash benchaudit writes (episode keys'
//! options hashes, submitted payloads, run manifests, frozen pre-registrations).

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// Lowercase hex of `bytes`, two digits per byte.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// SHA-256 of `bytes` in lowercase hex (64 digits).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        // `printf abc | sha256sum`
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
