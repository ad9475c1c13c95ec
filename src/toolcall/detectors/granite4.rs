//! `granite4`: not implemented yet.

use crate::toolcall::detector::{DetectCtx, Detector, Found, Strictness};

pub struct Granite4;

impl Detector for Granite4 {
    fn name(&self) -> &str {
        "granite4"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["\u{0}never"]
    }
    fn detect(&self, _text: &str, _ctx: &DetectCtx<'_>, _out: &mut Vec<Found>) {}
}
