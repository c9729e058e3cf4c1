//! Normalisation before matching, keeping a map back to byte offsets of the original input.
//!
//! Detectors see a cleaned text: invalid UTF-8 decoded lossily (one U+FFFD per invalid
//! sequence), invisible characters removed (zero-width, bidi controls and marks, soft hyphen,
//! tag characters, variation selectors), fullwidth and other-script digits and ASCII folded to
//! ASCII, every other character through its NFKC form (circled and mathematical digits,
//! ligatures, compatibility forms), Unicode spaces and dashes folded to ' ' and '-', control
//! characters to ' ', and Cyrillic/Greek lookalike letters folded to Latin
//! inside tokens that also contain ASCII letters or digits (a mixed-script token is an evasion;
//! a Russian word is not). A right-to-left override (U+202E) around digits and Latin letters
//! shows them reversed, so the run is read in the order a reader sees ("\u{202E}4321" is
//! "1234"). Every output byte remembers where its character began in the input, so a span
//! found in the clean text maps back to the original bytes. One pass, linear.

use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// The cleaned text and, for every byte of it, the input offset of the character it came from.
pub struct Normalized {
    pub text: String,
    /// `origin[i]` is the input byte offset of the character that produced `text` byte `i`;
    /// `origin[text.len()]` is the input length.
    origin: Vec<usize>,
    /// Reversed override runs: the clean byte range and the input range (override characters
    /// included). A span touching one maps to all of it, since its characters are out of order.
    reversed: Vec<(usize, usize, usize, usize)>,
}

/// Longest override run read reversed; a longer one is read as it stands (a paragraph under
/// an override is a display trick, not a disguised value).
const MAX_OVERRIDE_RUN: usize = 256;

impl Normalized {
    pub fn from_bytes(input: &[u8]) -> Normalized {
        let mut out = Normalized {
            text: String::with_capacity(input.len()),
            origin: Vec::with_capacity(input.len() + 1),
            reversed: Vec::new(),
        };
        let mut token: Vec<(char, usize)> = Vec::new();
        // An open override: where its U+202E stands and the characters since.
        let mut run: Option<(usize, Vec<(char, usize)>)> = None;
        let mut step = |out: &mut Normalized, c: char, at: usize| {
            if let Some((rlo_at, chars)) = &mut run {
                let closes = matches!(c, '\u{202C}' | '\u{2069}');
                if closes || c == '\n' || chars.len() == MAX_OVERRIDE_RUN {
                    let end = if closes { at + c.len_utf8() } else { at };
                    out.feed_override(&mut token, *rlo_at, chars, end);
                    run = None;
                    if !closes {
                        out.feed(&mut token, c, at);
                    }
                } else {
                    chars.push((c, at));
                }
            } else if c == '\u{202E}' {
                run = Some((at, Vec::new()));
            } else {
                out.feed(&mut token, c, at);
            }
        };
        let mut offset = 0;
        for chunk in input.utf8_chunks() {
            for (i, c) in chunk.valid().char_indices() {
                step(&mut out, c, offset + i);
            }
            offset += chunk.valid().len();
            if !chunk.invalid().is_empty() {
                step(&mut out, char::REPLACEMENT_CHARACTER, offset);
                offset += chunk.invalid().len();
            }
        }
        if let Some((rlo_at, chars)) = &run {
            out.feed_override(&mut token, *rlo_at, chars, input.len());
        }
        out.flush(&mut token);
        out.origin.push(input.len());
        out
    }

    pub fn from_text(input: &str) -> Normalized {
        Normalized::from_bytes(input.as_bytes())
    }

    /// Maps a byte range of the clean text to the input range it came from. The end maps to
    /// the start of the next kept character, so removed invisible characters right after a
    /// span are included in it (masking them too is harmless).
    pub fn original_range(&self, start: usize, end: usize) -> (usize, usize) {
        let (s, e) = (start.min(self.text.len()), end.min(self.text.len()));
        let (mut start, mut end) = (self.origin[s], self.origin[e]);
        for &(from, to, input_from, input_to) in &self.reversed {
            if from < e.max(s + 1) && s < to {
                start = start.min(input_from);
                end = end.max(input_to);
            }
        }
        (start, end.max(start))
    }

    /// The characters of an override run: reversed when none is a right-to-left letter
    /// (Arabic or Hebrew text under an override reads as it stands).
    fn feed_override(
        &mut self,
        token: &mut Vec<(char, usize)>,
        rlo_at: usize,
        chars: &[(char, usize)],
        end: usize,
    ) {
        let rtl = chars.iter().any(|&(c, _)| {
            c.is_alphabetic()
                && matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
        });
        if rtl {
            for &(c, at) in chars {
                self.feed(token, c, at);
            }
            return;
        }
        self.flush(token);
        let from = self.text.len();
        for &(c, at) in chars.iter().rev() {
            self.feed(token, c, at);
        }
        self.flush(token);
        self.reversed.push((from, self.text.len(), rlo_at, end));
    }

