//! Names in every script of the gate, common-word names and consistent masking: the rules of
//! `names_scripts.rs` and `mentions.rs`, through the whole gate. Each script has positives in
//! the positions its rules know and hard negatives: ordinary words that are also names, dishes,
//! historical and public figures, characters.

use lily_gate::{Category, Destination, Gate, Policy, Vault};

fn gate() -> Gate {
    Gate::new(Policy::default_policy()).expect("learned tiers load")
}

/// The texts of the person spans the whole gate finds.
fn people(gate: &Gate, text: &str) -> Vec<String> {
    gate.find(text.as_bytes())
        .into_iter()
        .filter(|s| s.category == Category::Person && s.confidence >= 0.2)
        .map(|s| text[s.start..s.end].to_string())
        .collect()
}

fn masked(gate: &Gate, text: &str) -> String {
    gate.inspect(text, Destination::Cloud)
        .masked_text
        .unwrap_or_else(|| text.to_string())
}

/// Every expected name is found as a whole span, and nothing else is a person.
fn check(gate: &Gate, cases: &[(&str, &[&str])]) {
    for (text, expected) in cases {
        let got = people(gate, text);
        let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        let mut got_sorted = got.clone();
        want.sort();
        got_sorted.sort();
        got_sorted.dedup();
        assert_eq!(got_sorted, want, "{text}");
    }
}

#[test]
fn chinese_names_next_to_a_cue() {
    let g = gate();
    check(
        &g,
        &[
            ("请把报告发给同事王伟。", &["王伟"]),
            ("明天下午和李娜老师开会。", &["李娜"]),
            ("我叫张小明，想预约会议室。", &["张小明"]),
            ("请联系陈静经理确认订单。", &["陈静"]),
            ("欧阳娜娜女士的快递到了。", &["欧阳娜娜"]),
            ("你好，王芳！会议改到周五了。", &["王芳"]),
            // Dishes, philosophers, poets, ordinary words made of surname characters.
            ("我想吃宫保鸡丁和麻婆豆腐。", &[]),
            ("孔子说过什么关于学习的话？", &[]),
            ("李白的诗为什么这么有名？", &[]),
            ("和平与发展是当今世界的主题。", &[]),
            ("高兴的时候人们会笑。", &[]),
            ("马上给我打个电话。", &[]),
            ("黄金的价格今天又涨了。", &[]),
        ],
    );
}

#[test]
fn japanese_names_before_an_honorific() {
    let g = gate();
    check(
        &g,
        &[
            ("明日、田中さんに資料を送ってください。", &["田中"]),
            ("佐藤花子さんから連絡がありました。", &["佐藤花子"]),
            ("営業部の鈴木課長に見積もりを送ってください。", &["鈴木"]),
            ("マイクさんの送別会の場所を探しています。", &["マイク"]),
            ("高橋先生の授業は面白いです。", &["高橋"]),
            ("お客様への返信メールを丁寧に書いてください。", &[]),
            ("様々な方法でデータを集めました。", &[]),
            ("皆さん、おはようございます。", &[]),
            ("本屋さんで料理の本を買いました。", &[]),
            ("お医者さんに相談しました。", &[]),
            ("織田信長はどんな人物でしたか？", &[]),
            ("氏名と住所を記入してください。", &[]),
            ("彼氏と映画を見に行きました。", &[]),
        ],
    );
}

#[test]
fn korean_names_with_an_honorific_or_a_listed_surname() {
    let g = gate();
    check(
        &g,
        &[
            ("김민준 씨에게 전화해 주세요.", &["김민준"]),
            ("내일 박서연 과장님과 회의가 있어요.", &["박서연"]),
            ("지훈씨가 보고서를 보냈어요.", &["지훈"]),
            ("이서준에게 자료를 보내 주세요.", &["이서준"]),
            ("오늘 날씨가 정말 좋네요.", &[]),
            ("아저씨가 길을 알려 주셨어요.", &[]),
            ("이번 주말에 김치찌개를 만들고 싶어요.", &[]),
            ("세종대왕은 한글을 언제 만들었나요?", &[]),
            ("고객님, 주문이 완료되었습니다.", &[]),
            ("글씨를 더 크게 써 주세요.", &[]),
        ],
    );
}

