//! Credentials outside provider formats, recognised by the structure around them: HTTP Basic
//! authorisation headers (decoded and checked), passwords on command lines (`curl -u`,
//! `sshpass -p`, `mysql -p...`, `--password=`), `.env` and config assignments whose name ends
//! in KEY/SECRET/TOKEN/PASS..., and high-entropy tokens near a word for a key or secret in any
//! of the gate's languages.

use std::sync::LazyLock;

use regex::Regex;

use super::context::{after, before, char_after, char_before, entropy, placeholder_value, span};
use super::encoded::decode_base64;
use super::secrets::{is_uuid, names_a_digest};
use crate::span::{Category, Span};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("credential regex")
}

static BASIC_AUTH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?-u:\b)basic\s+([A-Za-z0-9+/]{6,}={0,2})"));
/// `curl -u user:pass`, `--user user:pass`, `-u 'user:pass'` (group 1 is user:pass).
static CLI_USER: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=)['"]?([^\s'":]+:[^\s'"]+)"#));
/// Options whose argument is a password or token (group 1), and MySQL's glued `-pSECRET`.
static CLI_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?:^|\s)(?:--password|--passwd|--pass|--pwd|--db-password|--token|--api-key|--apikey|--secret|--client-secret|--auth-token)(?:=|\s+)['"]?([^\s'"]+)"#,
        r#"|(?-u:\b)sshpass\s+-p\s*['"]?([^\s'"]+)"#,
        r#"|(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb)(?:\s+[^\s|;&]+)*?\s-p['"]?([^\s'"]+)"#,
        r#"|(?-u:\b)docker\s+login(?:\s+[^\s|;&]+)*?\s-p\s+['"]?([^\s'"]+)"#,
    ))
});
/// `NAME=value` / `NAME: value` where NAME ends in a secret's word (group 1 the name, 2 the
/// value): .env files, shell exports, YAML and INI config, PowerShell `$env:`.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)(?-u:\b)((?:[a-z0-9]+[_.\-])*(?:key|secret|token|pass|password|passwd|pwd|passphrase|credentials?))["']?[ \t]*(?:=|:)[ \t]*["']?([^\s"'#,;]{4,256})"#,
    )
});
/// A token shape: base64, base64url or hex, 20 characters or more.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9+/_\-]{20,256}={0,2}"));
/// Words for a key, secret, token or password in the gate's locales, and AWS's markers.
static KEY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?i)key|secret|token|passw|credential|bearer|(?-u:\b)api(?-u:\b)|(?-u:\b)aws(?-u:\b)|akia",
        r"|schl[üu]ssel|geheim|cl[ée]|clave|chave|chiave|sleutel|anahtar|gizli|şifre|parola|senha|contrase",
        r"|ключ|токен|секрет|парол|密钥|秘钥|私钥|令牌|密码|鍵|キー|トークン|シークレット|パスワード|키|토큰|시크릿|비밀",
        r"|مفتاح|رمز|سر|कुंजी|टोकन|सीक्रेट|पासवर्ड",
    ))
});
/// Words that make a hex or base64 run a digest or an identifier rather than a secret.
static DIGEST_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)sha|md5|hash|digest|checksum|etag|integrity|fingerprint|commit|uuid|guid|(?-u:\b)rev|nonce|salt|(?-u:\b)id(?-u:\b)|public",
    )
});
/// How far before a token its key word may stand.
const KEY_WINDOW: usize = 48;

pub fn scan(text: &str, out: &mut Vec<Span>) {
    scan_basic_auth(text, out);
    scan_command_lines(text, out);
    scan_assignments(text, out);
    scan_keyword_entropy(text, out);
}

fn scan_basic_auth(text: &str, out: &mut Vec<Span>) {
    for caps in BASIC_AUTH.captures_iter(text) {
        let value = caps.get(1).expect("group 1");
        let Some(decoded) = decode_base64(value.as_str()) else {
            continue;
        };
        let Ok(decoded) = std::str::from_utf8(&decoded) else {
            continue;
        };
        let Some((user, password)) = decoded.split_once(':') else {
            continue;
        };
        let printable = decoded.chars().all(|c| !c.is_control());
        if printable && !user.is_empty() && !password.is_empty() && !placeholder_value(password) {
            out.push(span(
                value.start(),
                value.end(),
                Category::Secret,
                "http_basic_auth",
                0.98,
            ));
        }
    }
}

