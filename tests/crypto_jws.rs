//! JWS / JWT verification through the public API: the RFC 7515 appendix A (RS256, ES256) and RFC
//! 8037 appendix A.4 (EdDSA) examples, then the attacks a resource server must refuse: `alg: none`,
//! algorithm confusion (HS256 keyed with the RSA public key, a header naming another algorithm),
//! wrong or missing `kid`, `crit`, duplicate header members, and truncated or garbage tokens.

use agentteams_mcp::base64::encode_url;
use agentteams_mcp::crypto::jwk::Jwks;
use agentteams_mcp::crypto::jws::{self, Algorithm};
use agentteams_mcp::crypto::Error;
use agentteams_mcp::hmac::HmacSha256;
use agentteams_mcp::json::Value;

/// RFC 7517 appendix A.1 / RFC 7515 appendix A.2's RSA key (public part).
const RSA_N: &str = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ";

/// RFC 7515 appendix A.2: `{"alg":"RS256"}` over the appendix's claims.
const RS256_TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";

/// RFC 7515 appendix A.3: `{"alg":"ES256"}` over the same claims, and its key.
const ES256_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";
const EC_JWK: &str = r#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#;

/// RFC 8037 appendix A.4: EdDSA over the (non-JSON) payload "Example of Ed25519 signing".
const EDDSA_TOKEN: &str = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg";
const OKP_JWK: &str =
    r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;

/// An access token with `kid` "ed-1" and `typ` "at+jwt", signed (Ed25519 is deterministic) with the
/// private key whose seed is the bytes 0, 1, ..., 31, by Python's `cryptography` package.
const KID_TOKEN: &str = "eyJhbGciOiJFZERTQSIsImtpZCI6ImVkLTEiLCJ0eXAiOiJhdCtqd3QifQ.eyJpc3MiOiJodHRwczovL2FzLmV4YW1wbGUiLCJhdWQiOiJodHRwczovL3JzLmV4YW1wbGUvbWNwIiwic3ViIjoiYWxpY2UiLCJleHAiOjIwMDAwMDAwMDB9.8mP9-5OQbWuXPSd1B7AT8Z9tycftkgfJ1YvK1DSNU0GamVJe6-9HrfpIRdXIHk_I6CzYUupd8wnTXMGGlR28BA";
const KID_X: &str = "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg";

