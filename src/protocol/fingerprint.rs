//! One stable 64-bit fingerprint, FNV-1a, for the ids and hashes this tool derives from text: a
//! thirdshift Command's claim id, the dashboard's content hash, the login cache's key. The same
//! input gives the same value on every machine and version. Not a security measure: it tells
//! texts apart, it does not hide or authenticate them.

/// FNV-1a, 64 bits, of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_fnv1a_64_as_published() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
