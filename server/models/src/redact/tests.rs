use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn shapes_only(text: &str) -> String {
    Redactor::default().redact(text).into_owned()
}

/// Each shape: keys that must go, and look-alikes that must stay.
#[test]
fn every_key_shape_is_redacted_and_look_alikes_are_not() {
    let keys = [
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t",
        "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-AbCdEf_123",
        "sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL",
        "sk-proj-abc***wxyz",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "ghu_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "ghr_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "github_pat_11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAY34FZKBOKMUTVV7A",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxp-1234567890-abcdefghij",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K_l-MnOpQrStU",
        "glpat-aBcDeFgHiJkLmNoPqRsT",
    ];
    for key in keys {
        for text in [
            key.to_owned(),
            format!("export TOKEN={key}\n"),
            format!("{{\"key\": \"{key}\"}}"),
            format!("key:{key}."),
        ] {
            let redacted = shapes_only(&text);
            assert!(!redacted.contains(key), "{key} survived in {redacted:?}");
            assert_eq!(redacted, text.replace(key, REDACTED), "{key}");
        }
    }
    let ordinary = [
        "task-list and disk-usage and risk-free",
        "sk-fading-circle sk-three-bounce",
        "sk-short sk-",
        "the ghp_ prefix and ghp_tooShort1234",
        "github_pat_short",
        "AKIA AKIASHORT AKIAIOSFODNN7EXAMPLEX AKIAiosfodnn7example",
        "MASIAIOSFODNN7EXAMPLE",
        "xoxb- xoxb-short",
        "AIzaShort",
        "glpat-short",
        "a mask-of-words-0123456789 and task-0123456789abcdefgh",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----",
    ];
    for text in ordinary {
        assert_eq!(shapes_only(text), text);
        assert!(matches!(Redactor::default().redact(text), Cow::Borrowed(_)));
    }
}

