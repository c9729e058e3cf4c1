//! Secrets: API keys with known provider prefixes, private key blocks, JWTs, passwords and
//! high-entropy tokens next to a word that names them.

use std::sync::LazyLock;

use regex::Regex;

use super::context::{after, char_after, char_before, entropy, placeholder_value, span};
use super::encoded::decode_base64;
use crate::span::{Category, Span};

/// Provider key formats. Each pattern is also compiled alone (anchored) to name the provider
/// of a match of the combined one.
const PROVIDERS: &[(&str, &str)] = &[
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    (
        "openai_key",
        r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
    ),
    ("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{36,255}"),
    ("github_pat", r"github_pat_[A-Za-z0-9_]{50,255}"),
    ("gitlab_token", r"gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    (
        "slack_webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}",
    ),
    ("stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google_oauth_token", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    ("twilio_key", r"SK[0-9a-fA-F]{32}"),
    (
        "sendgrid_key",
        r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    ),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}"),
    ("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("mailgun_key", r"key-[0-9a-f]{32}"),
    ("shopify_token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    ("digitalocean_token", r"do[por]_v1_[a-f0-9]{64}"),
    ("groq_key", r"gsk_[A-Za-z0-9]{48,}"),
    ("replicate_token", r"r8_[A-Za-z0-9]{37}"),
    ("telegram_bot_token", r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}"),
    (
        "discord_webhook",
        r"https://discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+",
    ),
    ("azure_storage_key", r"AccountKey=[A-Za-z0-9+/=]{80,}"),
];

static COMBINED: LazyLock<Regex> = LazyLock::new(|| {
    let alternation: Vec<String> = PROVIDERS.iter().map(|(_, p)| format!("(?:{p})")).collect();
    Regex::new(&alternation.join("|")).expect("provider regex")
});
static EACH: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    PROVIDERS
        .iter()
        .map(|&(name, p)| {
            (
                name,
                Regex::new(&format!("^(?:{p})$")).expect("provider regex"),
            )
        })
        .collect()
});

static PEM_BEGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN ([A-Z0-9 ]+ )?PRIVATE KEY(?: BLOCK)?-----").expect("pem regex")
});
static PEM_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END ([A-Z0-9 ]+ )?PRIVATE KEY(?: BLOCK)?-----").expect("pem regex")
});
/// Without an END line, the key runs over the base64 lines that follow (bounded).
static PEM_BODY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\s*[A-Za-z0-9+/=:\- ]+\r?\n?){0,400}").expect("pem regex"));
const PEM_MAX_BYTES: usize = 64 * 1024;

/// Three base64url parts; a part may be wrapped over lines (a pasted header, a shell line
/// continuation), also just before or after a dot, which the check removes before decoding.
static JWT: LazyLock<Regex> = LazyLock::new(|| {
    let part = r"[A-Za-z0-9_\-]+(?:\\?\r?\n[ \t>]*[A-Za-z0-9_\-]+)*";
    let wrap = r"(?:\\?\r?\n[ \t>]*)?";
    Regex::new(&format!(
        r"eyJ{part}{wrap}\.{wrap}eyJ{part}{wrap}\.{wrap}{part}"
    ))
    .expect("jwt regex")
});

