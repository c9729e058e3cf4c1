//! The topic classifier on texts it was not trained on.

use lily_gate::learned::TopicClassifier;
use lily_gate::Category;

fn topics(text: &str) -> Vec<Category> {
    let c = TopicClassifier::load_default().expect("embedded topic model loads");
    c.classify(text).into_iter().map(|s| s.category).collect()
}

#[test]
fn personal_sensitive_texts_are_found() {
    let cases = [
        (
            "Please summarize my bloodwork, my ferritin is 8 and my doctor is worried.",
            Category::Health,
        ),
        (
            "I've been so depressed since the breakup that I can't work.",
            Category::MentalHealth,
        ),
        (
            "I'm gay and my parents don't know yet.",
            Category::Sexuality,
        ),
        (
            "I owe 40,000 on my credit cards and can't pay rent.",
            Category::Finances,
        ),
        (
            "I was arrested last night for drunk driving.",
            Category::Legal,
        ),
        (
            "My daughter is 9 and is being bullied at school.",
            Category::Children,
        ),
    ];
    for (text, want) in cases {
        assert!(topics(text).contains(&want), "{text}: {:?}", topics(text));
    }
}

#[test]
fn disclosures_in_every_script_and_the_newer_topics_are_found() {
    let cases = [
        (
            "我的居留许可下个月到期，庇护申请还没有结果。",
            Category::Immigration,
        ),
        (
            "私は去年から不法滞在で、在留カードがありません。",
            Category::Immigration,
        ),
        (
            "저는 난민 신청자인데 면접이 다음 주예요.",
            Category::Immigration,
        ),
        (
            "أنا طالب لجوء وموعد مقابلتي الأسبوع القادم.",
            Category::Immigration,
        ),
        (
            "Oturma iznim gelecek ay bitiyor ve sınır dışı edilmekten korkuyorum.",
            Category::Immigration,
        ),
        (
            "Моя сестра проходит химиотерапию в онкоцентре.",
            Category::Health,
        ),
        (
            "زوجي يخضع لغسيل الكلى ثلاث مرات في الأسبوع.",
            Category::Health,
        ),
        (
            "मेरा भाई पैरोल पर जेल से बाहर आया है।",
            Category::CriminalHistory,
        ),
        (
            "Mi hermano tiene antecedentes penales y busca trabajo.",
            Category::CriminalHistory,
        ),
    ];
    for (text, want) in cases {
        assert!(topics(text).contains(&want), "{text}: {:?}", topics(text));
    }
}

#[test]
fn general_questions_in_other_scripts_are_not() {
    for text in [
        "什么是化疗？",
        "Что такое судимость?",
        "ما هو غسيل الكلى؟",
        "투석은 어떻게 하나요?",
        "Wie lange dauert ein Asylverfahren?",
    ] {
        assert!(topics(text).is_empty(), "{text}: {:?}", topics(text));
    }
}

#[test]
fn general_questions_on_the_same_subjects_are_not() {
    for text in [
        "Explain how vaccines work.",
        "What is the capital of France?",
        "Write a Rust function that parses a CSV line.",
        "How does the electoral system work in Italy?",
    ] {
        assert!(topics(text).is_empty(), "{text}: {:?}", topics(text));
    }
}

#[test]
fn span_is_the_evidence_sentence() {
    let text = "Can you help me with a letter? My son is 6 and still wets the bed every night.";
    let c = TopicClassifier::load_default().unwrap();
    let spans = c.classify(text);
    let child = spans
        .iter()
        .find(|s| s.category == Category::Children)
        .expect("children found");
    assert_eq!(
        &text[child.start..child.end],
        "My son is 6 and still wets the bed every night."
    );
    assert!(child.confidence >= 0.5 && child.confidence <= 1.0);
    assert_eq!(child.detector, "topic");
}

#[test]
fn megabyte_input_is_classified_with_the_evidence_inside_it() {
    let filler = "The meeting notes are attached. ";
    let mut text = filler.repeat((1 << 20) / filler.len());
    text.push_str("I was diagnosed with diabetes last month, what should I eat?");
    let spans = TopicClassifier::load_default().unwrap().classify(&text);
    let health = spans
        .iter()
        .find(|s| s.category == Category::Health)
        .expect("health found");
    assert_eq!(
        &text[health.start..health.end],
        "I was diagnosed with diabetes last month, what should I eat?"
    );
}