#[test]
fn a_private_key_block_loses_its_body_and_keeps_its_lines() {
    let text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAr2ZJ+9xq/8Qb\nk3Hx==\n-----END RSA PRIVATE KEY-----\nafter: ordinaryword\n";
    expect_test::expect![[r#"
        key:
        -----BEGIN RSA PRIVATE KEY-----
        <redacted>
        k3Hx==
        -----END RSA PRIVATE KEY-----
        after: ordinaryword
    "#]]
    .assert_eq(&shapes_only(text));
    // As `read_file` numbers it, and inside a JSON string.
    let numbered = "     1\t-----BEGIN OPENSSH PRIVATE KEY-----\n     2\tb3BlbnNzaC1rZXktdjEAAAAA\n     3\t-----END OPENSSH PRIVATE KEY-----\n";
    assert_eq!(
        shapes_only(numbered),
        "     1\t-----BEGIN OPENSSH PRIVATE KEY-----\n     2\t<redacted>\n     3\t-----END OPENSSH PRIVATE KEY-----\n"
    );
    let json = json!({"text": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG\n-----END PRIVATE KEY-----"})
        .to_string();
    let redacted = shapes_only(&json);
    assert_eq!(
        redacted,
        r#"{"text":"-----BEGIN PRIVATE KEY-----\n<redacted>\n-----END PRIVATE KEY-----"}"#
    );
    assert!(serde_json::from_str::<Value>(&redacted).is_ok());
}

#[test]
fn a_begin_line_without_its_end_stops_redacting_after_a_while() {
    let filler = "wordsandmorewords\n".repeat(2_000);
    let text = format!("-----BEGIN EC PRIVATE KEY-----\n{filler}");
    let redacted = shapes_only(&text);
    assert!(redacted.contains("<redacted>\n"), "the body goes");
    assert!(
        redacted.ends_with("wordsandmorewords\n"),
        "after {PEM_MAX_BYTES} bytes the text is itself again"
    );
}

#[test]
fn known_values_are_redacted_in_every_form() {
    let redactor = Redactor::new(
        [
            ("DEPLOY_API_KEY".to_owned(), "deploy-9f8e7d6c5b".to_owned()),
            ("HOME".to_owned(), "/home/someone".to_owned()),
            ("DB_PASSWORD".to_owned(), "short".to_owned()),
            (
                "SSH_PRIVATE_KEY".to_owned(),
                "line-one-abcdef\nline-two-ghijkl\n".to_owned(),
            ),
        ],
        ["editor-key-12345678".to_owned()],
    );
    assert_eq!(redactor.known_values(), 4);
    assert_eq!(
        redactor.redact(
            "a deploy-9f8e7d6c5b b editor-key-12345678 c line-two-ghijkl /home/someone short"
        ),
        "a <redacted> b <redacted> c <redacted> /home/someone short"
    );
    // What is not a secret is borrowed, not copied.
    assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
    // Extended with the configured key later.
    let more = redactor.with_secrets(["added-later-0000".to_owned()]);
    assert_eq!(
        more.redact("added-later-0000 deploy-9f8e7d6c5b"),
        "<redacted> <redacted>"
    );
    let both = Redactor::new([], ["other-key-99999999".to_owned()]).union(&more);
    assert_eq!(both.known_values(), 6);
    assert_eq!(
        both.redact("other-key-99999999 added-later-0000"),
        "<redacted> <redacted>"
    );
    // A value the marker contains would make redaction grow forever.
    let odd = Redactor::new([], ["redacted".to_owned()]);
    assert_eq!(odd.redact("<redacted>"), "<redacted>");
}

/// A secret holding `"` and `\` is escaped when serialized: found either
/// way, and redacting a JSON document keeps it valid JSON.
#[test]
fn a_secret_with_quotes_and_backslashes_is_redacted_before_and_after_escaping() {
    let secret = r#"pa"ss\word-0123"#;
    let redactor = Redactor::new([], [secret.to_owned()]);
    let value = json!({"args": {"content": format!("PASSWORD=\"{secret}\"\n")}, secret: 1});
    let compact = redactor.json(&value);
    let pretty = redactor.json_pretty(&value);
    for text in [&compact, &pretty] {
        assert!(!text.contains("ss\\\\word"), "{text}");
        let back: Value = serde_json::from_str(text).unwrap();
        assert_eq!(back["args"]["content"], "PASSWORD=\"<redacted>\"\n");
        assert_eq!(back["<redacted>"], 1);
    }
    // The escaped form alone (a line of a trace written by someone else).
    let serialized = value.to_string();
    assert!(serialized.contains(r#"pa\"ss\\word-0123"#));
    assert!(!redactor.redact(&serialized).contains("word-0123"));
    // Redacting twice changes nothing more.
    assert_eq!(redactor.redact(&compact), compact);
}

#[test]
fn json_without_secrets_is_serialized_once_and_unchanged() {
    let value = json!({"a": [1, 2.5, null, true], "b": "task-list"});
    assert_eq!(Redactor::default().json(&value), value.to_string());
    assert_eq!(
        Redactor::default().json_pretty(&value),
        serde_json::to_string_pretty(&value).unwrap()
    );
}

#[test]
fn a_stream_redacts_keys_cut_by_any_piece_boundary() {
    let secret = "stream-secret-0123456789";
    let redactor = Redactor::new([], [secret.to_owned()]);
    let text = format!(
        "line {secret}\n{}{secret}{}\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAr2ZJ\n-----END RSA PRIVATE KEY-----\nghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 end",
        "x".repeat(10_000),
        "y".repeat(5_000),
    );
    let expected = redactor.redact(&text).into_owned();
    assert!(!expected.contains(secret) && !expected.contains("MIIE"));
    for size in [1, 7, 64, 1000, 4096, 10_003, text.len()] {
        let mut stream = redactor.stream();
        let mut out = Vec::new();
        for piece in text.as_bytes().chunks(size) {
            out.extend_from_slice(&stream.push(piece));
            assert!(stream.pending() <= 4096 + size, "bounded memory");
        }
        out.extend(stream.finish());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            expected,
            "pieces of {size}"
        );
    }
}

#[test]
fn whole_lines_without_secrets_pass_through_a_stream_uncopied() {
    let mut stream = Redactor::default().stream();
    assert!(matches!(stream.push(b"ok\nfine\n"), Cow::Borrowed(_)));
    assert!(matches!(stream.push(b""), Cow::Borrowed(_)));
    // Not UTF-8: bytes are bytes.
    assert_eq!(
        &*stream.push(b"\xff\xfe sk-proj-Ab3dEf6hIj9kLm2nOp5q \xff\n"),
        b"\xff\xfe <redacted> \xff\n"
    );
}

#[test]
fn the_start_of_a_known_value_is_held_back_until_it_completes() {
    let redactor = Redactor::new([], ["hunter2-is-my-password".to_owned()]);
    assert_eq!(
        redactor.unfinished("the key is hunter2-is"),
        "hunter2-is".len()
    );
    assert_eq!(redactor.unfinished("the key is h"), 1);
    // Complete, it is redacted instead; other text holds nothing back.
    assert_eq!(redactor.unfinished("the key is hunter2-is-my-password"), 0);
    assert_eq!(redactor.unfinished("nothing to see"), 0);
    assert_eq!(redactor.unfinished(""), 0);
    assert_eq!(Redactor::default().unfinished("sk-ant-"), 0);
    // Never inside a character.
    let wide = Redactor::new([], ["ключ-секрет-длинный".to_owned()]);
    let held = wide.unfinished("а вот ключ-се");
    assert_eq!(held, "ключ-се".len());
}