    fn feed(&mut self, token: &mut Vec<(char, usize)>, c: char, at: usize) {
        match fold(c) {
            Folded::Drop => {}
            Folded::Separator(s) => {
                self.flush(token);
                self.push(s, at);
            }
            Folded::Char(f) => token.push((f, at)),
            // A compatibility character ("①", "𝟘", "ﬁ", "㈠"): its NFKC form, each character
            // of it folded again (it may hold a space or a fullwidth digit), all from `at`.
            Folded::Compatibility(c) => {
                for d in std::iter::once(c).nfkc() {
                    match fold_plain(d) {
                        Folded::Separator(s) => {
                            self.flush(token);
                            self.push(s, at);
                        }
                        Folded::Char(f) | Folded::Compatibility(f) => token.push((f, at)),
                        Folded::Drop => {}
                    }
                }
            }
        }
    }

    fn flush(&mut self, token: &mut Vec<(char, usize)>) {
        let mixed = token.iter().any(|(c, _)| c.is_ascii_alphanumeric());
        for &(c, at) in token.iter() {
            let c = if mixed {
                latin_lookalike(c).unwrap_or(c)
            } else {
                c
            };
            self.push(c, at);
        }
        token.clear();
    }

    fn push(&mut self, c: char, at: usize) {
        let mut buf = [0u8; 4];
        let s = c.encode_utf8(&mut buf);
        self.text.push_str(s);
        self.origin.extend(std::iter::repeat_n(at, s.len()));
    }
}

enum Folded {
    Drop,
    Separator(char),
    Char(char),
    /// A character whose NFKC form differs from it.
    Compatibility(char),
}

fn fold(c: char) -> Folded {
    if c.is_ascii() {
        return match c {
            '\t' | '\n' | '\r' | ' ' => Folded::Separator(c),
            c if c.is_ascii_control() => Folded::Separator(' '),
            c => Folded::Char(c),
        };
    }
    match fold_plain(c) {
        Folded::Char(c) if is_nfkc_quick(std::iter::once(c)) != IsNormalized::Yes => {
            Folded::Compatibility(c)
        }
        folded => folded,
    }
}

/// `fold` without the NFKC step.
fn fold_plain(c: char) -> Folded {
    match c {
        // Zero-width, joiners, bidi controls and marks, word joiner and invisible operators,
        // BOM, soft hyphen, Hangul fillers, variation selectors, tag characters.
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{FEFF}'
        | '\u{00AD}'
        | '\u{180E}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{3164}'
        | '\u{FFA0}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{E0000}'..='\u{E007F}' => Folded::Drop,
        '\t' | '\n' | '\r' | ' ' => Folded::Separator(c),
        '\u{2028}' | '\u{2029}' => Folded::Separator('\n'),
        c if c.is_control() => Folded::Separator(' '),
        '\u{00A0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{3000}' => Folded::Separator(' '),
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' => Folded::Char('-'),
        // Fullwidth ASCII.
        '\u{FF01}'..='\u{FF5E}' => Folded::Char(char::from_u32(c as u32 - 0xFEE0).unwrap_or(c)),
        c => match other_script_digit(c) {
            Some(d) => Folded::Char(d),
            None => Folded::Char(c),
        },
    }
}

/// Decimal digits of other scripts as ASCII: Arabic-Indic, Eastern Arabic, N'Ko, the scripts
/// of India, Thai, Lao, Tibetan, Myanmar, Khmer, Mongolian, and the mathematical digits (bold,
/// double-struck, sans-serif, sans-serif bold, monospace). NFKC folds only the last group.
fn other_script_digit(c: char) -> Option<char> {
    const ZEROS: [u32; 24] = [
        0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
        0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x17E0, 0x1810, 0x1D7CE, 0x1D7D8, 0x1D7E2,
        0x1D7EC, 0x1D7F6,
    ];
    let u = c as u32;
    ZEROS
        .iter()
        .find(|&&z| (z..z + 10).contains(&u))
        .map(|&z| (b'0' + (u - z) as u8) as char)
}