/// A word that names a password, in the gate's locales; `_` before it counts as a boundary
/// ("DB_PASSWORD"). Suffixes of inflecting languages are allowed (şifresi, пароля).
static PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(?:(?-u:\b)|_)(?P<pin>pin(?:[ \-]?code)?|pincode)(?-u:\b)",
        r"|(?:(?-u:\b)|_)(?:password|passwd|pwd|passphrase|passcode|kennwort|passwort|mot de passe|mdp|contraseña|clave|senha|wachtwoord|parola(?: d'ordine)?|has[łl]o|l[öo]senord|passord|adgangskode|salasana|heslo|jelsz[óo]|wlan-schl[üu]ssel|wifi[ \-]key|psk)(?-u:\b)",
        r"|[şs]ifre[a-zı]{0,4}|парол[а-я]{0,3}|密码|密碼|口令|パスワード|비밀번호|암호|كلمة المرور|كلمة السر|पासवर्ड",
        r"|(?P<pin2>暗証番号|пин-код|पिन)",
    ))
    .expect("password regex")
});
/// What follows a password word up to the value: an optional short complement that starts
/// with a preposition ("for the router", "für den Router", "de mi correo", "от почты"), then
/// a separator or a copula (group 1 is the value); or, without either, the next token
/// (group 2), which must then look like a password on its own. Chinese, Japanese and Korean
/// write the next words without a space: the value ends where their scripts begin.
static PASSWORD_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"^["'\])]*(?:(?:\s+(?:for|to|of|on|at|für|fürs|zum|zur|vom|von|des|de|du|pour|para|per|voor|van|del|della|di|da|do|dos|das|от|для|на|من|के|की|için)\s[^\n:：=＝]{0,32}?)?"#,
        r#"(?:\s*(?:=>|:=|->|[:：=＝])\s*|\s+(?:is|was|ist|lautet|war|est|était|es|era|é|è|jest|är|er|это|هي|هو|है)\s+(?::\s*)?|\s*(?:是|为|為|は|은|는|이|가|：)\s*)["'`「“]?([^\s"'`」”\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u{3000}-\u{303F}]{4,64})"#,
        r#"|\s+["'`]?([^\s"'`\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u{3000}-\u{303F}]{6,64}))"#,
    ))
    .expect("password value regex")
});
static KEYED_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)[a-z0-9_\-]*(?:api_?key|apikey|secret|token|access_?key|auth|credential|private_?key|client_?id|session)[a-z0-9_\-]*["']?\s*(?:[:=]|=>)\s*["']?(?:bearer\s+)?([A-Za-z0-9_\-+/=.~]{16,256})|(?i)(?-u:\b)bearer\s+([A-Za-z0-9_\-+/=.~]{16,256})"#)
        .expect("token regex")
});

pub fn scan(text: &str, out: &mut Vec<Span>) {
    scan_providers(text, out);
    scan_pem(text, out);
    scan_jwt(text, out);
    scan_password(text, out);
    scan_keyed_token(text, out);
}

fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn scan_providers(text: &str, out: &mut Vec<Span>) {
    for m in COMBINED.find_iter(text) {
        if char_before(text, m.start()).is_some_and(token_char)
            || char_after(text, m.end()).is_some_and(token_char)
        {
            continue;
        }
        let Some((name, _)) = EACH.iter().find(|(_, re)| re.is_match(m.as_str())) else {
            continue;
        };
        // "sk-" also starts ordinary hyphenated words; a key mixes letters and digits.
        if *name == "openai_key"
            && !(m.as_str().bytes().any(|b| b.is_ascii_digit()) && entropy(m.as_str()) > 3.5)
        {
            continue;
        }
        out.push(span(m.start(), m.end(), Category::Secret, name, 0.99));
    }
}