fn rsa_jwk(extra: &str) -> String {
    format!(r#"{{"kty":"RSA","n":"{RSA_N}","e":"AQAB"{extra}}}"#)
}

fn set(keys: &[&str]) -> Jwks {
    Jwks::parse(format!(r#"{{"keys":[{}]}}"#, keys.join(",")).as_bytes()).expect("a valid JWK Set")
}

/// All the RFC keys in one set, no kid on any.
fn rfc_set() -> Jwks {
    set(&[&rsa_jwk(""), EC_JWK, OKP_JWK])
}

/// `token` with its header replaced by `header` (signature unchanged).
fn with_header(token: &str, header: &str) -> String {
    let rest = &token[token.find('.').unwrap()..];
    format!("{}{rest}", encode_url(header.as_bytes()))
}

fn refused(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn rfc_7515_rs256_and_es256_examples_verify_and_give_their_claims() {
    for token in [RS256_TOKEN, ES256_TOKEN] {
        let claims = jws::verify(token, &rfc_set(), &Algorithm::ALL).unwrap();
        assert_eq!(claims.get("iss").and_then(Value::as_str), Some("joe"));
        assert_eq!(claims.get("exp").and_then(Value::as_u64), Some(1300819380));
        assert_eq!(
            claims
                .get("http://example.com/is_root")
                .and_then(Value::as_bool),
            Some(true)
        );
    }
}

#[test]
fn rfc_8037_eddsa_example_verifies_its_payload_which_is_not_a_claims_set() {
    let payload = jws::verify_payload(EDDSA_TOKEN, &rfc_set(), &[Algorithm::EdDSA]).unwrap();
    assert_eq!(payload, b"Example of Ed25519 signing");
    assert!(matches!(
        jws::verify(EDDSA_TOKEN, &rfc_set(), &[Algorithm::EdDSA]),
        Err(Error::Malformed {
            what: "JWT claims",
            ..
        })
    ));
}

#[test]
fn a_changed_payload_or_signature_fails() {
    for token in [RS256_TOKEN, ES256_TOKEN, EDDSA_TOKEN] {
        let parts: Vec<&str> = token.split('.').collect();
        let other_payload = format!(
            "{}.{}.{}",
            parts[0],
            encode_url(b"{\"iss\":\"eve\"}"),
            parts[2]
        );
        assert_eq!(
            jws::verify(&other_payload, &rfc_set(), &Algorithm::ALL).err(),
            Some(Error::BadSignature)
        );
        let mut signature = agentteams_mcp::base64::decode_url(parts[2]).unwrap();
        signature[5] ^= 1;
        let flipped = format!("{}.{}.{}", parts[0], parts[1], encode_url(&signature));
        assert!(jws::verify_payload(&flipped, &rfc_set(), &Algorithm::ALL).is_err());
    }
}

#[test]
fn alg_none_is_refused_in_every_spelling_even_if_listed_nowhere() {
    let claims = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
    for alg in ["none", "None", "NONE", "nOnE"] {
        let header = encode_url(format!(r#"{{"alg":"{alg}"}}"#).as_bytes());
        for token in [
            format!("{header}.{claims}."),
            format!("{header}.{claims}.AAAA"),
        ] {
            let why = refused(jws::verify(&token, &rfc_set(), &Algorithm::ALL));
            assert!(why.contains("alg none"), "{why}");
        }
    }
}

#[test]
fn hs256_keyed_with_the_rsa_public_key_is_refused_by_name() {
    // The classic confusion: sign with HMAC using the verifier's public key bytes as the secret.
    let header = encode_url(br#"{"alg":"HS256"}"#);
    let payload = encode_url(br#"{"iss":"joe","admin":true}"#);
    for secret in [rsa_jwk("").into_bytes(), RSA_N.as_bytes().to_vec()] {
        let mac = HmacSha256::new(&secret).mac(format!("{header}.{payload}").as_bytes());
        let token = format!("{header}.{payload}.{}", encode_url(&mac));
        let why = refused(jws::verify(&token, &rfc_set(), &Algorithm::ALL));
        assert_eq!(why, "algorithm HS256 is not implemented");
    }
}

#[test]
fn algorithms_outside_the_accepted_list_or_not_fitting_the_key_are_refused() {
    let why = refused(jws::verify(
        RS256_TOKEN,
        &rfc_set(),
        &[Algorithm::ES256, Algorithm::PS256],
    ));
    assert_eq!(why, "algorithm RS256 is not in the accepted list");
    // An ES256 header on a set holding only the RSA key: no key fits.
    let rsa_only = set(&[&rsa_jwk("")]);
    let es_header = with_header(RS256_TOKEN, r#"{"alg":"ES256"}"#);
    let why = refused(jws::verify(&es_header, &rsa_only, &Algorithm::ALL));
    assert_eq!(why, "no key of the type and alg that ES256 needs");
    // A key pinned to RS256 never verifies PS256, and an RS256 signature is not a PS256 one.
    let pinned = set(&[&rsa_jwk(r#","alg":"RS256""#)]);
    let ps_header = with_header(RS256_TOKEN, r#"{"alg":"PS256"}"#);
    assert!(refused(jws::verify(&ps_header, &pinned, &Algorithm::ALL)).starts_with("no key"));
    assert_eq!(
        jws::verify(&ps_header, &rsa_only, &Algorithm::ALL).err(),
        Some(Error::BadSignature)
    );
    assert!(jws::verify(RS256_TOKEN, &pinned, &[Algorithm::RS256]).is_ok());
    // Unknown and differently-cased names are not implemented algorithms.
    for alg in ["rs256", "RS1", "ES256K", "\u{1b}[31m"] {
        let token = with_header(
            RS256_TOKEN,
            &format!(r#"{{"alg":"{alg}"}}"#).replace('\u{1b}', "\\u001b"),
        );
        let why = refused(jws::verify(&token, &rfc_set(), &Algorithm::ALL));
        assert!(
            why.ends_with("is not implemented") && !why.contains('\u{1b}'),
            "{why}"
        );
    }
}

#[test]
fn kid_selects_the_key_and_an_unknown_kid_is_refused() {
    let okp = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{KID_X}","kid":"ed-1"}}"#);
    let other = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{KID_X}","kid":"ed-2"}}"#);
    let claims = jws::verify(KID_TOKEN, &set(&[&okp]), &[Algorithm::EdDSA]).unwrap();
    assert_eq!(claims.get("sub").and_then(Value::as_str), Some("alice"));
    let why = refused(jws::verify(
        KID_TOKEN,
        &set(&[&other, OKP_JWK]),
        &[Algorithm::EdDSA],
    ));
    assert_eq!(why, "no key with kid ed-1");
    // The right kid on a key of another type does not fit.
    let wrong_type = EC_JWK.replace('}', r#","kid":"ed-1"}"#);
    let why = refused(jws::verify(
        KID_TOKEN,
        &set(&[&wrong_type, &other]),
        &[Algorithm::EdDSA],
    ));
    assert_eq!(
        why,
        "no key of the type and alg that EdDSA needs under that kid"
    );
    // Without a kid, every fitting key is tried, up to the bound.
    let okp_plain = format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{KID_X}"}}"#);
    let mut many = vec![OKP_JWK; jws::MAX_CANDIDATE_KEYS - 1];
    many.push(&okp_plain);
    let eddsa_ok = jws::verify_payload(EDDSA_TOKEN, &set(&many), &[Algorithm::EdDSA]);
    assert_eq!(eddsa_ok.unwrap(), b"Example of Ed25519 signing");
    many.push(OKP_JWK);
    let why = refused(jws::verify_payload(
        EDDSA_TOKEN,
        &set(&many),
        &[Algorithm::EdDSA],
    ));
    assert_eq!(
        why,
        "5 keys fit EdDSA for this token; at most 4 are tried (a kid names one)"
    );
    assert_eq!(
        refused(jws::verify_payload(
            EDDSA_TOKEN,
            &Jwks::default(),
            &Algorithm::ALL
        )),
        "the key set has no key"
    );
    // Keys without a kid never serve a token that names one.
    assert!(jws::verify(KID_TOKEN, &set(&[OKP_JWK]), &[Algorithm::EdDSA]).is_err());
}

#[test]
fn crit_duplicates_and_jwe_are_refused() {
    let crit = with_header(RS256_TOKEN, r#"{"alg":"RS256","crit":["exp"],"exp":1}"#);
    assert_eq!(
        refused(jws::verify(&crit, &rfc_set(), &Algorithm::ALL)),
        "crit header: no JWS extension is understood"
    );
    let duplicate = with_header(RS256_TOKEN, r#"{"alg":"none","alg":"RS256"}"#);
    assert_eq!(
        jws::verify(&duplicate, &rfc_set(), &Algorithm::ALL).err(),
        Some(Error::Malformed {
            what: "JWS header",
            rule: "a member name appears twice"
        })
    );
    assert!(matches!(
        jws::verify("a.b.c.d.e", &rfc_set(), &Algorithm::ALL),
        Err(Error::Unsupported(_))
    ));
    for header in [
        r#"{"alg":7}"#,
        r#"{"typ":"JWT"}"#,
        r#"["alg"]"#,
        r#"{"alg":"RS256","kid":1}"#,
    ] {
        assert!(
            matches!(
                jws::verify(
                    &with_header(RS256_TOKEN, header),
                    &rfc_set(),
                    &Algorithm::ALL
                ),
                Err(Error::Malformed { .. })
            ),
            "{header}"
        );
    }
}

#[test]
fn truncated_garbage_and_oversized_tokens_are_errors_not_panics() {
    let keys = rfc_set();
    for token in [RS256_TOKEN, ES256_TOKEN, EDDSA_TOKEN, KID_TOKEN] {
        for len in 0..token.len() {
            assert!(
                jws::verify_payload(&token[..len], &keys, &Algorithm::ALL).is_err(),
                "{len}"
            );
        }
        // Every byte replaced by a character outside base64url, or by another valid symbol.
        for (i, _) in token.char_indices().step_by(7) {
            for replacement in ["=", "+", " ", "A", "."] {
                let mut bad = token.to_string();
                bad.replace_range(i..i + 1, replacement);
                if bad != token {
                    assert!(
                        jws::verify_payload(&bad, &keys, &Algorithm::ALL).is_err(),
                        "{bad}"
                    );
                }
            }
        }
    }
    for garbage in [
        "",
        ".",
        "..",
        "...",
        "a.b.c",
        "\u{0}.\u{0}.\u{0}",
        "e30.e30.",
        "e30.e30.AA",
    ] {
        assert!(
            jws::verify(garbage, &keys, &Algorithm::ALL).is_err(),
            "{garbage:?}"
        );
    }
    let huge = format!("{}.{}.", "e".repeat(jws::MAX_TOKEN_LEN), "e30");
    assert_eq!(
        jws::verify(&huge, &keys, &Algorithm::ALL).err(),
        Some(Error::Malformed {
            what: "JWS",
            rule: "longer than the token size limit"
        })
    );
    let deep = encode_url(format!("{}{}", "[".repeat(100), "]".repeat(100)).as_bytes());
    assert!(jws::verify(&format!("{deep}.e30.AA"), &keys, &Algorithm::ALL).is_err());
    // Errors print what was wrong.
    assert_eq!(
        Error::Refused("alg none: an unsigned token is never accepted".into()).to_string(),
        "token refused: alg none: an unsigned token is never accepted"
    );
}

/// A key set and one token per algorithm, made with Python's `cryptography` package (an
/// independent implementation: OpenSSL underneath) from fresh keys; each token's claims name the
/// algorithm that signed it.
const INDEPENDENT_JWKS: &str = r#"{"keys":[{"kty":"RSA","kid":"rsa","n":"8IDhR1Wol-glFoPbyfJ8oN8SQPEPYYkirnacTnMfJNbwOsXBjNKdgzqrkRr05xK1TtKmeAjE_5VM90JCx6lYu6D_wTGGJbuuKPaReDynFI_D0kZFNtUxcMSr5qIzZNTWEBMCYDBzvP5LoblGqRDJRN-lz8V_Yox-D63a4aYAXIH8YgZvl8lcPPKHBO4M__GpEeWmqUPmO-yj-pmBNRoGPnu0_OeSGcvCyh-q-DRNhOxXOvOwVR0XHHz32bzYtBZgFGBFvyTiuLyJB8XB4bxvuPjU27gvO0DDM2WhaJFGhGjkhPZAUnQKtKOWsoaOzmWFg9w10D_kouvcH5hBwhS4Gw","e":"AQAB"},{"kty":"EC","kid":"ec","crv":"P-256","x":"Ijtb2W8aaM0Dp8PBhWy7p8CvgC3Usua_NtvfnAk0EJ4","y":"QC3aHvXCREFvCVZEanUd_pkhy0f8nf-IBM5qpaUNhrg"},{"kty":"OKP","kid":"ed","crv":"Ed25519","x":"_2okzAV7RSx6lWTxUbY476Sbx6PtrljBxN2VZGCQ0cI"}]}"#;

const INDEPENDENT_TOKENS: [(Algorithm, &str); 8] = [
    (Algorithm::RS256, "eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYSJ9.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiUlMyNTYifQ.YVGSDFI4SYwxeZwPI2-BBHEbilNb-ykbhdZ--MQn-h_T7QEF89sbe9XWbSYHe7CsXQWI_HoqrBfcwTr5rMFNEiuxFTjfhaPpL5jFOpybXGqxlUpi92YzS9kJFHSGseHDd0xgBeWs2bAHCuZ40VMTJM0f8j3ycg7PLrfAX9j8IZwmFaLwYbNJA6pLf-PzOHD3io1qMOfxOJTvAWFSbCkPNcBWUZz6VVbefQCfhZpeEdNrW1vY4MZDzs-B0uUpvi1RC51-1TtoCWTLo-iPu5gtpKrm8w5hgWeWYWK8ZO8hwJj-gfabyJIk3vn1_-I9CjrvpCyJ46aBhgEx0f0CXoLXPw"),
    (Algorithm::RS384, "eyJhbGciOiJSUzM4NCIsImtpZCI6InJzYSJ9.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiUlMzODQifQ.zEsfzh96732nX4KMoSFCvppXesfzPA42kBRB6trU-hw39bk26DzH3GpWmFCoNclq5cVWLrdoQSG4VjU7n4Xw5NkyFm6zhBrISjT7gZP3a-LoXdc1hD5ciDxHmUb_cQ-DpHR-dQgPTDrVebaxj2pUtqoPuPordRqg_UB-TB0BwEdzddguUHj_qm-Fslkc_r1YjSFvjZCznmNvaD5Kt-e1YZO01n8Uy_9QYotdLifCG4Jv-Lq9FBp18RkjQR8E5peONSc1VzdPdgs46jD1yH1b-LibExV2h0RH0raL6rMsfsBD0E4HptxJJVji5UiJcnC3_etf5UkJbQ4MsvC30MNFXw"),
    (Algorithm::RS512, "eyJhbGciOiJSUzUxMiIsImtpZCI6InJzYSJ9.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiUlM1MTIifQ.EU3Go4REmXxxQqiUz5tw7rZKqeVlq_1GhcB5g6JS8hRhXCbPZq8pq4hvfjg-Ux7ysnxRx9pmewHSxXVuNYECWp6XXqPdZZXj6GvldjqhHOtD4R4-HJ0U8QpmbfIKSeT8THSxjce6EaEMSLUbGpPv83kMY6T2_xa6_5ztAfhVRzm8xStjNOt5SzoGfGo8tovRlBCYIJ6wpdEVMKOE4bVd0BgE1gWJAEkBQqH4KSJMMVKMLCFf0wm6SK60-eiJIbRb-FoQcOpQ9RJGTBmHIc5V0vy7zqwPpGxOWE1aytE7RY_CA8B6e-6SokMHGy5f8guJUlhifv1G5bJaAOGfzAv2Pg"),
    (Algorithm::PS256, "eyJhbGciOiJQUzI1NiIsImtpZCI6InJzYSJ9.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiUFMyNTYifQ.FDm-lgSfqMmnFDLAhqP1A1-qpPX9RHLiripFuaEbsu0Xj0bHoGBd5Yqu7EBYkP_Sp36eQ33Zv5Q_Lq3eCOG2tYzSgPJBAIBvZKq8372RhnOy3461do9ZvsTySIuNKcBtzI3WBQAvwTmYVX0OD0t7KGo4YSb1uhdOoyUVn3UENZtC7WzH-IR06F88u1CE2FrZmVklcIQyGJIc3Y-tZBSdA8IWGnFBJwWbthkysHUYRHCrTioL8Fc2rOBxm1sNgLie2rpGS_mHUDZsNwDzo0qkXMQRpXWHk-6uOVuqgTo-RlGYOcU3Ia-M1hp-2s6Ysi-AuIkwfEiGC_65mg_u7AO6Gg"),
    (Algorithm::PS384, "eyJhbGciOiJQUzM4NCIsImtpZCI6InJzYSJ9.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiUFMzODQifQ.wAr6GsIVcLyp9vNl69S3sJ18AttVzlAxy2N9L9ZNqVok91E0jWsezuA9To6spblqCgzE91YbT4U6rnmHKJjzGxhl-bzYPS7FKJ1FACaD6ibgRs2Dc12NgFKiVjTJpKhB1ilOBXOxfXsuZdVUy8KfIaFlwzDfKgFt0i7o5KddX6DYIk-AoIpo9xIvJ-dCaK5WgbvyEHuV33ccqXl7Hoi3cYtteY9S-vSPGe0axaQOhVWAp5m1EtdKQOHBEQ3ew1RJ-TQHhoob2FTaOWzLwwZsouYbne-1E5bivgN2VhrdAQXnOFtGv7JixXWgld-RV_VWGeT3Pu9PMStOJEOmTHYMwA"),
    (Algorithm::PS512, "eyJhbGciOiJQUzUxMiIsImtpZCI6InJzYSJ9.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiUFM1MTIifQ.aHGKNEf3OPYBqLssAkSY3CWCEwyWTEEHx2vKlLnYfeGiWecD0wmQaBO0fInbIEkdBnC0_jb23Ewk8JvTHB-UJ86_rgSadFq-l7z4Ms4SHhjkK6RWKXBoMX6-PHFUpCtPsSfoqAIC4vlJCHFgeMT4WPYoa1SQU17YZdSVlQ7gsDzWbjqmsh3clXdfovbtCLW2egEA-tcch5bABuBPOQEpQfpgBgYNzSAt0WeH1Kr6l-AdIlIlUGooTsvDxmu6QYZ02S3QNqi5L_dKpbjY2s2QzjRzg5HtCyWK03KpuoWiAJqmvFL79ItsGBa7lczXkNqfdq1_8CYlqq_uKCn9fC8u4w"),
    (Algorithm::ES256, "eyJhbGciOiJFUzI1NiIsImtpZCI6ImVjIn0.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiRVMyNTYifQ.2AoLzWndJihZrr1MJctesbU-pU1WcDxb033VGF0-FfkY1F4Zn91EH08-3QC9iAdhXFih06YoOARiqgPhOaO_sg"),
    (Algorithm::EdDSA, "eyJhbGciOiJFZERTQSIsImtpZCI6ImVkIn0.eyJzdWIiOiJhbGljZSIsImFsZ191c2VkIjoiRWREU0EifQ.-yBrFCYR3uD8UcS2g4OWF_BuBZQsmNevYwEqy6Qt1a17xEv4AULE29-4d_4js2ZwbHAvEj2G4LMKu7IG47blCw"),
];

#[test]
fn every_algorithm_verifies_a_token_from_an_independent_signer_and_only_when_accepted() {
    let keys = Jwks::parse(INDEPENDENT_JWKS.as_bytes()).unwrap();
    for (algorithm, token) in INDEPENDENT_TOKENS {
        let claims = jws::verify(token, &keys, &[algorithm]).unwrap();
        assert_eq!(
            claims.get("alg_used").and_then(Value::as_str),
            Some(algorithm.name())
        );
        let others: Vec<Algorithm> = Algorithm::ALL
            .into_iter()
            .filter(|a| *a != algorithm)
            .collect();
        assert!(refused(jws::verify(token, &keys, &others)).ends_with("not in the accepted list"));
        // Relabelled with another algorithm's header, the token never verifies: the header is
        // part of what was signed.
        for other in &others {
            let header = format!(r#"{{"alg":"{}"}}"#, other.name());
            assert!(
                jws::verify(&with_header(token, &header), &keys, &Algorithm::ALL).is_err(),
                "{} signature under {}",
                algorithm.name(),
                other.name()
            );
        }
    }
}
