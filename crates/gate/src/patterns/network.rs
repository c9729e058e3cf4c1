//! IPv4 and IPv6 addresses, MAC addresses and URLs that carry a password.

use std::net::Ipv6Addr;
use std::str::FromStr;
use std::sync::LazyLock;

use regex::Regex;

use super::context::{before, char_after, char_before, entropy, placeholder_value, span};
use crate::span::{Category, Span};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("network regex")
}

static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}",
    )
});
static VERSION_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:^|[^a-z])(?:v|version|release|ver\.?|build|firmware|chrome|firefox|python|node|oid)\s*[:=]?\s*$",
    )
});
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:[0-9a-f]{1,4}:){1,7}(?:(?::[0-9a-f]{1,4}){1,6}|[0-9a-f]{1,4}|:)|::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4}",
    )
});
static MAC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)[0-9a-f]{2}([:\-])[0-9a-f]{2}(?:[:\-][0-9a-f]{2}){4}(?-u:\b)|(?-u:\b)[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}(?-u:\b)",
    )
});
/// `scheme://user:password@host...` or `scheme://token@host...` (a token as the user name:
/// "https://ghp_...@github.com/org/repo.git"); group 1 is the password, group 2 the token.
static URL_CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)[a-z][a-z0-9+.\-]{1,15}://(?:[^\s/?#@:]*:([^\s/?@]+)|([A-Za-z0-9_\-.~%]{16,}))@[^\s/?#@]+[^\s]*",
    )
});

pub fn scan_ip(text: &str, out: &mut Vec<Span>) {
    for m in IPV4.find_iter(text) {
        let glued =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
        let next_is_dot_digit = text[m.end()..].starts_with('.')
            && text[m.end() + 1..].starts_with(|c: char| c.is_ascii_digit());
        if glued(char_before(text, m.start()))
            || char_after(text, m.end()).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            || next_is_dot_digit
            || VERSION_WORD.is_match(before(text, m.start(), 20))
        {
            continue;
        }
        let octets: Vec<u8> = m
            .as_str()
            .split('.')
            .filter_map(|o| o.parse().ok())
            .collect();
        // Not anyone's address: unspecified, loopback, broadcast and netmasks.
        let netmask = octets[0] == 255;
        if octets == [0, 0, 0, 0] || octets[0] == 127 || netmask {
            continue;
        }
        // Documentation ranges (RFC 5737) are nobody's address: reported, never held back.
        let documentation = matches!(octets[..3], [192, 0, 2] | [198, 51, 100] | [203, 0, 113]);
        let (detector, confidence) = if documentation {
            ("ipv4_documentation", 0.1)
        } else {
            ("ipv4", 0.9)
        };
        out.push(span(
            m.start(),
            m.end(),
            Category::IpAddress,
            detector,
            confidence,
        ));
    }
    for m in IPV6.find_iter(text) {
        let s = m.as_str();
        let glued =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == ':' || c == '_');
        if glued(char_before(text, m.start())) || glued(char_after(text, m.end())) {
            continue;
        }
        let Ok(addr) = Ipv6Addr::from_str(s) else {
            continue;
        };
        // Shapes like "a::b" or "12:30:45"-like fragments are code or times, not addresses.
        let groups = s.split(':').filter(|g| !g.is_empty()).count();
        if addr.is_loopback() || addr.is_unspecified() || groups < 3 {
            continue;
        }
        // 2001:db8::/32 (RFC 3849) is the documentation prefix.
        let segments = addr.segments();
        let (detector, confidence) = if segments[..2] == [0x2001, 0x0db8] {
            ("ipv6_documentation", 0.1)
        } else {
            ("ipv6", 0.9)
        };
        out.push(span(
            m.start(),
            m.end(),
            Category::IpAddress,
            detector,
            confidence,
        ));
    }
}

pub fn scan_mac(text: &str, out: &mut Vec<Span>) {
    for m in MAC.find_iter(text) {
        let s = m.as_str();
        // One separator style throughout (regex has no back-references).
        let separators: Vec<char> = s.chars().filter(|c| matches!(c, ':' | '-' | '.')).collect();
        if separators.windows(2).any(|w| w[0] != w[1]) {
            continue;
        }
        let hex: String = s
            .chars()
            .filter(|c| c.is_ascii_hexdigit())
            .collect::<String>()
            .to_ascii_lowercase();
        if hex == "000000000000" || hex == "ffffffffffff" || char_after(text, m.end()) == Some(':')
        {
            continue;
        }
        out.push(span(m.start(), m.end(), Category::MacAddress, "mac", 0.9));
    }
}

