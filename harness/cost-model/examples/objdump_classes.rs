//! Annotates `objdump -d` output with the cost class of each instruction,
//! to audit the decoders on real code:
//!
//! `arm-linux-gnueabihf-objdump -d prog | cargo run -p sysy-cost-model --example objdump_classes`
//!
//! Prints `class<TAB>flow<TAB>original line` for every instruction line
//! (32-bit hex column = ARM, 16-bit halfwords = Thumb, decoded in sequence
//! per function so IT blocks apply); other lines are dropped.

use std::io::{BufRead, Write};

use sysy_cost_model::decode::a32::decode_a32;
use sysy_cost_model::decode::t32::ThumbDecoder;

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut thumb = ThumbDecoder::new();
    for line in stdin.lock().lines().map_while(Result::ok) {
        if line.ends_with(">:") {
            thumb = ThumbDecoder::new(); // a new function: no IT block carries over
            continue;
        }
        let Some((address, rest)) = line.split_once(":\t") else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(address.trim(), 16) else {
            continue;
        };
        let Some((hex, text)) = rest.split_once('\t') else {
            continue;
        };
        if text.starts_with('.') {
            continue; // .word / .short data
        }
        let units: Vec<&str> = hex.split_whitespace().collect();
        let decoded = match units.as_slice() {
            [word] if word.len() == 8 => u32::from_str_radix(word, 16)
                .ok()
                .map(|w| decode_a32(w, addr)),
            [half] if half.len() == 4 => u16::from_str_radix(half, 16)
                .ok()
                .map(|h| thumb.decode(&h.to_le_bytes(), addr)),
            [first, second] if first.len() == 4 && second.len() == 4 => {
                match (
                    u16::from_str_radix(first, 16),
                    u16::from_str_radix(second, 16),
                ) {
                    (Ok(a), Ok(b)) => {
                        let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
                        Some(thumb.decode(&[a[0], a[1], b[0], b[1]], addr))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(decoded) = decoded
            && writeln!(
                out,
                "{}\t{:?}\t{}",
                decoded.class,
                decoded.flow,
                line.trim()
            )
            .is_err()
        {
            return;
        }
    }
}
