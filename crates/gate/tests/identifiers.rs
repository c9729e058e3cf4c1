//! The identifier tier end to end (normalise, detect, resolve, policy): realistic prompts
//! with each kind of identifier, and hard negatives that look like identifiers but are not.

use lily_gate::{Category, Decision, Destination, Gate, Policy};

fn categories(text: &str) -> (Decision, Vec<Category>) {
    let v = Gate::identifiers_only(Policy::default_policy()).inspect(text, Destination::Cloud);
    (
        v.decision,
        v.findings.iter().map(|f| f.span.category).collect(),
    )
}

#[test]
fn realistic_positives() {
    use Category::*;
    let cases: &[(&str, Category, Decision)] = &[
        (
            "Can you draft a reply to priya.sharma@acme-corp.com declining the meeting?",
            Email,
            Decision::Mask,
        ),
        (
            "My number changed, it's now +1 (646) 555-0199, update the contact card",
            Phone,
            Decision::Mask,
        ),
        ("Ruf mich unter 0171 2345678 an", Phone, Decision::Mask),
        (
            "Why was my Mastercard 5555 5555 5555 4444 declined abroad?",
            PaymentCard,
            Decision::Mask,
        ),
        (
            "Is IBAN GB33BUKB20201555555555 a UK account?",
            Iban,
            Decision::Mask,
        ),
        (
            "Fill the form: SSN 219-09-9999, born 1970",
            NationalId,
            Decision::Mask,
        ),
        (
            "Mi DNI es 87654321X y necesito renovarlo",
            NationalId,
            Decision::Mask,
        ),
        (
            "Passport no: 533380006, expiry 2031",
            Passport,
            Decision::Mask,
        ),
        ("server 172.16.254.1 refuses ssh", IpAddress, Decision::Mask),
        (
            "git remote add origin https://deploy:gh4Kx9Lm2Qp@git.example.com/repo.git",
            UrlCredentials,
            Decision::Refuse,
        ),
        (
            "here is my key AKIAIOSFODNN7EXAMPLE can you check the policy",
            Secret,
            Decision::Refuse,
        ),
        (
            "donate to bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
            CryptoWallet,
            Decision::Mask,
        ),
        (
            "The patient (DOB 04/12/1961) reports",
            DateOfBirth,
            Decision::Mask,
        ),
        (
            "Send it to 350 Fifth Avenue, New York, NY 10118",
            StreetAddress,
            Decision::Mask,
        ),
        (
            "MRN: 4471902 admitted yesterday",
            MedicalRecord,
            Decision::Mask,
        ),
        (
            "Versichertennummer A123456780",
            InsuranceNumber,
            Decision::Mask,
        ),
        (
            "router MAC is a4:5e:60:c2:1b:0f",
            MacAddress,
            Decision::Mask,
        ),
    ];
    for &(text, category, decision) in cases {
        let (got, cats) = categories(text);
        assert!(
            cats.contains(&category),
            "{text}: expected {category:?}, got {cats:?}"
        );
        assert_eq!(got, decision, "{text}: {cats:?}");
    }
}

#[test]
fn hard_negatives_are_allowed() {
    for text in [
        "Order #112-4456789-1234567 has not arrived",
        "ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2",
        "SKU WX-4410-BLK costs 49.99",
        "iPhone 15 Pro model A2848",
        "upgrade from 1.2.3 to 2.0.0-rc.1, node v18.17.1, Windows 10.0.19041.3086",
        "timestamp 2024-03-01T12:34:56Z, epoch 1709296496, 1709296496123 ms",
        "commit 3f786850e387550fdab836ed7c61e8e1c7b6cf3c fixed the flaky test",
        "image sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "request id 550e8400-e29b-41d4-a716-446655440000 failed",
        "the answer is 3.14159265358979 and e = 2.718281828459045",
        "listen on localhost:8080 and 0.0.0.0:443",
        "color #ff00aa, rgba(12, 34, 56, 0.5)",
        "Paris is at 48.8566, 2.3522",
        "cron 0 30 2 * * 1-5",
        "population 8 045 311 447 in 2023",
        "invoice INV-2024-000123 total 1,234.56 EUR",
        "see RFC 7231 section 6.5.1 and CVE-2021-44228",
        "call stack depth 1024 at 0x7ffd5e8a1c40",
        "track 1Z999AA10123456784 via UPS",
        "the book 'Harry Potter' was published in 1997",
        "The meeting is on 12/05/2024 at 10:30",
        "password requirements: at least 8 characters",
        "My password is too short",
        "invoice 34655318402 paid, ticket 351912483706 closed",
        "Python 3.12 の変更点を2-3行で",
        "a rua estava vazia, passport photos are 35x45 mm",
    ] {
        let (decision, cats) = categories(text);
        assert_eq!(decision, Decision::Allow, "{text}: {cats:?}");
    }
}