pub fn scan_url_credentials(text: &str, out: &mut Vec<Span>) {
    for caps in URL_CREDENTIALS.captures_iter(text) {
        let credential = match (caps.get(1), caps.get(2)) {
            (Some(password), _) => !placeholder_value(password.as_str()),
            // A user name alone is a credential when it is a token: long, mixing letters
            // and digits, not a word ("https://maintainers-team@host" is not).
            (None, Some(user)) => {
                let u = user.as_str();
                u.bytes().any(|b| b.is_ascii_digit())
                    && u.bytes().any(|b| b.is_ascii_alphabetic())
                    && entropy(u) >= 3.5
            }
            (None, None) => false,
        };
        if credential {
            // The whole URL: with the password goes the host it opens.
            let whole = caps.get(0).expect("group 0");
            let end = whole.start()
                + whole
                    .as_str()
                    .trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '\'', '"'])
                    .len();
            out.push(span(
                whole.start(),
                end,
                Category::UrlCredentials,
                "url_credentials",
                0.995,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&str, &mut Vec<Span>), t: &str) -> Vec<String> {
        let mut out = Vec::new();
        f(t, &mut out);
        out.iter().map(|s| t[s.start..s.end].to_string()).collect()
    }

    #[test]
    fn ips() {
        assert_eq!(
            run(scan_ip, "ssh into 192.168.1.20, then"),
            ["192.168.1.20"]
        );
        assert_eq!(run(scan_ip, "from 198.18.0.7."), ["198.18.0.7"]);
        assert_eq!(
            run(scan_ip, "server 172.16.254.1 is down"),
            ["172.16.254.1"]
        );
        assert_eq!(
            run(scan_ip, "v6 2a00:1450:4001:81c::200e up"),
            ["2a00:1450:4001:81c::200e"]
        );
        assert_eq!(
            run(scan_ip, "fe80::1ff:fe23:4567:890a%eth0"),
            ["fe80::1ff:fe23:4567:890a"]
        );
    }

    #[test]
    fn documentation_ranges_are_reported_weakly() {
        for t in [
            "from 203.0.113.7.",
            "ping 192.0.2.1",
            "198.51.100.42 is down",
            "v6 2001:db8:85a3::8a2e:370:7334 up",
        ] {
            let mut out = Vec::new();
            scan_ip(t, &mut out);
            assert!(out.len() == 1 && out[0].confidence < 0.2, "{t}: {out:?}");
        }
    }

    #[test]
    fn ip_hard_negatives() {
        for t in [
            "version 1.2.3.4",
            "upgrade to v10.0.0.1",
            "Chrome 120.0.6099.109",
            "OID 1.3.6.1.4.1",
            "localhost 127.0.0.1",
            "mask 255.255.255.0",
            "std::vector<int> a; Foo::Bar::baz",
            "at 12:30:45 today",
            "section 3.1.2.4.5",
        ] {
            assert!(run(scan_ip, t).is_empty(), "{t}: {:?}", run(scan_ip, t));
        }
    }

    #[test]
    fn macs() {
        assert_eq!(
            run(scan_mac, "hw 00:1A:2B:3C:4D:5E ok"),
            ["00:1A:2B:3C:4D:5E"]
        );
        assert_eq!(run(scan_mac, "00-1a-2b-3c-4d-5e"), ["00-1a-2b-3c-4d-5e"]);
        assert_eq!(run(scan_mac, "cisco 001a.2b3c.4d5e"), ["001a.2b3c.4d5e"]);
        assert!(run(scan_mac, "00:1A-2B:3C:4D:5E").is_empty());
        assert!(run(scan_mac, "ff:ff:ff:ff:ff:ff").is_empty());
    }

    #[test]
    fn url_credentials() {
        assert_eq!(
            run(
                scan_url_credentials,
                "postgres://admin:Tr0ub4dor@db.internal:5432/app"
            ),
            ["postgres://admin:Tr0ub4dor@db.internal:5432/app"]
        );
        assert_eq!(
            run(scan_url_credentials, "https://bob:s3cr%21t@example.com/x"),
            ["https://bob:s3cr%21t@example.com/x"]
        );
        // '#' should be percent-encoded, but people paste passwords as they are.
        assert_eq!(
            run(
                scan_url_credentials,
                "(postgres://svc:Xq7#pL2v@db:5432/app)."
            ),
            ["postgres://svc:Xq7#pL2v@db:5432/app"]
        );
        assert!(run(
            scan_url_credentials,
            "postgres://user:password@localhost/db"
        )
        .is_empty());
        assert!(run(
            scan_url_credentials,
            "redis://default:${REDIS_PASSWORD}@cache:6379"
        )
        .is_empty());
        assert!(run(scan_url_credentials, "https://example.com/path?a=b@c").is_empty());
        for url in [
            "https://ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R@github.com/org/repo.git",
            "mongodb+srv://app:K8s9xQw2Lm@cluster0.ab1cd.mongodb.net/db?retryWrites=true",
            "amqp://guest2:Rabb1tPw@mq.internal:5672/vhost",
            "redis://:p4ssW0rdR3dis@cache.local:6379/0",
        ] {
            assert_eq!(
                run(scan_url_credentials, &format!("clone {url} now")),
                [url]
            );
        }
        for t in [
            "https://maintainers-team@git.host.org/x",
            "postgres://user:changeme@localhost/db",
            "mysql://root:<password>@db/app",
            "https://user:your-password-here@host/x",
        ] {
            assert!(run(scan_url_credentials, t).is_empty(), "{t}");
        }
    }
}
