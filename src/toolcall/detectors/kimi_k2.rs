//! `kimi_k2`: not implemented yet.

use crate::toolcall::detector::{DetectCtx, Detector, Found, Strictness};

pub struct KimiK2;

impl Detector for KimiK2 {
    fn name(&self) -> &str {
        "kimi_k2"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["\u{0}never"]
    }
    fn detect(&self, _text: &str, _ctx: &DetectCtx<'_>, _out: &mut Vec<Found>) {}
}
