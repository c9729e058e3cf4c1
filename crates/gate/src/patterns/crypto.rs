//! Cryptocurrency wallet addresses: Bitcoin base58check (legacy and P2SH) and bech32/bech32m
//! (segwit), Ethereum 0x addresses with the EIP-55 checksum when the case is mixed.

use std::sync::LazyLock;

use regex::Regex;

use super::context::{span, word_bounded};
use super::hash::{keccak256, sha256};
use crate::span::{Category, Span};

static BASE58: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[13mn2][1-9A-HJ-NP-Za-km-z]{25,34}").expect("base58 regex"));
static BECH32: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:bc|tb|ltc)1[02-9ac-hj-np-z]{8,87}").expect("bech32 regex")
});
static ETH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"0x[0-9a-fA-F]{40}").expect("eth regex"));

fn base58_decode(s: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut bytes: Vec<u8> = Vec::new();
    for c in s.bytes() {
        let mut carry = ALPHABET.iter().position(|&a| a == c)? as u32;
        for b in bytes.iter_mut().rev() {
            carry += *b as u32 * 58;
            *b = carry as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.insert(0, carry as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    let mut out = vec![0u8; zeros];
    out.extend(bytes);
    Some(out)
}

/// Version byte + 20-byte hash + 4-byte double-SHA-256 checksum.
fn base58check(s: &str) -> bool {
    let Some(raw) = base58_decode(s) else {
        return false;
    };
    if raw.len() != 25 {
        return false;
    }
    let (payload, check) = raw.split_at(21);
    sha256(&sha256(payload))[..4] == *check
}

fn bech32_checksum(s: &str) -> bool {
    const CHARSET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const GEN: [u32; 5] = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
    let lower = s.to_ascii_lowercase();
    if lower != s && s.to_ascii_uppercase() != s {
        return false;
    }
    let Some(sep) = lower.rfind('1') else {
        return false;
    };
    let (hrp, data) = (&lower[..sep], &lower[sep + 1..]);
    let mut values: Vec<u8> = hrp.bytes().map(|b| b >> 5).collect();
    values.push(0);
    values.extend(hrp.bytes().map(|b| b & 31));
    for c in data.bytes() {
        let Some(v) = CHARSET.iter().position(|&x| x == c) else {
            return false;
        };
        values.push(v as u8);
    }
    let mut chk: u32 = 1;
    for v in values {
        let top = chk >> 25;
        chk = ((chk & 0x1ffffff) << 5) ^ v as u32;
        for (i, g) in GEN.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    // bech32 (segwit v0) or bech32m (taproot and later).
    chk == 1 || chk == 0x2bc830a3
}

/// EIP-55: a hex letter is upper case exactly when the matching nibble of keccak256 of the
/// lower-case address is >= 8.
fn eip55(addr: &str) -> bool {
    let hex = &addr[2..];
    let hash = keccak256(hex.to_ascii_lowercase().as_bytes());
    hex.bytes().enumerate().all(|(i, c)| {
        let nibble = if i % 2 == 0 {
            hash[i / 2] >> 4
        } else {
            hash[i / 2] & 0xf
        };
        !c.is_ascii_alphabetic() || (nibble >= 8) == c.is_ascii_uppercase()
    })
}

pub fn scan(text: &str, out: &mut Vec<Span>) {
    for m in BASE58.find_iter(text) {
        if word_bounded(text, m.start(), m.end()) && base58check(m.as_str()) {
            out.push(span(
                m.start(),
                m.end(),
                Category::CryptoWallet,
                "btc_base58check",
                0.99,
            ));
        }
    }
    for m in BECH32.find_iter(text) {
        if word_bounded(text, m.start(), m.end()) && bech32_checksum(m.as_str()) {
            out.push(span(
                m.start(),
                m.end(),
                Category::CryptoWallet,
                "btc_bech32",
                0.99,
            ));
        }
    }
    for m in ETH.find_iter(text) {
        if !word_bounded(text, m.start(), m.end()) {
            continue;
        }
        let hex = &m.as_str()[2..];
        let mixed = hex.bytes().any(|b| b.is_ascii_lowercase())
            && hex.bytes().any(|b| b.is_ascii_uppercase());
        match (mixed, mixed && eip55(m.as_str())) {
            (true, true) => out.push(span(
                m.start(),
                m.end(),
                Category::CryptoWallet,
                "eth_eip55",
                0.99,
            )),
            (true, false) => {}
            // Single-case addresses carry no checksum; still an address shape.
            (false, _) => out.push(span(
                m.start(),
                m.end(),
                Category::CryptoWallet,
                "eth_address",
                0.85,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wallets(t: &str) -> Vec<String> {
        let mut out = Vec::new();
        scan(t, &mut out);
        out.iter().map(|s| s.detector.clone()).collect()
    }

    #[test]
    fn positives() {
        assert_eq!(
            wallets("send to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"),
            ["btc_base58check"]
        );
        assert_eq!(
            wallets("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"),
            ["btc_base58check"]
        );
        assert_eq!(
            wallets("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
            ["btc_bech32"]
        );
        assert_eq!(
            wallets("bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"),
            ["btc_bech32"]
        );
        assert_eq!(
            wallets("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
            ["eth_eip55"]
        );
        assert_eq!(
            wallets("0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"),
            ["eth_eip55"]
        );
        assert_eq!(
            wallets("0xde0b295669a9fd93d5f28d9ec85e40f4cb697bae"),
            ["eth_address"]
        );
    }

    #[test]
    fn hard_negatives() {
        assert!(
            wallets("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3").is_empty(),
            "base58 checksum"
        );
        assert!(
            wallets("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr").is_empty(),
            "bech32 checksum"
        );
        assert!(
            wallets("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed").is_empty(),
            "EIP-55 case"
        );
        let tx = "tx 0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b";
        assert!(
            wallets(tx).is_empty(),
            "a 64-hex transaction hash is not an address"
        );
    }
}