fn scan_command_lines(text: &str, out: &mut Vec<Span>) {
    for caps in CLI_USER.captures_iter(text) {
        let pair = caps.get(1).expect("group 1");
        let p = trim_prose(pair.as_str());
        let password = p.split_once(':').map_or("", |(_, p)| p);
        if !placeholder_value(password) && !password.starts_with('$') {
            out.push(span(
                pair.start(),
                pair.start() + p.len(),
                Category::Secret,
                "cli_user_password",
                0.95,
            ));
        }
    }
    for caps in CLI_PASSWORD.captures_iter(text) {
        let Some(value) = (1..=4).find_map(|i| caps.get(i)) else {
            continue;
        };
        let v = trim_prose(value.as_str());
        if v.len() >= 3
            && v.bytes().any(|b| b.is_ascii_alphanumeric())
            && !placeholder_value(v)
            && !v.starts_with(['$', '-'])
        {
            out.push(span(
                value.start(),
                value.start() + v.len(),
                Category::Secret,
                "cli_password",
                0.95,
            ));
        }
    }
}

/// A command quoted in prose ends in its closing backtick or the sentence's punctuation.
fn trim_prose(v: &str) -> &str {
    v.trim_end_matches(['`', ',', ';', '.', ')', '\'', '"'])
}

fn scan_assignments(text: &str, out: &mut Vec<Span>) {
    for caps in ASSIGNMENT.captures_iter(text) {
        let (name, value) = (caps.get(1).expect("group 1"), caps.get(2).expect("group 2"));
        if char_before(text, name.start()).is_some_and(|c| c.is_alphanumeric()) {
            continue;
        }
        let n = name.as_str().to_ascii_lowercase();
        let v = value.as_str();
        let password_like = ["pass", "password", "passwd", "pwd", "passphrase"]
            .iter()
            .any(|w| n.ends_with(w));
        // A key name may hold a path, a file, a column or a number ("SSH_KEY=~/.ssh/id",
        // "SORT_KEY=created_at", "MAX_TOKENS=4096"): a key value must look random.
        // "Password: incorrect" in prose is not an assignment: a password needs a name
        // written as code (separators or capitals) or a value that mixes character classes.
        let code_name = name.as_str().contains(['_', '.', '-'])
            || !name.as_str().bytes().any(|b| b.is_ascii_lowercase());
        let plausible = if password_like {
            !v.starts_with(['/', '~', '.']) && (code_name || super::secrets::classes(v) >= 2)
        } else {
            v.len() >= 12
                && v.bytes().any(|b| b.is_ascii_digit())
                && v.bytes().any(|b| b.is_ascii_alphabetic())
                && !v.contains("://")
                && !v.starts_with(['/', '~', '.'])
                && entropy(v) >= 3.0
                && !super::secrets::looks_like_identifier(v)
                && !names_a_digest(&n, v)
        };
        if plausible
            && !placeholder_value(v)
            && !super::secrets::looks_like_code(v)
            && !v.starts_with(['$', '%', '@'])
        {
            out.push(span(
                value.start(),
                value.end(),
                Category::Secret,
                "secret_assignment",
                0.9,
            ));
        }
    }
}

