//! Cryptocurrency wallet addresses: Bitcoin base58check (legacy and P2SH) and bech32/bech32m
//! (segwit), Ethereum 0x addresses with the EIP-55 checksum when the case is mixed. And what
//! spends from a wallet, which is a secret: WIF private keys and BIP-32 extended private keys
//! (base58check), 64-hex private keys near a word for a private key or wallet, and BIP-39
//! recovery phrases (12 to 24 words of the English list, the checksum verified).
//!
//! `bip39_english.txt` is the BIP-39 English wordlist as shipped by the PyPI package `mnemonic`
//! (MIT licence, see `bip39_english.LICENSE.txt`).

use std::sync::LazyLock;

use regex::Regex;

use super::context::{before, span, word_bounded};
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

/// The payload of a base58check string of `len` bytes in all (payload and a 4-byte
/// double-SHA-256 checksum), if the checksum holds.
fn base58check_payload(s: &str, len: usize) -> Option<Vec<u8>> {
    let mut raw = base58_decode(s)?;
    if raw.len() != len {
        return None;
    }
    let check = raw.split_off(len - 4);
    (sha256(&sha256(&raw))[..4] == *check).then_some(raw)
}

/// Version byte + 20-byte hash + 4-byte double-SHA-256 checksum.
fn base58check(s: &str) -> bool {
    base58check_payload(s, 25).is_some()
}

/// Wallet Import Format: version 0x80 (0xEF on testnet), 32 key bytes, 0x01 when compressed.
fn wif_key(s: &str) -> bool {
    let valid = |p: Vec<u8>| matches!(p[0], 0x80 | 0xEF) && (p.len() == 33 || p[33] == 0x01);
    base58check_payload(s, 37).is_some_and(valid) || base58check_payload(s, 38).is_some_and(valid)
}

static WIF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)[5KL9c][1-9A-HJ-NP-Za-km-z]{50,51}(?-u:\b)").expect("wif regex")
});
/// BIP-32 extended private keys (xprv, and the yprv/zprv/tprv variants): 78 bytes.
static EXTENDED_PRIVATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)[xyzt]prv[1-9A-HJ-NP-Za-km-z]{100,112}(?-u:\b)").expect("xprv regex")
});
static HEX_KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)(?:0x)?[0-9a-fA-F]{64}(?-u:\b)").expect("hex key regex"));
/// Words for a private key, a wallet or a seed, in the gate's locales.
static PRIVATE_KEY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)priv|secret|wallet|seed|metamask|mnemonic|signing key|(?-u:\b)key(?-u:\b)|schl[üu]ssel|cl[ée] priv|clave privada|chiave privata|chave privada|[öo]zel anahtar|c[üu]zdan",
        r"|私钥|私鑰|钱包|秘密鍵|ウォレット|개인키|개인 키|지갑|приватн|секретн|кошел|निजी कुंजी|वॉलेट|مفتاح خاص|المفتاح الخاص|محفظة",
    ))
    .expect("private key word regex")
});
/// Words that make 64 hex digits a hash: transactions, blocks, files, commits.
static HASH_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)tx|txid|transaction|hash|sha|block|checksum|digest|commit|merkle|public|pubkey|address").expect("hash word regex")
});
const KEY_WORD_WINDOW: usize = 48;

/// The BIP-39 English wordlist, in order: a word's index is its 11-bit value, and the list is
/// sorted, so a binary search finds it.
static BIP39: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| include_str!("bip39_english.txt").lines().collect());

/// `BIP39` as integers (`word_key`), in the same order: every ASCII word of a text is looked
/// up, and comparing integers is cheaper than comparing strings.
static BIP39_KEYS: LazyLock<Vec<u64>> =
    LazyLock::new(|| BIP39.iter().map(|w| word_key(w.as_bytes())).collect());

/// A word of at most 8 bytes as a big-endian integer padded with zeros: the integers order as
/// the words do (a prefix first, since zero is below any letter).
fn word_key(word: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..word.len()].copy_from_slice(word);
    u64::from_be_bytes(bytes)
}

/// The list index of an ASCII word of any case, if it is on the list (3 to 8 letters).
fn bip39_index(word: &[u8]) -> Option<u16> {
    if !(3..=8).contains(&word.len()) {
        return None;
    }
    let mut lower = [0u8; 8];
    lower[..word.len()].copy_from_slice(word);
    lower.make_ascii_lowercase();
    BIP39_KEYS
        .binary_search(&word_key(&lower))
        .ok()
        .map(|i| i as u16)
}

/// (start, end) of every run of ASCII letters.
fn ascii_words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() && !b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        (start < i).then_some((start, i))
    })
}

/// The checksum of a BIP-39 phrase: the first n/3 bits after the entropy are the first bits
/// of SHA-256 of the entropy.
fn bip39_checksum(indices: &[u16]) -> bool {
    let n = indices.len();
    if !matches!(n, 12 | 15 | 18 | 21 | 24) {
        return false;
    }
    let mut bits: Vec<bool> = Vec::with_capacity(n * 11);
    for &i in indices {
        bits.extend((0..11).rev().map(|b| (i >> b) & 1 == 1));
    }
    let checksum_bits = n / 3;
    let (entropy_bits, checksum) = bits.split_at(n * 11 - checksum_bits);
    let entropy: Vec<u8> = entropy_bits
        .chunks(8)
        .map(|c| c.iter().fold(0u8, |acc, &b| (acc << 1) | b as u8))
        .collect();
    let hash = sha256(&entropy);
    checksum
        .iter()
        .enumerate()
        .all(|(k, &bit)| ((hash[k / 8] >> (7 - k % 8)) & 1 == 1) == bit)
}

