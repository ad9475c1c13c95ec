//! `qwen3_coder`: not implemented yet.

use crate::toolcall::detector::{DetectCtx, Detector, Found, Strictness};

pub struct Qwen3Coder;

impl Detector for Qwen3Coder {
    fn name(&self) -> &str {
        "qwen3_coder"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["\u{0}never"]
    }
    fn detect(&self, _text: &str, _ctx: &DetectCtx<'_>, _out: &mut Vec<Found>) {}
}
