//! Dequantization checked block by block against the `gguf` Python package's dequantizer.

mod common;

use ragscope_infer::gguf::{dequantize_row, GgmlType};

fn b64(s: &str) -> Vec<u8> {
    // Small standard base64 decoder (no padding ambiguity in fixture data).
    let table = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64 byte {c}"),
        }
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= table(c) << (18 - 6 * i);
        }
        let n = chunk.len() * 6 / 8;
        for i in 0..n {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    out
}

#[test]
fn dequantization_matches_gguf_python_block_by_block() {
    let fx = common::load_json("dequant.json");
    let cases = fx["cases"].as_array().expect("cases");
    let mut seen = std::collections::BTreeSet::new();
    for case in cases {
        let ty =
            GgmlType::from_id(case["type_id"].as_u64().unwrap() as u32).expect("supported type");
        assert_eq!(ty.name(), case["type"].as_str().unwrap());
        seen.insert(ty.name());
        let raw = b64(case["bytes_b64"].as_str().unwrap());
        let want = common::floats(&case["values"]);
        let n = case["n"].as_u64().unwrap() as usize;
        let bs = ty.block_size();
        for (bi, (blk, want_blk)) in raw
            .chunks(ty.block_bytes())
            .zip(want.chunks(bs))
            .enumerate()
        {
            let mut got = vec![0f32; bs];
            dequantize_row(ty, blk, &mut got).unwrap();
            for (j, (&g, &w)) in got.iter().zip(want_blk).enumerate() {
                let w = w as f32;
                let tol = 1e-6 * w.abs().max(1e-3);
                assert!(
                    (g - w).abs() <= tol,
                    "{} ({}) block {bi} weight {j}: got {g}, gguf says {w}",
                    ty.name(),
                    case["source"]
                );
            }
        }
        // Whole row at once as well (several blocks in one call): every value, not only the length.
        assert_eq!(
            want.len(),
            n,
            "{} ({}): fixture length",
            ty.name(),
            case["source"]
        );
        let mut row = vec![f32::NAN; n];
        dequantize_row(ty, &raw, &mut row).unwrap();
        for (j, (&g, &w)) in row.iter().zip(&want).enumerate() {
            let w = w as f32;
            assert!(
                (g - w).abs() <= 1e-6 * w.abs().max(1e-3),
                "{} ({}) whole row, weight {j}: got {g}, gguf says {w}",
                ty.name(),
                case["source"]
            );
        }
    }
    for t in [
        "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K",
    ] {
        assert!(seen.contains(t), "no fixture for {t}");
    }
}