#[test]
fn public_test_values_and_placeholders_are_allowed() {
    for text in [
        "Send the invite to alice@example.com, bob@docs.example.org and carol@app.test",
        "Stripe test card 4242 4242 4242 4242 is declined in my sandbox checkout",
        "Testkarte 5555 5555 5555 4444 im Sandbox-Modus",
        "the docs use 192.0.2.10, 198.51.100.7, 203.0.113.99 and 2001:db8::1",
        "Set API_KEY=your-api-key-here and DB_PASSWORD=changeme in .env.example",
        "password: <password>, token: ***, secret: xxx",
        "image sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "uuid 123e4567-e89b-12d3-a456-426614174000 and commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
        "curl -u $USER:$TOKEN https://api.github.com/user",
        "mysql -u root -p mydb",
        "Mein Passwort ist zu kurz, was tun?",
        "我忘记密码了",
        "테스트 메일은 qa@example.com으로 보내고 서버는 203.0.113.42예요",
    ] {
        let (decision, cats) = categories(text);
        assert_eq!(decision, Decision::Allow, "{text}: {cats:?}");
    }
}

#[test]
fn a_value_reversed_under_an_override_is_read_and_masked_whole() {
    // Shown as 784-1980-1234567-8 (an Emirates ID) by a right-to-left override.
    let text = "رقم الهوية \u{202E}8-7654321-0891-487\u{202C} للعقد";
    let v = Gate::identifiers_only(Policy::default_policy()).inspect(text, Destination::Cloud);
    assert_eq!(v.decision, Decision::Mask, "{:?}", v.findings);
    let masked = v.masked_text.expect("masked");
    assert!(
        !masked.contains("7654321") && !masked.contains('\u{202E}'),
        "{masked}"
    );
}

#[test]
fn secrets_outside_provider_formats_are_refused() {
    for text in [
        "git clone https://ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R@github.com/acme/api.git",
        "Authorization: Basic YWxpY2U6UzNjcmV0UGFzcyE=",
        "curl -u deploy:Xk92!lmQz https://ci.internal/job",
        "sshpass -p 'Xk92!lmQ' ssh root@host",
        "mysql -uroot -pS3cretPw shop",
        "mongodb+srv://app:K8s9xQw2Lm@cluster0.ab1cd.mongodb.net/db",
        "DB_PASSWORD=rootpass42",
        "Passwort für den Router: Sommer2024#",
        "パスワードは Sakura2024! です",
        "كلمة المرور: Nour2024$",
        "seed: legal winner thank year wave sausage worth useful legal winner thank yellow",
        "KwDiBf89QgGbjEhKnhXJuH7LrciVrZi3qYjgd9M7rFU73sVHnoWn",
        "my AWS secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81kLmn0p for the bucket",
        "the secret the console showed me once is 52B43cirmXbsG8DEmcQBvvsTBQLY1PtSFu5lbb7I. Region eu-west-2",
        "WLAN-Name Heimnetz, Passwort 48213759602318574629.",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.\neyJzdWIiOiIxMjM0NTY3ODkwIn0\n.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ] {
        let (decision, cats) = categories(text);
        assert_eq!(decision, Decision::Refuse, "{text}: {cats:?}");
    }
}

#[test]
fn national_ids_and_local_phones_are_masked() {
    for text in [
        "TC kimlik numaram 10000000146",
        "Мой СНИЛС 112-233-445 95",
        "주민등록번호 800101-1234560",
        "マイナンバーは1234 5678 9018です",
        "my PAN is ABCPE1234F",
        "我的手机号是13912345678",
        "mi móvil es 612 34 56 78",
        "मेरा मोबाइल ९८७६५ ४३२११ है",
        "Escreve à loja com o meu NIF, 123456789, por favor",
        "Паспорт: серия и номер 45 19 738264, выдан в Москве",
        "Liga para o 351912483706 e diz-lhe que chego tarde",
        "Stuur een appje op 31651827394 dat ik later ben",
        "Sie soll mich unter 491726384915 zurückrufen",
        "新しい住所は東京都世田谷区北沢2-14-7です",
        "a morada é Rua de Cedofeita 214, 4050-174 Porto",
        "주소는 서울특별시 강남구 테헤란로 123 입니다",
    ] {
        let (decision, cats) = categories(text);
        assert_eq!(decision, Decision::Mask, "{text}: {cats:?}");
    }
}
