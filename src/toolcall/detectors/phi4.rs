//! `phi4`: not implemented yet.

use crate::toolcall::detector::{DetectCtx, Detector, Found, Strictness};

pub struct Phi4;

impl Detector for Phi4 {
    fn name(&self) -> &str {
        "phi4"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["\u{0}never"]
    }
    fn detect(&self, _text: &str, _ctx: &DetectCtx<'_>, _out: &mut Vec<Found>) {}
}