fn scan_pem(text: &str, out: &mut Vec<Span>) {
    // A BEGIN inside the block just found is part of it; skipping it keeps a text of
    // thousands of BEGIN lines linear instead of one 64 KiB search per line.
    let mut covered = 0;
    for begin in PEM_BEGIN.find_iter(text) {
        if begin.start() < covered {
            continue;
        }
        let limit = (begin.end() + PEM_MAX_BYTES).min(text.len());
        let limit = (limit..=text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        let end = match PEM_END.find(&text[begin.end()..limit]) {
            Some(e) => begin.end() + e.end(),
            None => {
                begin.end()
                    + PEM_BODY
                        .find(&text[begin.end()..limit])
                        .map_or(0, |b| b.end())
            }
        };
        covered = end;
        out.push(span(
            begin.start(),
            end,
            Category::Secret,
            "private_key_block",
            1.0,
        ));
    }
}

fn scan_jwt(text: &str, out: &mut Vec<Span>) {
    for m in JWT.find_iter(text) {
        let header = m.as_str().split('.').next().unwrap_or_default();
        let header: String = header
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        let is_jwt =
            decode_base64(&header).is_some_and(|h| String::from_utf8_lossy(&h).contains("\"alg\""));
        if is_jwt {
            out.push(span(m.start(), m.end(), Category::Secret, "jwt", 0.98));
        }
    }
}

/// Character classes present: lower, upper, digit, other.
pub(crate) fn classes(s: &str) -> usize {
    let has = |f: fn(&char) -> bool| s.chars().any(|c| f(&c)) as usize;
    has(char::is_ascii_lowercase)
        + has(char::is_ascii_uppercase)
        + has(char::is_ascii_digit)
        + has(|c| !c.is_ascii_alphanumeric())
}

fn scan_password(text: &str, out: &mut Vec<Span>) {
    for m in PASSWORD.captures_iter(text) {
        let word = m.get(0).expect("whole match");
        let pin = m.name("pin").is_some() || m.name("pin2").is_some();
        let window = after(text, word.end(), 96);
        let Some(caps) = PASSWORD_VALUE.captures(window) else {
            continue;
        };
        let (value, separated) = match (caps.get(1), caps.get(2)) {
            (Some(v), _) => (v, true),
            (None, Some(v)) => (v, false),
            (None, None) => continue,
        };
        let v = value
            .as_str()
            .trim_end_matches(['.', ',', ';', ')', ':', '。', '，']);
        if !plausible_password(v, pin, separated) {
            continue;
        }
        let start = word.end() + value.start();
        out.push(span(
            start,
            start + v.len(),
            Category::Secret,
            "password_in_context",
            0.9,
        ));
    }
}

/// "password is incorrect", "password: String", "password = request.form[...]" are prose and
/// code. A PIN is a few digits ("pin: Pin<&mut Self>" is code). A password after a separator
/// mixes character classes, is long, or is six or more digits; one without a separator must
/// look like a password on its own (three classes).
fn plausible_password(v: &str, pin: bool, separated: bool) -> bool {
    if pin {
        return separated && (4..=8).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit());
    }
    if placeholder_value(v) || looks_like_code(v) {
        return false;
    }
    let digits = |n: usize| v.len() >= n && v.bytes().all(|b| b.is_ascii_digit());
    if separated {
        classes(v) >= 2 || v.chars().count() >= 12 || digits(6)
    } else {
        // A long run of digits right after the word is a Wi-Fi key or a PIN-style password
        // ("Passwort 48213759602318574629"); a year or a count is shorter.
        (classes(v) >= 3 && v.len() >= 6) || digits(8)
    }
}

/// Calls, indexing, paths and member access: code on the right of `password =`.
pub(crate) fn looks_like_code(v: &str) -> bool {
    static MEMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.|::|->)[A-Za-z_]").expect("member regex")
    });
    v.contains(['(', ')', '[', ']', '{', '}']) || MEMBER.is_match(v)
}

/// Code names, not secrets: "D3DKMT_PRESENTHISTORYTOKEN", "self.colon2_token.clone",
/// "MI_UserCredentials_0". A random token rarely has, between separators, five letters of one
/// case or CamelCase words.
pub(crate) fn looks_like_identifier(v: &str) -> bool {
    v.split(['_', '.', '-', '/']).any(|part| {
        let letters = part.len() >= 5 && part.bytes().all(|b| b.is_ascii_alphabetic());
        let one_case = part.bytes().all(|b| b.is_ascii_uppercase())
            || part.bytes().all(|b| b.is_ascii_lowercase());
        letters && (one_case || camel_case(part))
    })
}

