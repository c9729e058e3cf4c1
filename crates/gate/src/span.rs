//! What every detector reports: a byte range of the inspected text, what kind of sensitive
//! thing it is, which detector found it and how sure it is.

use serde::{Deserialize, Serialize};

/// Kinds of sensitive content. Identifiers and names are spans of text; topics describe the
/// whole document (their spans cover the sentence that gave them away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    // Identifiers (pattern + validation tier).
    Email,
    Phone,
    PaymentCard,
    Iban,
    NationalId,
    Passport,
    DriversLicence,
    IpAddress,
    MacAddress,
    UrlCredentials,
    Secret,
    CryptoWallet,
    DateOfBirth,
    StreetAddress,
    MedicalRecord,
    InsuranceNumber,
    // Names (learned tagger + gazetteers).
    Person,
    Location,
    Organization,
    // Sensitive topics (learned document classifier).
    Health,
    MentalHealth,
    Sexuality,
    Religion,
    Politics,
    Ethnicity,
    Finances,
    /// Other legal matters: lawsuits, custody, eviction proceedings, fines.
    Legal,
    Children,
    Biometrics,
    /// Residence, visa or asylum status, being undocumented, deportation.
    Immigration,
    /// A person's arrests, charges, convictions, prison, probation, criminal record.
    CriminalHistory,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Identifier,
    Name,
    Topic,
}

impl Category {
    pub fn tier(self) -> Tier {
        use Category::*;
        match self {
            Person | Location | Organization => Tier::Name,
            Health | MentalHealth | Sexuality | Religion | Politics | Ethnicity | Finances
            | Legal | Children | Biometrics | Immigration | CriminalHistory => Tier::Topic,
            _ => Tier::Identifier,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// Byte offsets into the original (not normalised) text, `start..end`.
    pub start: usize,
    pub end: usize,
    pub category: Category,
    /// Name of the detector that found it, e.g. "luhn", "iban_mod97", "ner", "topic".
    pub detector: String,
    /// 0..=1. Pattern detectors with a passing checksum report 1.0 or close to it.
    pub confidence: f32,
}