/// A random-looking token near a word for a key or secret (a bare 40-character AWS secret key
/// after "aws secret", "mein API-Schlüssel ...", "токен ..."). Hex runs are often digests, so
/// they need that word without a digest word near.
fn scan_keyword_entropy(text: &str, out: &mut Vec<Span>) {
    for m in TOKEN.find_iter(text) {
        let v = m.as_str();
        let glued = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '.');
        // A dot after the token glues it to a file or host name, unless it ends the sentence.
        let sentence_end = after(text, m.end(), 2)
            .strip_prefix('.')
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace));
        if glued(char_before(text, m.start()))
            || (glued(char_after(text, m.end())) && !sentence_end)
        {
            continue;
        }
        let digits = v.bytes().filter(u8::is_ascii_digit).count();
        let letters = v.bytes().filter(u8::is_ascii_alphabetic).count();
        let hex = v.bytes().all(|b| b.is_ascii_hexdigit());
        let threshold = if hex { 3.4 } else { 3.9 };
        if digits < 2
            || letters < 4
            || entropy(v) < threshold
            || is_uuid(v)
            || super::secrets::looks_like_identifier(v)
            || v.contains("//")
        {
            continue;
        }
        let window = before(text, m.start(), KEY_WINDOW);
        if !KEY_WORD.is_match(window) || DIGEST_WORD.is_match(window) {
            continue;
        }
        out.push(span(
            m.start(),
            m.end(),
            Category::Secret,
            "high_entropy_token_near_key_word",
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

    #[test]
    fn positives() {
        for (t, detector, value) in [
            (
                "Authorization: Basic YWxpY2U6UzNjcmV0UGFzcyE=",
                "http_basic_auth",
                "YWxpY2U6UzNjcmV0UGFzcyE=",
            ),
            (
                "curl -u admin:Tr0ub4dor https://api.internal/x",
                "cli_user_password",
                "admin:Tr0ub4dor",
            ),
            (
                "curl --user 'deploy:p@ssW0rd!' -X POST",
                "cli_user_password",
                "deploy:p@ssW0rd!",
            ),
            (
                "sshpass -p 'Xk92!lmQ' ssh root@host",
                "cli_password",
                "Xk92!lmQ",
            ),
            ("mysql -u root -pS3cretPw db", "cli_password", "S3cretPw"),
            ("mysql -uroot -p'R00t!pw' -h db", "cli_password", "R00t!pw"),
            (
                "tool --password=Zebra123 --verbose",
                "cli_password",
                "Zebra123",
            ),
            (
                "MYSQL_ROOT_PASSWORD=rootpass",
                "secret_assignment",
                "rootpass",
            ),
            (
                "export STRIPE_SECRET=q8Jd7Lm2Zx4Vb9Nc1Rt6Yp3",
                "secret_assignment",
                "q8Jd7Lm2Zx4Vb9Nc1Rt6Yp3",
            ),
            (
                "jwt.secret: 9fK2mQ8xL4vB7nR1tZ6w",
                "secret_assignment",
                "9fK2mQ8xL4vB7nR1tZ6w",
            ),
            (
                "my AWS secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81kLmn0p for the bucket",
                "high_entropy_token_near_key_word",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81kLmn0p",
            ),
            (
                "the secret the console showed me once is 52B43cirmXbsG8DEmcQBvvsTBQLY1PtSFu5lbb7I. Region eu-west-2.",
                "high_entropy_token_near_key_word",
                "52B43cirmXbsG8DEmcQBvvsTBQLY1PtSFu5lbb7I",
            ),
            (
                "мой API токен Zk29fLq8Xm3Vb7Nc1Rt6Yp4W",
                "high_entropy_token_near_key_word",
                "Zk29fLq8Xm3Vb7Nc1Rt6Yp4W",
            ),
            (
                "mein API-Schlüssel lautet a8F3kL9qZ2xW7mN4vB6tR1yP",
                "high_entropy_token_near_key_word",
                "a8F3kL9qZ2xW7mN4vB6tR1yP",
            ),
            (
                "APIキー 4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e を使って",
                "high_entropy_token_near_key_word",
                "4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e",
            ),
        ] {
            let got = secrets(t);
            assert!(
                got.iter().any(|(d, v)| d == detector && v == value),
                "{t}: {got:?}"
            );
        }
    }

    #[test]
    fn hard_negatives() {
        for t in [
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "Authorization: Basic realm=\"api\"",
            "a basic understanding of algorithms",
            "curl -u $USER:$TOKEN https://x",
            "curl -u user:password https://x",
            "passwords on command lines (`curl -u user:pass`, `mysql -p...`)",
            "mysql -u root -p mydb",
            "mysql -u root -P 3306 -p",
            "tool --password=$PASSWORD",
            "SSH_KEY=~/.ssh/id_ed25519",
            "SORT_KEY=created_at",
            "MAX_TOKENS=4096",
            "PRIMARY_KEY: user_id",
            "password = request.form['password']",
            "self.api_key = config.get_secret()",
            "API_KEY=your-api-key-here",
            "DB_PASSWORD=${DB_PASSWORD}",
            "PASSWORD=changeme",
            "commit key 3f786850e387550fdab836ed7c61e8e1c7b6cf3c",
            "the key sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "public key id 550e8400-e29b-41d4-a716-446655440000",
            "the keyboard layout de-DE-ISO-8859-15-variant",
            "key path src/main/java/com/example/service",
            "secret file a8F3kL9qZ2xW7mN4vB6tR1yP.json",
        ] {
            assert!(secrets(t).is_empty(), "{t}: {:?}", secrets(t));
        }
    }
}