/// Runs of 12 or more consecutive words of the list, separated only by spaces, punctuation
/// and numbering ("1. abandon 2. ability ..."). Outside a phrase the list is rare in a row: it
/// holds none of the commonest English words (the, a, of, to, and, is, in, for...).
fn scan_mnemonic(text: &str, out: &mut Vec<Span>) {
    let mut run: Vec<(usize, usize, u16)> = Vec::new();
    let flush = |run: &mut Vec<(usize, usize, u16)>, out: &mut Vec<Span>| {
        if run.len() >= 12 {
            let indices: Vec<u16> = run.iter().map(|&(_, _, i)| i).collect();
            let valid = [24, 21, 18, 15, 12]
                .iter()
                .any(|&n| n <= indices.len() && indices.windows(n).any(bip39_checksum));
            let (start, end) = (run[0].0, run[run.len() - 1].1);
            let (detector, confidence) = if valid {
                ("bip39_mnemonic", 0.99)
            } else {
                ("bip39_wordlist_run", 0.9)
            };
            out.push(span(start, end, Category::Secret, detector, confidence));
        }
        run.clear();
    };
    for (start, end) in ascii_words(text) {
        let gap_ok = run.last().is_some_and(|&(_, last_end, _)| {
            let gap = &text.as_bytes()[last_end..start];
            gap.len() <= 8
                && gap.iter().all(|&b| {
                    b.is_ascii_whitespace() || b.is_ascii_digit() || b".,;:)(-#|/\"'".contains(&b)
                })
        });
        if !gap_ok {
            flush(&mut run, out);
        }
        match bip39_index(&text.as_bytes()[start..end]) {
            Some(i) => run.push((start, end, i)),
            None => flush(&mut run, out),
        }
    }
    flush(&mut run, out);
}

/// Keys that spend from a wallet: secrets, whatever the text around them says.
fn scan_private_keys(text: &str, out: &mut Vec<Span>) {
    for m in WIF.find_iter(text) {
        if wif_key(m.as_str()) {
            out.push(span(
                m.start(),
                m.end(),
                Category::Secret,
                "wallet_wif_key",
                0.99,
            ));
        }
    }
    for m in EXTENDED_PRIVATE.find_iter(text) {
        if base58check_payload(m.as_str(), 82).is_some() {
            out.push(span(
                m.start(),
                m.end(),
                Category::Secret,
                "bip32_private_key",
                0.99,
            ));
        }
    }
    for m in HEX_KEY.find_iter(text) {
        let window = before(text, m.start(), KEY_WORD_WINDOW);
        let hex = m.as_str().trim_start_matches("0x");
        let varied = hex.bytes().collect::<std::collections::HashSet<u8>>().len() >= 8;
        if varied && PRIVATE_KEY_WORD.is_match(window) && !HASH_WORD.is_match(window) {
            out.push(span(
                m.start(),
                m.end(),
                Category::Secret,
                "wallet_private_key_hex",
                0.95,
            ));
        }
    }
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
    scan_private_keys(text, out);
    scan_mnemonic(text, out);
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
    fn wallet_secrets() {
        for (t, detector) in [
            // Published WIF examples, uncompressed and compressed.
            ("5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ", "wallet_wif_key"),
            ("KwDiBf89QgGbjEhKnhXJuH7LrciVrZi3qYjgd9M7rFU73sVHnoWn", "wallet_wif_key"),
            (
                "my metamask private key 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
                "wallet_private_key_hex",
            ),
            (
                "钱包私钥 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
                "wallet_private_key_hex",
            ),
            (
                "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
                "bip32_private_key",
            ),
            (
                "seed: legal winner thank year wave sausage worth useful legal winner thank yellow",
                "bip39_mnemonic",
            ),
            (
                "1. legal 2. winner 3. thank 4. year 5. wave 6. sausage 7. worth 8. useful 9. legal 10. winner 11. thank 12. yellow",
                "bip39_mnemonic",
            ),
            (
                "abandon ability able about above absent absorb abstract absurd abuse access accident",
                "bip39_wordlist_run",
            ),
        ] {
            let mut out = Vec::new();
            scan(t, &mut out);
            assert!(
                out.iter()
                    .any(|s| s.detector == detector && s.category == Category::Secret),
                "{t}: {out:?}"
            );
        }
    }

    #[test]
    fn wordlist_is_sorted_and_complete() {
        assert_eq!(BIP39.len(), 2048);
        assert!(BIP39.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(bip39_index(b"Abandon"), Some(0));
        assert_eq!(bip39_index(b"zoo"), Some(2047));
        assert_eq!(bip39_index(b"the"), None);
        assert_eq!(bip39_index(b"aban"), None);
        assert!(BIP39
            .iter()
            .enumerate()
            .all(|(i, w)| bip39_index(w.as_bytes()) == Some(i as u16)));
    }

    #[test]
    fn wallet_secret_hard_negatives() {
        for t in [
            "tx hash 0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "the key 0000000000000000000000000000000000000000000000000000000000000000",
            "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTK",
            "I will have that wine you found at the market and cook dinner for our family this year",
            "legal winner thank year wave sausage worth useful legal winner",
        ] {
            let mut out = Vec::new();
            scan(t, &mut out);
            assert!(
                out.iter().all(|s| s.category != Category::Secret),
                "{t}: {out:?}"
            );
        }
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
