//! The cost of verifying a whole JWS (docs/PERFORMANCE.md, "Token signature verification"):
//! base64url, header JSON, key choice, signature and claims JSON, on the RFC 7515 (RS256, ES256)
//! and RFC 8037 (EdDSA) examples. The primitives alone, side by side with `ring`, are measured by
//! `bench/src/bin/crypto.rs`.
//!
//! `cargo run --release --example crypto_verify_bench [ROUNDS]`; pin it with `taskset -c 1` for
//! steady figures. Every verification's result is checked; the figures are the minimum and the
//! median over the rounds of the mean time per verification.
#![forbid(unsafe_code)]

use agentteams_mcp::crypto::jwk::Jwks;
use agentteams_mcp::crypto::jws::{self, Algorithm};
use std::time::{Duration, Instant};

/// Runs `verify` `iterations` times per round and returns (min, median) of the per-call mean.
fn measure(
    rounds: usize,
    iterations: u32,
    mut verify: impl FnMut() -> bool,
) -> (Duration, Duration) {
    let mut means: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                assert!(std::hint::black_box(verify()), "a verification failed");
            }
            start.elapsed() / iterations
        })
        .collect();
    means.sort();
    (means[0], means[means.len() / 2])
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    println!("{rounds} rounds; mean time per verification: min / median over rounds");
    // Whole JWS checks on the RFC examples (base64url, header JSON, key choice, claims JSON).
    let keys = Jwks::parse(concat!(
        r#"{"keys":[{"kty":"RSA","e":"AQAB","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"},"#,
        r#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},"#,
        r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#
    ).as_bytes())
    .expect("the RFC keys");
    let tokens: [(&str, &str, bool, u32); 3] = [
        ("JWT RS256 (RFC 7515 A.2)", "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw", true, 2000),
        ("JWT ES256 (RFC 7515 A.3)", "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q", true, 200),
        ("JWS EdDSA (RFC 8037 A.4)", "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg", false, 200),
    ];
    for (name, token, is_jwt, iterations) in tokens {
        let (min, median) = measure(rounds, iterations, || {
            if is_jwt {
                jws::verify(token, &keys, &Algorithm::ALL).is_ok()
            } else {
                jws::verify_payload(token, &keys, &Algorithm::ALL).is_ok()
            }
        });
        println!(
            "{name:<26} {:>8.1} us / {:>8.1} us",
            min.as_secs_f64() * 1e6,
            median.as_secs_f64() * 1e6
        );
    }
}
