//! `pythonic`: not implemented yet.

use crate::toolcall::detector::{DetectCtx, Detector, Found, Strictness};

pub struct Pythonic;

impl Detector for Pythonic {
    fn name(&self) -> &str {
        "pythonic"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Loose
    }
    fn triggers(&self) -> &[&str] {
        &["\u{0}never"]
    }
    fn detect(&self, _text: &str, _ctx: &DetectCtx<'_>, _out: &mut Vec<Found>) {}
}
