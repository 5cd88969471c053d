//! Test-only RSA key pairs for GitHub App tests, made at test time with the `openssl` CLI in a
//! folder the test owns (nothing is committed, no crate is needed for key generation). Never
//! use these anywhere but against the emulator.

use std::path::{Path, PathBuf};

/// A key pair: the private key's path and PEM, and the public key's PEM.
pub struct KeyPair {
    pub private_path: PathBuf,
    pub private_pem: String,
    pub public_pem: String,
}

fn openssl(args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .output()
        .expect("the openssl CLI runs (the tests make their RSA keys with it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh 2048-bit key pair under `dir`, in PKCS#1 (`BEGIN RSA PRIVATE KEY`, as GitHub hands
/// out) when `pkcs1`, else PKCS#8 (`BEGIN PRIVATE KEY`).
pub fn key_pair(dir: &Path, name: &str, pkcs1: bool) -> KeyPair {
    let private_path = dir.join(format!("{name}.test-private-key.pem"));
    let public_path = dir.join(format!("{name}.test-public-key.pem"));
    let private = private_path.to_str().expect("UTF-8 temp path");
    if pkcs1 {
        openssl(&["genrsa", "-traditional", "-out", private, "2048"]);
    } else {
        let bits = "rsa_keygen_bits:2048";
        openssl(&[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            bits,
            "-out",
            private,
        ]);
    }
    let public = public_path.to_str().expect("UTF-8 temp path");
    openssl(&["pkey", "-in", private, "-pubout", "-out", public]);
    KeyPair {
        private_pem: std::fs::read_to_string(&private_path).expect("private key written"),
        public_pem: std::fs::read_to_string(&public_path).expect("public key written"),
        private_path,
    }
}
