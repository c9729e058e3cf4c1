//! Check-digit algorithms of the identifiers we validate. Inputs are ASCII digits or
//! uppercase alphanumerics; anything else makes the check fail (never panic).

fn digit_values(s: &str) -> Option<Vec<u32>> {
    s.bytes()
        .map(|b| {
            if b.is_ascii_digit() {
                Some((b - b'0') as u32)
            } else {
                None
            }
        })
        .collect()
}

/// Luhn (payment cards, Swedish personnummer, Canadian SIN).
pub fn luhn(digits: &str) -> bool {
    let Some(d) = digit_values(digits) else {
        return false;
    };
    if d.len() < 2 {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 1 {
                let y = x * 2;
                if y > 9 {
                    y - 9
                } else {
                    y
                }
            } else {
                x
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// ISO 13616 IBAN check: first four characters moved to the end, letters as 10..35, mod 97 == 1.
pub fn iban_mod97(iban: &str) -> bool {
    if iban.len() < 5
        || !iban
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    {
        return false;
    }
    let (head, tail) = iban.split_at(4);
    let mut rem: u32 = 0;
    for b in tail.bytes().chain(head.bytes()) {
        let v = if b.is_ascii_digit() {
            (b - b'0') as u32
        } else {
            (b - b'A') as u32 + 10
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

/// Verhoeff (Indian Aadhaar).
pub fn verhoeff(digits: &str) -> bool {
    const D: [[u8; 10]; 10] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
        [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
        [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
        [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
        [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
        [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
        [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
        [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
        [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ];
    const P: [[u8; 10]; 8] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
        [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
        [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
        [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
        [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
        [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
        [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
    ];
    let Some(d) = digit_values(digits) else {
        return false;
    };
    let mut c = 0u8;
    for (i, &x) in d.iter().rev().enumerate() {
        c = D[c as usize][P[i % 8][x as usize] as usize];
    }
    !d.is_empty() && c == 0
}

/// ISO 7064 MOD 11-2 (Chinese resident identity card): 17 digits and a check of 0-9 or X.
pub fn cn_resident_id(id: &str) -> bool {
    const W: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    const CHECK: &[u8; 11] = b"10X98765432";
    let b = id.as_bytes();
    if b.len() != 18 {
        return false;
    }
    let Some(d) = digit_values(&id[..17]) else {
        return false;
    };
    let sum: u32 = d.iter().zip(W).map(|(x, w)| x * w).sum();
    b[17].to_ascii_uppercase() == CHECK[(sum % 11) as usize]
}

/// ISO 7064 MOD 11,10 (German Steuer-ID) plus its digit rule: among the first ten digits
/// exactly one digit occurs two or three times, and no digit more.
pub fn de_steuer_id(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let mut counts = [0u8; 10];
    for &x in &d[..10] {
        counts[x as usize] += 1;
    }
    let repeated: Vec<u8> = counts.iter().copied().filter(|&c| c > 1).collect();
    if repeated.len() != 1 || repeated[0] > 3 {
        return false;
    }
    let mut product = 10;
    for &x in &d[..10] {
        let mut sum = (x + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    let check = (11 - product) % 10;
    check == d[10]
}

/// French NIR (numéro de sécurité sociale): 13 characters and a two-digit key = 97 - n mod 97;
/// Corsican departments 2A/2B count as 19/18 after subtracting 1,000,000/2,000,000.
pub fn fr_nir(nir: &str) -> bool {
    if nir.len() != 15 {
        return false;
    }
    let (body, key) = nir.split_at(13);
    let Ok(key) = key.parse::<u64>() else {
        return false;
    };
    let upper = body.to_ascii_uppercase();
    let n = if upper.contains("2A") || upper.contains("2B") {
        let corsica = if upper.contains("2A") {
            1_000_000
        } else {
            2_000_000
        };
        let Ok(n) = upper
            .replacen("2A", "19", 1)
            .replacen("2B", "18", 1)
            .parse::<u64>()
        else {
            return false;
        };
        n - corsica
    } else {
        let Ok(n) = body.parse::<u64>() else {
            return false;
        };
        n
    };
    body.bytes().all(|b| b.is_ascii_alphanumeric()) && 97 - n % 97 == key
}

/// Spanish DNI (8 digits + letter) or NIE (X/Y/Z + 7 digits + letter).
pub fn es_dni_nie(id: &str) -> bool {
    const LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";
    let b = id.as_bytes();
    if b.len() != 9 {
        return false;
    }
    let mut number = String::with_capacity(8);
    match b[0] {
        b'X' => number.push('0'),
        b'Y' => number.push('1'),
        b'Z' => number.push('2'),
        c if c.is_ascii_digit() => number.push(c as char),
        _ => return false,
    }
    number.push_str(&id[1..8]);
    let Ok(n) = number.parse::<u32>() else {
        return false;
    };
    b[8] == LETTERS[(n % 23) as usize]
}

/// Italian codice fiscale: 15 characters and a check letter from odd/even position tables.
pub fn it_codice_fiscale(cf: &str) -> bool {
    const ODD: [u32; 26] = [
        1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24,
        23,
    ];
    let b = cf.as_bytes();
    if b.len() != 16
        || !b
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    {
        return false;
    }
    let mut sum = 0;
    for (i, &c) in b[..15].iter().enumerate() {
        let index = if c.is_ascii_digit() {
            (c - b'0') as usize
        } else {
            (c - b'A') as usize
        };
        // Positions are counted from 1, so index 0 is "odd".
        sum += if i % 2 == 0 { ODD[index] } else { index as u32 };
    }
    b[15] == b'A' + (sum % 26) as u8
}

/// Dutch BSN "11-test": weights 9..2 and -1 on the last digit.
pub fn nl_bsn(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 9 || d.iter().all(|&x| x == 0) {
        return false;
    }
    let sum: i64 = d[..8]
        .iter()
        .enumerate()
        .map(|(i, &x)| (9 - i as i64) * x as i64)
        .sum::<i64>()
        - d[8] as i64;
    sum % 11 == 0
}

/// Brazilian CPF: two mod-11 check digits; all-equal numbers are invalid.
pub fn br_cpf(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 11 || d.iter().all(|&x| x == d[0]) {
        return false;
    }
    let check = |n: usize| {
        let sum: u32 = d[..n]
            .iter()
            .enumerate()
            .map(|(i, &x)| x * (n as u32 + 1 - i as u32))
            .sum();
        let r = (sum * 10) % 11;
        if r == 10 {
            0
        } else {
            r
        }
    };
    check(9) == d[9] && check(10) == d[10]
}

/// Korean resident registration number: weights 2..9,2..5 over twelve digits, check
/// (11 - sum mod 11) mod 10. Numbers issued since October 2020 no longer carry it.
pub fn kr_rrn(id: &str) -> bool {
    const W: [u32; 12] = [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5];
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 13 {
        return false;
    }
    let sum: u32 = d.iter().zip(W).map(|(x, w)| x * w).sum();
    (11 - sum % 11) % 10 == d[12]
}

/// Japanese My Number (individual number): eleven digits and a check digit; counted from the
/// right, digit n weighs n + 1 (n <= 6) or n - 5; check 0 when the remainder mod 11 is <= 1,
/// else 11 - remainder.
pub fn jp_my_number(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 12 {
        return false;
    }
    let sum: u32 = (1..=11u32)
        .map(|n| {
            let q = if n <= 6 { n + 1 } else { n - 5 };
            d[11 - n as usize] * q
        })
        .sum();
    let r = sum % 11;
    d[11] == if r <= 1 { 0 } else { 11 - r }
}

/// Portuguese NIF (número de identificação fiscal): nine digits weighted 9..2; the check is
/// 11 - the sum mod 11, 0 where that is 10 or 11. The first digit names the holder type
/// (1-3 people, 45 non-residents, 5 companies, 6 public bodies, 7x/8x/9x other entities).
pub fn pt_nif(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 9 || d[0] == 0 || d[0] == 4 && d[1] != 5 {
        return false;
    }
    let sum: u32 = d[..8].iter().zip((2..=9).rev()).map(|(&x, w)| x * w).sum();
    let check = 11 - sum % 11;
    d[8] == if check >= 10 { 0 } else { check }
}

/// UAE Emirates ID: fifteen digits, 784 (the country), the holder's birth year, seven digits
/// and a Luhn check digit.
pub fn ae_emirates_id(id: &str) -> bool {
    let year = id.get(3..7).and_then(|y| y.parse::<u32>().ok());
    id.len() == 15
        && id.starts_with("784")
        && year.is_some_and(|y| (1900..=2099).contains(&y))
        && luhn(id)
}

/// Turkish T.C. Kimlik No: eleven digits, no leading zero; the tenth is (7 x the odd-position
/// sum - the even-position sum) mod 10, the eleventh the sum of the first ten mod 10.
pub fn tr_kimlik(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let odd: i64 = [0, 2, 4, 6, 8].iter().map(|&i| d[i] as i64).sum();
    let even: i64 = [1, 3, 5, 7].iter().map(|&i| d[i] as i64).sum();
    (odd * 7 - even).rem_euclid(10) == d[9] as i64 && d[..10].iter().sum::<u32>() % 10 == d[10]
}

/// Russian SNILS: nine digits weighted 9..1; the sum (below 100), 0 (100 or 101), or the sum
/// mod 101 (100 read as 0) is the two-digit check.
pub fn ru_snils(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 11 {
        return false;
    }
    let sum: u32 = d[..9]
        .iter()
        .enumerate()
        .map(|(i, &x)| x * (9 - i as u32))
        .sum();
    let check = match sum {
        0..=99 => sum,
        100 | 101 => 0,
        _ => match sum % 101 {
            100 => 0,
            r => r,
        },
    };
    check == d[9] * 10 + d[10]
}

/// Russian INN: ten digits (an organisation, one check) or twelve (a person, two checks),
/// each a weighted sum mod 11 mod 10.
pub fn ru_inn(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    let check = |weights: &[u32]| weights.iter().zip(&d).map(|(w, x)| w * x).sum::<u32>() % 11 % 10;
    match d.len() {
        10 => check(&[2, 4, 10, 3, 5, 9, 4, 6, 8]) == d[9],
        12 => {
            check(&[7, 2, 4, 10, 3, 5, 9, 4, 6, 8]) == d[10]
                && check(&[3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8]) == d[11]
        }
        _ => false,
    }
}

/// UK NHS number: weights 10..2, check = 11 - sum mod 11 (11 -> 0, 10 invalid).
pub fn nhs_number(id: &str) -> bool {
    let Some(d) = digit_values(id) else {
        return false;
    };
    if d.len() != 10 {
        return false;
    }
    let sum: u32 = d[..9]
        .iter()
        .enumerate()
        .map(|(i, &x)| x * (10 - i as u32))
        .sum();
    let check = 11 - sum % 11;
    match check {
        11 => d[9] == 0,
        10 => false,
        c => d[9] == c,
    }
}

/// ISBN-10 (weights 10..1, X = 10) or ISBN-13 (weights 1,3 alternating).
pub fn isbn(s: &str) -> bool {
    let b = s.as_bytes();
    match b.len() {
        10 => {
            let mut sum = 0;
            for (i, &c) in b.iter().enumerate() {
                let v = match c {
                    b'0'..=b'9' => (c - b'0') as u32,
                    b'X' | b'x' if i == 9 => 10,
                    _ => return false,
                };
                sum += v * (10 - i as u32);
            }
            sum % 11 == 0
        }
        13 => {
            let Some(d) = digit_values(s) else {
                return false;
            };
            (s.starts_with("978") || s.starts_with("979"))
                && d.iter()
                    .enumerate()
                    .map(|(i, &x)| if i % 2 == 0 { x } else { 3 * x })
                    .sum::<u32>()
                    % 10
                    == 0
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_known() {
        assert!(luhn("4111111111111111"));
        assert!(luhn("79927398713"));
        assert!(!luhn("4111111111111112"));
        assert!(!luhn("41x1"));
    }

    #[test]
    fn iban_known() {
        assert!(iban_mod97("DE89370400440532013000"));
        assert!(iban_mod97("GB82WEST12345698765432"));
        assert!(iban_mod97("FR1420041010050500013M02606"));
        assert!(!iban_mod97("DE89370400440532013001"));
    }

    #[test]
    fn verhoeff_known() {
        assert!(verhoeff("2363"));
        assert!(!verhoeff("2364"));
    }

    #[test]
    fn national_ids_known() {
        assert!(cn_resident_id("11010519491231002X"));
        assert!(!cn_resident_id("110105194912310021"));
        assert!(de_steuer_id("86095742719"));
        assert!(!de_steuer_id("86095742718"));
        assert!(fr_nir("255081416802538"));
        assert!(!fr_nir("255081416802539"));
        assert!(es_dni_nie("12345678Z"));
        assert!(es_dni_nie("X1234567L"));
        assert!(!es_dni_nie("12345678A"));
        assert!(it_codice_fiscale("RSSMRA85T10A562S"));
        assert!(!it_codice_fiscale("RSSMRA85T10A562T"));
        assert!(nl_bsn("111222333"));
        assert!(!nl_bsn("111222334"));
        assert!(br_cpf("52998224725"));
        assert!(!br_cpf("52998224726"));
        assert!(!br_cpf("11111111111"));
        assert!(kr_rrn("8001011234560"));
        assert!(!kr_rrn("8001011234563"));
        assert!(jp_my_number("123456789018"));
        assert!(!jp_my_number("123456789017"));
        assert!(tr_kimlik("10000000146"));
        assert!(!tr_kimlik("10000000147"));
        assert!(ru_snils("11223344595"));
        assert!(!ru_snils("11223344596"));
        assert!(ru_inn("7707083893"));
        assert!(!ru_inn("7707083894"));
        assert!(ru_inn("500100732259"));
        assert!(!ru_inn("500100732258"));
        assert!(nhs_number("9434765919"));
        assert!(pt_nif("123456789"));
        assert!(!pt_nif("123456788"));
        assert!(!pt_nif("023456789"));
        assert!(ae_emirates_id("784198012345678"));
        assert!(!ae_emirates_id("784198012345679"));
        assert!(!ae_emirates_id("785198012345670"), "another country");
        assert!(!nhs_number("9434765918"));
    }

    #[test]
    fn isbn_known() {
        assert!(isbn("9780306406157"));
        assert!(isbn("0306406152"));
        assert!(!isbn("9780306406158"));
    }
}
