//! Host sampling cost per token at the real vocabulary (248,320 logits): the time the server
//! spends between two GPU decode steps of a sampled request.
//! `cargo run --release -p lily-engine --example sampling_bench`

use lily_engine::sampling::{Sampler, SamplingParams};

fn main() {
    let vocab = 248_320;
    // Logits shaped like a language model's: most mass on a few hundred tokens.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let logits: Vec<f32> = (0..vocab)
        .map(|i| {
            let base = if i % 997 == 0 { 12.0 } else { 0.0 };
            (base + 4.0 * (next() - 0.5) * 2.0) as f32
        })
        .collect();
    for (name, params) in [
        (
            "greedy",
            SamplingParams {
                temperature: 0.0,
                seed: Some(1),
                ..Default::default()
            },
        ),
        (
            "temperature 0.7",
            SamplingParams {
                temperature: 0.7,
                seed: Some(1),
                ..Default::default()
            },
        ),
        (
            "temperature 0.7, top_p 0.9",
            SamplingParams {
                temperature: 0.7,
                top_p: 0.9,
                seed: Some(1),
                ..Default::default()
            },
        ),
        (
            "temperature 1, top_k 50",
            SamplingParams {
                temperature: 1.0,
                top_k: 50,
                seed: Some(1),
                ..Default::default()
            },
        ),
    ] {
        let mut sampler = Sampler::new(params);
        let runs = 200;
        let t0 = std::time::Instant::now();
        let mut sink = 0u64;
        for _ in 0..runs {
            sink = sink.wrapping_add(sampler.pick(&logits, None) as u64);
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / runs as f64;
        println!("{name:28} {us:8.1} us per token (checksum {sink})");
    }
}