/// Cyrillic and Greek letters that render like Latin ones.
#[rustfmt::skip]
fn latin_lookalike(c: char) -> Option<char> {
    Some(match c {
        'а' => 'a', 'в' => 'b', 'е' => 'e', 'к' => 'k', 'м' => 'm', 'н' => 'h', 'о' => 'o', 'р' => 'p',
        'с' => 'c', 'т' => 't', 'у' => 'y', 'х' => 'x', 'і' => 'i', 'ј' => 'j', 'ѕ' => 's', 'ԁ' => 'd',
        'ԛ' => 'q', 'ԝ' => 'w', 'һ' => 'h', 'ӏ' => 'l', 'ɡ' => 'g',
        'А' => 'A', 'В' => 'B', 'Е' => 'E', 'К' => 'K', 'М' => 'M', 'Н' => 'H', 'О' => 'O', 'Р' => 'P',
        'С' => 'C', 'Т' => 'T', 'У' => 'Y', 'Х' => 'X', 'І' => 'I', 'Ј' => 'J', 'Ѕ' => 'S', 'Ԛ' => 'Q',
        'Ԝ' => 'W', 'Ӏ' => 'I',
        'α' => 'a', 'ο' => 'o', 'ρ' => 'p', 'ι' => 'i', 'κ' => 'k', 'ν' => 'v', 'τ' => 't', 'υ' => 'u',
        'Α' => 'A', 'Β' => 'B', 'Ε' => 'E', 'Ζ' => 'Z', 'Η' => 'H', 'Ι' => 'I', 'Κ' => 'K', 'Μ' => 'M',
        'Ν' => 'N', 'Ο' => 'O', 'Ρ' => 'P', 'Τ' => 'T', 'Υ' => 'Y', 'Χ' => 'X',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn back<'a>(n: &Normalized, input: &'a str, needle: &str) -> &'a str {
        let s = n.text.find(needle).expect("needle in normalised text");
        let (a, b) = n.original_range(s, s + needle.len());
        &input[a..b]
    }

    #[test]
    fn zero_width_removed_offsets_kept() {
        let input = "mail: jo\u{200B}hn@ex\u{200D}ample.com!";
        let n = Normalized::from_text(input);
        assert_eq!(n.text, "mail: john@example.com!");
        assert_eq!(
            back(&n, input, "john@example.com"),
            "jo\u{200B}hn@ex\u{200D}ample.com"
        );
    }

    #[test]
    fn fullwidth_and_other_digits_fold() {
        let input = "card ４１１１ １１１１ and ٤١١١";
        let n = Normalized::from_text(input);
        assert_eq!(n.text, "card 4111 1111 and 4111");
        assert_eq!(back(&n, input, "4111 1111"), "４１１１ １１１１");
    }

    #[test]
    fn homoglyphs_fold_only_in_mixed_tokens() {
        let input = "key ѕk-рrоj-abc and Москва";
        let n = Normalized::from_text(input);
        assert_eq!(n.text, "key sk-proj-abc and Москва");
        assert_eq!(back(&n, input, "sk-proj-abc"), "ѕk-рrоj-abc");
    }

    #[test]
    fn invalid_utf8_maps_to_original_bytes() {
        let input: &[u8] = b"\xff\xfe bob@example.com \xc3";
        let n = Normalized::from_bytes(input);
        let s = n.text.find("bob@").unwrap();
        let (a, b) = n.original_range(s, s + "bob@example.com".len());
        assert_eq!(&input[a..b], b"bob@example.com");
        assert!(n.text.ends_with('\u{FFFD}'));
    }

    #[test]
    fn compatibility_forms_and_more_digit_scripts_fold() {
        let input = "id ①②③ 𝟒𝟓 𝟼𝟽 ৮৯ ௧௨ ๓๔ ㈠ ﬁle";
        let n = Normalized::from_text(input);
        assert_eq!(n.text, "id 123 45 67 89 12 34 (一) file");
        assert_eq!(back(&n, input, "123"), "①②③");
        assert_eq!(back(&n, input, "67"), "𝟼𝟽");
    }

    #[test]
    fn bidi_marks_tags_and_fillers_are_dropped() {
        let input = "tel \u{202B}+44\u{061C} 20\u{E0041} 7946\u{FE0F} 0958\u{202C}";
        let n = Normalized::from_text(input);
        assert_eq!(n.text, "tel +44 20 7946 0958");
        assert_eq!(back(&n, input, "+44 20"), "+44\u{061C} 20\u{E0041}");
    }

    #[test]
    fn override_runs_read_in_display_order() {
        let input = "ID \u{202E}4-3619284-7891-487\u{202C}, ok";
        let n = Normalized::from_text(input);
        assert_eq!(n.text, "ID 784-1987-4829163-4, ok");
        // Any part of the run maps to the whole run, override characters included.
        assert_eq!(
            back(&n, input, "1987"),
            "\u{202E}4-3619284-7891-487\u{202C}"
        );
        assert_eq!(back(&n, input, ", ok"), ", ok");
        // Unclosed: the run ends at the line's end.
        let n = Normalized::from_text("tel \u{202E}0958 7946\nnext");
        assert_eq!(n.text, "tel 6497 8590\nnext");
        // Arabic letters under an override stay in their order.
        let arabic = "\u{202E}مرحبا 12\u{202C}";
        assert_eq!(Normalized::from_text(arabic).text, "مرحبا 12");
    }

    #[test]
    fn cyrillic_words_and_accents_are_kept() {
        let input = "Привет, Сергей! Solène écrit à Zoë.";
        assert_eq!(Normalized::from_text(input).text, input);
    }

    #[test]
    fn control_characters_become_spaces() {
        let n = Normalized::from_bytes(b"a\x00b\x07c");
        assert_eq!(n.text, "a b c");
    }
}