#[test]
fn cyrillic_names_by_patronymic_given_name_and_surname_shape() {
    let g = gate();
    check(
        &g,
        &[
            ("Позвони Ивану Петрову завтра утром.", &["Ивану Петрову"]),
            (
                "Анна Сергеевна просила перенести встречу.",
                &["Анна Сергеевна"],
            ),
            ("Привет, Дима!\nТы видел отчёт?", &["Дима"]),
            ("Передай документы господину Смирнову.", &["Смирнову"]),
            ("Моя коллега Ольга уже отправила счёт.", &["Ольга"]),
            ("Что Пушкин написал в «Евгении Онегине»?", &[]),
            ("Толстой писал «Войну и мир» несколько лет.", &[]),
            ("Один из серверов не отвечает, что проверить?", &[]),
            ("Как приготовить борщ с фасолью?", &[]),
            ("Вера в лучшее помогает работать.", &[]),
        ],
    );
}

#[test]
fn arabic_names_after_a_title_particle_or_greeting() {
    let g = gate();
    check(
        &g,
        &[
            ("أرسل التقرير إلى الدكتور أحمد حسن غدا.", &["أحمد حسن"]),
            ("زميلي خالد سيحضر الاجتماع.", &["خالد"]),
            ("مرحبا ليلى، هل وصلتك الفاتورة؟", &["ليلى"]),
            ("تحدثت مع علي بن سالم عن العقد.", &["علي بن سالم"]),
            ("السيدة مريم العلي تنتظر الرد.", &["مريم العلي"]),
            ("كيف أحضر الكبسة في البيت؟", &[]),
            ("ماذا كتب ابن خلدون في المقدمة؟", &[]),
            ("أتمنى أن يبقى الأمل موجودا دائما.", &[]),
            ("ما هي قصة النبي يوسف؟", &[]),
            ("سافرنا إلى أبو ظبي في الصيف.", &[]),
        ],
    );
}

#[test]
fn devanagari_names_after_an_honorific_or_with_a_surname() {
    let g = gate();
    check(
        &g,
        &[
            ("कृपया श्रीमती सुनीता शर्मा को ईमेल भेजें।", &["सुनीता शर्मा"]),
            ("राहुल वर्मा कल ऑफिस आएंगे।", &["राहुल वर्मा"]),
            ("शर्मा जी ने रिपोर्ट भेज दी है।", &["शर्मा"]),
            ("मेरे दोस्त अमित ने किताब लौटा दी।", &["अमित"]),
            ("महात्मा गांधी ने सत्याग्रह के बारे में क्या कहा?", &[]),
            ("श्री राम की कथा कहाँ से शुरू होती है?", &[]),
            ("आशा है कि आप ठीक हैं।", &[]),
            ("दीपक जलाने का सही समय क्या है?", &[]),
            ("जी हाँ, मैं कल आऊँगा।", &[]),
        ],
    );
}

#[test]
fn turkish_names_with_bey_hanim_and_relations() {
    let g = gate();
    check(
        &g,
        &[
            ("Yarın Ahmet Bey ile görüşeceğim.", &["Ahmet"]),
            ("Faturayı Ayşe Hanım'a ilet.", &["Ayşe"]),
            (
                "Arkadaşım Zeynep Kaya toplantıya gelecek.",
                &["Zeynep Kaya"],
            ),
            ("Merhaba Elif,\nraporu gönderebilir misin?", &["Elif"]),
            ("Atatürk hangi yıl doğdu?", &[]),
            ("Deniz kenarında güzel bir gün geçirdik.", &[]),
            ("Bey ve hanım kelimeleri nasıl kullanılır?", &[]),
        ],
    );
}

#[test]
fn common_word_names_only_in_name_positions() {
    let g = gate();
    check(
        &g,
        &[
            ("My colleague Hope asked me to move the meeting.", &["Hope"]),
            (
                "Please forward the invoice to Mr Hunter before noon.",
                &["Hunter"],
            ),
            ("Hi Will,\nthe slides are ready.", &["Will"]),
            ("Mi amiga Rosa me pidió el libro.", &["Rosa"]),
            ("Meine Kollegin Rose hat den Bericht geschickt.", &["Rose"]),
            (
                "Our plumber, Gerrit van Dam, charged twice.",
                &["Gerrit van Dam"],
            ),
            ("I hope the build finishes. Will you check the logs?", &[]),
            ("Mark the date and plant a rose bush by the fence.", &[]),
            ("Summer is the best season for hiking.", &[]),
            ("Ich sage meinem Chef Bescheid.", &[]),
            ("Why did Mr Darcy resign?", &[]),
        ],
    );
}

