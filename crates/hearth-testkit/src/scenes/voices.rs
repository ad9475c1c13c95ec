// The benches' speakers by name: the Piper voice as it is and pitch-shifted with sox,
// espeak-ng's variants and flite's voices (Debian's `flite`), of both sexes and several
// accents, each speaking at three paces taken in turn. Only the table and its pure helpers are
// here (they need no model); `talk.rs` (feature `tts`) speaks with them.

/// The program behind a voice, and its three paces (fast, normal, slow, taken in turn).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Engine {
    /// The Piper voice (`TtsConfig::default_voice`, en_US-joe-medium, a man) at these length
    /// scales (above 1 is slower) and this noise scale (`None`: the voice's own, 0.667).
    Piper {
        length_scales: [f32; 3],
        noise_scale: Option<f32>,
    },
    /// espeak-ng's voice `voice` (a language, `+` a variant: "en-gb+m3") at these words a
    /// minute.
    Espeak { voice: &'static str, wpm: [u32; 3] },
    /// flite's voice `voice` (`flite -lv` lists them) at these duration stretches (above 1 is
    /// slower).
    Flite {
        voice: &'static str,
        stretch: [f32; 3],
    },
}

/// A named speaker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cast {
    /// What `--voice` takes.
    pub name: &'static str,
    /// Who it sounds like: sex and accent.
    pub who: &'static str,
    pub engine: Engine,
    /// A sox `pitch` shift in cents after speaking (0: none).
    pub pitch_cents: i32,
}

/// Every speaker, the Piper voice first (the benches' default).
pub const CAST: [Cast; 8] = [
    Cast {
        name: "piper",
        who: "male, US",
        engine: Engine::Piper {
            length_scales: [0.85, 1.0, 1.2],
            noise_scale: None,
        },
        pitch_cents: 0,
    },
    Cast {
        name: "piper-low",
        who: "deep male, US",
        engine: Engine::Piper {
            length_scales: [0.95, 1.1, 1.3],
            noise_scale: Some(1.0),
        },
        pitch_cents: -300,
    },
    Cast {
        name: "piper-high",
        who: "high, female-like, US",
        engine: Engine::Piper {
            length_scales: [0.8, 0.9, 1.05],
            noise_scale: Some(0.333),
        },
        pitch_cents: 400,
    },
    Cast {
        name: "espeak",
        who: "female, US",
        engine: Engine::Espeak {
            voice: "en-us+f3",
            wpm: [210, 175, 140],
        },
        pitch_cents: 0,
    },
    Cast {
        name: "espeak-gb-m",
        who: "male, British",
        engine: Engine::Espeak {
            voice: "en-gb+m3",
            wpm: [210, 175, 140],
        },
        pitch_cents: 0,
    },
    Cast {
        name: "espeak-caribbean-f",
        who: "female, Caribbean",
        engine: Engine::Espeak {
            voice: "en-029+f2",
            wpm: [210, 175, 140],
        },
        pitch_cents: 0,
    },
    Cast {
        name: "flite-us-f",
        who: "female, US (CMU Arctic slt)",
        engine: Engine::Flite {
            voice: "slt",
            stretch: [0.85, 1.0, 1.2],
        },
        pitch_cents: 0,
    },
    Cast {
        name: "flite-scottish-m",
        who: "male, Scottish (CMU Arctic awb)",
        engine: Engine::Flite {
            voice: "awb",
            stretch: [0.85, 1.0, 1.2],
        },
        pitch_cents: 0,
    },
];

/// The speaker called `name` ("espeak-ng" is "espeak").
pub fn cast(name: &str) -> Result<&'static Cast, String> {
    let name = if name == "espeak-ng" { "espeak" } else { name };
    CAST.iter().find(|c| c.name == name).ok_or_else(|| {
        let names: Vec<&str> = CAST.iter().map(|c| c.name).collect();
        format!("no voice {name:?}: one of {}", names.join(", "))
    })
}

/// Three paces as "a/b/c".
fn paces<T: std::fmt::Display>(p: &[T; 3]) -> String {
    p.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("/")
}

impl Engine {
    /// The engine, its voice and paces: "espeak-ng en-gb+m3 210/175/140 wpm".
    pub fn label(&self) -> String {
        match self {
            Engine::Piper {
                length_scales,
                noise_scale,
            } => {
                let noise = noise_scale.map_or(String::new(), |n| format!(" n{n}"));
                format!("piper ×{}{noise}", paces(length_scales))
            }
            Engine::Espeak { voice, wpm } => format!("espeak-ng {voice} {} wpm", paces(wpm)),
            Engine::Flite { voice, stretch } => format!("flite {voice} ×{}", paces(stretch)),
        }
    }
}

impl Cast {
    /// "espeak-gb-m (male, British: espeak-ng en-gb+m3 210/175/140 wpm)".
    pub fn label(&self) -> String {
        let pitch = match self.pitch_cents {
            0 => String::new(),
            c => format!(", sox pitch {c:+} cents"),
        };
        format!(
            "{} ({}: {}{pitch})",
            self.name,
            self.who,
            self.engine.label()
        )
    }

    /// The sox effect after speaking, if any.
    pub fn effect(&self) -> Option<Vec<String>> {
        (self.pitch_cents != 0).then(|| pitch_effect(self.pitch_cents))
    }
}

/// sox's `pitch` effect: a shift by `cents` (100 to a semitone), tempo kept.
pub fn pitch_effect(cents: i32) -> Vec<String> {
    vec!["pitch".into(), cents.to_string()]
}

/// Whether espeak-ng has `voice` ("en-gb+m3"): its language in the Language column of
/// `espeak-ng --voices` (`voices`) and its variant, if any, as `!v/NAME` in the File column of
/// `espeak-ng --voices=variant` (`variants`; any column, as a name may hold spaces).
/// espeak-ng itself falls back to another voice
/// without a word when one is missing.
pub fn espeak_has(voices: &str, variants: &str, voice: &str) -> bool {
    let (language, variant) = match voice.split_once('+') {
        Some((l, v)) => (l, Some(v)),
        None => (voice, None),
    };
    let listed = voices
        .lines()
        .skip(1)
        .any(|l| l.split_whitespace().nth(1) == Some(language));
    let file = variant.map(|v| format!("!v/{v}"));
    listed
        && file.is_none_or(|f| {
            variants
                .lines()
                .skip(1)
                .any(|l| l.split_whitespace().any(|w| w == f))
        })
}

/// Whether `flite -lv`'s answer (`listing`: "Voices available: kal awb_time kal16 awb rms
/// slt") names `voice`. flite speaks with its default voice when asked for one it lacks.
pub fn flite_has(listing: &str, voice: &str) -> bool {
    listing
        .split_once(':')
        .is_some_and(|(_, names)| names.split_whitespace().any(|n| n == voice))
}
