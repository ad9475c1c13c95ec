//! `deepseek_r1`: not implemented yet.

use crate::toolcall::detector::{DetectCtx, Detector, Found, Strictness};

pub struct DeepseekR1;

impl Detector for DeepseekR1 {
    fn name(&self) -> &str {
        "deepseek_r1"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["\u{0}never"]
    }
    fn detect(&self, _text: &str, _ctx: &DetectCtx<'_>, _out: &mut Vec<Found>) {}
}