/// "UserCredentials": capitalised words of at least three letters.
fn camel_case(part: &str) -> bool {
    let b = part.as_bytes();
    let starts: Vec<usize> = (0..b.len())
        .filter(|&i| b[i].is_ascii_uppercase())
        .collect();
    starts.len() >= 2
        && starts[0] == 0
        && starts.iter().enumerate().all(|(k, &i)| {
            let end = starts.get(k + 1).copied().unwrap_or(b.len());
            end - i >= 3 && b[i + 1..end].iter().all(u8::is_ascii_lowercase)
        })
}

/// "session_id = <uuid>", "token_sha256: <64 hex>", "auth_hash = <hex>": identifiers and
/// digests, which name or check a secret without being one.
pub(crate) fn names_a_digest(name: &str, v: &str) -> bool {
    static DIGEST_NAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)sha|md5|hash|digest|checksum|etag|integrity|fingerprint|commit|uuid|guid|(?-u:\b)rev|_id|(?-u:\b)id(?-u:\b)")
            .expect("digest name regex")
    });
    let hex = v.bytes().all(|b| b.is_ascii_hexdigit());
    (hex || is_uuid(v)) && DIGEST_NAME.is_match(name)
}

/// 8-4-4-4-12 hex digits.
pub(crate) fn is_uuid(v: &str) -> bool {
    let groups: Vec<&str> = v.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn scan_keyed_token(text: &str, out: &mut Vec<Span>) {
    for caps in KEYED_TOKEN.captures_iter(text) {
        let Some(value) = caps.get(1).or_else(|| caps.get(2)) else {
            continue;
        };
        let v = value.as_str();
        let name = &text[caps.get(0).expect("whole match").start()..value.start()];
        let mixed =
            v.bytes().any(|b| b.is_ascii_digit()) && v.bytes().any(|b| b.is_ascii_alphabetic());
        if !mixed
            || placeholder_value(v)
            || entropy(v) < 3.3
            || looks_like_identifier(v)
            || names_a_digest(name, v)
        {
            continue;
        }
        out.push(span(
            value.start(),
            value.end(),
            Category::Secret,
            "high_entropy_token_in_context",
            0.85,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(t: &str) -> Vec<(String, String)> {
        crate::patterns::found_by(scan, t)
    }

    fn found(t: &str, detector: &str) {
        let got = secrets(t);
        assert!(got.iter().any(|(d, _)| d == detector), "{t:?}: {got:?}");
    }

    #[test]
    fn provider_keys() {
        found("key sk-proj-4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e", "openai_key");
        found(
            "sk-ant-api03-Xk9fL2mQ8vN3bR7kW1zY6hJ0cD5sA2eT4uI",
            "anthropic_key",
        );
        found("AWS AKIAIOSFODNN7EXAMPLE here", "aws_access_key_id");
        found("ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R", "github_token");
        found(
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
            "github_pat",
        );
        found("glpat-xY3kP9qR2sT5vW8zA1bC", "gitlab_token");
        found(
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "slack_token",
        );
        found("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key");
        found("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google_api_key");
        found(
            "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",
            "sendgrid_key",
        );
        found("hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678", "huggingface_token");
        found("npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "npm_token");
        found("SK0123456789abcdef0123456789abcdef", "twilio_key");
    }

    #[test]
    fn pem_and_jwt() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----\nafter";
        let got = secrets(pem);
        assert_eq!(got[0].1, &pem[..pem.len() - 6]);
        let cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAE=\n";
        assert_eq!(secrets(cut)[0].1, cut);
        found("Authorization: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt");
    }

    #[test]
    fn passwords_and_tokens_in_context() {
        assert_eq!(
            secrets("my password is hunter2!"),
            [("password_in_context".to_string(), "hunter2!".to_string())]
        );
        found("Passwort: Sommer2024#", "password_in_context");
        found("my PIN is 4821", "password_in_context");
        found(
            "export API_TOKEN=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "high_entropy_token_in_context",
        );
        found(
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81kLmn0p",
            "high_entropy_token_in_context",
        );
        found(
            "curl -H 'Authorization: Bearer 7Fq2Lr9XvB4nKp8sW3mZ'",
            "high_entropy_token_in_context",
        );
    }

    #[test]
    fn passwords_in_many_languages() {
        for (t, value) in [
            ("Passwort für den Router: Sommer2024#", "Sommer2024#"),
            ("le mot de passe du wifi est Chaton-77", "Chaton-77"),
            ("mi contraseña es Perro#2023", "Perro#2023"),
            ("a senha do banco é Azul9876", "Azul9876"),
            ("het wachtwoord is Fiets!2020", "Fiets!2020"),
            ("la password è Gatto_1987", "Gatto_1987"),
            ("мой пароль: Qwerty!234", "Qwerty!234"),
            ("wifi密码是abc12345", "abc12345"),
            ("パスワードは Sakura2024! です", "Sakura2024!"),
            ("비밀번호는 hangul99! 입니다", "hangul99!"),
            ("كلمة المرور: Nour2024$", "Nour2024$"),
            ("मेरा पासवर्ड Delhi@123 है", "Delhi@123"),
            ("wifi şifresi: Kedi2024!", "Kedi2024!"),
            ("DB_PASSWORD=hunter2x", "hunter2x"),
            ("Passwort ist 20481632", "20481632"),
            ("my password Hunter2!x", "Hunter2!x"),
            (
                "WLAN Passwort 48213759602318574629.",
                "48213759602318574629",
            ),
            ("وكلمة السر 7391048256 للضيوف", "7391048256"),
            ("wifi şifresi 58203918 olsun", "58203918"),
            ("密码是Huanghe#2026,帮我写一段配置说明", "Huanghe#2026"),
            ("パスワードはSakura_2026!。これで入れない", "Sakura_2026!"),
        ] {
            let got = secrets(t);
            assert!(
                got.iter()
                    .any(|(d, v)| d == "password_in_context" && v == value),
                "{t}: {got:?}"
            );
        }
    }

    #[test]
    fn wrapped_jwt() {
        found(
            "token:\neyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3\nODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt",
        );
        found(
            "eyJhbGciOiJIUzI1NiIsInR5cCI6Ik\\\n  pXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.\ndozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt",
        );
        // Wrapped just before a dot.
        found(
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.\neyJzdWIiOiIxMjM0NTY3ODkwIn0\n.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt",
        );
    }

    #[test]
    fn hard_negatives() {
        for t in [
            "the password is incorrect",
            "password: ********",
            "set password=${DB_PASSWORD}",
            "enter your_password here: password=<your-password>",
            "commit 3f786850e387550fdab836ed7c61e8e1c7b6cf3c fixed it",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "a sk-learn style task-oriented design",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "token: the-quick-brown-fox-jumps",
            "pin is 12",
            "password 2024 reset",
            "Passwort 1234567 Zeichen",
            "pub type PRESENTHISTORYTOKEN = D3DKMT_PRESENTHISTORYTOKEN_0;",
            "let token = self.colon2_token.clone();",
            "credentials: MI_UserCredentials_0,",
            "fn f(password: *const u8, token: &mut Token)",
            "use core::pin::Pin; fn poll(self: Pin<&mut Self>)",
            "let pin = Pin::new(&mut fut);",
            "My password manager is Bitwarden",
            "password = request.form['password']",
            "fn login(password: String, pin: u32)",
            "das Passwort ist falsch",
            "le mot de passe est incorrect",
            "密码是什么？",
            "パスワードを忘れました",
            "비밀번호가 뭐예요?",
            "пароль не подходит",
            "şifremi unuttum",
            "session_id = 550e8400-e29b-41d4-a716-446655440000",
            "token_sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "password: changeme",
            "API_KEY=your-api-key-here",
        ] {
            assert!(secrets(t).is_empty(), "{t:?}: {:?}", secrets(t));
        }
    }
}