#[test]
fn every_mention_of_a_person_gets_the_same_placeholder() {
    let g = gate();
    assert_eq!(
        masked(
            &g,
            "Maria Lindqvist called. Tell LINDQVIST and lindqvist that Maria is late."
        ),
        "<PERSON_1> called. Tell <PERSON_1> and <PERSON_1> that <PERSON_1> is late."
    );
    assert_eq!(
        masked(&g, "Позвони Ивану Петрову. Петров ждёт."),
        "Позвони <PERSON_1>. <PERSON_1> ждёт."
    );
    assert_eq!(
        masked(&g, "山田太郎に確認して。山田さんは午後に戻ります。"),
        "<PERSON_1>に確認して。<PERSON_1>さんは午後に戻ります。"
    );
    assert_eq!(
        masked(&g, "刘洋先生的包裹到了，请通知刘先生来取。"),
        "<PERSON_1>先生的包裹到了，请通知<PERSON_1>先生来取。"
    );
    // A common word that is also the person's given name stays when it is the word.
    let text = "Hope Gallagher wrote. I hope Gallagher is right.";
    let out = masked(&g, text);
    assert!(out.contains("I hope <PERSON_1>"), "{out}");
}

#[test]
fn names_beside_contact_identifiers() {
    let g = gate();
    assert_eq!(
        masked(&g, "Contact: Ana Souza, ana.souza@gmail.com"),
        "Contact: <PERSON_1>, <EMAIL_1>"
    );
    let out = masked(&g, "Tel. Ivan Petrov +7 916 123 45 67");
    assert!(out.starts_with("Tel. <PERSON_1> <PHONE_1>"), "{out}");
    // Labels are not names, and a lone unknown word needs the address to contain it.
    let out = masked(&g, "Email: support@example.org");
    assert!(!out.contains("PERSON"), "{out}");
}

#[test]
fn mixed_script_noise_gives_whole_character_spans() {
    // Pieces of every script, joined in a seeded pseudo-random order: no rule may panic or cut
    // a character, and every person span must be masked as a whole.
    let pieces = [
        "王伟",
        "先生",
        "同事",
        "さん",
        "田中",
        "様",
        "김민준",
        " 씨",
        "님",
        "Иван",
        "Петрович",
        "господину",
        "السيد",
        "بن",
        "أبو",
        "श्री",
        "शर्मा",
        " जी",
        "Bey",
        "Hanım'a",
        "Mr",
        ".",
        " ",
        ",",
        "\n",
        "Hope",
        "my colleague",
        "a@b.co",
        "+7 916 123 45 67",
        "\u{301}",
        "ー",
        "々",
        "ّ",
        "्",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut text = String::new();
    for _ in 0..20_000 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
    }
    let g = gate();
    for s in g.find(text.as_bytes()) {
        assert!(s.start < s.end && text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
    }
    // Whatever the decision, inspecting (and masking) it completes.
    g.inspect(&text, Destination::Cloud);
}

#[test]
fn many_distinct_people_are_masked_in_one_pass() {
    // Placeholders are shared by comparing names pairwise, up to a bound: thousands of
    // different people must still be masked, each once, without a quadratic blow-up.
    let suffix = |i: usize| -> String {
        [i / 676, i / 26 % 26, i % 26]
            .iter()
            .map(|&d| char::from(b'a' + d as u8))
            .collect()
    };
    let text: String = (0..3000)
        .map(|i| {
            format!(
                "Hi Tendai{0},\nplease ask Ms Okafor{0} to call.\n",
                suffix(i)
            )
        })
        .collect();
    let spans = gate().find(text.as_bytes());
    let out = Vault::new().mask(&text, &spans);
    assert!(
        !out.contains("Tendai") && !out.contains("Okafor"),
        "{}",
        &out[..300]
    );
    assert!(out.contains("<PERSON_6000>"), "{}", &out[out.len() - 300..]);
}
